import { existsSync, readdirSync } from 'node:fs'
import { mkdir, readFile, readdir, stat, symlink, writeFile } from 'node:fs/promises'
import Module from 'node:module'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { QueryResultSchema } from '../../ts/contracts/result.js'
import { ReceiptSchema } from '../../ts/contracts/ingest.js'
import { Workspace } from '../../ts/engine/workspace.js'
import { ERROR_CODES, EXIT_PARTIAL } from '../../ts/errors.js'
import { visible } from '../../ts/format/terminal.js'
import { ROOT, cli, nativeMissing, scratch } from './_setup.js'

/** What must never reach a terminal raw: C0 controls but \t and \n, DEL, C1, bidi overrides and isolates. */
const RAW_CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/
/** A clipboard write (OSC 52), a screen clear, a window title, a bell, a C1 CSI and a right-to-left override. */
const HOSTILE = 'zebrafish \x1b]52;c;ZXZpbA==\x07 clear \x1b[2J title \x1b]0;pwned\x07 bell \x07 csi \u009b31m rlo \u202egnp.exe'
const HOSTILE_NAME = 'clip\x1b]0;title\x07\x1b[2J\u009b\u202e'

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

  it('keeps the compiled CLI in a private cache, and a damaged cache costs only speed', async () => {
    const { dir, docs, ws } = await scratch()
    const cache = join(dir, 'cache')
    const env = { TYCHORA_CACHE_DIR: cache }
    await cli(['init', ws], { env })
    await cli(['add', '-w', ws, docs], { env })
    // The markdown view without its footer (the run id and the time), so two runs compare whole.
    const evidence = (stdout: string) => stdout.replace(/^_snapshot .*_$/m, '')
    const search = async () => {
      const run = await cli(['search', '-w', ws, 'ETag validator', '--limit', '2'], { env })
      return { ...run, stdout: evidence(run.stdout) }
    }
    const first = await search()
    expect(first.code).toBe(0)
    const folder = join(cache, 'compile', `node-${process.version}-${process.arch}`)
    const kept = await readdir(folder)
    expect(kept.length).toBeGreaterThan(0)
    if (process.platform !== 'win32') expect((await stat(folder)).mode & 0o077).toBe(0)
    if (!('enableCompileCache' in Module)) {
      // Node 20: one cache per bundle chunk the runs loaded, named by the chunk (its content hash).
      const chunks = readdirSync(join(ROOT, 'dist/cli-bundle'))
      const entry = `${chunks.find((c) => c.startsWith('tychora-'))}.v8`
      expect(kept.every((f) => f.endsWith('.v8') && chunks.includes(f.slice(0, -3)))).toBe(true)
      expect(kept).toContain(entry)
      expect(kept.some((f) => f.startsWith('search-'))).toBe(true)
      for (const f of kept) await writeFile(join(folder, f), 'not a code cache')
      const damaged = await search()
      expect(damaged.code).toBe(0)
      expect(damaged.stdout).toBe(first.stdout)
      // V8 refused the damaged files of the chunks the search loaded, and the run kept new ones.
      expect((await readFile(join(folder, entry), 'utf8')).startsWith('not a code cache')).toBe(false)
    }
    const cached = await search()
    expect(cached.stdout).toBe(first.stdout)
    const off = join(dir, 'off')
    const uncached = await cli(['search', '-w', ws, 'ETag validator', '--limit', '2'], {
      env: { TYCHORA_CACHE_DIR: off, NODE_DISABLE_COMPILE_CACHE: '1' },
    })
    expect(evidence(uncached.stdout)).toBe(first.stdout)
    expect(existsSync(off)).toBe(false)
  })

  it('labels sources, keeps a search to a sensitivity level, and erases a source relabelled past the ceiling', async () => {
    const { docs, ws } = await scratch()
    await cli(['init', ws])
    expect((await cli(['add', '-w', ws, docs])).code).toBe(0)
    await writeFile(join(docs, 'keys.md'), '# Keys\n\nThe vault opens with the ETag validator phrase.\n')
    const refused = await cli(['add', '-w', ws, join(docs, 'keys.md'), '--sensitivity', 'secret'])
    expect(refused.code).toBe(ERROR_CODES.E_FORBIDDEN.exit)
    expect(refused.stderr).toContain("above this workspace's ceiling")
    const hits = async (...flags: string[]) => {
      const run = await cli(['search', '-w', ws, 'ETag validator', '--format', 'json', ...flags])
      expect(run.code).toBe(0)
      const result = QueryResultSchema.parse(JSON.parse(run.stdout))
      return { paths: [...new Set(result.segments.map((s) => s.source.path))].sort(), eligible: result.coverage.eligible_sources }
    }
    expect((await hits()).paths).toContain('http-caching.md')
    expect((await hits()).paths).not.toContain('keys.md')
    const relabel = await cli(['manage', 'sensitivity', 'http-caching.md', 'confidential', '--reason', 'vendor terms', '-w', ws])
    expect(relabel.code).toBe(0)
    expect(relabel.stdout).toMatch(/http-caching\.md \(source \d+\): internal → confidential/)
    const limited = await hits('--max-sensitivity', 'internal')
    expect(limited.paths).not.toContain('http-caching.md')
    expect(limited.eligible).toBe((await hits()).eligible - 1)
    const past = await cli(['manage', 'sensitivity', 'http-caching.md', 'secret', '--reason', 'names a customer', '-w', ws])
    expect(past.code).toBe(0)
    expect(past.stdout).toMatch(/above the ceiling: erased [0-9a-f]{64}/)
    expect((await hits()).paths).not.toContain('http-caching.md')
    const unknown = await cli(['search', '-w', ws, 'ETag', '--max-sensitivity', 'cosmic'])
    expect(unknown.code).toBe(ERROR_CODES.E_INVALID_ARGUMENT.exit)
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

  it('prints control characters from file content and file names as escapes; JSON keeps the exact text', async () => {
    const { dir, ws } = await scratch()
    const docs = join(dir, 'hostile')
    await mkdir(docs)
    await writeFile(join(docs, `${HOSTILE_NAME}.md`), `# Clipboard notes\n\n${HOSTILE}\n`)
    await writeFile(join(docs, `${HOSTILE_NAME}.json`), '{"unterminated": ') // a diagnostic naming the file
    expect((await cli(['init', ws])).code).toBe(0)

    const add = await cli(['add', '-w', ws, docs])
    expect(add.code).toBe(EXIT_PARTIAL)
    expect(add.stdout).not.toMatch(RAW_CONTROL)
    expect(add.stdout).toContain(visible(`${HOSTILE_NAME}.md`)) // the added name
    expect(add.stdout).toContain(`E_UNSUPPORTED_FORMAT ${visible(`${HOSTILE_NAME}.json`)}`) // a diagnostic's path

    for (const format of ['md', 'agent']) {
      const out = await cli(['search', '-w', ws, 'zebrafish', '--format', format])
      expect(out.code).toBe(0)
      expect(out.stdout).not.toMatch(RAW_CONTROL)
      expect(out.stdout).toContain(visible(HOSTILE))
      expect(out.stdout).toContain(visible(`${HOSTILE_NAME}.md`))
    }
    const json = await cli(['search', '-w', ws, 'zebrafish', '--format', 'json'])
    const top = QueryResultSchema.parse(JSON.parse(json.stdout)).segments[0]!
    expect(top.text).toContain(HOSTILE)
    expect(top.source.path).toBe(`${HOSTILE_NAME}.md`)
    const receipt = ReceiptSchema.parse(JSON.parse((await cli(['add', '-w', ws, docs, '--format', 'json'])).stdout))
    expect(receipt.diagnostics.map((d) => d.path)).toContain(`${HOSTILE_NAME}.json`)

    // A symbol report names the module after the file.
    const code = join(dir, 'code-ws')
    const pkg = join(dir, 'pkg')
    await mkdir(pkg)
    await writeFile(join(pkg, `${HOSTILE_NAME}.py`), 'def caller():\n    return 1\n')
    await cli(['init', code, '--profile', 'code'])
    expect((await cli(['add', '-w', code, pkg])).code).toBe(0)
    const symbol = await cli(['inspect', '-w', code, 'symbol', 'caller'])
    expect(symbol.code).toBe(0)
    expect(symbol.stdout).not.toMatch(RAW_CONTROL)
    expect(symbol.stdout).toContain(visible(`${HOSTILE_NAME}.py`))
    const report = JSON.parse((await cli(['inspect', '-w', code, 'symbol', 'caller', '--format', 'json'])).stdout)
    expect(report.definitions[0].site.path).toBe(`${HOSTILE_NAME}.py`)

    // The CLI's own error line quotes what it was given: escaped as well.
    const missing = await cli(['inspect', '-w', ws, `chunk:\x1b[2J`])
    expect(missing.code).not.toBe(0)
    expect(missing.stderr).toMatch(/^error\[E_[A-Z_]+\]: /)
    expect(missing.stderr).not.toMatch(RAW_CONTROL)
  })

  it('refuses unknown flags and surplus arguments on every command, naming the closest flag', async () => {
    const { dir, docs } = await scratch()
    const typo = await cli(['init', '--profil', 'code', 'ws'], { cwd: dir })
    expect(typo.code).toBe(ERROR_CODES.E_INVALID_ARGUMENT.exit)
    expect(typo.stderr).toMatch(/^error\[E_INVALID_ARGUMENT\]: /)
    expect(typo.stderr).toContain('--profile?') // the suggestion is the behaviour
    const surplus = await cli(['init', 'ws', 'extra'], { cwd: dir })
    expect(surplus.code).toBe(ERROR_CODES.E_INVALID_ARGUMENT.exit)
    expect(await readdir(dir)).toEqual(['docs']) // neither created a workspace

    const evalTypo = await cli(['eval', 'beir', join(ROOT, 'test/fixtures/beir-mini'), '--provider', 'local'], { cwd: dir })
    expect(evalTypo.code).toBe(ERROR_CODES.E_INVALID_ARGUMENT.exit)
    expect(await readdir(dir)).toEqual(['docs']) // no report written
    const json = await cli(['manage', 'status', '--frmat', 'json', '--format', 'json'], { cwd: dir })
    expect(JSON.parse(json.stderr)).toMatchObject({ code: 'E_INVALID_ARGUMENT' })
    expect((await cli(['serch', 'x'], { cwd: dir })).code).toBe(ERROR_CODES.E_INVALID_ARGUMENT.exit)

    // Declared flags, aliases, --x=value, negation and several paths or query words still work.
    const ws = join(dir, 'ws')
    expect((await cli(['init', ws, '--profile=documents', '--format', 'json'])).code).toBe(0)
    const add = await cli(['add', '-w', ws, join(docs, 'http-caching.md'), join(docs, 'glossary.json')])
    expect(add.code).toBe(0)
    expect(add.stdout).toMatch(/2 added/)
    const search = await cli(['search', `--workspace=${ws}`, 'max-age', 'directive', '--no-graph', '--limit', '1', '--format', 'json'])
    expect(search.code).toBe(0)
    expect(QueryResultSchema.parse(JSON.parse(search.stdout)).query).toBe('max-age directive')
  })

  it("a query over 10,000 characters is E_INVALID_ARGUMENT with the library's one-line message; -- ends the options", async () => {
    const { docs, ws } = await scratch()
    await cli(['init', ws])
    await cli(['add', '-w', ws, docs])
    const long = 'a'.repeat(10_001)
    const text = await cli(['search', '-w', ws, long])
    expect(text.code).toBe(ERROR_CODES.E_INVALID_ARGUMENT.exit)
    expect(text.stderr).toMatch(/^error\[E_INVALID_ARGUMENT\]: [^\n]+\n$/)
    const json = await cli(['search', '-w', ws, long, '--format', 'json'])
    expect(json.code).toBe(ERROR_CODES.E_INVALID_ARGUMENT.exit)
    const error = JSON.parse(json.stderr) as { code: string; message: string }
    expect(error.code).toBe('E_INVALID_ARGUMENT')
    expect(text.stderr).toBe(`error[E_INVALID_ARGUMENT]: ${error.message}\n`)
    // The library refuses it with the same code and message.
    const workspace = await Workspace.open(ws)
    try {
      await expect(workspace.search({ query: long })).rejects.toMatchObject({ code: 'E_INVALID_ARGUMENT', message: error.message })
    } finally {
      workspace.close()
    }

    // After --, a query may start with -.
    const dashed = await cli(['search', '-w', ws, '--format', 'json', '--', '-max-age directive', '--limit'])
    expect(dashed.code).toBe(0)
    const result = QueryResultSchema.parse(JSON.parse(dashed.stdout))
    expect(result.query).toBe('-max-age directive --limit')
    expect(result.segments[0]?.source.path).toBe('http-caching.md')
    expect((await cli(['search', '-w', ws, '-max-age'])).code).toBe(ERROR_CODES.E_INVALID_ARGUMENT.exit)
  })
})
