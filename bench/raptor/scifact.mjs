// The summary channel on data of another shape: SciFact test (BEIR; 300 single-passage claims over
// 5,183 abstracts), where one abstract answers a question and a broad match is not what is asked.
// The same queries through exact + lexical + text, then with the summary channel at the pack's
// weight, on the same workspace (local model). Nothing here was tuned.
//
//   node bench/raptor/scifact.mjs        (after `npm run build`; embeds SciFact once, ~7 minutes)
//
// Writes bench/results/raptor-scifact.{json,md}.
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { rmSync } from 'node:fs'
import { Workspace, evalBeir, score } from '../../dist/index.js'
import { lines, locate, readQrels } from '../../dist/eval/beir.js'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const data = resolve(root, '../shared/data/scifact')
const LIMIT = 100

const base = await evalBeir(data, { split: 'test', embeddings: {}, channels: ['exact', 'lexical', 'text'], keep: true, limit: LIMIT })
const ws = base.workspace
try {
  appendFileSync(join(ws, 'workspace.toml'), '\n[summaries]\nprovider = "extractive"\n')
  const qrels = await readQrels(data, 'test')
  const queries = new Map()
  for await (const line of lines(locate(data, 'queries.jsonl'))) {
    const q = JSON.parse(line)
    if (qrels.has(String(q._id))) queries.set(String(q._id), q.text)
  }
  const open = await Workspace.open(ws)
  let built
  const run = new Map()
  const latencies = []
  try {
    built = await open.buildSummaries()
    for (const [qid, text] of queries) {
      const result = await open.search({
        query: text,
        limit: LIMIT,
        max_per_source: 0,
        budget_tokens: 100_000_000,
        channels: ['exact', 'lexical', 'text', 'summary'],
      })
      latencies.push(result.duration_ms)
      const ranked = []
      for (const s of result.segments) if (s.locator.anchor !== undefined && !ranked.includes(s.locator.anchor)) ranked.push(s.locator.anchor)
      run.set(qid, ranked)
    }
  } finally {
    open.close()
  }
  const judged = new Map([...qrels].filter(([qid]) => queries.has(qid)))
  const withSummary = score(judged, run)
  const p50 = [...latencies].sort((a, b) => a - b)[Math.floor(latencies.length / 2)]
  const report = {
    date: new Date().toISOString(),
    corpus: 'SciFact test (5,183 abstracts, 300 queries), local all-MiniLM-L6-v2, limit 100',
    tree: built,
    without: { ndcg_at_10: base.ndcg_at_10, recall_at_100: base.recall_at_100, mrr_at_10: base.mrr_at_10, query_p50_ms: base.query_latency_ms.p50 },
    with_summary: {
      ndcg_at_10: withSummary.ndcg_at_10,
      recall_at_100: withSummary.recall_at_100,
      mrr_at_10: withSummary.mrr_at_10,
      query_p50_ms: p50,
    },
  }
  mkdirSync(join(root, 'bench/results'), { recursive: true })
  writeFileSync(join(root, 'bench/results/raptor-scifact.json'), `${JSON.stringify(report, null, 2)}\n`)
  const f = (x) => x.toFixed(4)
  const md = [
    '# Summary channel on SciFact (single-passage claims; not tuned on)',
    '',
    `${report.date.slice(0, 10)} · ${report.corpus} · tree: ${built.windows} windows → ${built.nodes} nodes, built in ${(built.build_ms / 1000).toFixed(2)} s`,
    '',
    '| channels | nDCG@10 | Recall@100 | MRR@10 | query p50 ms |',
    '|---|---:|---:|---:|---:|',
    `| exact+lexical+text | ${f(report.without.ndcg_at_10)} | ${f(report.without.recall_at_100)} | ${f(report.without.mrr_at_10)} | ${report.without.query_p50_ms.toFixed(1)} |`,
    `| exact+lexical+text+summary | ${f(report.with_summary.ndcg_at_10)} | ${f(report.with_summary.recall_at_100)} | ${f(report.with_summary.mrr_at_10)} | ${report.with_summary.query_p50_ms.toFixed(1)} |`,
    '',
  ].join('\n')
  writeFileSync(join(root, 'bench/results/raptor-scifact.md'), md)
  process.stdout.write(md)
} finally {
  rmSync(dirname(ws), { recursive: true, force: true })
}
