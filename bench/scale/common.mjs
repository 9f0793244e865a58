// What the scale benches share: paths, the run count, one measurement per process
// (bench/scale/worker.mjs), and renamed copies of the SciFact corpus as workspaces of any size.
import { execFileSync } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gunzipSync } from 'node:zlib'

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
export const shared = resolve(root, '../shared/data')
export const RUNS = Number(process.env.BENCH_RUNS ?? 3)
export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/** Runs one measurement of bench/scale/worker.mjs in its own process; returns its JSON line. */
export function worker(task, args) {
  const out = execFileSync(process.execPath, [join(root, 'bench/scale/worker.mjs'), task, JSON.stringify(args)], {
    encoding: 'utf8',
    maxBuffer: 1 << 26,
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  return JSON.parse(out.trim().split('\n').pop())
}

/**
 * Writes `copies` copies of the SciFact corpus (its first `count` records) into `dir`, one JSONL
 * file per copy, ids renamed `<prefix><k>-<id>`; returns the bytes written.
 */
export function scifactCopies(dir, copies, { count = Number.POSITIVE_INFINITY, prefix = 'c' } = {}) {
  mkdirSync(dir, { recursive: true })
  const records = gunzipSync(readFileSync(join(shared, 'scifact/corpus.jsonl.gz')))
    .toString('utf8')
    .trim()
    .split('\n')
    .slice(0, count)
    .map((l) => JSON.parse(l))
  let bytes = 0
  for (let k = 0; k < copies; k++) {
    const body = `${records.map((d) => JSON.stringify({ ...d, _id: `${prefix}${k}-${d._id}` })).join('\n')}\n`
    writeFileSync(join(dir, `${prefix}-${String(k).padStart(3, '0')}.jsonl`), body)
    bytes += Buffer.byteLength(body)
  }
  return bytes
}

/**
 * SciFact's corpus `copies` times over (ids renamed `<id>-<copy>`), 50 abstracts a file as
 * `eval beir` lays it out, into `dir`; returns the bytes written.
 */
export function scifactFiles(dir, copies) {
  mkdirSync(dir, { recursive: true })
  const lines = gunzipSync(readFileSync(join(shared, 'scifact/corpus.jsonl.gz')))
    .toString('utf8')
    .trim()
    .split('\n')
  let bytes = 0
  for (let copy = 1; copy <= copies; copy++) {
    const renamed = lines.map((l) => {
      const d = JSON.parse(l)
      return JSON.stringify({ ...d, _id: `${d._id}-${copy}` })
    })
    for (let at = 0; at < renamed.length; at += 50) {
      const body = `${renamed.slice(at, at + 50).join('\n')}\n`
      writeFileSync(join(dir, `scifact-${copy}-${at / 50}.jsonl`), body)
      bytes += Buffer.byteLength(body)
    }
  }
  return bytes
}

/** Bytes under `dir`, a file hard-linked into several index generations counted once. */
export function du(dir) {
  let total = 0
  const seen = new Set()
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue
    const s = statSync(join(entry.parentPath, entry.name))
    if (seen.has(s.ino)) continue
    seen.add(s.ino)
    total += s.size
  }
  return total
}
