import { readFileSync, readdirSync } from 'node:fs'
import { z } from 'zod'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { UnitTypeSchema } from '../../ts/contracts/evidence.js'
import { PackSchema } from '../../ts/contracts/pack.js'
import { QueryRequestSchema } from '../../ts/contracts/query.js'
import { ERROR_CODES, formatIssues, toTychoraError } from '../../ts/errors.js'

describe('contracts', () => {
  it('every pack in packs/ validates against the pack schema', () => {
    const packs = readdirSync('packs', { withFileTypes: true }).filter((d) => d.isDirectory())
    expect(packs.length).toBeGreaterThan(0)
    for (const dir of packs) {
      const pack = JSON.parse(readFileSync(join('packs', dir.name, 'pack.json'), 'utf8'))
      expect(PackSchema.safeParse(pack).success, dir.name).toBe(true)
      expect(pack.name).toBe(dir.name)
    }
  })

  it('packs/pack.schema.json, which the core validates pack files against, is the zod pack contract (npm run packs:schema)', () => {
    const published = JSON.parse(readFileSync('packs/pack.schema.json', 'utf8'))
    const { $id, title, ...schema } = published
    expect($id).toMatch(/pack\.schema\.json$/)
    expect(title).toBeTruthy()
    expect(schema).toEqual(JSON.parse(JSON.stringify(z.toJSONSchema(PackSchema, { target: 'draft-2020-12' }))))
  })

  it('the TS error table and the Rust ErrorCode enum name the same codes', () => {
    const rust = readFileSync('crates/tychora-core/src/error.rs', 'utf8')
    const rustCodes = [...rust.matchAll(/ = "(E_[A-Z_]+)",/g)].map((m) => m[1]).sort()
    expect(rustCodes).toEqual(Object.keys(ERROR_CODES).sort())
  })

  it('the zod unit types and the Rust UnitType enum name the same set', () => {
    const rust = readFileSync('crates/tychora-core/src/unit/mod.rs', 'utf8')
    const declared = rust.slice(rust.indexOf('pub enum UnitType {'))
    const body = declared.slice(0, declared.indexOf('\n    }\n'))
    const rustTypes = [...body.matchAll(/ = "([a-z_]+)",/g)].map((m) => m[1])
    expect(rustTypes.length).toBeGreaterThan(20)
    expect(rustTypes).toEqual(UnitTypeSchema.options)
    expect(UnitTypeSchema.safeParse('paragraf').success).toBe(false)
  })

  it('query requests reject unknown fields and bad values', () => {
    expect(QueryRequestSchema.safeParse({ query: 'x', limti: 3 }).success).toBe(false)
    expect(QueryRequestSchema.safeParse({ query: '' }).success).toBe(false)
    expect(QueryRequestSchema.safeParse({ query: 'x', kinds: ['Not A Kind!'] }).success).toBe(false)
    expect(QueryRequestSchema.parse({ query: 'x', limit: 5 })).toEqual({ query: 'x', limit: 5 })
  })

  it('schema issues read as one line of `path: message`', () => {
    const parsed = QueryRequestSchema.safeParse({ query: 'x'.repeat(10_001), limit: 'ten' })
    expect(parsed.success).toBe(false)
    const message = formatIssues(parsed.error?.issues ?? [])
    expect(message).toMatch(/^query: .+; limit: .+$/)
    expect(
      formatIssues([
        { path: [], message: 'bad\n  value' },
        { path: ['a', 0, 'b'], message: 'x' },
      ]),
    ).toBe('(root): bad value; a.0.b: x')
  })

  it('native error messages map to codes; unknown errors become E_INTERNAL', () => {
    expect(toTychoraError(new Error('[E_NOT_FOUND] snapshot not found: 9')).code).toBe('E_NOT_FOUND')
    expect(toTychoraError(new Error('[E_BOGUS] x')).code).toBe('E_INTERNAL')
    expect(toTychoraError('plain').code).toBe('E_INTERNAL')
  })
})
