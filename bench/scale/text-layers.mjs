// Vector generations as layers (issue 11): in a workspace with the text channel (the local
// model), a small add writes a layer over the parent's vector file instead of a new full
// generation. Per corpus size: the full add, one-file adds (median of RUNS), an add of records
// worth 6% of the corpus (a layer still; the compaction after it folds the layer into a full
// generation, which is what every add paid before layers), and the text channel's query p50.
// SciFact copies repeat the same texts, so after the first copy the user cache supplies every
// vector and the figures are the index's, not the model's.
// Usage: node bench/scale/text-layers.mjs [copies,...]   (BENCH_RUNS, default 3)
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { RUNS, median, root, scifactCopies, worker } from './common.mjs'

export async function runTextLayers({ sizes = [1, 4], runs = RUNS } = {}) {
  const scratch = mkdtempSync(join(tmpdir(), 'tychora-layers-'))
  const rows = []
  try {
    for (const n of sizes) {
      const data = join(scratch, `data-${n}`)
      scifactCopies(data, n)
      const ws = join(scratch, `ws-${n}`)
      const full = worker('full-add', { ws, data, embeddings: 'local' })
      const one = []
      for (let i = 0; i < runs; i++) {
        const file = join(data, `note-${i}.md`)
        writeFileSync(file, `# Note ${i}\n\nA new note about zebrafish fin regeneration and its ${i} measured outcomes.\n`.padEnd(100, '.'))
        one.push(worker('add', { ws, paths: [file] }))
      }
      // 6% of the corpus as new records with texts the cache holds: a layer (under 10%), then
      // folded by the compaction that follows (over 5%).
      const extra = join(scratch, `extra-${n}`)
      scifactCopies(extra, 1, { count: Math.ceil(full.chunks * 0.06), prefix: 'x' })
      const grown = worker('add', { ws, paths: [extra] })
      const status = worker('status', { ws })
      const row = {
        copies: n,
        windows: full.chunks,
        full_add_s: full.job_ms / 1000,
        one_file_add_ms: median(one.map((r) => r.job_ms)),
        one_file_add_ms_runs: one.map((r) => r.job_ms),
        six_percent_add_ms: grown.job_ms,
        six_percent_embedded: grown.embedded,
        fold_ms: grown.folded ? grown.compact_ms : null,
        vector_bytes: status.storage.vector_bytes,
      }
      rows.push(row)
      console.error(JSON.stringify(row))
      rmSync(ws, { recursive: true, force: true })
      rmSync(data, { recursive: true, force: true })
      rmSync(extra, { recursive: true, force: true })
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
  const result = { date: new Date().toISOString(), machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version }, runs, rows }
  const f = (x, d = 0) => (x === null || x === undefined ? '–' : Number(x).toFixed(d))
  const md = [
    `# Vector layers (${result.date.slice(0, 10)})`,
    '',
    `${result.machine.cpus} cores (${result.machine.model}), Node ${result.machine.node}, release build, local model (all-MiniLM-L6-v2), workspaces of SciFact copies (the user cache supplies repeated texts' vectors). Job time from each receipt; one-file add: median of ${runs} jobs. The fold is compaction writing the layer into a new full generation: what every add paid before layers (graphs from 20,000 windows).`,
    '',
    '| windows | full add s | one-file add ms | 6% add ms | fold (full generation) ms | vectors MB |',
    '|---:|---:|---:|---:|---:|---:|',
    ...rows.map((r) => `| ${r.windows.toLocaleString('en')} | ${f(r.full_add_s, 2)} | ${f(r.one_file_add_ms)} | ${f(r.six_percent_add_ms)} | ${f(r.fold_ms)} | ${f(r.vector_bytes / 1e6, 1)} |`),
  ]
  mkdirSync(join(root, 'bench/results'), { recursive: true })
  writeFileSync(join(root, 'bench/results/text-layers.json'), `${JSON.stringify(result, null, 2)}\n`)
  writeFileSync(join(root, 'bench/results/text-layers.md'), `${md.join('\n')}\n`)
  return result
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const sizes = process.argv[2] ? process.argv[2].split(',').map(Number) : undefined
  await runTextLayers({ sizes })
  console.log(readFileSync(join(root, 'bench/results/text-layers.md'), 'utf8'))
}
