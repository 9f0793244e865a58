// `npm run bench:store`: the store's share of an add — the canonical rows of SciFact's abstracts
// (BENCH_COPIES times over, 4 by default) written through the store's repositories and published
// as one snapshot — on the embedded store's SQLite (synchronous=FULL) and on PostgreSQL (Debian's
// server, fsync=on, Unix socket), with 1 and 2 writers, each a handle of its own as separate
// daemons are; and the floor under it, one trivial statement's round trip. The measuring is in
// Rust (crates/tychora-core/examples/canonical_rows_bench.rs, built in release); this writes
// bench/results/store-rows.{json,md}. Needs Debian's `postgresql` and ../shared/data/scifact.
import { execFileSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { root } from './common.mjs'

const out = execFileSync('cargo', ['run', '--quiet', '--release', '-p', 'tychora-core', '--example', 'canonical_rows_bench'], {
  cwd: root,
  encoding: 'utf8',
  maxBuffer: 1 << 24,
  env: { ...process.env, BENCH_COPIES: process.env.BENCH_COPIES ?? '4' },
  stdio: ['ignore', 'pipe', 'inherit'],
})
const result = { date: new Date().toISOString(), ...JSON.parse(out.trim().split('\n').pop()) }
mkdirSync(join(root, 'bench/results'), { recursive: true })
writeFileSync(join(root, 'bench/results/store-rows.json'), `${JSON.stringify(result, null, 2)}\n`)
const of = (adapter, writers) => result.results.find((r) => r.adapter === adapter && r.writers === writers)
const floor = (adapter) => result.statement_floor.find((f) => f.adapter === adapter).round_trip_us
const md = [
  "# The store's share of an add: SQLite vs PostgreSQL",
  '',
  `${result.corpus} ×${result.copies}: ${result.files} files, ${result.mb.toFixed(1)} MB of text. Per file one source, artifact row, revision, extraction, two units with locators and identifiers, one window: 12 statements, which PostgreSQL sends in 2 round trips (the writes no one waits for go pipelined with the next read, ids taken ahead in blocks); ${result.files_per_transaction} files a transaction, then one snapshot publishes all. Parsing, artifact bytes and index builds are not in it. Medians of ${result.runs} runs on fresh stores, ${result.cores} cores; SQLite synchronous=FULL, PostgreSQL 15 fsync=on over a Unix socket.`,
  '',
  '| writers | SQLite s | SQLite MB/s | PostgreSQL s | PostgreSQL MB/s | PostgreSQL / SQLite rate |',
  '|---:|---:|---:|---:|---:|---:|',
  ...[1, 2].map((w) => {
    const s = of('sqlite', w)
    const p = of('postgres', w)
    return `| ${w} | ${s.median_s.toFixed(2)} | ${s.mb_per_s.toFixed(1)} | ${p.median_s.toFixed(2)} | ${p.mb_per_s.toFixed(1)} | ${(p.mb_per_s / s.mb_per_s).toFixed(3)}× |`
  }),
  '',
  `One trivial statement through the store's interface: ${floor('sqlite').toFixed(2)} µs on SQLite, ${floor('postgres').toFixed(1)} µs on PostgreSQL.`,
  '',
].join('\n')
writeFileSync(join(root, 'bench/results/store-rows.md'), md)
process.stdout.write(md)
