// A real repository from `add` to a published snapshot through the CLI (release build): the pytest
// 8.3.4 sdist from PyPI (src/ and testing/, ~94k lines of Python), into a code-profile workspace.
// Measures a cold add, an unchanged re-add, and a re-add after one file changed (which re-resolves
// the whole repository), each the median of several fresh runs, with the job's own step timings.
// Writes bench/results/repo-ingest.{json,md}; `runRepoIngest` is what bench/run.mjs calls.
import { execFileSync, spawnSync } from 'node:child_process'
import { appendFileSync, cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'
import { fetchCorpus } from './corpora.mjs'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const CLI = join(root, 'dist/bin/tychora.cjs')
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

function pythonLines(dir) {
  let lines = 0
  let files = 0
  const walk = (d) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name)
      if (statSync(p).isDirectory()) walk(p)
      else if (name.endsWith('.py')) {
        files++
        lines += readFileSync(p, 'utf8').split('\n').length
      }
    }
  }
  walk(dir)
  return { files, lines }
}

/** One CLI add with its wall time, peak RSS (GNU time's %M, KiB, on the last stderr line) and receipt. */
function add(ws, dir) {
  const started = process.hrtime.bigint()
  const run = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, CLI, 'add', '-w', ws, dir, '--format', 'json'], {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  })
  const wall = Number(process.hrtime.bigint() - started) / 1e9
  if (run.status !== 0) throw new Error(`add failed (${run.status}): ${run.stderr}`)
  const rssMb = Number(run.stderr.trim().split('\n').pop()) / 1024
  return { wall, rssMb, receipt: JSON.parse(run.stdout) }
}

function steps(ws, jobId) {
  const db = new Database(join(ws, 'corpus.sqlite3'), { readonly: true })
  const rows = db.prepare('SELECT name, started_at, finished_at, detail_json FROM job_steps WHERE job_id = ? ORDER BY id').all(jobId)
  const relations = db.prepare('SELECT kind, outcome, count(*) AS n FROM relations WHERE set_id = (SELECT max(id) FROM relation_sets) GROUP BY 1, 2').all()
  db.close()
  return { steps: Object.fromEntries(rows.map((r) => [r.name, (r.finished_at ?? r.started_at) - r.started_at])), relations }
}

export async function runRepoIngest({ runs = 3 } = {}) {
  const src = fetchCorpus({ language: 'python', registry: 'pypi', name: 'pytest', version: '8.3.4', subdir: '.' })
  const { files, lines } = pythonLines(src)
  const cold = []
  const unchanged = []
  const oneChange = []
  let detail = null
  for (let i = 0; i < runs; i++) {
    const scratch = mkdtempSync(join(tmpdir(), 'tychora-repo-ingest-'))
    const repo = join(scratch, 'pytest')
    cpSync(src, repo, { recursive: true })
    const ws = join(scratch, 'ws')
    execFileSync(process.execPath, [CLI, 'init', ws, '--profile', 'code'], { stdio: 'ignore' })
    const first = add(ws, repo)
    cold.push({
      wall: first.wall,
      rss_mb: first.rssMb,
      job: first.receipt.duration_ms / 1000,
      units: first.receipt.units,
      chunks: first.receipt.chunks,
      added: first.receipt.files.added,
    })
    if (i === 0) detail = steps(ws, first.receipt.job_id)
    const again = add(ws, repo)
    unchanged.push({ wall: again.wall, job: again.receipt.duration_ms / 1000, published: again.receipt.published })
    appendFileSync(join(repo, 'src/_pytest/nodes.py'), '\n\ndef _bench_touch():\n    return None\n')
    const changed = add(ws, repo)
    oneChange.push({
      wall: changed.wall,
      job: changed.receipt.duration_ms / 1000,
      changed: changed.receipt.files.changed,
      ...steps(ws, changed.receipt.job_id),
    })
    rmSync(scratch, { recursive: true, force: true })
  }
  const result = {
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version },
    corpus: { name: 'pytest 8.3.4 sdist (PyPI)', python_files: files, python_lines: lines },
    runs,
    cold: {
      wall_s: median(cold.map((r) => r.wall)),
      peak_rss_mb: median(cold.map((r) => r.rss_mb)),
      job_s: median(cold.map((r) => r.job)),
      units: cold[0].units,
      chunks: cold[0].chunks,
      files_added: cold[0].added,
      steps_ms: detail.steps,
      relations: detail.relations,
      all: cold,
    },
    unchanged_readd: {
      wall_s: median(unchanged.map((r) => r.wall)),
      job_s: median(unchanged.map((r) => r.job)),
      published: unchanged[0].published,
      all: unchanged,
    },
    one_file_changed: {
      wall_s: median(oneChange.map((r) => r.wall)),
      job_s: median(oneChange.map((r) => r.job)),
      steps_ms: oneChange[0].steps,
      all: oneChange.map(({ relations: _r, ...rest }) => rest),
    },
    targets: { cold_add_s: 20, unchanged_readd_s: 2 },
  }
  const f = (x) => x.toFixed(2)
  const md = [
    `# Repository ingest: ${result.corpus.name}, ${lines.toLocaleString('en')} lines in ${files} Python files`,
    '',
    `Release build through the CLI, median of ${runs} fresh workspaces; ${result.machine.cpus} cores; ${result.date}.`,
    '',
    '| step | CLI wall (s) | job (s) | target |',
    '|---|---:|---:|---|',
    `| cold add → published snapshot | ${f(result.cold.wall_s)} | ${f(result.cold.job_s)} | < 20 s |`,
    `| unchanged re-add (nothing published) | ${f(result.unchanged_readd.wall_s)} | ${f(result.unchanged_readd.job_s)} | < 2 s |`,
    `| one file changed (re-resolve the repo, publish) | ${f(result.one_file_changed.wall_s)} | ${f(result.one_file_changed.job_s)} | |`,
    '',
    `Cold add: peak RSS ${result.cold.peak_rss_mb.toFixed(0)} MB, ${result.cold.units} units, ${result.cold.chunks} windows; job steps (ms): ${Object.entries(result.cold.steps_ms)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}.`,
    `Relations: ${result.cold.relations.map((r) => `${r.kind}/${r.outcome} ${r.n}`).join(', ')}.`,
  ]
  writeFileSync(join(root, 'bench/results/repo-ingest.json'), `${JSON.stringify(result, null, 2)}\n`)
  writeFileSync(join(root, 'bench/results/repo-ingest.md'), `${md.join('\n')}\n`)
  return { result, md: md.join('\n') }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { md } = await runRepoIngest({ runs: Number(process.env.BENCH_RUNS ?? 3) })
  console.log(md)
}
