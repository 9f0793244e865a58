// Parse throughput on real code nobody here wrote: tychora-bench's `analyze-sources` (tree-sitter in
// Rust, parse AND symbol/reference extraction) against the `tree-sitter` Node binding and
// web-tree-sitter (WASM), both parse only, on 1 and 2 threads, per language.
//
//   node bench/code/parse-throughput.mjs      → bench/results/parse-throughput.{json,md}
//
// The corpora come from the package registries at bench time (pytest's sdist from PyPI, npm
// tarballs) and are cached under ~/.cache/tychora/bench-code/, so only the first run downloads.
// Throughput is MiB/s of UTF-8 source (bytes / 2^20 / seconds), median of RUNS runs after one
// warm-up. Runs are interleaved across runtimes (run 1 of every cell, then run 2, …) so noise on a
// shared 2-core machine hits all of them alike.
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { cpus, homedir, loadavg } from 'node:os'
import { dirname, extname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import { benchBinary, stageSources } from './tychora-bench.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const root = resolve(here, '../..')
const require = createRequire(import.meta.url)
const CACHE = join(homedir(), '.cache/tychora/bench-code')
const RESULTS = join(root, 'bench/results')
const MiB = 1 << 20
/** Lines longer than this mark a minified/generated file, which is skipped. */
const MAX_LINE_BYTES = 1000

// ---------------------------------------------------------------------------------------------
// Corpora: one or more registry packages per language, and which of their files to use.

/** @typedef {{ registry: 'pypi' | 'npm', name: string, version: string, dir: string, exts: string[] }} Source */
const CORPORA = {
  python: [{ registry: 'pypi', name: 'pytest', version: '8.3.4', dir: 'src', exts: ['.py'] }],
  // rxjs ships ~0.8 MB of .ts under src/; zod 4 ships ~3 MB more, so the two clear 1 MB comfortably.
  typescript: [
    { registry: 'npm', name: 'rxjs', version: '7.8.1', dir: 'src', exts: ['.ts'] },
    { registry: 'npm', name: 'zod', version: '4.1.12', dir: 'src', exts: ['.ts'] },
  ],
  javascript: [{ registry: 'npm', name: 'lodash', version: '4.17.21', dir: '.', exts: ['.js'] }],
}

/** Grammar per extension: the same mapping tychora applies to paths. */
const GRAMMAR_BY_EXT = {
  '.py': 'python',
  '.pyi': 'python',
  '.js': 'javascript',
  '.mjs': 'javascript',
  '.cjs': 'javascript',
  '.jsx': 'javascript',
  '.ts': 'typescript',
  '.mts': 'typescript',
  '.cts': 'typescript',
  '.tsx': 'tsx',
}

/** Downloads and unpacks one source into the cache unless it is already there; returns its root.
 *  Unpacks into a temp dir and renames it into place, so an interrupted run leaves no half copy. */
function fetchSource(src) {
  const dest = join(CACHE, `${src.registry}-${src.name}-${src.version}`)
  if (existsSync(dest)) return dest
  const tmp = `${dest}.partial`
  rmSync(tmp, { recursive: true, force: true })
  mkdirSync(tmp, { recursive: true })
  console.error(`# fetching ${src.name}@${src.version} from ${src.registry}`)
  if (src.registry === 'pypi') {
    // --no-binary :all: fetches the sdist (the project's own source tarball, sources under src/);
    // pip builds its metadata in an isolated env, pulling setuptools/setuptools-scm from PyPI.
    execFileSync('python3', ['-m', 'pip', 'download', '--quiet', '--no-deps', '--no-binary', ':all:', `${src.name}==${src.version}`, '-d', tmp], {
      stdio: ['ignore', 'ignore', 'inherit'],
    })
  } else {
    execFileSync('npm', ['pack', `${src.name}@${src.version}`, '--pack-destination', tmp, '--silent'], { stdio: ['ignore', 'ignore', 'inherit'] })
  }
  const tarball = readdirSync(tmp).find((f) => f.endsWith('.tar.gz') || f.endsWith('.tgz'))
  if (!tarball) throw new Error(`no tarball for ${src.name}@${src.version} in ${tmp}`)
  execFileSync('tar', ['-xzf', join(tmp, tarball), '-C', tmp, '--strip-components=1'])
  rmSync(join(tmp, tarball))
  renameSync(tmp, dest)
  return dest
}

function* walk(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules') yield* walk(path)
    } else if (entry.isFile()) yield path
  }
}

