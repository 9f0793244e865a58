// Several daemons, one service: each `tychora serve --store … --artifacts …` has a folder of its
// own (its copies of the derived indexes, its lock) and shares the canonical rows (a real
// PostgreSQL) and the artifacts (a real SeaweedFS bucket) with the others. Any daemon takes
// writes; a job queued through one may run on another; a daemon SIGKILLed mid-job loses nothing
// (its lease expires and another daemon runs the job again); every daemon answers from the
// snapshot the others published.
import { execFileSync } from 'node:child_process'
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runtimePath } from '../../ts/contracts/runtime.js'
import { Workspace } from '../../ts/engine/workspace.js'
import { CLI, nativeMissing } from '../native/_setup.js'
import { type Postgres, postgresMissing, startPostgres } from '../support/postgres.js'
import { type Seaweed, startSeaweed, weedMissing } from '../support/seaweed.js'
import { type RunningDaemon, startDaemon } from './_daemon.js'

const PROJECT = 'svc'

describe.skipIf(nativeMissing || postgresMissing || weedMissing)('several daemons on one PostgreSQL store and one bucket', () => {
  let pg: Postgres
  let s3: Seaweed
  let root: string
  let store: string
  let token: string
  const running: RunningDaemon[] = []

  /** The flags every daemon of the service starts with. */
  const flags = () => ['--store', store, '--artifacts', 's3://tychora/svc', '--artifacts-endpoint', s3.endpoint]

  /** A daemon with a folder of its own (`<root>/<name>/svc`), sharing the first one's tokens. */
  async function daemon(name: string): Promise<RunningDaemon> {
    const dir = join(root, name, PROJECT)
    if (name !== 'a') {
      await Workspace.init(dir)
      for (const file of ['ownerToken', 'agentToken'] as const) await copyFile(runtimePath(join(root, 'a', PROJECT), file), runtimePath(dir, file))
      await Workspace.attachService(dir, { store, artifacts: 's3://tychora/svc', endpoint: s3.endpoint })
      await shortLease(dir)
    }
    const d = await startDaemon([dir], s3.env, flags())
    running.push(d)
    return d
  }

  /** Leases of 2 s, so a dead daemon's job is taken again within seconds. */
  async function shortLease(dir: string): Promise<void> {
    const toml = join(dir, 'workspace.toml')
    await writeFile(toml, (await readFile(toml, 'utf8')).replace(/(\[store\]\nurl = .*\n)/, '$1lease_seconds = 2\n'))
  }

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
  const add = async (d: RunningDaemon, paths: string[]) => (await call(d, 'POST', '/sources', { paths })).job_id as number
  const job = async (d: RunningDaemon, id: number) => call(d, 'GET', `/jobs/${id}`)
  const ended = async (d: RunningDaemon, id: number, timeoutMs = 60_000) => {
    const started = Date.now()
    for (;;) {
      const status = await job(d, id)
      if (!['queued', 'running'].includes(status.status as string)) return status
      if (Date.now() - started > timeoutMs) throw new Error(`job ${id} still ${status.status} after ${timeoutMs} ms`)
      await new Promise((r) => setTimeout(r, 100))
    }
  }
  const paths = async (d: RunningDaemon, query: string) => ((await call(d, 'POST', '/search', { query, limit: 10 })).segments as { source: { path: string } }[]).map((s) => s.source.path)

  beforeAll(async () => {
    pg = startPostgres()
    s3 = await startSeaweed()
    store = pg.database()
    root = await mkdtemp(join(tmpdir(), 'tychora-daemons-'))
    const first = join(root, 'a', PROJECT)
    await Workspace.init(first)
    await Workspace.attachService(first, { store, artifacts: 's3://tychora/svc', endpoint: s3.endpoint })
    await shortLease(first)
    await Workspace.migrate(first)
    token = (await readFile(runtimePath(first, 'ownerToken'), 'utf8')).trim()
  }, 120_000)

  afterAll(async () => {
    for (const d of running) if (d.child.exitCode === null && d.child.signalCode === null) d.child.kill('SIGKILL')
    await s3?.stop()
    pg?.stop()
    if (root) await rm(root, { recursive: true, force: true })
  })

  it('a job queued through one daemon is answered by every daemon; concurrent adds through two both land', async () => {
    const [a, b] = [await daemon('a'), await daemon('b')]
    const docs = join(root, 'docs')
    await mkdir(docs)
    await writeFile(join(docs, 'glacier.md'), '# Glacier\n\nThe glacier retreated four kilometres in the survey.\n')
    const first = await add(a, [docs])
    // Polled through the other daemon: the job's row is the service's.
    expect((await ended(b, first)).status).toBe('succeeded')
    // B never built anything: it builds its own copy of the generation A published, from the store.
    expect(await paths(b, 'glacier retreated survey')).toContain('glacier.md')
    expect(await paths(a, 'glacier retreated survey')).toContain('glacier.md')

    // Two adds at once, one through each daemon: one publishes first, the other builds again on the new pointer.
    const left = join(root, 'left')
    const right = join(root, 'right')
    await mkdir(left)
    await mkdir(right)
    await writeFile(join(left, 'heron.md'), '# Heron\n\nThe grey heron nests beside the estuary.\n')
    await writeFile(join(right, 'lichen.md'), '# Lichen\n\nOrange lichen covers the northern boulders.\n')
    const [l, r] = await Promise.all([add(a, [left]), add(b, [right])])
    expect((await ended(a, l)).status).toBe('succeeded')
    expect((await ended(a, r)).status).toBe('succeeded')
    for (const d of [a, b]) {
      expect(await paths(d, 'grey heron estuary')).toContain('heron.md')
      expect(await paths(d, 'orange lichen boulders')).toContain('lichen.md')
      expect(await paths(d, 'glacier retreated survey')).toContain('glacier.md')
    }
  }, 180_000)

  it('a daemon SIGKILLed mid-job loses nothing (another takes the job when its lease expires); a backup through a daemon restores with the same answers', async () => {
    const a = running[0] as RunningDaemon
    const many = join(root, 'many')
    await mkdir(many)
    for (let i = 0; i < 600; i++) await writeFile(join(many, `note-${i}.md`), `# Note ${i}\n\nField note ${i} about the moraine sample ${i * 7}.\n\n${'Sediment layers. '.repeat(40)}\n`)
    await writeFile(join(many, 'osprey.md'), '# Osprey\n\nThe osprey dives for trout below the weir.\n')
    // Only A may take it: the other daemon stops first.
    const b = running[1] as RunningDaemon
    expect(await b.stop()).toBe(0)
    const id = await add(a, [many])
    const started = Date.now()
    while ((await job(a, id)).status !== 'running') {
      if (Date.now() - started > 20_000) throw new Error('the job never started')
      await new Promise((r) => setTimeout(r, 10))
    }
    a.child.kill('SIGKILL')
    await new Promise((r) => a.child.once('exit', r))
    // A daemon started afterwards (or one already up) finds the job held on an expired lease, and runs it again.
    const c = await daemon('c')
    const status = await ended(c, id, 120_000)
    expect(status.status).toBe('succeeded')
    // Taken twice: by A (which died holding it) and by C, whose take is the one that ended it.
    const [attempts, worker] = pg.query(store, `SELECT attempts, worker FROM jobs WHERE id = ${id}`).split('|')
    expect(Number(attempts)).toBe(2)
    expect(worker).toMatch(new RegExp(`/${c.child.pid}/`))
    expect(await paths(c, 'osprey trout weir')).toContain('osprey.md')
    expect(await paths(c, 'grey heron estuary')).toContain('heron.md')
    // The folder of the daemon that died is served again as it was: nothing in the store is lost.
    const again = await daemon('a')
    expect(await paths(again, 'osprey trout weir')).toContain('osprey.md')

    // A backup taken through a serving daemon (the dump and the artifacts its rows name), restored
    // by the CLI into a fresh database and bucket prefix, answers as the service does.
    const cli = (...args: string[]) => execFileSync(process.execPath, [CLI, ...args], { env: { ...process.env, ...s3.env }, encoding: 'utf8' })
    const backup = join(root, 'backup')
    cli('manage', 'backup', backup, '-w', join(root, 'c', PROJECT))
    const restored = join(root, 'restored', PROJECT)
    cli('manage', 'restore', backup, restored, '--store', pg.database(), '--artifacts', 's3://tychora/restored', '--artifacts-endpoint', s3.endpoint)
    const served = (await call(c, 'POST', '/search', { query: 'osprey trout weir', limit: 5 })).segments as { citation: string; text: string }[]
    const local = JSON.parse(cli('search', 'osprey trout weir', '--limit', '5', '--format', 'json', '-w', restored)).segments as { citation: string; text: string }[]
    expect(local.map((x) => [x.citation, x.text])).toEqual(served.map((x) => [x.citation, x.text]))
  }, 300_000)
})
