import { EVAL_RETURNED_CAP, type EvalQuery } from '../contracts/eval.js'
import type { Segment } from '../contracts/result.js'
import { mrrAt, ndcgAt, recallAt } from './metrics.js'

/** A ranked document and the channels (with their ranks) of the segment that first returned it. */
export interface RankedDoc {
  doc: string
  channels: { channel: string; rank: number }[]
}

/** The channels of a segment with their own ranks: already on every search result, so free to keep. */
export const channelRanks = (s: Segment): RankedDoc['channels'] => s.channels.map((c) => ({ channel: c.channel, rank: c.rank }))

/**
 * One BEIR query's details: its judged relevant documents, the first documents it returned (with
 * the channels that ranked them), and its own metrics on the whole ranked list, as `score` computes
 * them for the means.
 */
export function beirQuery(id: string, query: string, judged: Map<string, number>, ranked: RankedDoc[]): EvalQuery {
  const docs = ranked.map((r) => r.doc)
  return {
    id,
    query,
    expected: [...judged]
      .filter(([, rel]) => rel > 0)
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .map(([doc, relevance]) => ({ doc, relevance })),
    returned: ranked.slice(0, EVAL_RETURNED_CAP).map((r, i) => {
      const relevance = judged.get(r.doc)
      return { rank: i + 1, doc: r.doc, channels: r.channels, ...(relevance !== undefined ? { relevance } : {}) }
    }),
    metrics: {
      'ndcg@10': ndcgAt(docs, judged, 10),
      'recall@100': recallAt(docs, judged, 100),
      'mrr@10': mrrAt(docs, judged, 10),
      'recall@10': recallAt(docs, judged, 10),
    },
  }
}