const isMinified = (text) => text.split('\n').some((line) => Buffer.byteLength(line) > MAX_LINE_BYTES)

/** Reads every matching file of a language's sources once, as strings; skips declaration files
 *  (.d.ts: types only, not code) and minified files. Paths are made relative and prefixed with the
 *  package, so extensions (which pick the grammar) are preserved. */
function loadCorpus(sources, { maxBytes = Infinity } = {}) {
  const files = []
  let skippedMinified = 0
  let bytes = 0
  for (const src of sources) {
    const base = fetchSource(src)
    const paths = [...walk(join(base, src.dir))].filter((p) => src.exts.includes(extname(p)) && !/\.d\.[cm]?ts$/.test(p)).sort()
    for (const path of paths) {
      const text = readFileSync(path, 'utf8')
      if (isMinified(text)) {
        skippedMinified++
        continue
      }
      if (bytes >= maxBytes) break
      const size = Buffer.byteLength(text)
      bytes += size
      files.push({ path: `${src.name}/${relative(base, path)}`, grammar: GRAMMAR_BY_EXT[extname(path)], text, bytes: size })
    }
  }
  const lines = files.reduce((n, f) => n + f.text.split('\n').length, 0)
  return { files, bytes, lines, skippedMinified, sources: sources.map(({ registry, name, version, dir }) => ({ registry, name, version, dir })) }
}

// ---------------------------------------------------------------------------------------------
// Runtimes. Each "cell" is an object with run() → { seconds, ...extra } and close().

/** tychora: one run of the `tychora-bench` binary parses (and, with `extract`, extracts symbol
 *  units, reference sites and the default export) on `threads` Rust threads. `seconds` is the
 *  engine's own timing of that work (reading and decoding the input excluded), the figure compared. */
function tychoraCell(corpus, threads, extract) {
  const staged = stageSources(corpus.files.map((f) => [f.path, f.text]))
  return {
    async run() {
      const t0 = performance.now()
      const out = staged.analyze(threads, extract)
      return {
        seconds: out.seconds,
        wallSeconds: (performance.now() - t0) / 1000,
        units: out.units,
        references: out.references,
        bytes: out.bytes,
        threads: out.threads,
      }
    },
    async close() {
      staged.close()
    },
  }
}

/** Splits files into n shares of about equal bytes (largest first into the lightest share). */
function split(files, n) {
  const shares = Array.from({ length: n }, () => ({ bytes: 0, files: [] }))
  for (const f of [...files].sort((a, b) => b.bytes - a.bytes)) {
    const lightest = shares.reduce((a, b) => (b.bytes < a.bytes ? b : a))
    lightest.files.push(f)
    lightest.bytes += f.bytes
  }
  return shares.map((s) => s.files)
}

/** The Node binding or web-tree-sitter on `threads` worker threads (1 included, so both thread
 *  counts go through the same code). A run's time spans the first worker's start to the last
 *  worker's end, read from absolute clocks inside the workers: message latency is not counted,
 *  as it is not for tychora. */
async function workerCell(runtime, corpus, threads, wasmGrammars, walk) {
  const workers = await Promise.all(split(corpus.files, threads).map((share) => startWorker(runtime, share, wasmGrammars, walk)))
  return {
    async run() {
      const results = await Promise.all(workers.map((w) => w.run()))
      const seconds = (Math.max(...results.map((r) => r.end)) - Math.min(...results.map((r) => r.start))) / 1000
      return { seconds, filesWithErrors: results.reduce((n, r) => n + r.errors, 0) }
    },
    async close() {
      await Promise.all(workers.map((w) => w.worker.terminate()))
    },
  }
}

function startWorker(runtime, files, grammars, walk) {
  const worker = new Worker(join(here, 'parse-worker.mjs'), { workerData: { runtime, grammars, walk, files: files.map((f) => [f.grammar, f.text]) } })
  const next = () =>
    new Promise((ok, fail) => {
      worker.once('message', ok)
      worker.once('error', fail)
    }).finally(() => worker.removeAllListeners('error'))
  return next().then(() => ({
    worker,
    run: () => {
      worker.postMessage('run')
      return next()
    },
  }))
}

