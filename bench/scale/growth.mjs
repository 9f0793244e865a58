// Growth curve (issue 11): workspaces of 1, 4, 16 and 64 copies of the SciFact corpus (ids
// renamed, one JSONL file per copy), then `add` of one new 100-byte Markdown file. Reports the full
// add (job time and MB/s), the one-file add's job time (median of RUNS adds, each a new file), a
// one-file change, the workspace's size on disk with its breakdown, and a query's p50 after the
// adds. Each measurement runs in its own process (bench/scale/worker.mjs).
// Usage: node bench/scale/growth.mjs [copies,...]   (BENCH_RUNS, default 3)
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { RUNS, median, root, scifactCopies, worker } from './common.mjs'

export async function runGrowth({ sizes = [1, 4, 16, 64], runs = RUNS } = {}) {
  const scratch = mkdtempSync(join(tmpdir(), 'tychora-growth-'))
  const rows = []
  try {
    for (const copies of sizes) {
      const data = join(scratch, `data-${copies}`)
      const input = scifactCopies(data, copies)
      const ws = join(scratch, `ws-${copies}`)
      const full = worker('full-add', { ws, data })
      const one = []
      const change = []
      for (let i = 0; i < runs; i++) {
        const file = join(data, `note-${i}.md`)
        writeFileSync(file, `# Note ${i}\n\nA new note about zebrafish fin regeneration and its ${i} measured outcomes.\n`.padEnd(100, '.'))
        one.push(worker('add', { ws, paths: [file] }))
        writeFileSync(file, `# Note ${i}\n\nThe changed note about axolotl limb regeneration, revision ${i}.\n`.padEnd(100, '.'))
        change.push(worker('add', { ws, paths: [file] }))
      }
      const status = worker('status', { ws })
      const row = {
        copies,
        chunks: full.chunks,
        input_bytes: input,
        full_add_s: full.job_ms / 1000,
        full_add_mb_per_s: input / 1e6 / (full.job_ms / 1000),
        one_file_add_ms: median(one.map((r) => r.job_ms)),
        one_file_add_ms_runs: one.map((r) => r.job_ms),
        one_file_change_ms: median(change.map((r) => r.job_ms)),
        query_p50_ms: status.query_p50_ms,
        disk_bytes: status.disk_bytes,
        storage: status.storage,
      }
      rows.push(row)
      console.error(JSON.stringify(row))
      rmSync(ws, { recursive: true, force: true })
      rmSync(data, { recursive: true, force: true })
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
  const result = { date: new Date().toISOString(), machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version }, runs, rows }
  const f = (x, d = 2) => (x === null || x === undefined ? '–' : Number(x).toFixed(d))
  const mb = (b) => f(b / 1e6, 0)
  const md = [
    `# Growth curve (${result.date.slice(0, 10)})`,
    '',
    `${result.machine.cpus} cores (${result.machine.model}), Node ${result.machine.node}, release build. Copies of SciFact (5,183 abstracts, ids renamed, one JSONL file per copy); job time from each receipt; one-file add and change: medians of ${runs} jobs, each adding (then changing) a new 100-byte Markdown file; query p50 over the 300 SciFact test queries after the adds.`,
    '',
    '| chunks | input MB | full add s | full add MB/s | one-file add ms | one-file change ms | query p50 ms | workspace MB | originals MB | SQLite MB | lexical MB | vectors MB |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.chunks.toLocaleString('en')} | ${mb(r.input_bytes)} | ${f(r.full_add_s)} | ${f(r.full_add_mb_per_s, 1)} | ${f(r.one_file_add_ms, 0)} | ${f(r.one_file_change_ms, 0)} | ${f(r.query_p50_ms)} | ${mb(r.disk_bytes)} | ${mb(r.storage?.originals_bytes ?? 0)} | ${mb(r.storage?.sqlite_bytes ?? 0)} | ${mb(r.storage?.lexical_bytes ?? 0)} | ${mb(r.storage?.vector_bytes ?? 0)} |`,
    ),
  ]
  mkdirSync(join(root, 'bench/results'), { recursive: true })
  writeFileSync(join(root, 'bench/results/growth.json'), `${JSON.stringify(result, null, 2)}\n`)
  writeFileSync(join(root, 'bench/results/growth.md'), `${md.join('\n')}\n`)
  return result
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const sizes = process.argv[2] ? process.argv[2].split(',').map(Number) : undefined
  const r = await runGrowth({ sizes })
  console.log(readFileSync(join(root, 'bench/results/growth.md'), 'utf8'))
  void r
}
