#!/usr/bin/env node
// ANN benchmark: the engine's vector index (usearch HNSW through `vector::index`, and its exact
// flat layout) against hnswlib-node and exact brute force, on the same vectors:
//   1. SciFact's windows embedded with all-MiniLM-L6-v2 (a scratch eval workspace's vector
//      records), queried with SciFact's test claims;
//   2. 100,000 synthetic 384-d unit vectors (Gaussian clusters; stated as synthetic).
// Build time, QPS and p50/p99 (single-threaded queries), recall@10 against exact, file size and
// memory (the engine: the opened index's heap; hnswlib-node: its process's RSS growth); the 1%
// filtered search of the engine. The engine's graph is measured with f32 vectors (the default)
// and with f16 (`quantization = "f16"` in [embeddings]). At equal HNSW parameters
// (M = 16, ef_construction = 128), each engine is reported at the smallest ef_search whose
// recall@10 ≥ 0.95. Writes bench/results/ann.{json,md}.
//
//   node bench/vector/ann.mjs [--synthetic 100000]
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, homedir, tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const args = process.argv.slice(2)
const syntheticN = Number(args.includes('--synthetic') ? args[args.indexOf('--synthetic') + 1] : 100_000)
const target = process.env.CARGO_TARGET_DIR ?? join(root, 'target')
const bin = join(target, 'release', 'tychora-bench')
const model = join(homedir(), '.cache', 'tychora', 'models', 'all-MiniLM-L6-v2')
const scratch = mkdtempSync(join(tmpdir(), 'tychora-ann-'))
const EFS = [16, 32, 64, 128, 256]

function writeF32(path, vectors) {
  const dim = vectors[0].length
  const buf = Buffer.alloc(vectors.length * dim * 4)
  for (const [i, v] of vectors.entries()) for (const [j, x] of v.entries()) buf.writeFloatLE(x, (i * dim + j) * 4)
  writeFileSync(path, buf)
}

