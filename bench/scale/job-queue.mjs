// `npm run bench:queue`: the job queue's two adapters side by side — the embedded store's SQLite
// (synchronous=FULL) and PostgreSQL (Debian's server, fsync=on, Unix socket) — taking and ending
// BENCH_JOBS empty jobs with 1, 2 and 4 workers, each worker a handle of its own as separate
// daemons are. The measuring is in Rust (crates/tychora-core/examples/job_queue_bench.rs, built
// in release); this writes bench/results/job-queue.{json,md}. Needs Debian's `postgresql`.
import { execFileSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { root } from './common.mjs'

const out = execFileSync('cargo', ['run', '--quiet', '--release', '-p', 'tychora-core', '--example', 'job_queue_bench'], {
  cwd: root,
  encoding: 'utf8',
  maxBuffer: 1 << 24,
  stdio: ['ignore', 'pipe', 'inherit'],
})
const result = { date: new Date().toISOString(), ...JSON.parse(out.trim().split('\n').pop()) }
mkdirSync(join(root, 'bench/results'), { recursive: true })
writeFileSync(join(root, 'bench/results/job-queue.json'), `${JSON.stringify(result, null, 2)}\n`)
const md = [
  '# Job queue: SQLite vs PostgreSQL',
  '',
  `${result.jobs} empty jobs taken and ended (two writes a job) by 1, 2 and 4 workers, each a handle of its own; medians of ${result.runs} runs on fresh queues, ${result.cores} cores. SQLite with synchronous=FULL (the embedded default); PostgreSQL 15 with fsync=on over a Unix socket. The queue's own cost: a real job's work comes on top.`,
  '',
  '| workers | SQLite jobs/s | PostgreSQL jobs/s |',
  '|---:|---:|---:|',
  ...[1, 2, 4].map((w) => {
    const of = (a) => result.results.find((r) => r.adapter === a && r.workers === w)
    return `| ${w} | ${of('sqlite').jobs_per_s.toFixed(0)} | ${of('postgres').jobs_per_s.toFixed(0)} |`
  }),
  '',
].join('\n')
writeFileSync(join(root, 'bench/results/job-queue.md'), md)
process.stdout.write(md)
