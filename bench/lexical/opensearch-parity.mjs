// Parity of the OpenSearch adapter with the embedded path (issue 37): `eval beir` on SciFact test
// (lexical; hybrid and the text channel alone with the local model) and CoSQA dev (code profile),
// once on the embedded tantivy/usearch generations and once with both channels' generations on a
// cluster; each query's top 10 documents compared. Writes bench/results/opensearch-parity.{json,md}. Needs `npm run build`,
// ../shared/data and the test node (`node scripts/opensearch.mjs build`); starts a one-node cluster.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { evalBeir } from '../../dist/eval/beir.js'
import { evalBeirAsCode } from '../../dist/eval/beir-code.js'
import { startOpenSearch } from '../../scripts/opensearch.mjs'
import { root, shared } from '../scale/common.mjs'

const SETS = [
  { name: 'SciFact test, lexical', metric: 'ndcg_at_10', run: (o) => evalBeir(join(shared, 'scifact'), { split: 'test', perQuery: true, ...o }) },
  {
    name: 'SciFact test, hybrid (local model)',
    metric: 'ndcg_at_10',
    run: (o) => evalBeir(join(shared, 'scifact'), { split: 'test', perQuery: true, embeddings: {}, ...o }),
  },
  {
    // The embedded generation of SciFact's windows is scanned exactly (under 20,000 vectors); the
    // cluster's is Lucene's HNSW graph: the top-10 overlap is the graph's recall of the exact ranking.
    name: 'SciFact test, text channel alone (local model)',
    metric: 'ndcg_at_10',
    run: (o) => evalBeir(join(shared, 'scifact'), { split: 'test', perQuery: true, embeddings: {}, channels: ['text'], ...o }),
  },
  { name: 'CoSQA dev, code profile', metric: 'mrr_at_10', run: (o) => evalBeirAsCode(join(shared, 'cosqa'), { split: 'dev', perQuery: true, ...o }) },
]

const top10 = (report) => new Map(report.per_query.map((q) => [q.id, q.returned.slice(0, 10).map((r) => r.doc)]))

const cluster = await startOpenSearch({ nodes: 1 })
const url = cluster.url.replace('http://', 'opensearch://')
const rows = []
try {
  for (const set of SETS) {
    const embedded = await set.run({})
    const clustered = await set.run({ search: url })
    const [a, b] = [top10(embedded), top10(clustered)]
    let same = 0
    let overlap = 0
    for (const [id, docs] of a) {
      const other = b.get(id) ?? []
      if (docs.length === other.length && docs.every((d, i) => d === other[i])) same++
      const shared10 = docs.filter((d) => other.includes(d)).length
      overlap += docs.length === 0 ? 1 : shared10 / docs.length
    }
    rows.push({
      set: set.name,
      metric: set.metric,
      embedded: embedded[set.metric],
      opensearch: clustered[set.metric],
      queries: a.size,
      identical_top10: same / a.size,
      mean_top10_overlap: overlap / a.size,
      query_p50_ms: [embedded.query_latency_ms.p50, clustered.query_latency_ms.p50],
    })
    process.stderr.write(`${JSON.stringify(rows.at(-1))}\n`)
  }
} finally {
  await cluster.stop()
}
const out = { date: new Date().toISOString(), cluster: 'OpenSearch 2.19.1, one node (-Xmx384m) on loopback', rows }
mkdirSync(join(root, 'bench/results'), { recursive: true })
writeFileSync(join(root, 'bench/results/opensearch-parity.json'), `${JSON.stringify(out, null, 2)}\n`)
const md = [
  '# OpenSearch adapter against the embedded path: the same figures, the same top 10',
  '',
  `${out.date.slice(0, 10)}; \`node bench/lexical/opensearch-parity.mjs\`; ${out.cluster}. Each set evaluated twice by \`eval beir\`, once with \`--search\`; "identical" counts queries whose ten documents come back in the same order.`,
  '',
  '| set | metric | embedded | OpenSearch | queries | identical top 10 | mean top-10 overlap | query p50 ms (embedded / cluster) |',
  '|---|---|---:|---:|---:|---:|---:|---:|',
  ...rows.map(
    (r) =>
      `| ${r.set} | ${r.metric} | ${r.embedded.toFixed(4)} | ${r.opensearch.toFixed(4)} | ${r.queries} | ${(100 * r.identical_top10).toFixed(1)} % | ${(100 * r.mean_top10_overlap).toFixed(1)} % | ${r.query_p50_ms[0].toFixed(1)} / ${r.query_p50_ms[1].toFixed(1)} |`,
  ),
  '',
].join('\n')
writeFileSync(join(root, 'bench/results/opensearch-parity.md'), md)
process.stdout.write(md)
