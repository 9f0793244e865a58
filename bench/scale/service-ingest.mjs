// `npm run bench:service-ingest`: ingest into the service (canonical rows in PostgreSQL, artifacts
// in an S3 bucket) beside the embedded default (SQLite, the folder), on SciFact's abstracts
// COPIES times over (16 by default: 1,664 files of 50 abstracts). The service runs 1, 2 and 4
// workers: as many processes, each a daemon's engine with a folder of its own on the same
// PostgreSQL database and bucket prefix, each adding its share of the files as one job at the
// same time; the wall time runs from the start of the first to the end of the last (process
// start included). Then a one-file add on the service. Medians of RUNS runs on fresh stores.
// PostgreSQL 15 (fsync=on, Unix socket) and SeaweedFS on loopback, all on this machine's cores.
// Writes bench/results/service-ingest.{json,md}. Needs `npm run build`, ../shared/data/scifact,
// Debian's `postgresql` and `weed` (node scripts/fetch-servers.mjs).
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { Workspace } from '../../dist/engine/workspace.js'
import { startSeaweed } from '../../scripts/seaweed.mjs'
import { median, RUNS, root, scifactFiles } from './common.mjs'
import { startPostgres } from './postgres.mjs'

const COPIES = Number(process.env.BENCH_COPIES ?? 16)
const WORKERS = [1, 2, 4]
const scratch = mkdtempSync(join(tmpdir(), 'tychora-bench-service-ingest-'))
const run = promisify(execFile)

/** The files of `docs` dealt into `n` folders (moved; `gather` puts them back). */
function deal(docs, n) {
  const parts = Array.from({ length: n }, (_, i) => join(scratch, `part-${n}-${i}`))
  for (const p of parts) mkdirSync(p, { recursive: true })
  for (const [i, f] of readdirSync(docs).sort().entries()) renameSync(join(docs, f), join(parts[i % n], f))
  return parts
}

function gather(parts, docs) {
  for (const p of parts) {
    for (const f of readdirSync(p)) renameSync(join(p, f), join(docs, f))
    rmSync(p, { recursive: true, force: true })
  }
}

/** One add of `paths` in its own process (bench/scale/worker.mjs `add`); resolves when it ends. */
async function add(ws, paths) {
  const { stdout } = await run(process.execPath, [join(root, 'bench/scale/worker.mjs'), 'add', JSON.stringify({ ws, paths })], { maxBuffer: 1 << 26, env: process.env })
  return JSON.parse(stdout.trim().split('\n').pop())
}

async function embedded(docs, bytes, k) {
  const ws = join(scratch, `embedded-${k}`)
  await Workspace.init(ws)
  const t = performance.now()
  await add(ws, [docs])
  const s = (performance.now() - t) / 1000
  const one = await oneFile(ws, `embedded-${k}`)
  rmSync(ws, { recursive: true, force: true })
  return { s, mb_per_s: bytes / 1e6 / s, one_file_ms: one }
}

async function service(pg, s3, docs, bytes, workers, k) {
  const store = pg.database()
  const prefix = `s3://tychora/ingest-${workers}-${k}`
  const folders = []
  for (let w = 0; w < workers; w++) {
    const ws = join(scratch, `service-${workers}-${k}-${w}`)
    await Workspace.init(ws)
    await Workspace.attachService(ws, { store, artifacts: prefix, endpoint: s3.endpoint })
    folders.push(ws)
  }
  await Workspace.migrate(folders[0])
  const parts = deal(docs, workers)
  const t = performance.now()
  try {
    await Promise.all(folders.map((ws, w) => add(ws, [parts[w]])))
  } finally {
    gather(parts, docs)
  }
  const s = (performance.now() - t) / 1000
  const one = await oneFile(folders[0], `service-${workers}-${k}`)
  for (const ws of folders) rmSync(ws, { recursive: true, force: true })
  return { s, mb_per_s: bytes / 1e6 / s, one_file_ms: one }
}

/** A one-file add on the workspace (its own process: the job's own time, from its receipt). */
async function oneFile(ws, name) {
  const dir = join(scratch, `one-${name}`)
  mkdirSync(dir)
  writeFileSync(join(dir, 'one.jsonl'), `${JSON.stringify({ _id: `one-${name}`, title: 'One more', text: `A file added alone (${name}).` })}\n`)
  const r = await add(ws, [dir])
  return r.job_ms
}

const pg = startPostgres()
const s3 = await startSeaweed()
Object.assign(process.env, s3.env)
try {
  const docs = join(scratch, 'docs')
  const bytes = scifactFiles(docs, COPIES)
  const files = readdirSync(docs).length
  const rows = { embedded: [] }
  for (const w of WORKERS) rows[`service-${w}`] = []
  for (let k = 0; k < RUNS; k++) {
    rows.embedded.push(await embedded(docs, bytes, k))
    for (const w of WORKERS) rows[`service-${w}`].push(await service(pg, s3, docs, bytes, w, k))
  }
  const summary = Object.fromEntries(Object.entries(rows).map(([name, runs]) => [name, Object.fromEntries(['s', 'mb_per_s', 'one_file_ms'].map((m) => [m, median(runs.map((r) => r[m]))]))]))
  const out = {
    date: new Date().toISOString(),
    corpus: `SciFact ×${COPIES}, 50 abstracts a file: ${files} files, ${(bytes / 1e6).toFixed(1)} MB`,
    servers: `PostgreSQL ${pg.version} (fsync=on, Unix socket), SeaweedFS (loopback, signed requests)`,
    cores: cpus().length,
    runs: RUNS,
    summary,
    rows,
  }
  mkdirSync(join(root, 'bench/results'), { recursive: true })
  writeFileSync(join(root, 'bench/results/service-ingest.json'), `${JSON.stringify(out, null, 2)}\n`)
  const base = summary.embedded.mb_per_s
  const md = [
    '# Ingest into the service (PostgreSQL + S3) beside the embedded default',
    '',
    `${out.corpus}; ${out.servers}; ${out.cores} cores for everything; medians of ${RUNS} runs on fresh stores. Workers: processes with a folder of their own on one database and bucket prefix, each adding its share as one job, at once (wall time, process start included). One-file add: the job's own time.`,
    '',
    '| store | workers | full add (s) | MB/s | × embedded | one-file add (ms) |',
    '|---|---:|---:|---:|---:|---:|',
    `| SQLite + folder | 1 | ${summary.embedded.s.toFixed(1)} | ${base.toFixed(2)} | 1.00 | ${summary.embedded.one_file_ms.toFixed(0)} |`,
    ...WORKERS.map((w) => {
      const r = summary[`service-${w}`]
      return `| PostgreSQL + S3 | ${w} | ${r.s.toFixed(1)} | ${r.mb_per_s.toFixed(2)} | ${(r.mb_per_s / base).toFixed(2)} | ${r.one_file_ms.toFixed(0)} |`
    }),
    '',
  ].join('\n')
  writeFileSync(join(root, 'bench/results/service-ingest.md'), md)
  process.stdout.write(md)
} finally {
  await s3.stop()
  pg.stop()
  rmSync(scratch, { recursive: true, force: true })
}
