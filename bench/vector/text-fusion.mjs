#!/usr/bin/env node
// The text (dense) channel with the local model (all-MiniLM-L6-v2) through the production path
// (`evalBeir`: a scratch workspace, `add`, `searchBatch`):
//   1. choices on DEV data of two shapes — SciFact train (short claims) and the paragraph set
//      (≈165-word queries; bench/lexical/paragraph-dev.mjs): long inputs truncated vs pooled
//      (text only), then the text channel's fusion weight × candidate depth (hybrid);
//   2. the chosen setting on SciFact TEST, lexical only / text only / hybrid, beside the MTEB
//      figure for the model; CoSQA dev (code profile) with and without the text channel;
//   3. embedding cost: the first pass over a corpus (cold user cache) and a second evaluation of
//      the same set, which must embed nothing.
// Cells already measured are kept in bench/results/text-fusion.json. Writes
// bench/results/text-fusion.{json,md}.
//
//   node bench/vector/text-fusion.mjs [--stage dev|test|all]
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, homedir, tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { evalBeir, evalBeirAsCode } from '../../dist/index.js'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const shared = resolve(root, '../shared/data')
const args = process.argv.slice(2)
const stage = args.includes('--stage') ? args[args.indexOf('--stage') + 1] : 'all'
const paragraphDev = join(homedir(), '.cache', 'tychora', 'paragraph-dev')
const resultsPath = join(root, 'bench/results/text-fusion.json')
const saved = existsSync(resultsPath) ? JSON.parse(readFileSync(resultsPath, 'utf8')) : {}
const results = {
  date: new Date().toISOString(),
  machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version },
  cells: saved.cells ?? {},
  cost: saved.cost ?? null,
  cli: saved.cli ?? null,
}

/** One evaluation, cached by its key. */
async function cell(key, run) {
  if (results.cells[key] === undefined) {
    console.error(`# ${key}`)
    const r = await run()
    results.cells[key] = {
      ndcg_at_10: r.ndcg_at_10,
      mrr_at_10: r.mrr_at_10,
      recall_at_100: r.recall_at_100,
      query_p50_ms: r.query_latency_ms.p50,
      query_p99_ms: r.query_latency_ms.p99,
      ingest_seconds: r.ingest_seconds,
      embedding: r.embedding ?? null,
    }
    writeFileSync(resultsPath, `${JSON.stringify(results, null, 2)}\n`)
  }
  return results.cells[key]
}

const SETS = { 'scifact-train': [join(shared, 'scifact'), 'train'], paragraph: [paragraphDev, 'dev'] }
const WEIGHTS = [0.5, 1, 2]
const DEPTHS = [30, 100]

if (stage === 'dev' || stage === 'all') {
  for (const [name, [dir, split]] of Object.entries(SETS)) {
    await cell(`${name} lexical`, () => evalBeir(dir, { split }))
    for (const long of ['truncate', 'pool']) await cell(`${name} text ${long}`, () => evalBeir(dir, { split, embeddings: { long_inputs: long }, channels: ['text'] }))
    // limit 10: each channel then ranks 30 candidates, and the text channel `depth`; with limit
    // 100 every channel ranks 300 and the depth would not matter.
    for (const w of WEIGHTS) {
      for (const d of DEPTHS) await cell(`${name} hybrid w${w} d${d} limit10`, () => evalBeir(dir, { split, limit: 10, embeddings: { weight: w, depth: d }, channels: ['exact', 'lexical', 'text'] }))
    }
    await cell(`${name} lexical limit10`, () => evalBeir(dir, { split, limit: 10 }))
  }
}

