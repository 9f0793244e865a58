// The package as a user installs it: `npm pack` the root package and the platform binary
// packages, install them into an empty directory outside the repository, and use the CLI, the
// MCP server and the library from there. Also holds the size budget of what gets installed.
//
// Publishing (release.yml) runs `napi pre-publish`, which writes one optional dependency per
// napi target into the root package.json; the staged copy packed here gets the same map. Each
// optional dependency is pointed at a local tarball with `overrides`, so npm resolves the binding
// exactly as it would from the registry (through the optional dependency, skipping the packages
// whose os/cpu/libc do not match) while the runtime dependencies still come from the registry.
import { type SpawnOptions, spawn } from 'node:child_process'
import { appendFileSync, cpSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { delimiter, isAbsolute, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseTriple } from '@napi-rs/cli'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { unless } from '../support/requirements.js'

// ---------------------------------------------------------------------------------------------
// Size budgets. Measured 2026-11-30 on linux-x64-gnu: the root package's tarball 135.5 kB,
// unpacked 541.4 kB in 230 files (dist/ with its .d.ts (98 kB) and source maps (176 kB),
// migrations/, packs/, README.md). The binary tychora.linux-x64-gnu.node, symbols stripped:
// release profile (thin LTO, 16 codegen units) 31,396,568 B (29.9 MiB; its package tarball
// 12.9 MiB); dist profile (fat LTO, one codegen unit; what release.yml publishes) 29,813,432 B
// (28.4 MiB; tarball 12.6 MiB). `npm install` of both brings 104 packages, 47.9 MiB in all.
// The text channel (issue 10) added the local embedder (candle's BERT, the tokenizers crate),
// usearch (C++) and mimalloc: release binary 40,078,520 B (38.2 MiB), measured the same day.
// 2026-12-01: the CLI is bundled into dist/bin (zod and citty inlined, compressed but with names
// kept, for a CLI start ~50 ms shorter) and the unbundled dist/cli is left out: unpacked 784 kB in
// 171 files.
// 2026-12-02: documents, visual assets, descriptions, the visual channel and the law/RFC kinds
// (their code in dist/, migrations 0006–0013, the README) bring it to 1,005,880 B unpacked.
// Later that day facets, structured records, relations, modes and the evidence evaluation
// (migrations 0014–0016, the records/relations/eval commands, pack schema): 1,156,782 B in 252 files.
// Later still, team knowledge (dist/knowledge, the knowledge/review/migrate commands, the
// proposals route and tool, migration 0017, the README's section): 1,297,650 B in 273 files.
// 2026-12-03: the CLI's CommonJS chunks, sensitivity (migration 0019) and the PDF layout's modules
// (pdf-layout, pdf-undrawn, pdf-aligned, pdf-orient): 1,444,863 B in 279 files.
// 2026-12-04: everyday paths (retention and purge, snapshot scrub, source selectors) and long
// queries (the bigram tokenizer, mentions): the binary reached 50,350,776 B, past its 48 MiB; the
// root package 1,519,100 B in 291 files. The binary's budget is raised to 52 MiB (+3%).
// Later that day the dashboard (issue 35: its built page in dist/dashboard, 139 kB in 16 files,
// and its server in dist/http/dashboard), job cancellation and kept evaluation records: the root
// package 1,810,616 B in 323 files. Its budgets are raised to 2.0 MB and 360 files (+10%).
// 2026-12-04, night: artifacts on S3 (issue 36: the `object_store` crate with its HTTP client,
// rustls with ring, and a tokio runtime): the release binary 55,804,280 B (53.2 MiB), +5.5 MB. The
// binary's budget is raised to 56 MiB (+5%): an S3 client belongs in the one binary `serve` runs.
// Budgets: the measured figures plus 10–25%, the binary's over the larger release build.
// Other targets are not measured here; release.yml's package job checks each with its dist binary.
// ---------------------------------------------------------------------------------------------
/** Unpacked size of the root `tychora` package (what `npm install tychora` puts in node_modules/tychora). */
const PACKAGE_UNPACKED_BUDGET = 2_000_000
/** Files in the root package. */
const PACKAGE_FILES_BUDGET = 360
/** The platform binary, `tychora.<platform>.node`. */
const BINARY_BUDGET = 56 * 1024 * 1024

const ROOT = resolve(import.meta.dirname, '../..')
const ROOT_PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string
  version: string
  dependencies: Record<string, string>
  repository: unknown
  napi: { binaryName: string; packageName: string; targets: string[] }
}
const { binaryName, packageName } = ROOT_PKG.napi
const TARGETS = ROOT_PKG.napi.targets.map((t) => parseTriple(t))
const QUERY = 'how does a cache revalidate a stale response'
const IS_WINDOWS = process.platform === 'win32'

