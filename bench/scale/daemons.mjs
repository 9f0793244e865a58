// `npm run bench:daemons`: several daemons, one service. Three `tychora serve --store …
// --artifacts …` processes share a real PostgreSQL (Debian's server, fsync=on, Unix socket) and a
// real SeaweedFS bucket; 64 searching and 8 adding clients spread over them for BENCH_SECONDS
// (60 by default); one daemon is SIGKILLed a third of the way in. A client whose daemon fails
// to answer retries on the next one. Reported: searches and adds, errors after retries, search
// p50/p99, and the add jobs that never ended succeeded (lost). Writes
// bench/results/daemons.{json,md}. Needs `npm run build`, Debian's `postgresql` and `weed`
// (node scripts/fetch-servers.mjs).
import { spawn } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { runtimePath } from '../../dist/contracts/runtime.js'
import { Workspace } from '../../dist/engine/workspace.js'
import { startSeaweed } from '../../scripts/seaweed.mjs'
import { startPostgres } from './postgres.mjs'
import { median, root } from './common.mjs'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 60)
const SEARCHERS = 64
const ADDERS = 8
const CLI = join(root, 'dist/bin/tychora.cjs')
const PROJECT = 'svc'
const WORDS = ['glacier', 'heron', 'lichen', 'moraine', 'osprey', 'estuary', 'boulder', 'sediment', 'trout', 'weir', 'survey', 'sample']

/** `tychora serve` on a free port for `dir`; resolves once it listens. */
function serve(dir, flags, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '-w', dir, ...flags], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    const timer = setTimeout(() => reject(new Error(`daemon did not start:\n${out}`)), 60_000)
    const onData = (d) => {
      out += d
      const m = /listening on (http:\/\/\S+)/.exec(out)
      if (m) {
        clearTimeout(timer)
        resolve({ url: m[1], child, alive: true })
      }
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', (d) => (out += d))
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`daemon exited with ${code}:\n${out}`))
    })
  })
}

