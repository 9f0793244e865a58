// `npm run bench`: ingest throughput, query latency (in-process and CLI), peak RSS and nDCG@10,
// with SQLite FTS5 (better-sqlite3, porter) and MiniSearch indexing the same chunks in the same
// run. Each measurement runs in its own process. Writes bench/results/latest.{json,md}.
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gunzipSync } from 'node:zlib'
import Database from 'better-sqlite3'
import { score } from '../dist/eval/metrics.js'
import { benchSurfaces } from './surfaces.mjs'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const shared = resolve(root, '../shared/data')
const RUNS = Number(process.env.BENCH_RUNS ?? 3)
const LIMIT = 10
const scratch = mkdtempSync(join(tmpdir(), 'tychora-bench-'))

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
function worker(task, args) {
  const out = execFileSync(process.execPath, [join(root, 'bench/worker.mjs'), task, JSON.stringify(args)], { encoding: 'utf8', maxBuffer: 1 << 28 })
  return JSON.parse(out.trim().split('\n').pop())
}
function writeJson(name, value) {
  const path = join(scratch, name)
  writeFileSync(path, JSON.stringify(value))
  return path
}

function scifact() {
  const dir = join(shared, 'scifact')
  const data = join(scratch, 'scifact')
  mkdirSync(data, { recursive: true })
  const lines = gunzipSync(readFileSync(join(dir, 'corpus.jsonl.gz')))
    .toString('utf8')
    .trim()
    .split('\n')
  writeFileSync(join(data, 'corpus.jsonl'), `${lines.join('\n')}\n`)
  const docs = lines.map((l) => JSON.parse(l)).map((d) => ({ id: String(d._id), text: `${d.title}\n${d.text}` }))
  const qrels = new Map()
  for (const line of readFileSync(join(dir, 'qrels/test.tsv'), 'utf8').trim().split('\n').slice(1)) {
    const [q, d, r] = line.split('\t')
    if (!qrels.has(q)) qrels.set(q, new Map())
    qrels.get(q).set(d, Number(r))
  }
  const queries = readFileSync(join(dir, 'queries.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
    .filter((q) => qrels.has(String(q._id)))
    .map((q) => ({ id: String(q._id), text: q.text }))
  return {
    name: 'SciFact (BEIR test: 5,183 abstracts as JSONL, 300 queries)',
    key: 'scifact',
    paths: [join(data, 'corpus.jsonl')],
    kind: 'jsonl',
    docs,
    queries,
    qrels,
  }
}

function markdown() {
  return { name: 'Markdown: OWASP cheat sheets (shared/data/docs, 120 files)', key: 'markdown', paths: [join(shared, 'docs/owasp-cheatsheets')] }
}

/** The Markdown corpus's chunks and heading queries, read from the tychora workspace itself. */
function chunksOf(ws) {
  const db = new Database(join(ws, 'corpus.sqlite3'), { readonly: true })
  const docs = db
    .prepare("SELECT c.id AS id, COALESCE(c.text, u.text) || char(10) || json_extract(c.capsule_json, '$.title') AS text FROM chunks c JOIN evidence_units u ON u.id = c.first_unit_id")
    .all()
    .map((r) => ({ id: String(r.id), text: r.text }))
  const headings = db
    .prepare("SELECT text FROM evidence_units WHERE unit_type = 'heading' ORDER BY id")
    .all()
    .map((r) => r.text.replace(/^#+\s*/, ''))
  db.close()
  const step = Math.max(1, Math.floor(headings.length / 100))
  return {
    docs,
    queries: headings
      .filter((_, i) => i % step === 0)
      .slice(0, 100)
      .map((text, i) => ({ id: String(i), text })),
  }
}

const results = {
  date: new Date().toISOString(),
  machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version },
  runs: RUNS,
  limit: LIMIT,
  corpora: [],
}

for (const corpus of [scifact(), markdown()]) {
  console.error(`# ${corpus.name}`)
  const ingests = []
  let ws
  for (let i = 0; i < RUNS; i++) {
    ws = join(scratch, `${corpus.key}-ws-${i}`)
    ingests.push(worker('tychora-ingest', { ws, paths: corpus.paths, kind: corpus.kind }))
  }
  const ingest = ingests[0]
  const seconds = median(ingests.map((r) => r.seconds))
  if (!corpus.docs) Object.assign(corpus, chunksOf(ws))
  const docsPath = writeJson(`${corpus.key}-docs.json`, corpus.docs)
  const queriesPath = writeJson(`${corpus.key}-queries.json`, corpus.queries)

  // Build time and memory: each engine alone in its own process. Query latency: tychora and FTS5 in
  // one process, interleaved, so noise on this shared machine hits them alike; MiniSearch alone.
  const tychoraAlone = worker('tychora-query', { ws, queries: queriesPath, limit: LIMIT })
  const fts5Build = worker('fts5', { docs: docsPath, queries: queriesPath, limit: LIMIT })
  const miniBuild = worker('minisearch', { docs: docsPath, queries: queriesPath, limit: LIMIT })
  const compared = worker('compare-query', { ws, docs: docsPath, queries: queriesPath, limit: LIMIT, rounds: 5 })
  const tychora = { ...compared.tychora, peak_rss_mb: tychoraAlone.peak_rss_mb }
  const fts5 = { ...compared.fts5, build_seconds: fts5Build.build_seconds, peak_rss_mb: fts5Build.peak_rss_mb }
  const minisearch = miniBuild
  const ndcg = (rankings) => (corpus.qrels ? score(corpus.qrels, new Map(corpus.queries.map((q, i) => [q.id, rankings[i]]))).ndcg_at_10 : null)

  const cli = []
  for (const q of corpus.queries.slice(0, 10)) {
    const t = performance.now()
    const r = spawnSync(process.execPath, [join(root, 'dist/bin/tychora.cjs'), 'search', '-w', ws, q.text, '--format', 'json'], { encoding: 'utf8' })
    cli.push(performance.now() - t)
    if (r.status !== 0) throw new Error(`CLI search failed: ${r.stderr}`)
  }

  const entry = {
    corpus: corpus.name,
    bytes: ingest.bytes,
    files: ingest.files,
    documents: corpus.docs.length,
    chunks: ingest.chunks,
    tychora: {
      ingest_seconds: seconds,
      ingest_seconds_runs: ingests.map((r) => r.seconds),
      ingest_mb_per_s: ingest.bytes / 1e6 / seconds,
      ingest_docs_per_s: (corpus.qrels ? corpus.docs.length : ingest.files) / seconds,
      ingest_peak_rss_mb: median(ingests.map((r) => r.peak_rss_mb)),
      query_p50_ms: tychora.p50_ms,
      query_p99_ms: tychora.p99_ms,
      query_peak_rss_mb: tychora.peak_rss_mb,
      cli_search_median_ms: median(cli),
      ndcg_at_10: ndcg(tychora.rankings),
    },
    fts5: {
      build_seconds: fts5.build_seconds,
      query_p50_ms: fts5.p50_ms,
      query_p99_ms: fts5.p99_ms,
      peak_rss_mb: fts5.peak_rss_mb,
      ndcg_at_10: ndcg(fts5.rankings),
    },
    minisearch: {
      build_seconds: minisearch.build_seconds,
      query_p50_ms: minisearch.p50_ms,
      query_p99_ms: minisearch.p99_ms,
      peak_rss_mb: minisearch.peak_rss_mb,
      ndcg_at_10: ndcg(minisearch.rankings),
    },
  }
  results.corpora.push(entry)
  console.error(JSON.stringify(entry, null, 1))
}
rmSync(scratch, { recursive: true, force: true })
console.error('# agent surfaces (daemon on loopback)')
results.surfaces = await benchSurfaces()

const f = (x, d = 2) => (x === null || x === undefined ? '–' : x.toFixed(d))
const ratio = (a, b) => (b > 0 ? `${(a / b).toFixed(2)}×` : '–')
const md = [
  `# Tychora benchmark (${results.date.slice(0, 10)})`,
  '',
  `${results.machine.cpus} cores (${results.machine.model}), Node ${results.machine.node}; release build; medians of ${RUNS} ingest runs; query latency: medians over 5 passes of every query, tychora and FTS5 interleaved in one process after a warm-up pass (MiniSearch: 3 passes in its own process); limit ${LIMIT}.`,
  'Ingest = `add` to a published, verified snapshot (capture, sha256, canonical rows with synchronous=FULL, tantivy generation, fsync); peers only build an in-memory index of the same text.',
  '',
  '| corpus | engine | build/ingest s | MB/s | docs/s | query p50 ms | query p99 ms | CLI search ms | peak RSS MB | nDCG@10 |',
  '|---|---|---|---|---|---|---|---|---|---|',
]
for (const c of results.corpora) {
  const t = c.tychora
  md.push(
    `| ${c.corpus} | tychora | ${f(t.ingest_seconds)} | ${f(t.ingest_mb_per_s, 1)} | ${f(t.ingest_docs_per_s, 0)} | ${f(t.query_p50_ms, 3)} | ${f(t.query_p99_ms, 3)} | ${f(t.cli_search_median_ms, 0)} | ${f(Math.max(t.ingest_peak_rss_mb, t.query_peak_rss_mb), 0)} | ${f(t.ndcg_at_10, 4)} |`,
  )
  for (const [name, p] of [
    ['SQLite FTS5 (porter)', c.fts5],
    ['MiniSearch', c.minisearch],
  ]) {
    md.push(`| | ${name} | ${f(p.build_seconds)} | | | ${f(p.query_p50_ms, 3)} | ${f(p.query_p99_ms, 3)} | | ${f(p.peak_rss_mb, 0)} | ${f(p.ndcg_at_10, 4)} |`)
  }
  md.push(`| | tychora ÷ FTS5 | ${ratio(t.ingest_seconds, c.fts5.build_seconds)} | | | ${ratio(t.query_p50_ms, c.fts5.query_p50_ms)} | ${ratio(t.query_p99_ms, c.fts5.query_p99_ms)} | | | |`)
}
const sv = results.surfaces
md.push(
  '',
  `Agent surfaces on the Markdown corpus (daemon on loopback, limit 5): HTTP search with autocannon, ${sv.http_search.connections} connections for ${sv.http_search.seconds} s — ` +
    `${f(sv.http_search.requests_per_s, 0)} req/s, p50 ${f(sv.http_search.p50_ms, 1)} ms, p99 ${f(sv.http_search.p99_ms, 1)} ms, ${sv.http_search.non_2xx} non-2xx, ${sv.http_search.errors} errors; ` +
    `MCP search_evidence (${sv.mcp_streamable_http.calls} sequential calls): Streamable HTTP p50 ${f(sv.mcp_streamable_http.p50_ms)} ms, p99 ${f(sv.mcp_streamable_http.p99_ms)} ms; ` +
    `stdio p50 ${f(sv.mcp_stdio.p50_ms)} ms, p99 ${f(sv.mcp_stdio.p99_ms)} ms.`,
)
md.push(
  '',
  'Query latency is measured in-process through the public TypeScript API for tychora (N-API crossing, off-thread search, JSON of the full result with text, citations and locators; zod validation of results runs only in tests and development), and through better-sqlite3 / MiniSearch for the peers, each returning ids and text.',
)
mkdirSync(join(root, 'bench/results'), { recursive: true })
// Code evidence (issue 4): parse throughput beside the two other tree-sitter runtimes, resolver
// agreement with compiler oracles, and a real repository from add to published snapshot. Each
// fetches its code from the registries at bench time (cached) and writes its own results file.
if (process.env.BENCH_CODE !== '0') {
  const { runParseThroughput } = await import('./code/parse-throughput.mjs')
  const { runResolverAgreement } = await import('./code/resolver-agreement.mjs')
  const { runRepoIngest } = await import('./code/repo-ingest.mjs')
  console.error('# code: parse throughput')
  await runParseThroughput()
  console.error('# code: resolver agreement')
  await runResolverAgreement()
  console.error('# code: repository ingest')
  await runRepoIngest({ runs: RUNS })
  md.push(
    '',
    'Code evidence: see parse-throughput.md, resolver-agreement.md and repo-ingest.md beside this file; retrieval on code tasks: `npm run eval:swebench` and `tychora eval cosqa` (eval-swebench-lite.json, eval-cosqa-code.json).',
  )
}

// The ranking guard (issue 33): every dev set of every shape on this machine and the visible SWE
// subset, against bench/results/dev-matrix.json; a figure that drops past its noise fails the run
// (after the rest has been measured). Build the sets first: bench/lexical/long-sets.mjs,
// paragraph-dev.mjs; mirrors of pytest, requests and flask for the SWE subset.
let guardFailed = false
if (process.env.BENCH_GUARD !== '0') {
  console.error('# ranking guard: dev sets of every shape')
  const guard = spawnSync(process.execPath, [join(root, 'bench/lexical/dev-matrix.mjs'), '--check'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 1 << 26,
  })
  guardFailed = guard.status !== 0
  md.push('', guardFailed ? 'Ranking guard: a dev-set figure dropped past its noise (see stderr; dev-matrix.md).' : 'Ranking guard: no dev-set figure dropped past its noise (dev-matrix.md).')
}

// Semantic retrieval (issue 10): the local embedder's throughput and the vector index against
// hnswlib-node and exact search (each writes its own results file; the model must be fetched).
if (process.env.BENCH_VECTOR !== '0') {
  const { runEmbedThroughput } = await import('./vector/throughput.mjs')
  console.error('# vector: local embedding throughput')
  results.embedding = runEmbedThroughput({ runs: RUNS })
  if (results.embedding) {
    console.error('# vector: ANN (engine vs hnswlib-node vs exact)')
    execFileSync(process.execPath, [join(root, 'bench/vector/ann.mjs')], { stdio: ['ignore', 'ignore', 'inherit'] })
    const ann = JSON.parse(readFileSync(join(root, 'bench/results/ann.json'), 'utf8'))
    results.ann = ann.sets.map((s) => ({ name: s.name, ...s.at_recall_95 }))
    md.push(
      '',
      `Local embedding (all-MiniLM-L6-v2, both cores): ${f(results.embedding.tokens_per_s, 0)} tokens/s, ${f(results.embedding.texts_per_s, 1)} windows/s (embedding-throughput.md). ` +
        `ANN at recall@10 ≥ 0.95, engine (usearch) vs hnswlib-node QPS: ${results.ann.map((a) => `${a.name}: ${f(a.usearch?.qps, 0)} vs ${f(a.hnswlib?.qps, 0)} (${f(a.qps_ratio)}×)`).join('; ')} (ann.md). Quality of the text channel: \`node bench/vector/text-fusion.mjs\` (text-fusion.md).`,
    )
  }
}

// Operations at scale (issue 11): the growth curve (one-file add against corpus size) and history
// growth over 1,000 syncs, each writing its own results file.
if (process.env.BENCH_SCALE !== '0') {
  const { runGrowth } = await import('./scale/growth.mjs')
  const { runHistory } = await import('./scale/history.mjs')
  console.error('# scale: growth curve')
  const growth = await runGrowth({ runs: RUNS })
  results.growth = growth.rows.map(({ storage, ...r }) => r)
  console.error('# scale: history over 1,000 syncs')
  const history = await runHistory()
  results.history = { before_mb: history.before.corpus_sqlite_bytes / 1e6, after_mb: history.after.corpus_sqlite_bytes / 1e6 }
  // Retention through the CLI, a purge of a workspace past 1 GB, the fsyncs of a no-op sync (issue 32).
  const { runRetention } = await import('./scale/retention.mjs')
  console.error('# scale: retention on every entry point')
  const retention = await runRetention()
  results.retention = {
    cli_syncs: retention.cli.syncs,
    cli_corpus_mb: retention.cli.corpus_sqlite_bytes / 1e6,
    purge_of_gb_s: retention.purge.purge_s,
    fsyncs_per_no_op_sync: retention.noop.fsyncs_per_no_op_sync,
  }
  console.error('# scale: CLI search end to end')
  const { runCliStart } = await import('./scale/cli-start.mjs')
  const cliStart = await runCliStart()
  results.cli_start = cliStart.median_ms
  console.error('# scale: vector layers (local model)')
  const { runTextLayers } = await import('./scale/text-layers.mjs')
  const layers = await runTextLayers({ runs: RUNS })
  results.text_layers = layers.rows
  md.push(
    '',
    `Growth (growth.md): one-file add job time ${results.growth.map((r) => `${f(r.one_file_add_ms, 0)} ms at ${r.chunks.toLocaleString('en')} chunks`).join(', ')}; full add ${results.growth.map((r) => `${f(r.full_add_mb_per_s, 1)} MB/s`).join(', ')}. ` +
      `History (history.md): corpus.sqlite3 after 1,000 syncs ${f(results.history.before_mb, 1)} MB without maintenance, ${f(results.history.after_mb, 1)} MB with compaction + purge. ` +
      `CLI search end to end (cli-start.md): ${f(results.cli_start.scifact, 1)} ms on SciFact, ${f(results.cli_start.small, 1)} ms on 3 files, bare \`node -e ''\` ${f(results.cli_start.bare, 1)} ms, the sqlite3 shell on FTS5 ${f(results.cli_start.sqlite3_fts5, 1)} ms. ` +
      `Vector layers (text-layers.md): one-file add with the text channel ${results.text_layers.map((r) => `${f(r.one_file_add_ms, 0)} ms at ${r.windows.toLocaleString('en')} windows (a full generation: ${f(r.fold_ms, 0)} ms)`).join(', ')}.`,
  )
}

// Documents (issue 12): DOCX extraction fidelity and speed, Tychora's reader and mammoth.js side by
// side against docling's expected Markdown (docs-fidelity.md).
if (process.env.BENCH_DOCS !== '0') {
  console.error('# documents: DOCX fidelity (tychora vs mammoth vs docling expected)')
  execFileSync(process.execPath, [join(root, 'bench/docs/fidelity.mjs')], { stdio: ['ignore', 'ignore', 'inherit'] })
  const docs = JSON.parse(readFileSync(join(root, 'bench/results/docs-fidelity.json'), 'utf8'))
  results.docx = { tychora: docs.tychora, mammoth: docs.mammoth, throughput: docs.throughput }
  console.error('# documents: PDF text (tychora vs pdftotext -layout)')
  execFileSync(process.execPath, [join(root, 'bench/docs/pdf.mjs')], { stdio: ['ignore', 'ignore', 'inherit'] })
  const pdf = JSON.parse(readFileSync(join(root, 'bench/results/docs-pdf.json'), 'utf8'))
  results.pdf = { tychora: pdf.tychora, pdftotext: pdf.pdftotext, throughput: pdf.throughput }
  console.error('# documents: GDPR clean vs PDF-extracted twin')
  execFileSync(process.execPath, [join(root, 'bench/docs/gdpr.mjs')], { stdio: ['ignore', 'ignore', 'inherit'] })
  const gdpr = JSON.parse(readFileSync(join(root, 'bench/results/docs-gdpr.json'), 'utf8'))
  results.gdpr = gdpr.twins
  console.error('# documents: OCR of scanned pages (tychora vs tesseract CLI)')
  execFileSync(process.execPath, [join(root, 'bench/docs/ocr.mjs')], { stdio: ['ignore', 'ignore', 'inherit'] })
  const ocr = JSON.parse(readFileSync(join(root, 'bench/results/docs-ocr.json'), 'utf8'))
  results.ocr = {
    throughput: ocr.throughput,
    rows: ocr.rows.map((r) => ({ file: r.file, wer: r.tychora.wer, cli_wer: r.tesseract_cli?.wer ?? null })),
  }
  const linn = ocr.rows.find((r) => r.file === 'linn.pdf')
  md.push(
    '',
    `DOCX fidelity against docling's expected Markdown (docs-fidelity.md, 33 files): word F1 ${f(docs.tychora.f1, 3)} (mammoth ${f(docs.mammoth.f1, 3)}), ` +
      `heading recall ${f(docs.tychora.headings, 3)} (${f(docs.mammoth.headings, 3)}), table cells ${f(docs.tychora.cells, 3)} (${f(docs.mammoth.cells, 3)}); ` +
      `add of ${docs.throughput.files} DOCX files (${f(docs.throughput.bytes / 1e6, 1)} MB): ${f(docs.throughput.files_per_s, 0)} files/s, median of ${docs.throughput.runs}. ` +
      `PDF (docs-pdf.md): word F1 ${f(pdf.tychora.f1, 3)} (pdftotext -layout ${f(pdf.pdftotext?.f1, 3)}), reading-order distance ${f(pdf.tychora.order, 3)} (${f(pdf.pdftotext?.order, 3)}); ` +
      `${f(pdf.throughput.tychora_pages_per_s, 1)} pages/s through the whole add (pdftotext text only: ${f(pdf.throughput.pdftotext_pages_per_s, 1)}). ` +
      `GDPR, 30 article questions (docs-gdpr.md): hit@5 clean ${f(gdpr.twins.clean.hit_at_5, 3)}, PDF-extracted ${f(gdpr.twins.noisy.hit_at_5, 3)}. ` +
      `OCR (docs-ocr.md): linn.pdf WER ${f(linn?.tychora.wer, 3)} (tesseract CLI ${f(linn?.tesseract_cli?.wer, 3)}), ${f(ocr.throughput.pages_per_s, 2)} pages/s (CLI ${f(ocr.throughput.tesseract_cli_pages_per_s, 2)}).`,
  )
}

writeFileSync(join(root, 'bench/results/latest.json'), `${JSON.stringify(results, null, 2)}\n`)
writeFileSync(join(root, 'bench/results/latest.md'), `${md.join('\n')}\n`)
console.log(md.join('\n'))
if (!existsSync(join(root, 'bench/results/latest.json'))) process.exit(1)
if (guardFailed) process.exit(1)
