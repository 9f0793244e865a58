import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

/** Text files under `dir` (relative to the repository root), recursively. */
function files(dir: string, extensions: RegExp): string[] {
  const found: string[] = []
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const path = join(d, name)
      if (statSync(path).isDirectory()) walk(path)
      else if (extensions.test(path)) found.push(path)
    }
  }
  walk(dir)
  return found.sort()
}

// `from '…'` (imports, re-exports, `import type`), a bare `import '…'`, and a load by call with a
// relative path: `import('…')`, `require('…')`, `createRequire(…)('…')`.
const SPECIFIER = /(?:\bfrom\s+|\bimport\s+)['"](\.\.?\/[^'"]+)['"]|(?:\bimport|\brequire|\))\(\s*['"](\.\.?\/[^'"]+)['"]\s*\)/g

interface Edge {
  from: string
  to: string
}

/** The real import graph of ts/, read from the sources; paths relative to ts/, as written (`.js`). */
function imports(): Edge[] {
  const edges: Edge[] = []
  for (const path of files('ts', /(?<!\.d)\.c?tsx?$/)) {
    for (const m of readFileSync(path, 'utf8').matchAll(SPECIFIER)) {
      edges.push({ from: relative('ts', path), to: relative('ts', resolve(dirname(path), (m[1] ?? m[2]) as string)) })
    }
  }
  return edges
}

/** The source file an import names: `x.js` is compiled from `x.ts`; anything else is itself. */
const sourceOf = (to: string) => {
  if (!to.endsWith('.js')) return to
  for (const ext of ['.ts', '.tsx']) if (existsSync(join('ts', to.replace(/\.js$/, ext)))) return to.replace(/\.js$/, ext)
  return to
}

/** A folder under ts/ is a layer; so is each top-level file (errors.ts, index.ts) and each file outside ts/. */
const layer = (file: string) => (file.startsWith('../') ? file.slice(3) : file.includes('/') ? (file.split('/')[0] as string) : file.replace(/\.[cm]?[jt]s$/, ''))

const BELOW_SURFACES = ['contracts', 'errors', 'engine', 'format', 'service', 'client', 'providers', 'knowledge'] as const

/**
 * What each layer may import besides itself. A layer missing here fails the test, so a new folder
 * is placed deliberately. `native` is the generated napi-rs loader (ts/native/index.cjs).
 */
const ALLOWED: Record<string, readonly string[]> = {
  // The floor. contracts may use the error-code schema; errors.ts imports nothing, so the two
  // can never form a cycle.
  errors: [],
  // Finds the installed package's manifest (the CLI is bundled, so paths relative to a module lie).
  'package-root': [],
  // The `tychora` command: runs the bundled CLI, found by path when it runs, through V8's code
  // cache; it imports no layer, so nothing it holds can load before the CLI asks for it.
  bin: [],
  contracts: ['errors'],
  // The only layer that loads the native binding; it hands the core the PDF reader. Its job
  // runner's log lines go through the terminal escaping (format).
  engine: ['contracts', 'errors', 'native', 'extract', 'knowledge', 'format'],
  // Team knowledge as files: proposals, reviews, checksummed migrations (no engine: the service
  // layer builds states from them).
  knowledge: ['contracts', 'errors'],
  // Document readers in worker threads (pdf.js); they find their worker file from the package root.
  extract: ['package-root'],
  format: ['contracts', 'errors'],
  // Paid model providers (Voyage) over their SDKs; the engine never calls them, the composers do.
  providers: ['contracts', 'errors'],
  // Implementations of the contracts' interfaces over the engine (registry, agent scope, remote).
  service: ['contracts', 'errors', 'engine', 'providers', 'knowledge'],
  // The surfaces are written against the interfaces and never open a workspace themselves.
  // http states the package's version in /openapi.json.
  http: ['contracts', 'errors', 'format', 'service', 'package-root'],
  mcp: ['contracts', 'errors', 'format', 'service', 'package-root'],
  // Runs where no native addon is installed.
  client: ['contracts', 'errors'],
  // The owner's dashboard: browser code, bundled by Vite. It knows the daemon only through the
  // contracts' types (every such import is `import type`: no zod in the page).
  dashboard: ['contracts'],
  eval: ['contracts', 'errors', 'engine', 'format'],
  // Composition roots: the daemon (HTTP + MCP over a registry) and stdio MCP.
  daemon: [...BELOW_SURFACES, 'http', 'mcp'],
  // The CLI composes too (it routes through a daemon or opens a workspace), and runs evals.
  cli: [...BELOW_SURFACES, 'http', 'mcp', 'daemon', 'eval', 'package-root'],
  // The library's barrel may re-export anything except the binding itself.
  index: ['package-root', 'contracts', 'errors', 'engine', 'knowledge', 'format', 'service', 'providers', 'http', 'mcp', 'client', 'eval', 'daemon', 'cli'],
}

