import { copyFile, mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { PackEntrySchema } from '../../ts/contracts/pack.js'
import { ROOT, cli, nativeMissing, scratch } from './_setup.js'

/**
 * Issue 32 item 15: `packs validate` lists every problem of every stage (schema, name, dependencies,
 * regexes) in one run, each as FILE:LINE: POINTER, and a verbatim copy of a built-in pack outside
 * a workspace's packs/ is that pack, not a misnamed one.
 */
describe.skipIf(nativeMissing)('packs validate', () => {
  it('lists every problem of every stage in one run, each with its file and line', async () => {
    const { ws } = await scratch()
    expect((await cli(['init', ws])).code).toBe(0)
    await mkdir(join(ws, 'packs', 'multi'), { recursive: true })
    const file = join(ws, 'packs', 'multi', 'pack.json')
    await writeFile(
      file,
      [
        '{',
        '  "name": "other",',
        '  "version": 1,',
        '  "description": "several problems at once",',
        '  "depends": ["documents", "nowhere"],',
        '  "output": { "limt": 3, "budgte": 10 },',
        '  "identifiers": { "patterns": [{ "name": "twice", "regex": "(a+)+\\\\1" }] }',
        '}',
        '',
      ].join('\n'),
    )
    const run = await cli(['packs', 'validate', file, '-w', ws, '--format', 'json'])
    expect(run.code).toBe(1)
    const [entry] = PackEntrySchema.array().parse(JSON.parse(run.stdout))
    const located = entry!.problems.map((p) => p.match(/^(.*):(\d+): (\/\S*):/)?.slice(1, 4))
    expect(located.every((l) => l?.[0] === file)).toBe(true)
    expect(located.map((l) => `${l?.[1]} ${l?.[2]}`).sort()).toEqual(['2 /name', '5 /depends/1', '6 /output/budgte', '6 /output/limt', '7 /identifiers/patterns/0/regex'].sort())
  })

  it('accepts a verbatim copy of a built-in pack in another folder', async () => {
    const { dir, ws } = await scratch()
    expect((await cli(['init', ws])).code).toBe(0)
    await mkdir(join(dir, 'packtest'), { recursive: true })
    const copy = join(dir, 'packtest', 'pack.json')
    await copyFile(join(ROOT, 'packs', 'documents', 'pack.json'), copy)
    for (const workspace of [[], ['-w', ws]]) {
      const run = await cli(['packs', 'validate', copy, ...workspace, '--format', 'json'])
      expect(run.code, run.stdout).toBe(0)
      const [entry] = PackEntrySchema.array().parse(JSON.parse(run.stdout))
      expect(entry).toMatchObject({ name: 'documents', origin: copy, problems: [] })
    }
    // In a workspace's packs/, the folder is how the pack is found: there the names must agree.
    await mkdir(join(ws, 'packs', 'packtest'), { recursive: true })
    const placed = join(ws, 'packs', 'packtest', 'pack.json')
    await copyFile(copy, placed)
    const run = await cli(['packs', 'validate', placed, '-w', ws, '--format', 'json'])
    expect(run.code).toBe(1)
    const [entry] = PackEntrySchema.array().parse(JSON.parse(run.stdout))
    expect(entry!.problems.map((p) => p.match(/^.*:\d+: (\/\S*):/)?.[1])).toEqual(['/name'])
  })
})