const server = startPostgres()
const pg = { url: server.database(), stop: () => server.stop() }
const s3 = await startSeaweed()
const work = mkdtempSync(join(tmpdir(), 'tychora-bench-daemons-'))
const flags = ['--store', pg.url, '--artifacts', 's3://tychora/svc', '--artifacts-endpoint', s3.endpoint]
const daemons = []
try {
  const dirs = ['a', 'b', 'c'].map((n) => join(work, n, PROJECT))
  for (const [i, dir] of dirs.entries()) {
    await Workspace.init(dir)
    if (i > 0) for (const f of ['ownerToken', 'agentToken']) copyFileSync(runtimePath(dirs[0], f), runtimePath(dir, f))
    await Workspace.attachService(dir, { store: pg.url, artifacts: 's3://tychora/svc', endpoint: s3.endpoint })
    const toml = join(dir, 'workspace.toml')
    writeFileSync(toml, readFileSync(toml, 'utf8').replace(/(\[store\]\nurl = .*\n)/, '$1lease_seconds = 5\n'))
  }
  await Workspace.migrate(dirs[0])
  const token = readFileSync(runtimePath(dirs[0], 'ownerToken'), 'utf8').trim()
  for (const dir of dirs) daemons.push(await serve(dir, flags, s3.env))
  // A first corpus, so searches have something to find.
  const seed = join(work, 'seed')
  mkdirSync(seed)
  for (let i = 0; i < 200; i++) writeFileSync(join(seed, `n${i}.md`), `# Note ${i}\n\n${WORDS[i % WORDS.length]} ${WORDS[(i * 7) % WORDS.length]} field note ${i}.\n`)

  const request = async (d, method, path, body) => {
    const response = await fetch(`${d.url}/v1/projects/${PROJECT}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(30_000),
    })
    const json = await response.json()
    if (!response.ok) throw new Error(`${response.status} ${JSON.stringify(json).slice(0, 200)}`)
    return json
  }
  /** Tries each daemon in turn from `start`, as a client behind a load balancer would. */
  const anyDaemon = async (start, method, path, body) => {
    let last
    for (let k = 0; k < daemons.length; k++) {
      const d = daemons[(start + k) % daemons.length]
      try {
        return await request(d, method, path, body)
      } catch (error) {
        last = error
      }
    }
    throw last
  }
  const seedJob = (await anyDaemon(0, 'POST', '/sources', { paths: [seed] })).job_id
  for (;;) {
    const s = await anyDaemon(0, 'GET', `/jobs/${seedJob}`)
    if (!['queued', 'running'].includes(s.status)) break
    await new Promise((r) => setTimeout(r, 200))
  }

  const latencies = []
  let searches = 0
  let searchErrors = 0
  let adds = 0
  let addErrors = 0
  const jobs = []
  const deadline = Date.now() + SECONDS * 1000
  let killedAt
  const killer = setTimeout(
    () => {
      daemons[1].child.kill('SIGKILL')
      killedAt = Date.now()
    },
    (SECONDS * 1000) / 3,
  )
  const searcher = async (i) => {
    let n = 0
    while (Date.now() < deadline) {
      const query = `${WORDS[(i + n) % WORDS.length]} ${WORDS[(i * 3 + n) % WORDS.length]} note`
      const t = performance.now()
      try {
        await anyDaemon(i + n, 'POST', '/search', { query, limit: 10 })
        latencies.push(performance.now() - t)
        searches++
      } catch {
        searchErrors++
      }
      n++
    }
  }
  const adder = async (i) => {
    let n = 0
    while (Date.now() < deadline) {
      const dir = join(work, `add-${i}-${n}`)
      mkdirSync(dir)
      writeFileSync(join(dir, `client${i}-${n}.md`), `# Client ${i} add ${n}\n\nThe ${WORDS[n % WORDS.length]} report number ${i * 1000 + n}.\n`)
      try {
        jobs.push((await anyDaemon(i + n, 'POST', '/sources', { paths: [dir] })).job_id)
        adds++
      } catch {
        addErrors++
      }
      n++
      await new Promise((r) => setTimeout(r, 1000))
    }
  }
  await Promise.all([...Array.from({ length: SEARCHERS }, (_, i) => searcher(i)), ...Array.from({ length: ADDERS }, (_, i) => adder(i))])
  clearTimeout(killer)
  // Every add job must end succeeded, the killed daemon's included (its lease expires; another takes it).
  const drainStarted = Date.now()
  const endings = {}
  const failures = []
  for (const id of jobs) {
    for (;;) {
      const s = await anyDaemon(2, 'GET', `/jobs/${id}`)
      if (!['queued', 'running'].includes(s.status)) {
        endings[s.status] = (endings[s.status] ?? 0) + 1
        const why = s.error ?? s.receipt?.diagnostics?.[0]?.message
        if (s.status !== 'succeeded' && why && !failures.includes(why) && failures.length < 5) failures.push(why)
        break
      }
      if (Date.now() - drainStarted > 300_000) {
        endings.unfinished = (endings.unfinished ?? 0) + 1
        break
      }
      await new Promise((r) => setTimeout(r, 200))
    }
  }
  const drain_s = (Date.now() - drainStarted) / 1000
  const sorted = [...latencies].sort((x, y) => x - y)
  const result = {
    date: new Date().toISOString(),
    cores: cpus().length,
    seconds: SECONDS,
    daemons: 3,
    searchers: SEARCHERS,
    adders: ADDERS,
    killed_after_s: killedAt ? Math.round((killedAt - (deadline - SECONDS * 1000)) / 1000) : null,
    searches,
    search_errors: searchErrors,
    search_p50_ms: median(sorted),
    search_p99_ms: sorted[Math.floor(sorted.length * 0.99)],
    searches_per_s: searches / SECONDS,
    adds,
    add_errors: addErrors,
    add_endings: endings,
    lost_jobs: jobs.length - (endings.succeeded ?? 0),
    failures,
    drain_s,
  }
  mkdirSync(join(root, 'bench/results'), { recursive: true })
  writeFileSync(join(root, 'bench/results/daemons.json'), `${JSON.stringify(result, null, 2)}\n`)
  const md = [
    '# Several daemons, one service',
    '',
    `3 daemons (\`tychora serve --store … --artifacts …\`) on one PostgreSQL 15 (fsync=on, Unix socket) and one SeaweedFS bucket, ${result.cores} cores for everything; ${SEARCHERS} searching clients (no pause) and ${ADDERS} adding clients (one file a second each) for ${SECONDS} s, each client retrying on the next daemon when one fails; daemon 2 SIGKILLed after ${result.killed_after_s} s. Leases of 5 s.`,
    '',
    '| searches | search errors | p50 ms | p99 ms | searches/s | adds queued | add errors | jobs succeeded | jobs lost | drain after the run s |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    `| ${searches} | ${searchErrors} | ${result.search_p50_ms.toFixed(1)} | ${result.search_p99_ms.toFixed(1)} | ${result.searches_per_s.toFixed(0)} | ${adds} | ${addErrors} | ${endings.succeeded ?? 0} | ${result.lost_jobs} | ${drain_s.toFixed(1)} |`,
    '',
  ].join('\n')
  writeFileSync(join(root, 'bench/results/daemons.md'), md)
  process.stdout.write(md)
} finally {
  for (const d of daemons) if (d.child.exitCode === null && d.child.signalCode === null) d.child.kill('SIGKILL')
  await s3.stop()
  pg.stop()
  rmSync(work, { recursive: true, force: true })
}
