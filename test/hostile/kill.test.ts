import { type ChildProcess, spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runtimePath } from '../../ts/contracts/runtime.js'
import { Workspace } from '../../ts/engine/workspace.js'
import { CLI, cli, nativeMissing, scratch } from '../native/_setup.js'

/** better-sqlite3 (a dev dependency, no bundled types), to read job rows as a second process would. */
interface Sqlite {
  prepare(sql: string): { all(): unknown[]; get(): unknown }
  close(): void
}
const Database = createRequire(import.meta.url)('better-sqlite3') as new (path: string, options: { readonly: boolean; fileMustExist: boolean }) => Sqlite

/** Kill iterations per loop (at least 50; raise with TYCHORA_KILL_ITERATIONS for a longer soak). */
const ITERATIONS = Math.max(50, Number(process.env.TYCHORA_KILL_ITERATIONS ?? 50))

/** A small seeded PRNG (mulberry32) so a failing run can be replayed with TYCHORA_KILL_SEED. */
function random(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

async function corpus(docs: string, round: number): Promise<void> {
  const bulk = join(docs, 'bulk')
  await mkdir(bulk, { recursive: true })
  // Every round rewrites a slice of the files and adds one, so each job prepares, commits and
  // publishes real work (a few hundred milliseconds), and a kill can land in any step.
  for (let i = 0; i < 200; i++) {
    if (round === 0 || i % 4 === round % 4) {
      await writeFile(join(bulk, `doc-${i}.md`), `# Doc ${i} round ${round}\n\n${`Lorem ipsum ${round} dolor sit amet, consectetur adipiscing elit. `.repeat(30)}\n`)
    }
  }
  await writeFile(join(docs, `round-${round}.md`), `# Round ${round}\n\nsentinel-round-${round}\n`)
}

interface Invariants {
  snapshot: number | null
}

/**
 * What every kill must leave: the workspace opens and verifies clean, the published snapshot
 * answers, snapshot ids never go backwards, and job rows agree with publication: a snapshot's job
 * ended (succeeded or partial), and a job whose receipt says it published has its snapshot.
 */
async function check(ws: string, last: Invariants): Promise<Invariants & { jobs: Record<string, number> }> {
  const handle = await Workspace.open(ws)
  let snapshot: number | null
  try {
    snapshot = (await handle.status()).current_snapshot?.id ?? null
    expect((await handle.verify()).problems).toEqual([])
    if (snapshot !== null) expect((await handle.search({ query: 'conditional request revalidates' })).segments[0]?.source.path).toBe('http-caching.md')
  } finally {
    handle.close()
  }
  if (last.snapshot !== null) expect(snapshot).toBeGreaterThanOrEqual(last.snapshot)
  const db = new Database(join(ws, 'corpus.sqlite3'), { readonly: true, fileMustExist: true })
  try {
    const disagreeing = db
      .prepare(
        `SELECT j.id, j.status, s.id AS snapshot FROM jobs j JOIN snapshots s ON s.job_id = j.id WHERE j.status NOT IN ('succeeded', 'partial')
         UNION ALL
         SELECT j.id, j.status, NULL FROM jobs j WHERE j.status IN ('succeeded', 'partial') AND json_extract(j.receipt_json, '$.published') = 1
           AND NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.job_id = j.id)
           -- retention (the daemon's maintenance after its queue drains) purges snapshots older than the retained ones
           AND json_extract(j.receipt_json, '$.snapshot_id') >= (SELECT MIN(id) FROM snapshots)`,
      )
      .all()
    expect(disagreeing).toEqual([])
    const jobs = Object.fromEntries((db.prepare('SELECT status, count(*) AS n FROM jobs GROUP BY status').all() as Array<{ status: string; n: number }>).map((r) => [r.status, r.n]))
    return { snapshot, jobs }
  } finally {
    db.close()
  }
}

/** The newest job id, read as a second process would. */
function lastJobId(ws: string): number {
  const db = new Database(join(ws, 'corpus.sqlite3'), { readonly: true, fileMustExist: true })
  try {
    return (db.prepare('SELECT COALESCE(MAX(id), 0) AS id FROM jobs').get() as { id: number }).id
  } finally {
    db.close()
  }
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode })
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
}