/** The .wasm of each grammar, shipped inside the grammar npm packages themselves. */
function wasmGrammars() {
  const grammars = {
    python: join(packageDir('tree-sitter-python'), 'tree-sitter-python.wasm'),
    javascript: join(packageDir('tree-sitter-javascript'), 'tree-sitter-javascript.wasm'),
    typescript: join(packageDir('tree-sitter-typescript'), 'tree-sitter-typescript.wasm'),
    tsx: join(packageDir('tree-sitter-typescript'), 'tree-sitter-tsx.wasm'),
  }
  for (const path of Object.values(grammars)) if (!existsSync(path)) throw new Error(`grammar wasm missing: ${path}`)
  return grammars
}

// ---------------------------------------------------------------------------------------------
// Measurement.

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
// "extract" for tychora is its real extraction (symbol units + reference sites); for the two JS
// runtimes it is a pre-order walk of every node through a TreeCursor reading each node's type and
// byte range: the least any extractor written on them must do, so a lower bound of their cost.
const CELLS = [
  { key: 'tychora-parse-1', runtime: 'tychora', threads: 1, extract: false },
  { key: 'tychora-parse-2', runtime: 'tychora', threads: 2, extract: false },
  { key: 'tychora-1', runtime: 'tychora', threads: 1, extract: true },
  { key: 'tychora-2', runtime: 'tychora', threads: 2, extract: true },
  { key: 'node-1', runtime: 'node', threads: 1, extract: false },
  { key: 'node-2', runtime: 'node', threads: 2, extract: false },
  { key: 'node-walk-1', runtime: 'node', threads: 1, extract: true },
  { key: 'wasm-1', runtime: 'wasm', threads: 1, extract: false },
  { key: 'wasm-2', runtime: 'wasm', threads: 2, extract: false },
  { key: 'wasm-walk-1', runtime: 'wasm', threads: 1, extract: true },
  { key: 'wasm-walk-2', runtime: 'wasm', threads: 2, extract: true },
]
const RUNTIME_NAMES = {
  tychora: ['tychora (parse only)', 'tychora (parse + extract symbols and references)'],
  node: ['tree-sitter Node binding (parse only)', 'tree-sitter Node binding (parse + walk every node)'],
  wasm: ['web-tree-sitter WASM (parse only)', 'web-tree-sitter WASM (parse + walk every node)'],
}
const nameOf = (spec) => RUNTIME_NAMES[spec.runtime][spec.extract ? 1 : 0]

/** Opens every cell for a language; a runtime that cannot load is recorded with its error and
 *  the remaining cells still run. */
async function openCells(corpus, grammars) {
  const cells = {}
  for (const spec of CELLS) {
    try {
      if (spec.runtime === 'tychora') {
        cells[spec.key] = tychoraCell(corpus, spec.threads, spec.extract)
      } else {
        if (spec.runtime === 'wasm' && !grammars) throw new Error('grammar .wasm files not found')
        cells[spec.key] = await workerCell(spec.runtime, corpus, spec.threads, grammars, spec.extract)
      }
    } catch (err) {
      cells[spec.key] = { error: String(err?.message ?? err).split('\n')[0] }
      console.error(`  ${spec.key}: unavailable: ${cells[spec.key].error}`)
    }
  }
  return cells
}

