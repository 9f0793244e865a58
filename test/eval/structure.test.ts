import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { evalEvidence } from '../../ts/eval/evidence.js'
import { ROOT, dataMissing, nativeMissing } from '../native/_setup.js'

const SET = join(ROOT, 'test/eval/structure.questions.json')

describe.skipIf(nativeMissing)('the identifier and structure regression set (GDPR, RFCs, ASVS)', () => {
  // The floors are the figures of record in the README, less a margin for one or two questions;
  // a change that loses more than that is a regression to look at, not noise.
  it.skipIf(dataMissing('docs'))('answers identifier questions at rank 1 and keeps near misses out', async () => {
    const report = await evalEvidence(SET)
    expect(report.questions).toBeGreaterThanOrEqual(150)
    const exact = report.by_type.exact_id!
    const paraphrase = report.by_type.paraphrase!
    expect(exact.questions).toBeGreaterThanOrEqual(100)
    expect(exact.accuracy_at_1).toBeGreaterThanOrEqual(0.98)
    expect(exact.ndcg_at_10).toBeGreaterThanOrEqual(0.97)
    expect(paraphrase.accuracy_at_1).toBeGreaterThanOrEqual(0.87)
    expect(paraphrase.ndcg_at_10).toBeGreaterThanOrEqual(0.93)
    expect(report.accuracy_at_1).toBeGreaterThanOrEqual(0.95)
    // Every miss names what came first instead, for a person to read.
    for (const miss of report.misses) expect(miss.query.length).toBeGreaterThan(0)
  })

  it('refuses a set that names files the data directory does not have', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tychora-evidence-set-'))
    try {
      const set = join(dir, 'set.json')
      await writeFile(
        set,
        JSON.stringify({
          name: 'x',
          data: '.',
          corpus: [{ path: 'missing.txt' }],
          questions: [{ id: 'q', type: 'exact_id', query: 'x', expected: [{ path: 'missing.txt', lines: [1, 1] }] }],
        }),
      )
      await expect(evalEvidence(set)).rejects.toMatchObject({ code: 'E_NOT_FOUND' })
      await writeFile(set, '{"name": "x", "corpus": []}')
      await expect(evalEvidence(set)).rejects.toThrow()
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