if (stage === 'test' || stage === 'all') {
  const [dir] = SETS['scifact-train']
  // The choice made on dev (see the md): the pack's defaults (weight 1, depth 30, truncation).
  await cell('scifact-test lexical', () => evalBeir(dir, { split: 'test' }))
  await cell('scifact-test text', () => evalBeir(dir, { split: 'test', embeddings: {}, channels: ['text'] }))
  await cell('scifact-test hybrid', () => evalBeir(dir, { split: 'test', embeddings: {}, channels: ['exact', 'lexical', 'text'] }))
  await cell('cosqa-dev code', () => evalBeirAsCode(join(shared, 'cosqa'), { split: 'dev' }))
  await cell('cosqa-dev code+text', () => evalBeirAsCode(join(shared, 'cosqa'), { split: 'dev', embeddings: {} }))
  if (!results.cli) {
    // The hybrid query through the CLI: a process per query (start, open, embed the query, search).
    const kept = await evalBeir(dir, { split: 'test', embeddings: {}, channels: ['exact', 'lexical', 'text'], keep: true })
    const queries = readFileSync(join(dir, 'queries.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .slice(0, 30)
      .map((l) => JSON.parse(l).text)
    const times = []
    for (const q of queries) {
      const t = performance.now()
      const r = spawnSync(process.execPath, [join(root, 'dist/bin/tychora.cjs'), 'search', '-w', kept.workspace, '--channels', 'exact,lexical,text', '--format', 'json', '--', q], {
        encoding: 'utf8',
      })
      times.push(performance.now() - t)
      if (r.status !== 0) throw new Error(`CLI search failed: ${r.stderr}`)
    }
    rmSync(dirname(kept.workspace), { recursive: true, force: true })
    times.sort((a, b) => a - b)
    results.cli = {
      queries: times.length,
      p50_ms: times[times.length >> 1],
      p99_ms: times[Math.min(times.length - 1, Math.ceil(0.99 * times.length) - 1)],
    }
    writeFileSync(resultsPath, `${JSON.stringify(results, null, 2)}\n`)
  }
  if (!results.cost) {
    // Embedding cost with an empty user cache, then the same evaluation again.
    const cache = mkdtempSync(join(tmpdir(), 'tychora-vector-cache-'))
    const cold = await evalBeir(dir, { split: 'test', embeddings: { cache_dir: cache }, channels: ['text'] })
    const warm = await evalBeir(dir, { split: 'test', embeddings: { cache_dir: cache }, channels: ['text'] })
    rmSync(cache, { recursive: true, force: true })
    const e = cold.embedding
    results.cost = {
      corpus: 'SciFact (5,183 abstracts)',
      cold: {
        ...e,
        ingest_seconds: cold.ingest_seconds,
        tokens_per_second: e.tokens_embedded / (e.embed_ms / 1000),
        windows_per_second: e.embedded / (e.embed_ms / 1000),
      },
      second_run: { ...warm.embedding, ingest_seconds: warm.ingest_seconds },
      lexical_only_ingest_seconds: results.cells['scifact-test lexical'].ingest_seconds,
    }
    writeFileSync(resultsPath, `${JSON.stringify(results, null, 2)}\n`)
  }
}

const c = results.cells
const f = (x, d = 4) => (typeof x === 'number' ? x.toFixed(d) : '–')
const md = [
  `# The text channel (local all-MiniLM-L6-v2): choices on dev, figures on test (${results.date.slice(0, 10)})`,
  '',
  `${results.machine.cpus} cores (${results.machine.model}), Node ${results.machine.node}; release build; \`evalBeir\` (a scratch workspace, \`add\`, \`searchBatch\`, limit 100). nDCG@10 unless noted.`,
  '',
  '## Dev: long inputs (text channel only)',
  '',
  '| set | lexical only | text, truncate to 256 | text, pool 256-token sub-windows |',
  '|---|---:|---:|---:|',
  ...Object.keys(SETS).map((s) => `| ${s} | ${f(c[`${s} lexical`]?.ndcg_at_10)} | ${f(c[`${s} text truncate`]?.ndcg_at_10)} | ${f(c[`${s} text pool`]?.ndcg_at_10)} |`),
  '',
  '## Dev: hybrid (exact + lexical + text), text weight × depth',
  '',
  'Queries ask for 10 segments: the other channels rank 30 candidates each, the text channel `depth`.',
  '',
  `| set | lexical only | ${WEIGHTS.flatMap((w) => DEPTHS.map((d) => `w ${w}, depth ${d}`)).join(' | ')} |`,
  `|---|---:|${WEIGHTS.flatMap(() => DEPTHS.map(() => '---:')).join('|')}|`,
  ...Object.keys(SETS).map(
    (s) => `| ${s} | ${f(c[`${s} lexical limit10`]?.ndcg_at_10)} | ${WEIGHTS.flatMap((w) => DEPTHS.map((d) => f(c[`${s} hybrid w${w} d${d} limit10`]?.ndcg_at_10))).join(' | ')} |`,
  ),
  '',
  '## Test (not tuned on)',
  '',
  '| set | lexical only | text only | hybrid | reference |',
  '|---|---:|---:|---:|---|',
  `| SciFact test nDCG@10 | ${f(c['scifact-test lexical']?.ndcg_at_10)} | ${f(c['scifact-test text']?.ndcg_at_10)} | ${f(c['scifact-test hybrid']?.ndcg_at_10)} | MTEB all-MiniLM-L6-v2 SciFact 0.645 (text only) |`,
  `| SciFact test query p50 / p99 ms | ${f(c['scifact-test lexical']?.query_p50_ms, 1)} / ${f(c['scifact-test lexical']?.query_p99_ms, 1)} | ${f(c['scifact-test text']?.query_p50_ms, 1)} / ${f(c['scifact-test text']?.query_p99_ms, 1)} | ${f(c['scifact-test hybrid']?.query_p50_ms, 1)} / ${f(c['scifact-test hybrid']?.query_p99_ms, 1)} | in-process |`,
  `| SciFact hybrid through the CLI, ms | | | ${f(results.cli?.p50_ms, 0)} / ${f(results.cli?.p99_ms, 0)} | p50 / p99 of ${results.cli?.queries ?? '–'} \`tychora search\` processes (start, open, embed, search) |`,
  `| CoSQA dev MRR@10 (code profile) | ${f(c['cosqa-dev code']?.mrr_at_10)} | – | ${f(c['cosqa-dev code+text']?.mrr_at_10)} | FTS5 0.329 (README) |`,
  '',
]
if (results.cost) {
  const k = results.cost
  md.push(
    '## Embedding cost',
    '',
    `${k.corpus}, both cores: a cold pass embedded ${k.cold.embedded} windows (${k.cold.tokens_embedded} tokens) in ${f(k.cold.embed_ms / 1000, 1)} s: **${f(k.cold.tokens_per_second, 0)} tokens/s, ${f(k.cold.windows_per_second, 1)} windows/s** (ingest ${f(k.cold.ingest_seconds, 1)} s, lexical-only ingest ${f(k.lexical_only_ingest_seconds, 1)} s). A second evaluation of the same set embedded **${k.second_run.embedded}** (${k.second_run.user_cached} from the user cache; ingest ${f(k.second_run.ingest_seconds, 1)} s).`,
    '',
  )
}
mkdirSync(join(root, 'bench/results'), { recursive: true })
writeFileSync(resultsPath, `${JSON.stringify(results, null, 2)}\n`)
writeFileSync(join(root, 'bench/results/text-fusion.md'), `${md.join('\n')}\n`)
console.log(md.join('\n'))
