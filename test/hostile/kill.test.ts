import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runtimePath } from '../../ts/contracts/runtime.js'
import { ERROR_CODES } from '../../ts/errors.js'
import { Workspace } from '../../ts/engine/workspace.js'
import { CLI, cli, nativeMissing, scratch } from '../native/_setup.js'
import { Database } from '../support/sqlite.js'

/** Kill iterations per loop (at least 50; raise with TYCHORA_KILL_ITERATIONS for a longer soak). */
const ITERATIONS = Math.max(50, Number(process.env.TYCHORA_KILL_ITERATIONS ?? 50))
/** Kill iterations per operation loop (compaction, backup, restore): at least 20, raised by the same variable. */
const OPERATION_ITERATIONS = Math.max(20, Number(process.env.TYCHORA_KILL_ITERATIONS ?? 20))

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
async function check(ws: string, last: Invariants): Promise<Invariants & { jobs: Record<string, number>; generation: string | null }> {
  const handle = await Workspace.open(ws)
  let snapshot: number | null
  let generation: string | null = null
  try {
    snapshot = (await handle.status()).current_snapshot?.id ?? null
    expect((await handle.verify()).problems).toEqual([])
    if (snapshot !== null) {
      expect((await handle.search({ query: 'conditional request revalidates' })).segments[0]?.source.path).toBe('http-caching.md')
      const pinned = await handle.inspect(`snapshot:${snapshot}`)
      generation = pinned.type === 'snapshot' ? (pinned.indexes.find((i) => i.family === 'lexical')?.generation ?? null) : null
    }
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
    return { snapshot, jobs, generation }
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

/** Words built from syllables, so the bulk records have a real vocabulary for a merge to rewrite. */
const VOCABULARY = (() => {
  const rand = random(7)
  const syllables = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'ti', 'vo', 'ze', 'po', 'qua', 'ber', 'din', 'fel', 'gor', 'hun', 'jas', 'kel']
  return Array.from({ length: 5000 }, () => Array.from({ length: 2 + Math.floor(rand() * 3) }, () => syllables[Math.floor(rand() * syllables.length)]).join(''))
})()

/**
 * Ten JSONL files of 1,600 records of 40 words beside the fixture docs: about 16,000 windows, so
 * a compaction, a backup and a restore each take a few hundred milliseconds here and a kill can
 * land inside one. Round 0 writes every file; a later round rewrites two (a fifth of the index:
 * a change over half the snapshot would be a full build, which leaves nothing to merge), the next
 * round two others, so after two rounds more than a quarter of a segment is deleted.
 */
async function bulk(docs: string, round: number): Promise<void> {
  const dir = join(docs, 'bulk')
  await mkdir(dir, { recursive: true })
  const rand = random(1000 + round)
  for (let f = 0; f < 10; f++) {
    if (round > 0 && f !== (2 * round) % 10 && f !== (2 * round + 1) % 10) continue
    const lines: string[] = []
    for (let r = 0; r < 1600; r++) {
      const words = Array.from({ length: 40 }, () => VOCABULARY[Math.floor(rand() * VOCABULARY.length)])
      lines.push(JSON.stringify({ id: `part-${f}-${r}`, round, text: words.join(' ') }))
    }
    await writeFile(join(dir, `part-${f}.jsonl`), `${lines.join('\n')}\n`)
  }
}

/**
 * Runs `tychora ARGS` and SIGKILLs it `killAfter` ms after it shows it has begun
 * (`started(pid)`: its first write), waited for at most 20 s, so the delay falls inside the
 * operation however slow start-up is today. Without `killAfter` it runs to its end. Resolves with
 * whether the kill found it running, and how long it ran from its start signal to its exit.
 */
async function killDuring(args: string[], started: (pid: number) => boolean, killAfter?: number): Promise<{ killed: boolean; ranMs: number }> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: 'ignore' })
  const exit = exited(child).then((r) => ({ ...r, at: Date.now() }))
  const deadline = Date.now() + 20_000
  while (!started(child.pid ?? 0) && child.exitCode === null && child.signalCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 3))
  const begin = Date.now()
  if (killAfter !== undefined) {
    await new Promise((r) => setTimeout(r, killAfter))
    child.kill('SIGKILL')
  }
  const { signal, at } = await exit
  return { killed: signal === 'SIGKILL', ranMs: at - begin }
}

