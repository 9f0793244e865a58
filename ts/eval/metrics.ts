/**
 * Standard IR metrics as BEIR computes them through pytrec_eval / trec_eval:
 * nDCG@k with linear gains and log2(rank + 1) discounts (ideal DCG from the judged relevant
 * documents), Recall@k over documents with relevance > 0, and MRR@k (reciprocal rank of the first
 * relevant document within the cutoff, 0 if none).
 */
export type Qrels = Map<string, Map<string, number>>
export type Run = Map<string, string[]>

export function ndcgAt(ranked: string[], judged: Map<string, number>, k: number): number {
  let dcg = 0
  for (const [i, doc] of ranked.slice(0, k).entries()) dcg += (judged.get(doc) ?? 0) / Math.log2(i + 2)
  const ideal = [...judged.values()]
    .filter((r) => r > 0)
    .sort((a, b) => b - a)
    .slice(0, k)
  const idcg = ideal.reduce((sum, rel, i) => sum + rel / Math.log2(i + 2), 0)
  return idcg === 0 ? 0 : dcg / idcg
}

export function recallAt(ranked: string[], judged: Map<string, number>, k: number): number {
  const relevant = [...judged].filter(([, r]) => r > 0).map(([d]) => d)
  if (relevant.length === 0) return 0
  const top = new Set(ranked.slice(0, k))
  return relevant.filter((d) => top.has(d)).length / relevant.length
}

export function mrrAt(ranked: string[], judged: Map<string, number>, k: number): number {
  const i = ranked.slice(0, k).findIndex((d) => (judged.get(d) ?? 0) > 0)
  return i === -1 ? 0 : 1 / (i + 1)
}

export interface Scores {
  queries: number
  ndcg_at_10: number
  recall_at_100: number
  mrr_at_10: number
  recall_at_10: number
}

/** Means over every judged query; a query with no run counts as zero. */
export function score(qrels: Qrels, run: Run): Scores {
  let ndcg = 0
  let recall100 = 0
  let recall10 = 0
  let mrr = 0
  for (const [qid, judged] of qrels) {
    const ranked = run.get(qid) ?? []
    ndcg += ndcgAt(ranked, judged, 10)
    recall100 += recallAt(ranked, judged, 100)
    recall10 += recallAt(ranked, judged, 10)
    mrr += mrrAt(ranked, judged, 10)
  }
  const n = qrels.size || 1
  return { queries: qrels.size, ndcg_at_10: ndcg / n, recall_at_100: recall100 / n, mrr_at_10: mrr / n, recall_at_10: recall10 / n }
}

/** The p-th percentile (nearest rank) of ascending `sorted`; 0 when empty. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0
}
