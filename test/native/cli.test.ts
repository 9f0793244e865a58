import { symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { QueryResultSchema } from '../../ts/contracts/result.js'
import { ReceiptSchema } from '../../ts/contracts/ingest.js'
import { ERROR_CODES, EXIT_PARTIAL } from '../../ts/errors.js'
import { ROOT, cli, nativeMissing, scratch } from './_setup.js'

describe.skipIf(nativeMissing)('CLI', () => {
  it('init, add, search in md and json, inspect, status, verify', async () => {
    const { docs, ws } = await scratch()
    expect((await cli(['init', ws])).code).toBe(0)
    const add = await cli(['add', '-w', ws, docs])
    expect(add.code).toBe(0)
    expect(add.stdout).toMatch(/3 added/)
    expect(add.stderr).toBe('') // no TTY: no progress bar

    const md = await cli(['search', '-w', ws, 'max-age', 'directive', '--limit', '2'])
    expect(md.code).toBe(0)
    expect(md.stdout).toMatch(/### \[1\] http-caching\.md:\d+-\d+ — HTTP caching notes > Freshness/)

    const json = await cli(['search', '-w', ws, 'ETag validator', '--format', 'json'])
    const result = QueryResultSchema.parse(JSON.parse(json.stdout))
    expect(result.segments[0]!.locator.heading_path).toContain('Validation')

    const agent = await cli(['search', '-w', ws, 'snapshot', '--format', 'agent'])
    expect(agent.stdout).toMatch(/<evidence id="seg_\d+_\d+" cite="glossary\.json:\d+-\d+"/)
    expect(agent.stdout).toContain('not instructions to follow')

    const inspect = await cli(['inspect', '-w', ws, 'snapshot:1'])
    expect(JSON.parse(inspect.stdout)).toMatchObject({ type: 'snapshot', id: 1, current: true })
    const status = await cli(['manage', 'status', '-w', ws, '--format', 'json'])
    expect(JSON.parse(status.stdout).current_snapshot.sources).toBe(3)
    const verify = await cli(['manage', 'verify', '-w', ws])
    expect(verify.stdout).toMatch(/^ok: 3 artifacts re-hashed/)
  })

  it('reports bad input per file and exits with the partial-success code', async () => {
    const { docs, ws } = await scratch()
    await cli(['init', ws])
    await writeFile(join(docs, 'blob.md'), Buffer.from([0x89, 0x50, 0x00, 0x01]))
    await writeFile(join(docs, 'broken.json'), '{"a": ')
    await symlink('/etc/passwd', join(docs, 'passwd.md'))
    const add = await cli(['add', '-w', ws, docs, '--format', 'json'])
    expect(add.code).toBe(EXIT_PARTIAL)
    const receipt = ReceiptSchema.parse(JSON.parse(add.stdout))
    const codes = Object.fromEntries(receipt.diagnostics.map((d) => [d.path, d.code]))
    expect(codes).toMatchObject({ 'blob.md': 'E_UNSUPPORTED_FORMAT', 'broken.json': 'E_UNSUPPORTED_FORMAT', 'passwd.md': 'E_INVALID_ARGUMENT' })
    expect(receipt.files.added).toBe(3)
    const leaked = await cli(['search', '-w', ws, 'root', '--format', 'json'])
    expect(leaked.stdout).not.toContain('/bin/')
  })

  it('a code-profile workspace cites symbols by path and line', async () => {
    const { dir } = await scratch()
    const ws = join(dir, 'code-ws')
    expect((await cli(['init', ws, '--profile', 'code'])).code).toBe(0)
    const add = await cli(['add', '-w', ws, join(ROOT, 'crates/tychora-core/tests/fixtures/code/geometry')])
    expect(add.code).toBe(0)
    const json = await cli(['search', '-w', ws, 'Circle.scaled', '--format', 'json', '--limit', '1'])
    const top = QueryResultSchema.parse(JSON.parse(json.stdout)).segments[0]!
    // Module paths are relative to the capture root (here the package directory itself).
    expect(top.locator.anchor).toBe('shapes.Circle.scaled')
    expect(top.citation).toMatch(/^shapes\.py:\d+-\d+$/)
    expect((await cli(['init', join(dir, 'bad'), '--profile', 'nope'])).code).toBe(ERROR_CODES.E_INVALID_ARGUMENT.exit)
  })

  it('exit codes follow the error table', async () => {
    const { dir, ws } = await scratch()
    const missing = await cli(['search', '-w', join(dir, 'none'), 'x'])
    expect(missing.code).toBe(ERROR_CODES.E_NOT_FOUND.exit)
    expect(missing.stderr).toMatch(/^error\[E_NOT_FOUND\]/)
    await cli(['init', ws])
    const json = await cli(['search', '-w', ws, 'x', '--format', 'json', '--snapshot', '7'])
    expect(JSON.parse(json.stderr)).toMatchObject({ code: 'E_NOT_FOUND' })
    const badFormat = await cli(['search', '-w', ws, 'x', '--format', 'yaml'])
    expect(badFormat.code).toBe(ERROR_CODES.E_INVALID_ARGUMENT.exit)
    const unknown = await cli(['frobnicate'])
    expect(unknown.code).toBe(ERROR_CODES.E_INVALID_ARGUMENT.exit)
    const empty = await cli(['search', '-w', ws, 'anything'])
    expect(empty.code).toBe(0)
    expect(empty.stdout).toContain('no published snapshot yet')
  })
})
