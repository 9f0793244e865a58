// `node bench/knowledge/states.mjs`: a knowledge project with 200 migrations (items made from the
// OWASP cheat sheets in shared/data, each accepted through propose → accept), then
//   - a full build of the state from nothing,
//   - delta applies (1 and 10 new migrations on top of a built ancestor),
//   - the switch between two built states (a `git checkout` back): hash the tracked inputs, find
//     the built state, open it and answer a first query — in process and through a daemon,
//   - the disk each additional state takes.
// Medians of BENCH_RUNS (default 5). Writes bench/results/knowledge-states.{json,md}.
import { execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, renameSync, rmSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { writeFileSync } from 'node:fs'
import { runtimePath } from '../../dist/contracts/runtime.js'
import { Workspace, accept, answeringState, applyMigrations, connect, initProject, propose, readMigrations } from '../../dist/index.js'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const sheets = resolve(root, '../shared/data/docs/owasp-cheatsheets')
const RUNS = Number(process.env.BENCH_RUNS ?? 5)
const MIGRATIONS = 200
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const du = (dir) => Number(execFileSync('du', ['-sk', dir], { encoding: 'utf8' }).split('\t')[0]) * 1024

const scratch = mkdtempSync(join(tmpdir(), 'tychora-bench-knowledge-'))
const repo = join(scratch, 'repo')
const paths = await initProject(repo)

// 200 items: the first ~1.5 KB of each cheat sheet, cycling with edits once the sheets run out.
const files = readdirSync(sheets)
  .filter((f) => f.endsWith('.md'))
  .sort()
const none = async () => undefined
const created = []
for (let i = 0; i < MIGRATIONS; i++) {
  const file = files[i % files.length]
  const text = readFileSync(join(sheets, file), 'utf8')
  const item = file
    .replace(/\.md$/, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 60)
  const body = text.slice(i >= files.length ? 1500 : 0, i >= files.length ? 3000 : 1500) || text.slice(0, 1500)
  const change = created.includes(item) ? { op: 'edit', item, body } : { op: 'create', item, title: file.replace(/\.md$/, ''), kind: 'guidance', body }
  const p = await propose(paths, { change, rationale: `bench ${i}` }, none)
  await accept(paths, { proposal: p.id, reviewer: 'bench' }, none, new Date(Date.UTC(2026, 0, 1) + i * 60_000))
  if (!created.includes(item)) created.push(item)
}
const migrations = readMigrations(paths)
console.error(`# ${migrations.length} migrations (${created.length} items)`)

function hideLast(n) {
  const moved = migrations.slice(-n).map((m) => m.file)
  for (const f of moved) {
    renameSync(f, `${f}.away`)
    renameSync(f.replace(/\.json$/, '.sha256'), `${f}.sha.away`)
  }
  return () => {
    for (const f of moved) {
      renameSync(`${f}.away`, f)
      renameSync(`${f}.sha.away`, f.replace(/\.json$/, '.sha256'))
    }
  }
}

// Full builds from nothing.
const full = []
for (let i = 0; i < Math.min(RUNS, 3); i++) {
  rmSync(paths.states, { recursive: true, force: true })
  const r = await applyMigrations(paths)
  full.push(r.duration_ms)
  console.error(`full build ${r.duration_ms.toFixed(0)} ms (${r.applied.length} applied)`)
}
const fullState = answeringState(paths)
const stateBytes = du(fullState.dir)
const bodiesBytes = du(join(paths.states, 'bodies'))

// Delta applies on top of a built ancestor: hide the last n, build, restore them, apply.
const delta = {}
for (const n of [1, 10]) {
  const times = []
  for (let i = 0; i < RUNS; i++) {
    rmSync(paths.states, { recursive: true, force: true })
    const restore = hideLast(n)
    await applyMigrations(paths)
    restore()
    const r = await applyMigrations(paths)
    if (r.base !== 'descendant' || r.applied.length !== n) throw new Error(`expected a descendant applying ${n}, got ${r.base} applying ${r.applied.length}`)
    times.push(r.duration_ms)
  }
  delta[n] = median(times)
  console.error(`delta of ${n}: ${delta[n].toFixed(0)} ms`)
}
// Now two states are built: 190 and 200 migrations. `du A B` counts a file hard-linked into both
// once, under A: B's line is what the additional state costs.
const built = readdirSync(paths.states)
  .filter((n) => /^[0-9a-f]{64}$/.test(n))
  .map((n) => join(paths.states, n))
const current = answeringState(paths).dir
const ancestor = built.find((d) => d !== current)
const additional = Number(execFileSync('du', ['-sk', ancestor, current], { encoding: 'utf8' }).trim().split('\n')[1].split('\t')[0]) * 1024

// The switch, in process: hash the inputs, find the built state, open it, answer a first query.
const query = 'password storage hashing'
async function switchOnce() {
  const started = performance.now()
  const state = answeringState(paths)
  const ws = await Workspace.open(state.dir)
  const result = await ws.search({ query, limit: 5 })
  const ms = performance.now() - started
  ws.close()
  if (result.segments.length === 0) throw new Error('no answer after the switch')
  return ms
}
const applySwitch = []
const inProcess = []
const hashOnly = []
for (let i = 0; i < RUNS * 2; i++) {
  const restore = i % 2 === 0 ? hideLast(10) : () => {}
  let started = performance.now()
  const r = await applyMigrations(paths)
  applySwitch.push(performance.now() - started)
  if (r.base !== 'reused') throw new Error(`expected reuse, got ${r.base}`)
  started = performance.now()
  answeringState(paths)
  hashOnly.push(performance.now() - started)
  inProcess.push(await switchOnce())
  restore()
}

// Through the daemon: the CLI's `search` from the repository resolves the state and asks the
// daemon serving both built states (a second process: the daemon answers; the CLI only routes).
const cli = join(root, 'dist/bin/tychora.cjs')
const stateDirs = readdirSync(paths.states)
  .filter((n) => /^[0-9a-f]{64}$/.test(n))
  .map((n) => join(paths.states, n))
/** Starts `tychora serve` and resolves to its process and URL once it listens. */
async function serve(args, cwd) {
  const child = spawn(process.execPath, [cli, 'serve', '--port', '0', ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
  let banner = ''
  const url = await new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`daemon did not start: ${banner}`)), 30_000)
    const read = (d) => {
      banner += d
      const m = /listening on (http:\/\/[0-9.:]+)/.exec(banner)
      if (m) {
        clearTimeout(timer)
        ok(m[1])
      }
    }
    child.stdout.on('data', read)
    child.stderr.on('data', read)
  })
  return { child, url }
}
const { child: daemon, url } = await serve(stateDirs.flatMap((d) => ['--workspace', d]))
const throughDaemon = []
try {
  const clients = new Map()
  for (const dir of stateDirs) clients.set(dir, connect(url, { token: readFileSync(runtimePath(dir, 'ownerToken'), 'utf8').trim(), project: `knowledge-${dir.split('/').pop().slice(0, 12)}` }))
  for (let i = 0; i < RUNS * 2; i++) {
    const restore = i % 2 === 0 ? hideLast(10) : () => {}
    const started = performance.now()
    const state = answeringState(paths)
    const result = await clients.get(state.dir).search({ query, limit: 5 })
    throughDaemon.push(performance.now() - started)
    if (result.segments.length === 0) throw new Error('no answer through the daemon')
    restore()
  }
} finally {
  daemon.kill('SIGTERM')
}
await new Promise((r) => daemon.once('exit', r))

