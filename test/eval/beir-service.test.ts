import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { evalBeir } from '../../ts/eval/beir.js'
import { cli, dataMissing, nativeMissing, sharedData } from '../native/_setup.js'
import { type Postgres, postgresMissing, startPostgres } from '../support/postgres.js'

// `eval beir --store`: the scratch workspace's canonical rows in a real PostgreSQL. The same
// engine answers, so the figures are the embedded store's to the last digit.
describe.skipIf(nativeMissing || postgresMissing)('BEIR evaluation with the rows in PostgreSQL', () => {
  let pg: Postgres
  beforeAll(() => {
    pg = startPostgres()
  })
  afterAll(() => pg?.stop())

  it('scores the mini set as the embedded store does, through the CLI too', async () => {
    const embedded = await evalBeir('test/fixtures/beir-mini', { split: 'test' })
    const service = await evalBeir('test/fixtures/beir-mini', { split: 'test', store: pg.database() })
    expect(service.ndcg_at_10).toBe(embedded.ndcg_at_10)
    expect(service.mrr_at_10).toBe(embedded.mrr_at_10)
    expect(service.recall_at_100).toBe(embedded.recall_at_100)
    const run = await cli(['eval', 'beir', 'test/fixtures/beir-mini', '--store', pg.database(), '--out', '/dev/null'])
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toContain(`nDCG@10    ${embedded.ndcg_at_10.toFixed(4)}`)
    const code = await cli(['eval', 'beir', 'test/fixtures/beir-mini', '--store', pg.database(), '--profile', 'code'])
    expect(code.code).toBe(2)
    expect(code.stderr).toContain('--store is available with --profile documents')
  })

  it('refuses a connection string that carries a password, without printing it', async () => {
    const run = await cli(['eval', 'beir', 'test/fixtures/beir-mini', '--store', `${pg.database()} password=hunter2`, '--out', '/dev/null'])
    expect(run.code).not.toBe(0)
    expect(run.stderr).toContain('PGPASSWORD')
    expect(run.stderr + run.stdout).not.toContain('hunter2')
  })

  const scifact = sharedData('scifact')
  it.skipIf(dataMissing('scifact'))('SciFact test: the same nDCG@10 and Recall@100 on both stores', async () => {
    const embedded = await evalBeir(scifact, { split: 'test' })
    const service = await evalBeir(scifact, { split: 'test', store: pg.database() })
    expect(service.queries).toBe(300)
    expect(service.ndcg_at_10).toBe(embedded.ndcg_at_10)
    expect(service.recall_at_100).toBe(embedded.recall_at_100)
  })
})
