import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { API_ROUTES } from '../../ts/http/app.js'
import { openApiDocument } from '../../ts/http/openapi.js'
import { openApiToMarkdown } from '../../ts/http/openapi-markdown.js'

describe('docs/http-api.md', () => {
  it('is the committed rendering of the OpenAPI document (run `npm run docs:http` after changing a route)', () => {
    const doc = openApiDocument(API_ROUTES) as { openapi: string; paths: Record<string, Record<string, unknown>> }
    expect(doc.openapi).toBe('3.1.0')
    const operations = Object.values(doc.paths).flatMap((methods) => Object.keys(methods))
    expect(operations.length).toBe(API_ROUTES.length)
    expect(readFileSync('docs/http-api.md', 'utf8')).toBe(openApiToMarkdown(doc))
  })
})
