#!/usr/bin/env node
// The `tychora` command: runs the bundled CLI (dist/cli-bundle/tychora-<hash>.cjs, built by
// scripts/bundle-cli.mjs) with V8's code cache, so a run does not compile the CLI again. Without
// it a CLI search spent more time loading and compiling JavaScript than searching (issue 11).
//
// Node >= 22.1 does this itself (`module.enableCompileCache`), and is asked to. Node 20 offers a
// code cache only to a script compiled through `vm`, so on Node 20 this file compiles the bundle
// with `vm.Script` and keeps what V8 compiled during the run. What it keeps is keyed by the Node
// version and architecture (the folder) and by the bundle's content hash (its name); V8 refuses a
// cache made by another V8 or under other flags, and a refused cache is made again. It lives in the
// user's cache folder, created private, like the engine's embedding cache. NODE_DISABLE_COMPILE_CACHE=1
// turns it off, as it does Node's own.
import { mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import Module = require('node:module')
import { homedir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { Script } from 'node:vm'

type Run = (argv: string[]) => Promise<number>
type Exports = Record<string, unknown>

const BUNDLE_DIR = join(__dirname, '..', 'cli-bundle')
const ENTRY = /^tychora-[A-Za-z0-9_-]+\.cjs$/
/** How the bundle's chunks name each other. */
const CHUNK = /^\.\/[A-Za-z0-9_.-]+-[A-Za-z0-9_-]+\.cjs$/

function entry(): string {
  const name = readdirSync(BUNDLE_DIR).find((n) => ENTRY.test(n))
  if (!name) throw new Error(`tychora: the bundled CLI is missing from ${BUNDLE_DIR} (run npm run build)`)
  return join(BUNDLE_DIR, name)
}

/** The engine's cache folder (the Rust side's `UserCache::default_dir`), its compile/ part. */
function cacheDir(): string | undefined {
  if (process.env.NODE_DISABLE_COMPILE_CACHE) return undefined
  const base =
    process.env.TYCHORA_CACHE_DIR ||
    (process.env.XDG_CACHE_HOME ? join(process.env.XDG_CACHE_HOME, 'tychora') : undefined) ||
    (process.platform === 'darwin' ? join(homedir(), 'Library', 'Caches', 'tychora') : join(homedir(), '.cache', 'tychora'))
  return join(base, 'compile', `node-${process.version}-${process.arch}`)
}

/**
 * Node 20: the bundle's chunks, each compiled through `vm` with its kept cache. Only the chunks
 * name each other (`./name-hash.cjs`); every other `require` is Node's. A chunk runs once and
 * later requires get its exports, as with Node's loader (a cycle sees the exports so far).
 */
class CachedChunks {
  readonly #loaded = new Map<string, { exports: Exports }>()
  readonly #fresh: Array<[Script, string]> = []

  constructor(readonly dir: string) {
    // Made at exit, so a cache holds every function the run compiled, not only the top level.
    process.once('exit', () => {
      for (const [script, cacheFile] of this.#fresh) keep(script, this.dir, cacheFile)
    })
  }

  require(file: string): Exports {
    const known = this.#loaded.get(file)
    if (known) return known.exports
    const cacheFile = join(this.dir, `${basename(file)}.v8`)
    let cachedData: Buffer | undefined
    try {
      cachedData = readFileSync(cacheFile)
    } catch {
      cachedData = undefined
    }
    // No dynamic-import callback: Node 20 drops it from a script whose code cache V8 accepted,
    // so the bundle has no import() (scripts/bundle-cli.mjs refuses one).
    const script = new Script(`(function (exports, require, module, __filename, __dirname) {${readFileSync(file, 'utf8')}\n})`, {
      filename: file,
      ...(cachedData ? { cachedData } : {}),
    })
    if (!cachedData || script.cachedDataRejected) this.#fresh.push([script, cacheFile])
    const module = { exports: {} as Exports }
    this.#loaded.set(file, module)
    const node = Module.createRequire(file)
    const chunkRequire = Object.assign((id: string) => (CHUNK.test(id) ? this.require(join(BUNDLE_DIR, id)) : node(id)), node)
    const wrapper = script.runInThisContext() as (...args: unknown[]) => void
    wrapper.call(module.exports, module.exports, chunkRequire, module, file, dirname(file))
    return module.exports
  }
}

/** Written aside and renamed, so a concurrent run reads a whole cache or none; a failure only costs speed. */
function keep(script: Script, dir: string, cacheFile: string): void {
  const temp = `${cacheFile}.${process.pid}.tmp`
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    writeFileSync(temp, script.createCachedData(), { mode: 0o600 })
    renameSync(temp, cacheFile)
  } catch {
    rmSync(temp, { force: true })
  }
}

function load(): Run {
  const file = entry()
  const dir = cacheDir()
  const builtIn = (Module as { enableCompileCache?: (dir?: string) => unknown }).enableCompileCache
  if (dir && !builtIn) return new CachedChunks(dir).require(file).run as Run
  if (dir && builtIn) builtIn(dir)
  return (require(file) as { run: Run }).run
}

load()(process.argv.slice(2)).then((code) => {
  process.exitCode = code
})
