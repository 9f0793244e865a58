import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { RelabelReportSchema, WithdrawReportSchema } from '../../ts/contracts/operations.js'
import { ERROR_CODES } from '../../ts/errors.js'
import { cli, nativeMissing, scratch } from './_setup.js'

/**
 * Issue 32 item 14: the commands that take a source (`manage withdraw`, `delete-original`,
 * `sensitivity`) name it the ways `add` names a path — relative to the current directory,
 * absolute, as a `file://` URI (percent-escaped, as a browser copies one) — besides `source:N`
 * and the root-relative path; a name that matches nothing is refused with the nearest sources.
 */
describe.skipIf(nativeMissing)('source arguments', () => {
  it('accept the paths add accepts, and suggest the nearest source when none matches', async () => {
    const { dir, docs, ws } = await scratch()
    await writeFile(join(docs, 'release plan.md'), '# Release plan\n\nShip the caching notes in March.\n')
    expect((await cli(['init', ws])).code).toBe(0)
    expect((await cli(['add', '-w', ws, docs], { cwd: dir })).code).toBe(0)

    // A typo: not found, and the error names the source that was meant.
    const typo = await cli(['manage', 'withdraw', 'docs/glosary.json', '--reason', 'r', '-w', ws, '--format', 'json'], { cwd: dir })
    expect(typo.code).toBe(ERROR_CODES.E_NOT_FOUND.exit)
    const refused = JSON.parse(typo.stderr) as { code: string; message: string }
    expect(refused.code).toBe('E_NOT_FOUND')

    // Relative to the current directory, as `add docs` was given.
    const withdrawn = await cli(['manage', 'withdraw', 'docs/glossary.json', '--reason', 'outdated', '-w', ws, '--format', 'json'], { cwd: dir })
    expect(withdrawn.code, withdrawn.stderr).toBe(0)
    const report = WithdrawReportSchema.parse(JSON.parse(withdrawn.stdout))
    expect(report.withdrawn.map((w) => w.path)).toEqual(['glossary.json'])
    // The suggestion was that very source.
    expect(refused.message).toContain(`source:${report.withdrawn[0]!.source_id} `)

    // Absolute.
    const erased = await cli(['manage', 'delete-original', join(docs, 'field-notes.txt'), '--reason', 'legal request', '-w', ws, '--format', 'json'])
    expect(erased.code, erased.stderr).toBe(0)
    expect(WithdrawReportSchema.parse(JSON.parse(erased.stdout)).withdrawn.map((w) => w.path)).toEqual(['field-notes.txt'])

    // A file URI with a percent-escaped space.
    const uri = pathToFileURL(join(docs, 'release plan.md')).href
    expect(uri).toContain('%20')
    const relabelled = await cli(['manage', 'sensitivity', uri, 'confidential', '--reason', 'draft', '-w', ws, '--format', 'json'])
    expect(relabelled.code, relabelled.stderr).toBe(0)
    expect(RelabelReportSchema.parse(JSON.parse(relabelled.stdout))).toMatchObject({ path: 'release plan.md', to: 'confidential' })

    // Root-relative still works, from anywhere.
    const rootRelative = await cli(['manage', 'sensitivity', 'http-caching.md', 'public', '--reason', 'published', '-w', ws, '--format', 'json'])
    expect(rootRelative.code, rootRelative.stderr).toBe(0)
    expect(RelabelReportSchema.parse(JSON.parse(rootRelative.stdout)).path).toBe('http-caching.md')
  })
})