describe.skipIf(nativeMissing)('kill -9 loops', () => {
  it(`kill -9 of add at ${ITERATIONS} random moments never corrupts, rewinds or contradicts`, async () => {
    const seed = Number(process.env.TYCHORA_KILL_SEED ?? 20261130)
    const rand = random(seed)
    const { docs, ws } = await scratch()
    await cli(['init', ws])
    await corpus(docs, 0)
    expect((await cli(['add', '-w', ws, docs])).code).toBe(0)
    let last: Invariants = { snapshot: 1 }
    let landed = 0
    let publishedAnyway = 0
    for (let round = 1; round <= ITERATIONS; round++) {
      await corpus(docs, round)
      const before = lastJobId(ws)
      const child = spawn(process.execPath, [CLI, 'add', '-w', ws, docs], { stdio: 'ignore' })
      // Wait for the job row, so the kill lands inside the job however slow the machine is today,
      // then at a random moment of it (a job here takes 150–400 ms).
      const deadline = Date.now() + 10_000
      while (lastJobId(ws) === before && child.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5))
      await new Promise((r) => setTimeout(r, rand() * 150))
      child.kill('SIGKILL')
      const { signal } = await exited(child)
      const state = await check(ws, last)
      if (signal === 'SIGKILL') {
        landed++
        if (state.snapshot !== last.snapshot) publishedAnyway++
      }
      last = state
    }
    // A plain add afterwards completes and publishes everything.
    const final = await cli(['add', '-w', ws, docs, '--format', 'json'])
    expect(final.code).toBe(0)
    const state = await check(ws, last)
    process.stdout.write(`${JSON.stringify({ loop: 'add', seed, iterations: ITERATIONS, landed_mid_job: landed, published_by_killed_jobs: publishedAnyway, jobs: state.jobs })}\n`)
    expect(landed).toBeGreaterThan(ITERATIONS / 4)
  })

  it(`kill -9 of serve with queued HTTP jobs, ${ITERATIONS} times: jobs resume, nothing is lost or contradicts`, async () => {
    const seed = Number(process.env.TYCHORA_KILL_SEED ?? 20261130) + 1
    const rand = random(seed)
    const { docs, ws } = await scratch()
    await cli(['init', ws])
    await corpus(docs, 0)
    expect((await cli(['add', '-w', ws, docs])).code).toBe(0)
    const token = (await readFile(runtimePath(ws, 'ownerToken'), 'utf8')).trim()
    const project = /^name = "(.+)"$/m.exec(await readFile(join(ws, 'workspace.toml'), 'utf8'))?.[1] ?? ''
    let last: Invariants = { snapshot: 1 }
    let queuedTotal = 0
    let killedWhileBusy = 0
    for (let round = 1; round <= ITERATIONS; round++) {
      const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '-w', ws], { stdio: ['ignore', 'pipe', 'pipe'] })
      const url = await new Promise<string>((resolve, reject) => {
        let out = ''
        child.stdout?.on('data', (d: Buffer) => {
          out += d
          const m = /listening on (http:\/\/\S+)/.exec(out)
          if (m) resolve(m[1] as string)
        })
        child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${out}`)))
      })
      // Queue two or three jobs over HTTP, changing the corpus between them.
      const jobs = 2 + Math.floor(rand() * 2)
      for (let j = 0; j < jobs; j++) {
        await corpus(docs, round * 10 + j)
        const res = await fetch(`${url}/v1/projects/${project}/sources`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ paths: [docs] }),
        })
        expect(res.status).toBe(202)
        queuedTotal++
      }
      await new Promise((r) => setTimeout(r, rand() * 900))
      const busy = await fetch(`${url}/v1/projects/${project}/jobs/${queuedTotal + 1}`, { headers: { authorization: `Bearer ${token}` } })
        .then(async (r) => ((await r.json()) as { status?: string }).status !== 'succeeded')
        .catch(() => true)
      child.kill('SIGKILL')
      await exited(child)
      if (busy) killedWhileBusy++
      last = await check(ws, last)
    }
    // One last daemon drains every queued job; nothing stays queued or running.
    const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '-w', ws], { stdio: ['ignore', 'pipe', 'pipe'] })
    const url = await new Promise<string>((resolve) => {
      let out = ''
      child.stdout?.on('data', (d: Buffer) => {
        out += d
        const m = /listening on (http:\/\/\S+)/.exec(out)
        if (m) resolve(m[1] as string)
      })
    })
    try {
      const deadline = Date.now() + 120_000
      for (;;) {
        const db = new Database(join(ws, 'corpus.sqlite3'), { readonly: true, fileMustExist: true })
        const pending = (db.prepare("SELECT count(*) AS n FROM jobs WHERE status IN ('queued', 'running')").get() as { n: number }).n
        db.close()
        if (pending === 0 || Date.now() > deadline) break
        await new Promise((r) => setTimeout(r, 200))
      }
      const search = await fetch(`${url}/v1/projects/${project}/search`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query: `sentinel-round-${ITERATIONS * 10 + 1}` }),
      })
      expect(search.status).toBe(200)
    } finally {
      child.kill('SIGTERM')
      await exited(child)
    }
    const state = await check(ws, last)
    expect(state.jobs.queued ?? 0).toBe(0)
    expect(state.jobs.running ?? 0).toBe(0)
    process.stdout.write(`${JSON.stringify({ loop: 'serve', seed, iterations: ITERATIONS, http_jobs_queued: queuedTotal, killed_while_busy: killedWhileBusy, jobs: state.jobs })}\n`)
  })
})
