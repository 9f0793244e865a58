// Regenerates docs/http-api.md from the OpenAPI document the daemon serves.
import { writeFileSync } from 'node:fs'
import { API_ROUTES } from '../dist/http/app.js'
import { openApiDocument } from '../dist/http/openapi.js'
import { openApiToMarkdown } from '../dist/http/openapi-markdown.js'

writeFileSync('docs/http-api.md', openApiToMarkdown(openApiDocument(API_ROUTES)))
console.log('wrote docs/http-api.md')
