// The measurement-only entry points of the engine (whole-tree analysis, parse throughput) live in
// the `tychora-bench` binary (crates/tychora-bench), not in the shipped addon. This builds it once
// (release, in CARGO_TARGET_DIR or target/) and runs it.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
let binary

/** The path of the release `tychora-bench` binary, built if missing or older than the sources. */
export function benchBinary() {
  if (binary) return binary
  const target = process.env.CARGO_TARGET_DIR ?? join(root, 'target')
  execFileSync('cargo', ['build', '--release', '--quiet', '-p', 'tychora-bench'], { cwd: root, stdio: 'inherit' })
  binary = join(target, 'release', process.platform === 'win32' ? 'tychora-bench.exe' : 'tychora-bench')
  if (!existsSync(binary)) throw new Error(`tychora-bench was not built at ${binary}`)
  return binary
}

const MAX_OUTPUT = 1 << 30

/** Every code file under `root` analysed and its references resolved (the resolver agreement input). */
export function analyzeTree(dir) {
  return JSON.parse(execFileSync(benchBinary(), ['analyze-tree', dir], { maxBuffer: MAX_OUTPUT, encoding: 'utf8' }))
}

/** A corpus of `[path, source]` pairs staged once, analysed as often as asked (the throughput input). */
export function stageSources(pairs) {
  const dir = mkdtempSync(join(tmpdir(), 'tychora-bench-'))
  const file = join(dir, 'sources.json')
  writeFileSync(file, JSON.stringify(pairs))
  return {
    /** Parse (and, with `extract`, extract) on `threads` threads; `seconds` is the binary's own timing of that work. */
    analyze(threads, extract) {
      const args = ['analyze-sources', file, String(threads), ...(extract ? [] : ['parse'])]
      return JSON.parse(execFileSync(benchBinary(), args, { maxBuffer: MAX_OUTPUT, encoding: 'utf8' }))
    },
    close() {
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