async function measureLanguage(lang, corpus, { grammars, runs }) {
  console.error(`# ${lang}: ${corpus.files.length} files, ${(corpus.bytes / MiB).toFixed(2)} MiB, ${corpus.lines} lines`)
  const cells = await openCells(corpus, grammars)
  const live = Object.entries(cells).filter(([, c]) => !c.error)
  const raw = Object.fromEntries(live.map(([k]) => [k, []]))
  const warmup = {}
  try {
    for (const [key, cell] of live) warmup[key] = await cell.run()
    for (let i = 0; i < runs; i++) for (const [key, cell] of live) raw[key].push(await cell.run())
  } finally {
    for (const [, cell] of live) await cell.close()
  }
  const out = {}
  for (const spec of CELLS) {
    const cell = cells[spec.key]
    if (cell.error) {
      out[spec.key] = { runtime: spec.runtime, threads: spec.threads, extract: spec.extract, error: cell.error }
      continue
    }
    const mibps = raw[spec.key].map((r) => corpus.bytes / MiB / r.seconds)
    out[spec.key] = {
      runtime: spec.runtime,
      threads: spec.threads,
      extract: spec.extract,
      medianMiBps: median(mibps),
      medianSeconds: median(raw[spec.key].map((r) => r.seconds)),
      runsMiBps: mibps,
      runs: raw[spec.key],
      warmup: warmup[spec.key],
    }
    console.error(`  ${spec.key.padEnd(10)} ${median(mibps).toFixed(2).padStart(8)} MiB/s`)
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// Versions and reporting.

/** Directory of an installed npm package: found by walking up from its entry point, because some
 *  (web-tree-sitter) do not export ./package.json. */
function packageDir(name) {
  for (let dir = dirname(require.resolve(name)); dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, 'package.json')
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).name === name) return dir
  }
  throw new Error(`package.json of ${name} not found`)
}

function npmVersion(name) {
  try {
    return JSON.parse(readFileSync(join(packageDir(name), 'package.json'), 'utf8')).version
  } catch {
    return null
  }
}

/** The Rust crates tychora links, as pinned in Cargo.lock (read only). */
function rustVersions() {
  const lock = readFileSync(join(root, 'Cargo.lock'), 'utf8')
  const out = {}
  for (const m of lock.matchAll(/\[\[package\]\]\nname = "(tree-sitter[^"]*)"\nversion = "([^"]+)"/g)) out[m[1]] = m[2]
  return out
}

function addonFingerprint() {
  let path
  try {
    path = benchBinary()
  } catch {
    return null
  }
  return {
    file: 'tychora-bench',
    mtime: statSync(path).mtime.toISOString(),
    sha256: createHash('sha256').update(readFileSync(path)).digest('hex').slice(0, 16),
  }
}

const fmt = (x) => (x == null ? 'n/a' : x.toFixed(2))
const ratio = (a, b) => (a?.medianMiBps && b?.medianMiBps ? `${(a.medianMiBps / b.medianMiBps).toFixed(2)}×` : 'n/a')

function markdown(results) {
  const langs = Object.keys(results.languages)
  const lines = [
    '# Parse throughput: tychora vs tree-sitter Node binding vs web-tree-sitter',
    '',
    `Median of ${results.runs} runs after 1 warm-up, MiB/s of UTF-8 source (2^20 bytes per second); ${results.machine.cpus} cores (${results.machine.model}), Node ${results.machine.node}, ${results.date}; 1-min load average ${results.machine.loadavgBefore[0].toFixed(2)} before, ${results.machine.loadavgAfter[0].toFixed(2)} after.`,
    "Two kinds of rows: parse only (every runtime), and parse + extract: tychora's real extraction (symbol units with spans, names and docstrings, plus every reference site), against a pre-order TreeCursor walk of every node reading its type and byte range in the JS runtimes (a lower bound of what an extractor written on them costs). Thread counts > 1 use Rust threads (tychora) or worker_threads splitting the files by bytes (others).",
    '',
    `| runtime | threads | ${langs.join(' | ')} |`,
    `|---|---:|${langs.map(() => '---:').join('|')}|`,
  ]
  for (const spec of CELLS) {
    lines.push(
      `| ${nameOf(spec)} | ${spec.threads} | ${langs
        .map((l) => {
          const c = results.languages[l].cells[spec.key]
          return c.error ? 'failed' : fmt(c.medianMiBps)
        })
        .join(' | ')} |`,
    )
  }
  lines.push('', `| ratio | ${langs.join(' | ')} |`, `|---|${langs.map(() => '---:').join('|')}|`)
  const row = (label, a, b) => lines.push(`| ${label} | ${langs.map((l) => ratio(results.languages[l].cells[a], results.languages[l].cells[b])).join(' | ')} |`)
  row('parse + extract: tychora 2T / web-tree-sitter walk 1T', 'tychora-2', 'wasm-walk-1')
  row('parse + extract: tychora 2T / web-tree-sitter walk 2T', 'tychora-2', 'wasm-walk-2')
  row('parse + extract: tychora 1T / web-tree-sitter walk 1T', 'tychora-1', 'wasm-walk-1')
  row('parse + extract: tychora 1T / Node binding walk 1T', 'tychora-1', 'node-walk-1')
  row('parse only: tychora 1T / web-tree-sitter 1T', 'tychora-parse-1', 'wasm-1')
  row('parse only: tychora 2T / web-tree-sitter 2T', 'tychora-parse-2', 'wasm-2')
  row('parse only: tychora 1T / Node binding 1T', 'tychora-parse-1', 'node-1')
  lines.push('', 'Target: tychora ≥ 2× web-tree-sitter (parse + extract, both cores).', '', '| corpus | files | MiB | lines | sources |', '|---|---:|---:|---:|---|')
  for (const l of langs) {
    const c = results.languages[l].corpus
    lines.push(`| ${l} | ${c.files} | ${fmt(c.bytes / MiB)} | ${c.lines} | ${c.sources.map((s) => `${s.name}@${s.version} (${s.registry}, ${s.dir}/)`).join(', ')} |`)
  }
  const v = results.versions
  lines.push(
    '',
    `Versions: tychora Rust crates ${Object.entries(v.rust)
      .map(([k, x]) => `${k} ${x}`)
      .join(', ')}; npm ${Object.entries(v.npm)
      .map(([k, x]) => `${k} ${x}`)
      .join(', ')}. Grammar .wasm files come from the grammar npm packages themselves.`,
  )
  return `${lines.join('\n')}\n`
}