/** The napi platform name of this machine, chosen the way the generated loader chooses it. */
function hostPlatformArchAbi(): string {
  const { platform, arch } = process
  if (platform === 'linux') {
    const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header
    return `linux-${arch}-${header?.glibcVersionRuntime ? 'gnu' : 'musl'}`
  }
  if (platform === 'win32') return `win32-${arch}-msvc`
  return `${platform}-${arch}`
}

const HOST = hostPlatformArchAbi()
const hostTarget = TARGETS.find((t) => t.platformArchABI === HOST)
const BINARY_NAME = `${binaryName}.${HOST}.node`
/** The binary to pack: the one built into ts/native, or another build of it (e.g. the dist profile's) named by TYCHORA_PACKAGE_BINARY. */
const BINARY = process.env.TYCHORA_PACKAGE_BINARY ? resolve(process.env.TYCHORA_PACKAGE_BINARY) : join(ROOT, 'ts/native', BINARY_NAME)
const BINDING = `${packageName}-${HOST}`

/**
 * Skipped, with this reason, when there is nothing to pack; a failure instead where the run
 * requires the package (release.yml's package job: TYCHORA_PACKAGE_TEST=required).
 */
const packageMissing = unless(
  'package',
  !existsSync(join(ROOT, 'dist/bin/tychora.cjs'))
    ? 'dist/ not built: run `npm run build` first'
    : !hostTarget
      ? `no prebuild target for this machine (${HOST}) in package.json napi.targets`
      : !existsSync(BINARY)
        ? `native addon not built: ${BINARY.startsWith(ROOT) ? relative(ROOT, BINARY) : BINARY} is missing (run \`npm run build\`, or download the target's artifact into ts/native)`
        : false,
)

// ---------------------------------------------------------------------------------------------

interface RunResult {
  code: number | null
  stdout: string
  stderr: string
}

/**
 * The environment of a user's shell: nothing that npm sets when this suite runs under
 * `npm test` (npm_package_*, npm_config_local_prefix, INIT_CWD, the repository's
 * node_modules/.bin on PATH), no NODE_PATH, no TYCHORA_* settings.
 */
function userEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined) continue
    if (/^npm_/.test(key) || key === 'INIT_CWD' || /^NODE_(PATH|OPTIONS)$/i.test(key) || /^TYCHORA_/i.test(key)) continue
    if (/^path$/i.test(key)) {
      env[key] = value
        .split(delimiter)
        .filter((p) => p !== '' && !p.startsWith(ROOT) && !p.includes(`node_modules${sep}.bin`) && !p.includes('node-gyp-bin'))
        .join(delimiter)
      continue
    }
    env[key] = value
  }
  return env
}

/** cmd.exe quoting for the few plain arguments used here (no quotes or carets inside). */
const quoteCmd = (arg: string): string => (/^[\w@%+=:,./\\-]+$/.test(arg) ? arg : `"${arg}"`)

/** Runs a command the way a user types it; npm and npx are .cmd shims on Windows, so those go through the shell there. */
function run(command: string, args: string[], cwd: string, timeoutMs = 240_000): Promise<RunResult> {
  return new Promise((resolvePromise, reject) => {
    const options: SpawnOptions = { cwd, env: userEnv(), stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs }
    const child = IS_WINDOWS && (command === 'npm' || command === 'npx') ? spawn([command, ...args].map(quoteCmd).join(' '), { ...options, shell: true }) : spawn(command, args, options)
    let stdout = ''
    let stderr = ''
    child.stdout?.on('data', (d) => (stdout += d))
    child.stderr?.on('data', (d) => (stderr += d))
    child.on('error', reject)
    child.on('close', (code) => resolvePromise({ code, stdout, stderr }))
  })
}

