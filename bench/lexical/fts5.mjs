// SQLite FTS5, the peer a user would otherwise pick for lexical search, run the same way by every
// lexical benchmark: title + text per document, the query's distinct lowercased letter/digit runs
// OR-ed as quoted terms, bm25 order, 100 results. With `trigram` a run is OR-ed as its character
// trigrams (FTS5's trigram index matches substrings of at least 3 characters; a shorter run cannot
// match). Reads a BEIR-format folder (corpus.jsonl[.gz], queries.jsonl[.gz], qrels/<split>.tsv).
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'

/** Rows of a JSON Lines file of the set, gzipped or not. */
export function readJsonl(dir, name) {
  const path = existsSync(join(dir, name)) ? join(dir, name) : join(dir, `${name}.gz`)
  const raw = readFileSync(path)
  return (path.endsWith('.gz') ? gunzipSync(raw) : raw)
    .toString('utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
}

/** qrels/<split>.tsv as query id → (document id → relevance). */
export function readQrels(dir, split) {
  const qrels = new Map()
  for (const line of readFileSync(join(dir, 'qrels', `${split}.tsv`), 'utf8')
    .split('\n')
    .slice(1)
    .filter(Boolean)) {
    const [q, d, r] = line.split('\t')
    if (!qrels.has(q)) qrels.set(q, new Map())
    qrels.get(q).set(d, Number(r))
  }
  return qrels
}

/** nDCG@10, R@100, MRR@10 and per-query latency of FTS5 with `tokenize` on `dir`'s `split`. */
export async function fts5(dir, split, tokenize = 'porter unicode61') {
  const { default: Database } = await import('better-sqlite3')
  const { score } = await import('../../dist/eval/metrics.js')
  const qrels = readQrels(dir, split)
  const db = new Database(':memory:')
  db.exec(`CREATE VIRTUAL TABLE t USING fts5(id UNINDEXED, body, tokenize = '${tokenize}')`)
  const insert = db.prepare('INSERT INTO t (id, body) VALUES (?, ?)')
  db.transaction(() => {
    for (const d of readJsonl(dir, 'corpus.jsonl')) insert.run(String(d._id), `${d.title ?? ''}\n${d.text ?? ''}`)
  })()
  const search = db.prepare('SELECT id FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 100')
  const run = new Map()
  const latencies = []
  for (const q of readJsonl(dir, 'queries.jsonl')) {
    const id = String(q._id)
    if (!qrels.has(id)) continue
    const runs = q.text.toLowerCase().match(/[\p{L}\p{N}\p{M}]+/gu) ?? []
    const terms =
      tokenize === 'trigram'
        ? [
            ...new Set(
              runs.flatMap((r) => {
                const c = [...r]
                return c.length < 3 ? [] : c.slice(0, c.length - 2).map((_, i) => c.slice(i, i + 3).join(''))
              }),
            ),
          ]
        : [...new Set(runs)]
    const started = performance.now()
    run.set(id, terms.length === 0 ? [] : search.all(terms.map((x) => `"${x.replaceAll('"', '""')}"`).join(' OR ')).map((r) => r.id))
    latencies.push(performance.now() - started)
  }
  db.close()
  const s = score(qrels, run)
  latencies.sort((a, b) => a - b)
  return {
    ndcg_at_10: s.ndcg_at_10,
    recall_at_100: s.recall_at_100,
    mrr_at_10: s.mrr_at_10,
    p50_ms: latencies[Math.floor(latencies.length * 0.5)],
    p99_ms: latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))],
  }
}
