import { describe, expect, it } from 'vitest'
import { evalBeir } from '../../ts/eval/beir.js'
import { dataMissing, nativeMissing, sharedData } from '../native/_setup.js'

describe.skipIf(nativeMissing)('BEIR evaluation through the production query path', () => {
  it('scores a gzip-compressed mini set', async () => {
    const report = await evalBeir('test/fixtures/beir-mini', { split: 'test' })
    expect(report.documents).toBe(8)
    expect(report.queries).toBe(4)
    // q4's best match is the self-matching document "q4" unless identical ids are ignored.
    expect(report.mrr_at_10).toBeLessThan(1)
    const ignoring = await evalBeir('test/fixtures/beir-mini', { split: 'test', ignoreIdenticalIds: true })
    expect(ignoring.mrr_at_10).toBe(1)
    expect(ignoring.recall_at_100).toBe(1)
    expect(ignoring.ndcg_at_10).toBeGreaterThan(report.ndcg_at_10)
  })

  it('fails clearly on a directory that is not a BEIR set', async () => {
    await expect(evalBeir('test/fixtures/docs')).rejects.toMatchObject({ code: 'E_NOT_FOUND' })
  })

  // The quality bar of record: SciFact test, nDCG@10 ≥ 0.687 (SQLite FTS5 porter on the same queries).
  const scifact = sharedData('scifact')
  it.skipIf(dataMissing('scifact'))('SciFact test reaches the FTS5 bar', async () => {
    const report = await evalBeir(scifact, { split: 'test' })
    expect(report.queries).toBe(300)
    expect(report.ndcg_at_10).toBeGreaterThanOrEqual(0.687)
    expect(report.recall_at_100).toBeGreaterThanOrEqual(0.9)
  })
})
