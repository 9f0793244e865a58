import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { AnyCommand } from '../../ts/cli/check-args.js'
import { describe, expect, it } from 'vitest'
import { main } from '../../ts/cli/main.js'
import { FacetConditionSchema, QueryRequestSchema } from '../../ts/contracts/query.js'
import { ListRecordsRequestSchema } from '../../ts/contracts/records.js'
import { validate } from '../../ts/contracts/validate.js'
import { TychoraError } from '../../ts/errors.js'

const README = readFileSync(join(import.meta.dirname, '../../README.md'), 'utf8')

type Resolvable<T> = T | Promise<T> | (() => T | Promise<T>)
const resolved = async <T>(value: Resolvable<T>): Promise<T> => (typeof value === 'function' ? (value as () => T | Promise<T>)() : value)

/** Every description `--help` prints, command by command: the command's and each argument's. */
async function helpTexts(cmd: Resolvable<AnyCommand>, path: string, out: string[] = []): Promise<string[]> {
  const command = await resolved(cmd)
  const meta = (await resolved(command.meta ?? {})) as { description?: string }
  if (meta.description) out.push(`${path}: ${meta.description}`)
  for (const [name, arg] of Object.entries((await resolved(command.args ?? {})) as Record<string, { description?: string }>)) {
    if (arg.description) out.push(`${path} --${name}: ${arg.description}`)
  }
  const subs = (await resolved(command.subCommands ?? {})) as Record<string, Resolvable<AnyCommand>>
  for (const [name, sub] of Object.entries(subs)) await helpTexts(sub, `${path} ${name}`, out)
  return out
}

/**
 * Facet examples a shell would break: a condition with `>` or `<` not inside quotes (the shell
 * reads `level>=2` as `level` and a redirection to a file `=2`), and any literal example after
 * `--facet` not quoted (placeholders in capitals, NAME=VALUE, are not examples).
 */
function unquotedFacetExamples(text: string): string[] {
  const comparisons = [...text.matchAll(/(?<![\w'"])[a-z][a-z0-9_]*(?:>=|<=|>|<)[^\s,;)`'"]+/g)].map((m) => m[0])
  const afterFlag = [...text.matchAll(/--facet[ =]([a-z][^\s`]*)/g)].map((m) => `--facet ${m[1]}`)
  return [...comparisons, ...afterFlag]
}

describe('facet syntax (issue 32, item 17)', () => {
  it('quotes every facet example in --help and the README', async () => {
    const texts = (await helpTexts(main, 'tychora')).filter((t) => /facet/i.test(t))
    // The three commands that take --facet are among them.
    expect(texts.filter((t) => / --facet: /.test(t)).map((t) => t.slice(0, t.indexOf(' --facet')))).toEqual(['tychora add', 'tychora search', 'tychora records list'])
    for (const text of texts) expect(unquotedFacetExamples(text), text).toEqual([])
    const readme = README.split('\n\n').filter((p) => /--facet/.test(p))
    expect(readme.length).toBeGreaterThan(1)
    for (const paragraph of readme) expect(unquotedFacetExamples(paragraph), paragraph).toEqual([])
  })

  it('refuses a malformed facet condition with a one-line E_INVALID_ARGUMENT naming it, not the pattern', () => {
    // `level` is what the CLI receives from an unquoted `--facet level>=2`.
    const malformed = ['level', 'l', '>=2', 'Level>=2', 'level ~ 2']
    for (const [schema, base] of [
      [QueryRequestSchema, { query: 'q' }],
      [ListRecordsRequestSchema, {}],
    ] as const) {
      for (const condition of malformed) {
        let caught: unknown
        try {
          validate(schema, { ...base, facets: [condition] })
        } catch (error) {
          caught = error
        }
        expect(caught).toBeInstanceOf(TychoraError)
        const error = caught as TychoraError
        expect(error.code).toBe('E_INVALID_ARGUMENT')
        // One line, one issue, naming what was given; the schema's regular expression is not the message.
        expect(error.message.split('\n')).toHaveLength(1)
        expect(error.message.split('; facets').length).toBe(1)
        expect(error.message).toContain(JSON.stringify(condition))
        expect(error.message).not.toContain('pattern')
        expect(error.message).not.toContain('[a-z0-9_]')
      }
      expect(() => validate(schema, { ...base, facets: ['level>=2', 'decided=2024-01-01..2024-12-31'] })).not.toThrow()
    }
    expect(FacetConditionSchema.safeParse('jurisdiction=EU').success).toBe(true)
  })
})
