// Two daemons of one service (a real PostgreSQL, a real SeaweedFS bucket) started with
// `tychora serve --search opensearch://…` share one copy of the lexical and vector indexes on a
// real OpenSearch cluster: what one publishes the other answers from the cluster (the text
// channel included, with the local model) without building anything in its own folder, and
// `manage verify` counts the cluster's documents.
import { copyFile, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runtimePath } from '../../ts/contracts/runtime.js'
import { Workspace } from '../../ts/engine/workspace.js'
import { nativeMissing } from '../native/_setup.js'
import { type OpenSearch, opensearchMissing, startOpenSearch } from '../support/opensearch.js'
import { type Postgres, postgresMissing, startPostgres } from '../support/postgres.js'
import { type Seaweed, startSeaweed, weedMissing } from '../support/seaweed.js'
import { type RunningDaemon, startDaemon } from './_daemon.js'

const PROJECT = 'svc'

describe.skipIf(nativeMissing || postgresMissing || weedMissing || opensearchMissing)('daemons sharing an OpenSearch cluster', () => {
  let pg: Postgres
  let s3: Seaweed
  let cluster: OpenSearch
  let root: string
  let store: string
  let token: string
  const running: RunningDaemon[] = []
  const flags = () => ['--store', store, '--artifacts', 's3://tychora/os', '--artifacts-endpoint', s3.endpoint, '--search', cluster.url.replace('http://', 'opensearch://')]

  const call = async (d: RunningDaemon, method: string, path: string, body?: unknown) => {
    const response = await fetch(`${d.url}/v1/projects/${PROJECT}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    const json = (await response.json()) as Record<string, unknown>
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`)
    return json
  }
  const ended = async (d: RunningDaemon, id: number) => {
    const started = Date.now()
    for (;;) {
      const status = await call(d, 'GET', `/jobs/${id}`)
      if (!['queued', 'running'].includes(status.status as string)) return status
      if (Date.now() - started > 60_000) throw new Error(`job ${id} still ${status.status}`)
      await new Promise((r) => setTimeout(r, 100))
    }
  }
  const paths = async (d: RunningDaemon, query: string) => ((await call(d, 'POST', '/search', { query, limit: 10 })).segments as { source: { path: string } }[]).map((s) => s.source.path)

  beforeAll(async () => {
    pg = startPostgres()
    store = pg.database()
    s3 = await startSeaweed()
    cluster = await startOpenSearch({ nodes: 1 })
    root = await mkdtemp(join(tmpdir(), 'tychora-os-daemons-'))
  }, 180_000)

  afterAll(async () => {
    for (const d of running) if (d.child.exitCode === null && d.child.signalCode === null) d.child.kill('SIGKILL')
    await cluster?.stop()
    await s3?.stop()
    pg?.stop()
    if (root) await rm(root, { recursive: true, force: true })
  })

  it('what one daemon publishes the other answers from the cluster, with nothing built in its folder', async () => {
    const [dirA, dirB] = [join(root, 'a', PROJECT), join(root, 'b', PROJECT)]
    await Workspace.init(dirA, { embeddings: 'local' })
    await Workspace.attachService(dirA, { store, artifacts: 's3://tychora/os', endpoint: s3.endpoint, search: flags().at(-1) as string })
    await Workspace.migrate(dirA)
    token = (await readFile(runtimePath(dirA, 'ownerToken'), 'utf8')).trim()
    await Workspace.init(dirB, { embeddings: 'local' })
    for (const file of ['ownerToken', 'agentToken'] as const) await copyFile(runtimePath(dirA, file), runtimePath(dirB, file))
    const a = await startDaemon([dirA], s3.env, flags())
    running.push(a)
    const b = await startDaemon([dirB], s3.env, flags())
    running.push(b)
    expect(await readFile(join(dirB, 'workspace.toml'), 'utf8')).toContain('[search]')

    const docs = join(root, 'docs')
    await mkdir(docs)
    await writeFile(join(docs, 'glacier.md'), '# Glacier\n\nThe glacier retreated four kilometres in the survey.\n')
    await writeFile(join(docs, 'tokyo.md'), '# 東京\n\n東京都の極洋株式会社は連結株主資本を公表した。\n')
    const job = (await call(a, 'POST', '/sources', { paths: [docs] })).job_id as number
    expect((await ended(b, job)).status).toBe('succeeded')
    for (const d of [a, b]) {
      expect(await paths(d, 'glacier retreated survey')).toContain('glacier.md')
      expect(await paths(d, '極洋')).toContain('tokyo.md')
    }
    // The lexical generation is on the cluster, once; neither folder holds one.
    const indices = (await (await fetch(`${cluster.url}/_cat/indices/tychora-lex-*?format=json`)).json()) as { index: string; 'docs.count': string }[]
    expect(indices).toHaveLength(1)
    expect(Number(indices[0]?.['docs.count'])).toBeGreaterThanOrEqual(2)
    for (const dir of [dirA, dirB]) expect(await readdir(join(dir, 'indexes', 'lexical')).catch(() => [])).toEqual([])
    // So are the windows' vectors: the other daemon's text channel reads them from there.
    const vectors = (await (await fetch(`${cluster.url}/_cat/indices/tychora-vec-*?format=json`)).json()) as { index: string; 'docs.count': string }[]
    expect(vectors).toHaveLength(1)
    expect(Number(vectors[0]?.['docs.count'])).toBe(Number(indices[0]?.['docs.count']))
    const dense = (await call(b, 'POST', '/search', { query: 'ice sheet shrinking over the years', channels: ['text'], limit: 1 })) as {
      segments: { source: { path: string } }[]
      warnings: string[]
    }
    expect(dense.warnings).toEqual([])
    expect(dense.segments[0]?.source.path).toContain('glacier.md')
    for (const dir of [dirA, dirB]) expect(await readdir(join(dir, 'indexes', 'text')).catch(() => [])).toEqual([])
    const verify = await call(b, 'POST', '/verify')
    expect(verify.ok).toBe(true)
  }, 180_000)
})