/** Like `run`, but fails the test with the command's output when it exits non-zero. */
async function ok(command: string, args: string[], cwd: string): Promise<RunResult> {
  const r = await run(command, args, cwd)
  if (r.code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`)
  return r
}

interface PackResult {
  filename: string
  size: number
  unpackedSize: number
  entryCount: number
  files: Array<{ path: string; size: number }>
}

/** `npm pack` of package directories into `dest`, in one npm run. --ignore-scripts: `prepare` would rebuild the addon. */
async function pack(dirs: string[], dest: string): Promise<PackResult[]> {
  const r = await ok('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dest, ...dirs], dest)
  const results = JSON.parse(r.stdout) as PackResult[]
  expect(results).toHaveLength(dirs.length)
  return results
}

function dirSize(dir: string): number {
  let total = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) total += dirSize(path)
    else if (entry.isFile()) total += statSync(path).size
  }
  return total
}

const kB = (n: number): string => `${(n / 1000).toFixed(1)} kB`
const MiB = (n: number): string => `${(n / 1024 / 1024).toFixed(1)} MiB`

interface Segment {
  id: string
  text: string
  citation: string
  source: { path: string }
  locator: { line_start: number; line_end: number; byte_start: number; byte_end: number; heading_path: string[] }
  revision: { sha256: string }
}

/** A segment's citation names its lines, and its byte span quotes the file it came from exactly. */
function expectCited(segment: Segment | undefined, docs: string): void {
  expect(segment?.source.path).toBe('http-caching.md')
  const s = segment!
  expect(s.locator.heading_path).toEqual(['HTTP caching notes', 'Validation'])
  expect(s.citation).toBe(`http-caching.md:${s.locator.line_start}-${s.locator.line_end}`)
  const bytes = readFileSync(join(docs, 'http-caching.md'))
  expect(bytes.subarray(s.locator.byte_start, s.locator.byte_end).toString('utf8')).toBe(s.text)
  expect(s.revision.sha256).toMatch(/^[0-9a-f]{64}$/)
}

/** Whether `path` is `dir` or inside it (paths compared after realpath, case-folded on Windows). */
function inside(path: string, dir: string): boolean {
  const norm = (p: string): string => (IS_WINDOWS ? realpathSync.native(p).toLowerCase() : realpathSync.native(p))
  const rel = relative(norm(dir), norm(path))
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel))
}

// ---------------------------------------------------------------------------------------------

describe.skipIf(packageMissing)(packageMissing ? `installed package (skipped: ${packageMissing})` : `installed package (tychora + ${BINDING})`, () => {
  let work = ''
  let app = ''
  let docs = ''
  let main: PackResult
  let binding: PackResult
  const timings: Record<string, number> = {}

  beforeAll(async () => {
    const started = performance.now()
    // realpath: on macOS the temp dir is reached through the /var -> /private/var link.
    work = realpathSync.native(await mkdtemp(join(tmpdir(), 'tychora-package-')))
    const stage = join(work, 'stage')
    const tarballs = join(work, 'tarballs')
    mkdirSync(tarballs, { recursive: true })

    // The root package: the files npm would publish from this checkout, with the optional
    // dependencies `napi pre-publish` adds at publish time.
    const listing = await ok('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], ROOT)
    const [planned] = JSON.parse(listing.stdout) as PackResult[]
    const mainStage = join(stage, 'tychora')
    for (const { path } of planned!.files) cpSync(join(ROOT, path), join(mainStage, path))
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, unknown>
    manifest.optionalDependencies = Object.fromEntries(TARGETS.map((t) => [`${packageName}-${t.platformArchABI}`, ROOT_PKG.version]))
    writeFileSync(join(mainStage, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`)

    // The platform packages as committed in npm/<platform>/, with this machine's binary copied in
    // the way `napi artifacts` does. The others are packed without a binary: npm must skip them.
    const platformStages = TARGETS.map((t) => {
      const dir = join(stage, t.platformArchABI)
      cpSync(join(ROOT, 'npm', t.platformArchABI), dir, { recursive: true })
      if (t.platformArchABI === HOST) cpSync(BINARY, join(dir, BINARY_NAME))
      return dir
    })
    const [mainPack, ...platformPacks] = await pack([mainStage, ...platformStages], tarballs)
    main = mainPack!
    const byPlatform = new Map(TARGETS.map((t, i) => [t.platformArchABI, platformPacks[i]!]))
    binding = byPlatform.get(HOST)!
    timings.pack = performance.now() - started

    // An empty project outside the repository; the binding arrives as tychora's optional dependency.
    app = join(work, 'app')
    mkdirSync(app)
    const overrides = Object.fromEntries(TARGETS.map((t) => [`${packageName}-${t.platformArchABI}`, `file:../tarballs/${byPlatform.get(t.platformArchABI)!.filename}`]))
    writeFileSync(join(app, 'package.json'), `${JSON.stringify({ name: 'tychora-package-test', private: true, type: 'module', overrides }, null, 2)}\n`)
    const t0 = performance.now()
    await ok('npm', ['install', '--no-audit', '--no-fund', `../tarballs/${main.filename}`], app)
    timings.install = performance.now() - t0

    docs = join(app, 'docs')
    cpSync(join(ROOT, 'test/fixtures/docs'), docs, { recursive: true })
  }, 300_000)

  afterAll(async () => {
    if (work) await rm(work, { recursive: true, force: true, maxRetries: 5 })
  })

  it('packs the files a user needs and no binary in the root package', () => {
    const paths = main.files.map((f) => f.path)
    for (const needed of [
      'package.json',
      'README.md',
      'dist/index.js',
      'dist/index.d.ts',
      'dist/bin/tychora.cjs',
      'dist/native/index.cjs',
      // The dashboard's built page: the daemon serves it from the installed package, offline.
      'dist/dashboard/index.html',
      'migrations/0001_initial.sql',
      'packs/documents/pack.json',
      'packs/code/pack.json',
    ]) {
      expect(paths).toContain(needed)
    }
    expect(paths.filter((p) => p.endsWith('.node'))).toEqual([])
    expect(paths.some((p) => /^dist\/dashboard\/assets\/index-[\w-]+\.js$/.test(p))).toBe(true)
    expect(binding.files.map((f) => f.path).sort()).toEqual([BINARY_NAME, 'README.md', 'package.json'].sort())
  })

  it('each platform package is named as the loader and the optional dependency expect', () => {
    const loader = readFileSync(join(ROOT, 'ts/native/index.cjs'), 'utf8')
    for (const t of TARGETS) {
      const pkg = JSON.parse(readFileSync(join(ROOT, 'npm', t.platformArchABI, 'package.json'), 'utf8')) as Record<string, unknown>
      expect(pkg.name).toBe(`${packageName}-${t.platformArchABI}`)
      expect(pkg.version).toBe(ROOT_PKG.version)
      // A provenance publish (release.yml) is refused without the repository the root names.
      expect(pkg.repository).toEqual(ROOT_PKG.repository)
      expect(pkg.main).toBe(`${binaryName}.${t.platformArchABI}.node`)
      expect(pkg.files).toEqual([`${binaryName}.${t.platformArchABI}.node`])
      expect(loader).toContain(`require('${packageName}-${t.platformArchABI}')`)
    }
  })

  it('installs from the tarballs alone: the binding through the optional dependency, nothing linked to the repository', () => {
    const installed = join(app, 'node_modules')
    expect(lstatSync(join(installed, 'tychora')).isDirectory()).toBe(true)
    const bindingDir = join(installed, ...BINDING.split('/'))
    expect(lstatSync(bindingDir).isDirectory()).toBe(true)
    expect(existsSync(join(bindingDir, BINARY_NAME))).toBe(true)
    // Only this machine's platform package: os/cpu/libc of the others kept them out.
    const [scope] = packageName.split('/')
    expect(readdirSync(join(installed, scope!))).toEqual([BINDING.split('/')[1]])
    // Only tychora and the platform packages came from the tarballs (the lockfile records every
    // platform, as it would from the registry); every runtime dependency was installed (from the
    // registry), and nothing is a link.
    const lock = readFileSync(join(app, 'package-lock.json'), 'utf8')
    expect(lock).not.toContain(ROOT)
    const locked = JSON.parse(lock) as { packages: Record<string, { version?: string; resolved?: string; link?: boolean }> }
    const fromFiles = Object.entries(locked.packages)
      .filter(([, e]) => e.resolved?.startsWith('file:'))
      .map(([k]) => k)
    expect(fromFiles.sort()).toEqual(['node_modules/tychora', ...TARGETS.map((t) => `node_modules/${packageName}-${t.platformArchABI}`)].sort())
    for (const dep of Object.keys(ROOT_PKG.dependencies)) expect(locked.packages[`node_modules/${dep}`]?.version, dep).toBeTruthy()
    for (const [key, entry] of Object.entries(locked.packages)) expect(entry.link, key).toBeFalsy()
  })

  it('npx tychora init, add, search: cited evidence', async () => {
    const t0 = performance.now()
    // The CLI's `#!/usr/bin/env node` finds the Node this suite runs on (scripts/node-versions.mjs
    // runs it under each supported major with that Node first on PATH).
    const node = (await ok('node', ['-p', 'process.version'], app)).stdout.trim()
    expect(node).toBe(process.version)
    if (process.env.TYCHORA_NODE_EXPECTED) expect(node).toBe(process.env.TYCHORA_NODE_EXPECTED)
    const init = await ok('npx', ['tychora', 'init'], app)
    expect(init.stdout).toContain('Initialised workspace')
    expect(existsSync(join(app, '.tychora', 'workspace.toml'))).toBe(true)

    const add = await ok('npx', ['tychora', 'add', './docs'], app)
    expect(add.stdout).toMatch(/job 1 succeeded: 3 added/)

    const md = await ok('npx', ['tychora', 'search', QUERY, '--limit', '2'], app)
    expect(md.stdout).toMatch(/^### \[1\] http-caching\.md:\d+-\d+ — HTTP caching notes > Validation$/m)
    expect(md.stdout).toMatch(/_rev 1 · sha256 [0-9a-f]{12} · /)

    const json = await ok('npx', ['tychora', 'search', QUERY, '--limit', '2', '--format', 'json'], app)
    const result = JSON.parse(json.stdout) as { segments: Segment[] }
    expectCited(result.segments[0], docs)
    timings.cli = performance.now() - t0
  })

  it('npx tychora mcp, through the MCP SDK client installed with it: search_evidence', async () => {
    const t0 = performance.now()
    // Runs in the install directory, so the SDK is the one npm installed for tychora.
    writeFileSync(
      join(app, 'mcp-client.mjs'),
      `import { readFileSync } from 'node:fs'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'

const project = /^name = "(.+)"$/m.exec(readFileSync('.tychora/workspace.toml', 'utf8'))[1]
const transport = new StdioClientTransport({ command: 'npx', args: ['tychora', 'mcp'], cwd: process.cwd(), env: process.env, stderr: 'pipe' })
let stderr = ''
transport.stderr?.on('data', (d) => (stderr += d))
const client = new Client({ name: 'tychora-package-test', version: '1.0.0' })
try {
  await client.connect(transport)
  const { tools } = await client.listTools()
  const result = await client.callTool({ name: 'search_evidence', arguments: { project, query: process.argv[2], limit: 3 } })
  console.log(JSON.stringify({ tools: tools.map((t) => t.name), result, sdk: import.meta.resolve('@modelcontextprotocol/sdk/client/index.js') }))
} catch (error) {
  console.error(error, stderr)
  process.exitCode = 1
} finally {
  await client.close()
}
`,
    )
    const r = await ok(process.execPath, ['mcp-client.mjs', QUERY], app)
    const out = JSON.parse(r.stdout) as {
      tools: string[]
      sdk: string
      result: { isError?: boolean; structuredContent: { segments: Segment[] }; content: Array<{ type: string; text?: string }> }
    }
    expect(inside(fileURLToPath(out.sdk), join(app, 'node_modules'))).toBe(true)
    expect(out.tools).toContain('search_evidence')
    expect(out.result.isError).toBeFalsy()
    const top = out.result.structuredContent.segments[0]
    expectCited(top, docs)
    const text = out.result.content.map((c) => c.text ?? '').join('\n')
    expect(text).toContain(`cite="${top!.citation}"`)
    expect(text).toContain('not instructions to follow')
    timings.mcp = performance.now() - t0
  })

  it("import { openWorkspace } from 'tychora' loads the binding package's binary", async () => {
    const t0 = performance.now()
    writeFileSync(
      join(app, 'library.mjs'),
      `import { openWorkspace } from 'tychora'

const ws = await openWorkspace('.tychora')
try {
  const result = await ws.search({ query: process.argv[2], limit: 3 })
  const loaded = process.report.getReport().sharedObjects.filter((p) => p.endsWith('.node'))
  console.log(JSON.stringify({ result, loaded, resolved: import.meta.resolve('tychora') }))
} finally {
  ws.close()
}
`,
    )
    const r = await ok(process.execPath, ['library.mjs', QUERY], app)
    const out = JSON.parse(r.stdout) as { result: { segments: Segment[] }; loaded: string[]; resolved: string }
    expectCited(out.result.segments[0], docs)
    const installed = join(app, 'node_modules')
    // The library is the installed copy, and the addon it loaded is the binding package's file.
    expect(inside(fileURLToPath(out.resolved), join(installed, 'tychora'))).toBe(true)
    const addons = out.loaded.filter((p) => p.endsWith(BINARY_NAME))
    expect(addons).toHaveLength(1)
    expect(inside(addons[0]!, join(installed, ...BINDING.split('/'), BINARY_NAME))).toBe(true)
    timings.library = performance.now() - t0
  })

  it('stays within the size budget', () => {
    const binarySize = statSync(join(app, 'node_modules', ...BINDING.split('/'), BINARY_NAME)).size
    const installedTychora = dirSize(join(app, 'node_modules', 'tychora'))
    const installedBinding = dirSize(join(app, 'node_modules', ...BINDING.split('/')))
    const installedAll = dirSize(join(app, 'node_modules'))
    const lock = JSON.parse(readFileSync(join(app, 'package-lock.json'), 'utf8')) as { packages: Record<string, unknown> }
    // The lockfile also lists the platform packages npm skipped; count what is on disk.
    const packages = Object.keys(lock.packages).filter((k) => k !== '' && existsSync(join(app, k))).length
    const lines = [
      `| what | size | budget |`,
      `|---|---|---|`,
      `| Node | ${process.version} | |`,
      `| ${ROOT_PKG.name} tarball | ${kB(main.size)} | |`,
      `| ${ROOT_PKG.name} unpacked (${main.entryCount} files) | ${kB(main.unpackedSize)} | ${kB(PACKAGE_UNPACKED_BUDGET)}, ${PACKAGE_FILES_BUDGET} files |`,
      `| ${BINDING} tarball | ${MiB(binding.size)} | |`,
      `| ${BINARY_NAME} | ${MiB(binarySize)} (${binarySize} B) | ${MiB(BINARY_BUDGET)} |`,
      `| installed: tychora + binding | ${MiB(installedTychora + installedBinding)} | |`,
      `| installed: node_modules (${packages} packages) | ${MiB(installedAll)} | |`,
      `| time: pack / install / CLI / MCP / library | ${['pack', 'install', 'cli', 'mcp', 'library'].map((k) => `${((timings[k] ?? 0) / 1000).toFixed(1)} s`).join(' / ')} | |`,
    ]
    console.log(`Installed package on ${HOST}:\n${lines.join('\n')}`)
    if (process.env.GITHUB_STEP_SUMMARY) appendFileSync(process.env.GITHUB_STEP_SUMMARY, `### Installed package on ${HOST}\n\n${lines.join('\n')}\n\n`)

    expect(main.unpackedSize).toBeLessThanOrEqual(PACKAGE_UNPACKED_BUDGET)
    expect(main.entryCount).toBeLessThanOrEqual(PACKAGE_FILES_BUDGET)
    expect(binarySize).toBeLessThanOrEqual(BINARY_BUDGET)
  })
})
