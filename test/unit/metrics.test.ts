import { describe, expect, it } from 'vitest'
import { mrrAt, ndcgAt, recallAt, score } from '../../ts/eval/metrics.js'

describe('IR metrics against a hand-computed case', () => {
  // Judged: d1 (rel 2), d3 (rel 1), d9 (rel 1, never retrieved). Ranking: d2, d1, d3, d4.
  const judged = new Map([
    ['d1', 2],
    ['d3', 1],
    ['d9', 1],
  ])
  const ranked = ['d2', 'd1', 'd3', 'd4']

  it('nDCG@10 uses linear gains and log2(rank+1) discounts', () => {
    // DCG = 2/log2(3) + 1/log2(4) = 1.261860 + 0.5 = 1.761860
    // IDCG = 2/log2(2) + 1/log2(3) + 1/log2(4) = 2 + 0.630930 + 0.5 = 3.130930
    expect(ndcgAt(ranked, judged, 10)).toBeCloseTo(1.76186 / 3.13093, 5)
  })

  it('Recall@k counts judged relevant documents within the cutoff', () => {
    expect(recallAt(ranked, judged, 100)).toBeCloseTo(2 / 3, 10)
    expect(recallAt(ranked, judged, 2)).toBeCloseTo(1 / 3, 10)
  })

  it('MRR@10 is the reciprocal rank of the first relevant document', () => {
    expect(mrrAt(ranked, judged, 10)).toBe(0.5)
    expect(mrrAt(['x', 'y'], judged, 10)).toBe(0)
  })

  it('averages over judged queries, counting missing runs as zero', () => {
    const qrels = new Map([
      ['q1', judged],
      ['q2', new Map([['d5', 1]])],
    ])
    const s = score(qrels, new Map([['q1', ranked]]))
    expect(s.queries).toBe(2)
    expect(s.mrr_at_10).toBe(0.25)
  })
})