/**
 * Runs the benchmark and returns the results object.
 * @param {{ quick?: boolean, write?: boolean }} opts quick: 3 runs on at most ~512 KiB per language
 *   (a smoke check); write: write bench/results/parse-throughput.{json,md} (default: only when not
 *   quick, so a quick run never overwrites full figures).
 */
export async function runParseThroughput({ quick = false, write = !quick } = {}) {
  const runs = quick ? 3 : 5
  try {
    benchBinary()
  } catch (err) {
    console.error(`# tychora-bench unavailable: ${err.message}`)
  }
  let grammars = null
  try {
    grammars = wasmGrammars()
  } catch (err) {
    console.error(`# ${err.message}`)
  }
  const results = {
    date: new Date().toISOString(),
    // Load average before and after: on a shared 2-core machine, anything else running skews the
    // 2-thread cells first, so the figures say how busy the machine was.
    machine: {
      cpus: cpus().length,
      model: cpus()[0]?.model,
      node: process.version,
      platform: `${process.platform}-${process.arch}`,
      loadavgBefore: loadavg(),
    },
    unit: 'MiB/s (2^20 bytes of UTF-8 source per second)',
    runs,
    warmupRuns: 1,
    quick,
    versions: {
      rust: rustVersions(),
      npm: Object.fromEntries(['web-tree-sitter', 'tree-sitter', 'tree-sitter-python', 'tree-sitter-javascript', 'tree-sitter-typescript'].map((n) => [n, npmVersion(n)])),
      addon: addonFingerprint(),
    },
    languages: {},
  }
  for (const [lang, sources] of Object.entries(CORPORA)) {
    const corpus = loadCorpus(sources, { maxBytes: quick ? 512 * 1024 : Infinity })
    const cells = await measureLanguage(lang, corpus, { grammars, runs })
    results.languages[lang] = {
      corpus: {
        files: corpus.files.length,
        bytes: corpus.bytes,
        lines: corpus.lines,
        skippedMinified: corpus.skippedMinified,
        sources: corpus.sources,
      },
      cells,
    }
  }
  results.machine.loadavgAfter = loadavg()
  if (write) {
    mkdirSync(RESULTS, { recursive: true })
    writeFileSync(join(RESULTS, 'parse-throughput.json'), `${JSON.stringify(results, null, 2)}\n`)
    writeFileSync(join(RESULTS, 'parse-throughput.md'), markdown(results))
    console.error(`# wrote ${relative(root, join(RESULTS, 'parse-throughput.json'))} and .md`)
  }
  return results
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const results = await runParseThroughput({ quick: process.argv.includes('--quick') })
  process.stdout.write(markdown(results))
}