describe('dependency direction', () => {
  const edges = imports()

  it('reads the real graph, and every import names a file that exists', () => {
    expect(edges.length).toBeGreaterThan(100)
    expect(edges.filter((e) => !existsSync(join('ts', sourceOf(e.to)))).map((e) => `${e.from} → ${e.to}`)).toEqual([])
  })

  it('places every layer of ts/ in the table', () => {
    const layers = new Set(files('ts', /(?<!\.d)\.c?tsx?$/).map((f) => layer(relative('ts', f))))
    expect([...layers].filter((l) => !(l in ALLOWED))).toEqual([])
  })

  for (const [from, allowed] of Object.entries(ALLOWED)) {
    it(`${from} imports only ${allowed.length ? allowed.join(', ') : 'itself'}`, () => {
      const bad = edges.filter((e) => layer(e.from) === from && layer(e.to) !== from && !allowed.includes(layer(e.to)))
      expect(bad.map((e) => `${e.from} → ${e.to}`)).toEqual([])
    })
  }

  it('the dashboard takes only types from the contracts: no zod (or any server module) is bundled into the page', () => {
    const runtime = files('ts/dashboard', /\.tsx?$/).flatMap((f) =>
      [...readFileSync(f, 'utf8').matchAll(/^import\s+(?!type\b)[^'"]*from\s+['"](\.\.\/\.\.\/[^'"]+)['"]/gm)].map((m) => `${relative('ts', f)} → ${m[1]}`),
    )
    expect(files('ts/dashboard', /\.tsx$/).length).toBeGreaterThan(3)
    expect(runtime).toEqual([])
  })

  it('loads the voyageai SDK only in providers/', () => {
    const importers = files('ts', /\.ts$/)
      .filter((f) => /(?:\bfrom\s+|\bimport\s*\(\s*|\brequire\s*\(\s*)['"]voyageai(?:\/[^'"]*)?['"]/.test(readFileSync(f, 'utf8')))
      .map((f) => relative('ts', f))
    expect(importers.length).toBeGreaterThan(0)
    expect(importers.filter((f) => layer(f) !== 'providers')).toEqual([])
  })

  it('has no import cycle between files (type-only imports included)', () => {
    const graph = new Map<string, string[]>()
    for (const e of edges) {
      const to = sourceOf(e.to)
      if (/\.tsx?$/.test(to)) graph.set(e.from, [...(graph.get(e.from) ?? []), to])
    }
    const cycles: string[] = []
    const state = new Map<string, 'open' | 'done'>()
    const stack: string[] = []
    const visit = (file: string) => {
      state.set(file, 'open')
      stack.push(file)
      for (const next of graph.get(file) ?? []) {
        if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next].join(' → '))
        else if (!state.has(next)) visit(next)
      }
      stack.pop()
      state.set(file, 'done')
    }
    for (const file of [...graph.keys()].sort()) if (!state.has(file)) visit(file)
    expect(cycles).toEqual([])
  })
})

describe('what ships', () => {
  /**
   * Places under ts/ (what ships as dist/) that may start processes. Benchmark harnesses that run
   * git, tar or python3 live in bench/. The one entry is napi-rs's generated loader, which runs
   * `ldd --version` as its last resort to tell musl from glibc when picking the binary package.
   */
  const MAY_SPAWN = ['native/index.cjs']

  it('starts no process outside the allowed places', () => {
    const spawning = files('ts', /\.(?:[cm]?[jt]s|d\.cts)$/)
      .filter((f) => /child_process/.test(readFileSync(f, 'utf8')))
      .map((f) => relative('ts', f))
    expect(spawning.filter((f) => !MAY_SPAWN.includes(f))).toEqual([])
  })

  it('names runtime files only in contracts/runtime.ts', () => {
    // A quoted segment ('runtime', 'daemon.json', 'agent-token'), a join of 'token' or 'lock', or a
    // `…/runtime/<file>` template; prose in comments and descriptions is not code and may name them.
    const spelled = [/['"](?:runtime|daemon\.json|agent-token)['"]/, /\b(?:join|resolve)\([^)]*['"](?:token|lock)['"]/, /\/runtime\/(?:token|agent-token|daemon\.json|lock)\b/]
    const self = relative('.', new URL(import.meta.url).pathname)
    const offenders = [...files('ts', /\.ts$/), ...files('test', /\.ts$/), ...files('bench', /\.(?:ts|mjs)$/)]
      .filter((f) => f !== join('ts', 'contracts', 'runtime.ts') && f !== self)
      .filter((f) => {
        const text = readFileSync(f, 'utf8')
        return spelled.some((re) => re.test(text))
      })
    expect(offenders).toEqual([])
  })
})