/**
 * Where kill moments are drawn from: 1.25 × the median time, start signal to exit, of the runs
 * that ended on their own (an unkilled first run, then every run the kill came too late for). Runs
 * get faster as the page cache warms; a window kept from a cold first run would land most kills
 * after the end.
 */
class KillWindow {
  readonly #ran: number[]

  constructor(first: number) {
    this.#ran = [first]
  }

  get ms(): number {
    const sorted = [...this.#ran].sort((a, b) => a - b)
    return 1.25 * (sorted[Math.floor(sorted.length / 2)] as number)
  }

  ranToEnd(ms: number): void {
    this.#ran.push(ms)
  }
}

/** What a workspace answers, exactly: a restored copy must give the same. */
async function answers(ws: string): Promise<string> {
  const handle = await Workspace.open(ws)
  try {
    const r = await handle.search({ query: 'conditional request revalidates', limit: 20 })
    return JSON.stringify({ snapshot: r.snapshot_id, segments: r.segments.map((s) => [s.id, s.text, s.citation, s.score]) })
  } finally {
    handle.close()
  }
}

/** The code of a CLI failure printed with `--format json`. */
function errorCode(stderr: string): string | undefined {
  try {
    return (JSON.parse(stderr.trim().split('\n').pop() ?? '') as { code?: string }).code
  } catch {
    return undefined
  }
}

/** Folders a staged write left beside `name` in `dir` (`.NAME.partial-PID`). */
function partials(dir: string, name: string): string[] {
  return readdirSync(dir)
    .filter((n) => n.startsWith(`.${name}.partial-`))
    .map((n) => join(dir, n))
}

describe.skipIf(nativeMissing)('kill -9 loops', () => {
  it(`kill -9 of add at ${ITERATIONS} random moments never corrupts, rewinds or contradicts`, async () => {
    const seed = Number(process.env.TYCHORA_KILL_SEED ?? 20261130)
    const rand = random(seed)
    const { docs, ws } = await scratch()
    await cli(['init', ws])
    await corpus(docs, 0)
    // Overlapping roots: the folder inside first, then its parent (one source per file, whichever
    // order); the rounds then sync one or the other.
    expect((await cli(['add', '-w', ws, join(docs, 'bulk')])).code).toBe(0)
    expect((await cli(['add', '-w', ws, docs])).code).toBe(0)
    let last: Invariants = { snapshot: 2 }
    let landed = 0
    let publishedAnyway = 0
    for (let round = 1; round <= ITERATIONS; round++) {
      await corpus(docs, round)
      const before = lastJobId(ws)
      const target = rand() < 0.5 ? docs : join(docs, 'bulk')
      const child = spawn(process.execPath, [CLI, 'add', '-w', ws, target], { stdio: 'ignore' })
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
    // A plain add afterwards completes and publishes everything, each file once.
    const final = await cli(['add', '-w', ws, docs, '--format', 'json'])
    expect(final.code).toBe(0)
    const state = await check(ws, last)
    const db = new Database(join(ws, 'corpus.sqlite3'), { readonly: true, fileMustExist: true })
    try {
      const sources = db.prepare("SELECT COUNT(*) AS n, COUNT(DISTINCT uri) AS uris FROM sources WHERE status = 'active'").get() as {
        n: number
        uris: number
      }
      expect(sources.n).toBe(sources.uris)
      const snapshots = (db.prepare('SELECT COUNT(*) AS n FROM snapshots').get() as { n: number }).n
      expect(snapshots).toBeLessThanOrEqual(5)
    } finally {
      db.close()
    }
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
      // Wait until this round's first job runs (job 1 was the CLI add, so HTTP job k is job k + 1),
      // then kill at a random moment inside the queue's work. A job here takes 50–400 ms, by the
      // machine and its load: a wait of up to 150 ms let an unloaded run finish the whole queue
      // before the kill in half the rounds (24 of 50 once), so the wait is at most 60 ms.
      const jobStatus = (id: number) =>
        fetch(`${url}/v1/projects/${project}/jobs/${id}`, { headers: { authorization: `Bearer ${token}` } })
          .then(async (r) => ((await r.json()) as { status?: string }).status ?? 'unknown')
          .catch(() => 'unknown')
      const first = queuedTotal - jobs + 2
      const deadline = Date.now() + 30_000
      while ((await jobStatus(first)) === 'queued' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
      await new Promise((r) => setTimeout(r, rand() * 60))
      const busy = (await jobStatus(queuedTotal + 1)) !== 'succeeded'
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
    const drain = async () => {
      const deadline = Date.now() + 120_000
      for (;;) {
        const db = new Database(join(ws, 'corpus.sqlite3'), { readonly: true, fileMustExist: true })
        const pending = (db.prepare("SELECT count(*) AS n FROM jobs WHERE status IN ('queued', 'running')").get() as { n: number }).n
        db.close()
        if (pending === 0 || Date.now() > deadline) break
        await new Promise((r) => setTimeout(r, 200))
      }
    }
    let redone = false
    try {
      await drain()
      // The last kill may have landed in the last round's last job: an interrupted job is not run
      // again by itself (its work is redone by the next job over the folder), so here, as doctor
      // tells a user, the same add is queued once more.
      const lastJob = await fetch(`${url}/v1/projects/${project}/jobs/${queuedTotal + 1}`, { headers: { authorization: `Bearer ${token}` } })
      if (((await lastJob.json()) as { status?: string }).status === 'interrupted') {
        const res = await fetch(`${url}/v1/projects/${project}/sources`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ paths: [docs] }),
        })
        expect(res.status).toBe(202)
        queuedTotal++
        redone = true
        await drain()
      }
      const search = await fetch(`${url}/v1/projects/${project}/search`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query: `sentinel-round-${ITERATIONS * 10 + 1}` }),
      })
      expect(search.status).toBe(200)
      // The last round's second file, queued before the last kill, is published and found.
      const found = (await search.json()) as { segments: Array<{ source: { path: string } }> }
      expect(found.segments[0]?.source.path).toBe(`round-${ITERATIONS * 10 + 1}.md`)
    } finally {
      child.kill('SIGTERM')
      await exited(child)
    }
    const state = await check(ws, last)
    process.stdout.write(
      `${JSON.stringify({ loop: 'serve', seed, iterations: ITERATIONS, http_jobs_queued: queuedTotal, killed_while_busy: killedWhileBusy, last_job_redone: redone, jobs: state.jobs })}\n`,
    )
    // The kills landed while the queue had work (at least half of them: a fast machine may finish
    // the queue within the wait). A kill interrupts the one job running (its work is redone by the
    // next job over the same folder); every job still queued resumes and succeeds; none fails.
    expect(killedWhileBusy).toBeGreaterThanOrEqual(ITERATIONS / 2)
    expect(Object.keys(state.jobs).sort()).toEqual(state.jobs.interrupted ? ['interrupted', 'succeeded'] : ['succeeded'])
    expect(state.jobs.interrupted ?? 0).toBeLessThanOrEqual(killedWhileBusy)
    expect((state.jobs.succeeded ?? 0) + (state.jobs.interrupted ?? 0)).toBe(queuedTotal + 1)
  })

  it(`kill -9 of delete-original with pinned snapshots at ${OPERATION_ITERATIONS} random moments: a rerun finishes, and no snapshot answers with the erased text`, async () => {
    const seed = Number(process.env.TYCHORA_KILL_SEED ?? 20261130) + 5
    const rand = random(seed)
    const { docs, ws } = await scratch()
    await cli(['init', ws])
    await corpus(docs, 0)
    expect((await cli(['add', '-w', ws, docs])).code).toBe(0)
    const erase = (i: number, killAfter?: number) => {
      const before = lastJobId(ws)
      return killDuring(['manage', 'delete-original', `secret-${i}.md`, '--reason', `legal request ${i}`, '-w', ws], () => lastJobId(ws) > before, killAfter)
    }
    let window: KillWindow | undefined
    let landed = 0
    for (let i = 0; i < OPERATION_ITERATIONS; i++) {
      // The secret is published, then pinned behind a later snapshot.
      await writeFile(join(docs, `secret-${i}.md`), `# Secret ${i}\n\nerasemeword${i} of the claimant.\n`)
      expect((await cli(['add', '-w', ws, docs])).code).toBe(0)
      await corpus(docs, i + 1)
      expect((await cli(['add', '-w', ws, docs])).code).toBe(0)
      const run = await erase(i, window ? rand() * window.ms : undefined)
      if (!window) window = new KillWindow(run.ranMs)
      else if (run.killed) landed++
      else window.ranToEnd(run.ranMs)
      const handle = await Workspace.open(ws)
      try {
        // Killed mid-way: whatever verify finds is the unfinished erasure, never damage.
        const report = await handle.verify()
        expect(report.problems.filter((p) => p.code !== 'E_CONFLICT')).toEqual([])
      } finally {
        handle.close()
      }
      // The rerun finishes it (or finds it done), and then nothing holds the text.
      expect((await cli(['manage', 'delete-original', `secret-${i}.md`, '--reason', `legal request ${i}`, '-w', ws])).code).toBe(0)
      const handle2 = await Workspace.open(ws)
      try {
        expect((await handle2.verify()).problems).toEqual([])
        const snapshots = await handle2.listSnapshots()
        for (const s of snapshots.snapshots) {
          const found = await handle2.search({ query: `erasemeword${i}`, snapshot_id: s.id })
          expect(found.segments).toEqual([])
        }
      } finally {
        handle2.close()
      }
    }
    process.stdout.write(`${JSON.stringify({ loop: 'delete-original', seed, iterations: OPERATION_ITERATIONS, window_ms: Math.round(window?.ms ?? 0), landed_mid_erasure: landed })}\n`)
    expect(landed).toBeGreaterThan(OPERATION_ITERATIONS / 4)
  })

  it(`kill -9 of compaction at ${OPERATION_ITERATIONS} random moments: the snapshot answers, verify is clean, a rerun merges`, async () => {
    const seed = Number(process.env.TYCHORA_KILL_SEED ?? 20261130) + 2
    const rand = random(seed)
    const { docs, ws } = await scratch()
    await cli(['init', ws])
    await bulk(docs, 0)
    expect((await cli(['add', '-w', ws, docs])).code).toBe(0)
    let round = 0
    // Two rounds through the library (the CLI's add would compact after its receipt and leave nothing to merge).
    const churn = async () => {
      const handle = await Workspace.open(ws)
      try {
        for (let k = 0; k < 2; k++) {
          await bulk(docs, ++round)
          expect((await handle.add({ paths: [docs] })).files.changed).toBe(2)
        }
      } finally {
        handle.close()
      }
    }
    const lexical = join(ws, 'indexes/lexical')
    // The merged copy's folder appears when the merge starts.
    const compaction = (killAfter?: number) => {
      const existing = new Set(readdirSync(lexical))
      return killDuring(['manage', 'compact', '-w', ws], () => readdirSync(lexical).some((g) => !existing.has(g)), killAfter)
    }
    await churn()
    let last = await check(ws, { snapshot: null })
    const first = await compaction()
    const window = new KillWindow(first.ranMs)
    const merged = await check(ws, last)
    expect(merged.generation).not.toBe(last.generation)
    last = merged
    let landed = 0
    let completed = 0
    // Whether the merge policy has nothing left to merge (a compaction ran to its end): then churn first.
    let nothingToMerge = true
    for (let i = 0; i < OPERATION_ITERATIONS; i++) {
      if (nothingToMerge) {
        await churn()
        last = await check(ws, last)
      }
      const before = last
      const existing = new Set(readdirSync(lexical))
      const run = await compaction(rand() * window.ms)
      last = await check(ws, before)
      expect(last.snapshot).toBe(before.snapshot)
      // A killed merge's folder is collected when the workspace next opens.
      expect(readdirSync(lexical).filter((g) => !existing.has(g) && g !== last.generation)).toEqual([])
      if (last.generation !== before.generation) completed++
      else if (run.killed) landed++
      if (!run.killed) window.ranToEnd(run.ranMs)
      nothingToMerge = last.generation !== before.generation || !run.killed
    }
    // A compaction run to its end afterwards merges what the killed ones left, and switches to it.
    if (nothingToMerge) await churn()
    const final = JSON.parse((await cli(['manage', 'compact', '-w', ws, '--format', 'json'])).stdout) as { to_generation: string | null }
    expect(final.to_generation).not.toBeNull()
    const state = await check(ws, last)
    expect(state.generation).toBe(final.to_generation)
    process.stdout.write(`${JSON.stringify({ loop: 'compact', seed, iterations: OPERATION_ITERATIONS, window_ms: Math.round(window.ms), landed_mid_merge: landed, completed })}\n`)
    expect(landed).toBeGreaterThan(OPERATION_ITERATIONS / 4)
  })

  it(`kill -9 of backup at ${OPERATION_ITERATIONS} random moments: the source stays sound, and nothing partial is ever restored`, async () => {
    const seed = Number(process.env.TYCHORA_KILL_SEED ?? 20261130) + 3
    const rand = random(seed)
    const { dir, docs, ws } = await scratch()
    await cli(['init', ws])
    await bulk(docs, 0)
    expect((await cli(['add', '-w', ws, docs])).code).toBe(0)
    // The staging folder beside DEST is the backup's first write.
    const backup = (name: string, killAfter?: number) =>
      killDuring(['manage', 'backup', join(dir, name), '-w', ws], (pid) => existsSync(join(dir, `.${name}.partial-${pid}`)) || existsSync(join(dir, name)), killAfter)
    const first = await backup('calibration')
    expect(existsSync(join(dir, 'calibration/manifest.json'))).toBe(true)
    await rm(join(dir, 'calibration'), { recursive: true })
    const window = new KillWindow(first.ranMs)
    const reference = await answers(ws)
    let last = await check(ws, { snapshot: null })
    let landed = 0
    let complete = 0
    let leftBehind = 0
    let leftWhole = 0
    for (let i = 0; i < OPERATION_ITERATIONS; i++) {
      const name = `backup-${i}`
      const dest = join(dir, name)
      const run = await backup(name, rand() * window.ms)
      if (!run.killed) window.ranToEnd(run.ranMs)
      // The source workspace is untouched by a backup, whenever it dies.
      last = await check(ws, last)
      const restoredAt = join(dir, `restored-${i}`)
      if (existsSync(dest)) {
        // A folder at DEST is a whole backup: restore accepts it, and the copy answers as the source does.
        complete++
        const restored = await cli(['manage', 'restore', dest, restoredAt, '--format', 'json'])
        expect(restored.stderr).toBe('')
        expect(restored.code).toBe(0)
        await check(restoredAt, { snapshot: null })
        expect(await answers(restoredAt)).toBe(reference)
      } else if (run.killed) {
        landed++
      }
      // What a killed backup leaves beside DEST is refused, with a coded error and nothing created;
      // one killed after its manifest was written is whole, and restores to a copy that answers.
      const leftover = partials(dir, name)
      for (const partial of leftover) {
        leftBehind++
        const attempt = await cli(['manage', 'restore', partial, join(dir, 'from-partial'), '--format', 'json'])
        if (attempt.code === 0) {
          leftWhole++
          await check(join(dir, 'from-partial'), { snapshot: null })
          expect(await answers(join(dir, 'from-partial'))).toBe(reference)
        } else {
          expect(['E_NOT_FOUND', 'E_CORRUPT', 'E_CHECKSUM_MISMATCH']).toContain(errorCode(attempt.stderr))
          expect(existsSync(join(dir, 'from-partial'))).toBe(false)
        }
        await rm(join(dir, 'from-partial'), { recursive: true, force: true })
      }
      if (leftover.length > 0) {
        // The next backup to the same destination collects what the killed one left beside it.
        await rm(dest, { recursive: true, force: true })
        expect((await cli(['manage', 'backup', dest, '-w', ws])).code).toBe(0)
        expect(partials(dir, name)).toEqual([])
      }
      await rm(dest, { recursive: true, force: true })
      await rm(restoredAt, { recursive: true, force: true })
    }
    process.stdout.write(
      `${JSON.stringify({ loop: 'backup', seed, iterations: OPERATION_ITERATIONS, window_ms: Math.round(window.ms), landed_mid_backup: landed, completed: complete, partial_folders_left: leftBehind, of_them_whole: leftWhole })}\n`,
    )
    expect(landed).toBeGreaterThan(OPERATION_ITERATIONS / 4)
  })

  it(`kill -9 of restore at ${OPERATION_ITERATIONS} random moments: DIR is absent, empty, or a whole workspace; a rerun succeeds or says E_CONFLICT`, async () => {
    const seed = Number(process.env.TYCHORA_KILL_SEED ?? 20261130) + 4
    const rand = random(seed)
    const { dir, docs, ws } = await scratch()
    await cli(['init', ws])
    await bulk(docs, 0)
    expect((await cli(['add', '-w', ws, docs])).code).toBe(0)
    const backup = join(dir, 'backup')
    expect((await cli(['manage', 'backup', backup, '-w', ws])).code).toBe(0)
    const reference = await answers(ws)
    const filled = (path: string) => existsSync(path) && readdirSync(path).length > 0
    // The staging folder beside DIR appears once the backup has been checked against its manifest.
    const restore = (name: string, killAfter?: number) =>
      killDuring(['manage', 'restore', backup, join(dir, name)], (pid) => existsSync(join(dir, `.${name}.partial-${pid}`)) || filled(join(dir, name)), killAfter)
    const first = await restore('calibration')
    expect(existsSync(join(dir, 'calibration/corpus.sqlite3'))).toBe(true)
    await rm(join(dir, 'calibration'), { recursive: true })
    const window = new KillWindow(first.ranMs)
    let landed = 0
    let whole = 0
    for (let i = 0; i < OPERATION_ITERATIONS; i++) {
      const name = `restored-${i}`
      const target = join(dir, name)
      // Every other round restores into a folder that exists and is empty, which restore accepts too.
      if (i % 2 === 1) await mkdir(target)
      const run = await restore(name, rand() * window.ms)
      if (!run.killed) window.ranToEnd(run.ranMs)
      const renamed = filled(target)
      const rerun = await cli(['manage', 'restore', backup, target, '--format', 'json'])
      if (renamed) {
        // Renamed into place: a whole workspace (checked below); a rerun is refused.
        whole++
        expect(rerun.code).toBe(ERROR_CODES.E_CONFLICT.exit)
        expect(errorCode(rerun.stderr)).toBe('E_CONFLICT')
      } else {
        // Nothing became a workspace (the empty folder may even be gone): a rerun succeeds.
        if (run.killed) landed++
        expect(rerun.stderr).toBe('')
        expect(rerun.code).toBe(0)
      }
      await check(target, { snapshot: null })
      expect(await answers(target)).toBe(reference)
      // The rerun collected what a killed restore left beside DIR (or the kill came after the rename).
      expect(partials(dir, name)).toEqual([])
      await rm(target, { recursive: true })
    }
    process.stdout.write(`${JSON.stringify({ loop: 'restore', seed, iterations: OPERATION_ITERATIONS, window_ms: Math.round(window.ms), landed_mid_restore: landed, whole_before_kill: whole })}\n`)
    expect(landed).toBeGreaterThan(OPERATION_ITERATIONS / 4)
  })
})