// Through `knowledge`, the name that follows the checked-out migrations: a daemon started in the
// repository, asked after each switch (the migrations folder changed, so the state is resolved
// again), and asked again on the same state (resolution skipped: the folders did not change).
const throughAlias = []
const aliasSteady = []
const follower = await serve([], repo)
try {
  const alias = connect(follower.url, { token: readFileSync(runtimePath(paths.root, 'agentToken'), 'utf8').trim(), project: 'knowledge' })
  await alias.search({ query, limit: 5 })
  for (let i = 0; i < RUNS * 2; i++) {
    const restore = i % 2 === 0 ? hideLast(10) : () => {}
    const started = performance.now()
    const result = await alias.search({ query, limit: 5 })
    throughAlias.push(performance.now() - started)
    if (result.segments.length === 0) throw new Error('no answer through knowledge')
    for (let k = 0; k < 5; k++) {
      const again = performance.now()
      await alias.search({ query, limit: 5 })
      aliasSteady.push(performance.now() - again)
    }
    restore()
  }
} finally {
  follower.child.kill('SIGTERM')
}

const results = {
  date: new Date().toISOString(),
  machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version },
  runs: RUNS,
  corpus: `${migrations.length} knowledge migrations (${created.length} items from shared/data/docs/owasp-cheatsheets, ~1.5 KB bodies)`,
  full_build_ms: median(full),
  delta_apply_ms: delta,
  switch_ms: {
    apply_reused: median(applySwitch),
    resolve_state: median(hashOnly),
    open_and_first_query_in_process: median(inProcess),
    first_query_through_daemon: median(throughDaemon),
    first_query_through_knowledge_alias: median(throughAlias),
    steady_query_through_knowledge_alias: median(aliasSteady),
  },
  disk: { state_bytes: stateBytes, additional_state_bytes: additional, shared_bodies_bytes: bodiesBytes },
}
writeFileSync(join(root, 'bench/results/knowledge-states.json'), `${JSON.stringify(results, null, 2)}\n`)
const mb = (b) => `${(b / 1e6).toFixed(1)} MB`
writeFileSync(
  join(root, 'bench/results/knowledge-states.md'),
  [
    `# Knowledge states (${results.date.slice(0, 10)}, ${results.machine.cpus} cores, Node ${results.machine.node}, medians of ${RUNS})`,
    '',
    `Corpus: ${results.corpus}.`,
    '',
    '| measure | value |',
    '|---|---:|',
    `| full build from nothing (${migrations.length} migrations) | ${(results.full_build_ms / 1000).toFixed(1)} s |`,
    `| delta apply: 1 migration on a built ancestor | ${(delta[1] / 1000).toFixed(2)} s |`,
    `| delta apply: 10 migrations on a built ancestor | ${(delta[10] / 1000).toFixed(2)} s |`,
    `| switch back to a built state: \`migrate apply\` (reuse) | ${results.switch_ms.apply_reused.toFixed(1)} ms |`,
    `| resolve the answering state (hash ${migrations.length} migration files) | ${results.switch_ms.resolve_state.toFixed(1)} ms |`,
    `| switch + first query through the daemon | ${results.switch_ms.first_query_through_daemon.toFixed(1)} ms |`,
    `| switch + open + first query in process | ${results.switch_ms.open_and_first_query_in_process.toFixed(1)} ms |`,
    `| switch + first query through \`knowledge\` (the daemon resolves the state) | ${results.switch_ms.first_query_through_knowledge_alias.toFixed(1)} ms |`,
    `| a query through \`knowledge\` with no switch | ${results.switch_ms.steady_query_through_knowledge_alias.toFixed(1)} ms |`,
    `| disk: one state | ${mb(stateBytes)} |`,
    `| disk: each additional state | ${mb(additional)} |`,
    `| disk: bodies shared by all states | ${mb(bodiesBytes)} |`,
    '',
  ].join('\n'),
)
console.log(readFileSync(join(root, 'bench/results/knowledge-states.md'), 'utf8'))
rmSync(scratch, { recursive: true, force: true })