/** SciFact windows' vectors from a scratch eval workspace, and the test claims embedded as queries. */
async function scifact() {
  const { evalBeir } = await import('../../dist/index.js')
  const report = await evalBeir(resolve(root, '../shared/data/scifact'), { split: 'test', embeddings: {}, channels: ['text'], keep: true })
  const db = new Database(join(report.workspace, 'corpus.sqlite3'), { readonly: true })
  const base = db
    .prepare('SELECT vector FROM vector_records ORDER BY input_sha256')
    .all()
    .map((r) => Array.from(new Float32Array(r.vector.buffer, r.vector.byteOffset, r.vector.byteLength / 4)))
  db.close()
  rmSync(dirname(report.workspace), { recursive: true, force: true })
  const queries = readFileSync(resolve(root, '../shared/data/scifact/queries.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l).text)
    .slice(0, 1000)
  const textsPath = join(scratch, 'scifact-queries.json')
  writeFileSync(textsPath, JSON.stringify(queries))
  const embedded = JSON.parse(execFileSync(bin, ['embed', model, textsPath], { maxBuffer: 1 << 30 }).toString())
  return { name: `SciFact windows (all-MiniLM-L6-v2, ${base.length} vectors)`, key: 'scifact', base, queries: embedded.vectors }
}

/** Deterministic Gaussian clusters on the unit sphere. */
function synthetic(n, dim = 384, clusters = 1000, queries = 1000) {
  let state = 0x2545f4914f6cdd1dn
  const next = () => {
    state ^= state << 13n
    state &= 0xffffffffffffffffn
    state ^= state >> 7n
    state ^= state << 17n
    state &= 0xffffffffffffffffn
    return Number(state % 1_000_000n) / 1_000_000
  }
  const gauss = () => Math.sqrt(-2 * Math.log(next() + 1e-12)) * Math.cos(2 * Math.PI * next())
  const unit = (v) => {
    const n = Math.hypot(...v)
    return v.map((x) => x / n)
  }
  const centers = Array.from({ length: clusters }, () => unit(Array.from({ length: dim }, gauss)))
  const around = () => {
    const c = centers[Math.floor(next() * clusters)]
    return unit(c.map((x) => x + 0.08 * gauss()))
  }
  return {
    name: `synthetic (${n} unit vectors, 384-d, 1,000 Gaussian clusters)`,
    key: 'synthetic',
    base: Array.from({ length: n }, around),
    queries: Array.from({ length: queries }, around),
  }
}

/** hnswlib-node in its own process (its memory is its own). */
function hnswlib(basePath, queriesPath, dim, truthPath) {
  const code = `
    const { HierarchicalNSW } = require('hnswlib-node')
    const fs = require('fs')
    const read = (p) => { const b = fs.readFileSync(p); const f = new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4); const out = []; for (let i = 0; i < f.length; i += ${dim}) out.push(Array.from(f.subarray(i, i + ${dim}))); return out }
    const base = read(${JSON.stringify(basePath)}), queries = read(${JSON.stringify(queriesPath)})
    const truth = JSON.parse(fs.readFileSync(${JSON.stringify(truthPath)}, 'utf8'))
    const rss0 = process.memoryUsage().rss
    let t = performance.now()
    const index = new HierarchicalNSW('cosine', ${dim})
    index.initIndex(base.length, 16, 128, 100)
    for (let i = 0; i < base.length; i++) index.addPoint(base[i], i)
    const build_ms = performance.now() - t
    const rss_mb = (process.memoryUsage().rss - rss0) / 1e6
    const file = ${JSON.stringify(join(scratch, 'hnswlib.bin'))}
    index.writeIndexSync(file)
    const file_bytes = fs.statSync(file).size
    const rows = []
    for (const ef of ${JSON.stringify(EFS)}) {
      index.setEf(ef)
      const times = []; let hit = 0
      const all = performance.now()
      queries.forEach((q, i) => { const s = performance.now(); const r = index.searchKnn(q, 10); times.push(performance.now() - s); hit += r.neighbors.filter((n) => truth[i].includes(n)).length })
      const total = (performance.now() - all) / 1000
      times.sort((a, b) => a - b)
      rows.push({ layout: 'hnswlib', expansion_search: ef, build_ms, file_bytes, rss_mb, qps: queries.length / total, p50_ms: times[times.length >> 1], p99_ms: times[Math.min(times.length - 1, Math.ceil(0.99 * times.length) - 1)], recall_at_10: hit / (queries.length * 10) })
    }
    console.log(JSON.stringify(rows))
  `
  return JSON.parse(execFileSync(process.execPath, ['-e', code], { cwd: root, maxBuffer: 1 << 28 }).toString())
}

const results = {
  date: new Date().toISOString(),
  machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version },
  sets: [],
  crossover: [],
}
const big = synthetic(syntheticN)
// The exact/HNSW crossover: prefixes of the synthetic set, 200 queries, the engine's two layouts.
for (const n of [2_000, 5_000, 10_000, 20_000, 50_000].filter((n) => n < big.base.length)) {
  const basePath = join(scratch, `x${n}-base.f32`)
  const queriesPath = join(scratch, `x${n}-queries.f32`)
  writeF32(basePath, big.base.slice(0, n))
  writeF32(queriesPath, big.queries.slice(0, 200))
  const engine = JSON.parse(execFileSync(bin, ['ann', basePath, queriesPath, '384', join(scratch, `x${n}`)], { maxBuffer: 1 << 28 }).toString())
  const flat = engine.layouts.find((l) => l.layout === 'flat')
  const hnsw = engine.layouts.filter((l) => l.layout === 'hnsw' && l.recall_at_10 >= 0.95).sort((a, b) => a.p50_ms - b.p50_ms)[0]
  results.crossover.push({
    vectors: n,
    exact_p50_ms: flat.p50_ms,
    exact_p99_ms: flat.p99_ms,
    hnsw_p50_ms: hnsw?.p50_ms ?? null,
    hnsw_ef: hnsw?.expansion_search ?? null,
    hnsw_recall_at_10: hnsw?.recall_at_10 ?? null,
    hnsw_build_ms: hnsw?.build_ms ?? null,
  })
  console.error(JSON.stringify(results.crossover.at(-1)))
}
for (const set of [await scifact(), big]) {
  console.error(`# ${set.name}`)
  const dim = set.base[0].length
  const basePath = join(scratch, `${set.key}-base.f32`)
  const queriesPath = join(scratch, `${set.key}-queries.f32`)
  writeF32(basePath, set.base)
  writeF32(queriesPath, set.queries)
  const engine = JSON.parse(execFileSync(bin, ['ann', basePath, queriesPath, String(dim), join(scratch, set.key)], { maxBuffer: 1 << 28 }).toString())
  const half = JSON.parse(execFileSync(bin, ['ann', basePath, queriesPath, String(dim), join(scratch, `${set.key}-f16`), 'f16'], { maxBuffer: 1 << 28 }).toString())
  // Exact ground truth: the engine's flat layout (an exhaustive scan) wrote it.
  const truthPath = join(scratch, set.key, 'truth.json')
  const peer = hnswlib(basePath, queriesPath, dim, truthPath)
  const at95 = (rows) => rows.filter((r) => r.recall_at_10 >= 0.95).sort((a, b) => b.qps - a.qps)[0] ?? null
  const usearchRows = engine.layouts.filter((l) => l.layout === 'hnsw')
  const flat = engine.layouts.find((l) => l.layout === 'flat')
  const halfRows = half.layouts.filter((l) => l.layout === 'hnsw')
  const u = at95(usearchRows)
  const u16 = at95(halfRows)
  const h = at95(peer)
  results.sets.push({
    name: set.name,
    vectors: set.base.length,
    queries: set.queries.length,
    dimension: dim,
    flat,
    usearch: usearchRows,
    usearch_f16: halfRows,
    hnswlib: peer,
    at_recall_95: {
      usearch: u,
      usearch_f16: u16,
      hnswlib: h,
      qps_ratio: u && h ? u.qps / h.qps : null,
      qps_ratio_f16: u16 && h ? u16.qps / h.qps : null,
    },
  })
}
rmSync(scratch, { recursive: true, force: true })
mkdirSync(join(root, 'bench/results'), { recursive: true })
writeFileSync(join(root, 'bench/results/ann.json'), `${JSON.stringify(results, null, 2)}\n`)
const f = (x, d = 2) => (typeof x === 'number' ? x.toFixed(d) : '–')
const md = [
  `# ANN: the engine's vector index vs hnswlib-node vs exact (${results.date.slice(0, 10)})`,
  '',
  `${results.machine.cpus} cores (${results.machine.model}), Node ${results.machine.node}; release build; one query at a time, single-threaded; HNSW M = 16, ef_construction = 128 for both; recall@10 against exact brute force.`,
  '',
]
md.push('## Exact vs HNSW by size (synthetic prefixes, 200 queries)', '', '| vectors | exact p50 / p99 ms | HNSW p50 ms (smallest ef with recall@10 ≥ 0.95) | HNSW build s |', '|---:|---:|---:|---:|')
for (const x of results.crossover)
  md.push(`| ${x.vectors} | ${f(x.exact_p50_ms, 3)} / ${f(x.exact_p99_ms, 3)} | ${f(x.hnsw_p50_ms, 3)} (ef ${x.hnsw_ef ?? '–'}, recall ${f(x.hnsw_recall_at_10, 3)}) | ${f(x.hnsw_build_ms / 1000)} |`)
md.push('')
for (const s of results.sets) {
  md.push(
    `## ${s.name}`,
    '',
    `${s.queries} queries. Best QPS at recall@10 ≥ 0.95: usearch ${f(s.at_recall_95.usearch?.qps, 0)} (ef ${s.at_recall_95.usearch?.expansion_search ?? '–'}) vs hnswlib-node ${f(s.at_recall_95.hnswlib?.qps, 0)} (ef ${s.at_recall_95.hnswlib?.expansion_search ?? '–'}): **${f(s.at_recall_95.qps_ratio)}×**; with f16 vectors ${f(s.at_recall_95.usearch_f16?.qps, 0)} (ef ${s.at_recall_95.usearch_f16?.expansion_search ?? '–'}): **${f(s.at_recall_95.qps_ratio_f16)}×**.`,
    '',
  )
  md.push('| index | ef_search | build s | file MB | memory MB | QPS | p50 ms | p99 ms | recall@10 | 1% filter: recall / full / p50 ms |', '|---|---:|---:|---:|---:|---:|---:|---:|---:|---|')
  const row = (name, r) =>
    `| ${name} | ${r.expansion_search ?? '–'} | ${f(r.build_ms / 1000)} | ${f(r.file_bytes / 1e6)} | ${f(r.memory_mb ?? r.rss_mb, 1)} | ${f(r.qps, 0)} | ${f(r.p50_ms, 3)} | ${f(r.p99_ms, 3)} | ${f(r.recall_at_10, 3)} | ${r.filtered_recall_at_10 === undefined ? '–' : `${f(r.filtered_recall_at_10, 3)} / ${r.filtered_full} / ${f(r.filtered_p50_ms, 3)}`} |`
  md.push(
    row('exact (engine flat)', s.flat),
    ...s.usearch.map((r) => row('usearch (engine)', r)),
    ...(s.usearch_f16 ?? []).map((r) => row('usearch f16 (engine)', r)),
    ...s.hnswlib.map((r) => row('hnswlib-node', { ...r, filtered_recall_at_10: undefined })),
    '',
  )
}
writeFileSync(join(root, 'bench/results/ann.md'), `${md.join('\n')}\n`)
console.log(md.join('\n'))
