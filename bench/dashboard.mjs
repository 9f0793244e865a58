// `npm run bench:dashboard`: the dashboard's page weight (first view: HTML, JS and CSS, gzip and
// brotli) and each of its API calls' time on loopback (p50/p95 of REPEAT calls) over a workspace of
// SciFact's 5,183 abstracts COPIES times over (16: 84k chunks) with RUNS recorded query runs. Writes bench/results/dashboard.{json,md}.
// Needs `npm run build` (dist/) and ../shared/data/scifact.
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { brotliCompressSync, gunzipSync, gzipSync } from 'node:zlib'
import { ensureTokens } from '../dist/engine/tokens.js'
import { Workspace } from '../dist/engine/workspace.js'
import { createHttpApp } from '../dist/http/app.js'
import { Dashboard } from '../dist/http/dashboard/dashboard.js'
import { startHttpServer } from '../dist/http/server.js'
import { ProjectRegistry } from '../dist/service/registry.js'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const RUNS = Number(process.env.BENCH_QUERY_RUNS ?? 10_000)
const REPEAT = Number(process.env.BENCH_REPEAT ?? 50)
const COPIES = Number(process.env.BENCH_COPIES ?? 16)
const BUDGET = 200 * 1024

/** The first view's bytes: index.html and every script and stylesheet it loads (the whole app is one view bundle). */
function pageWeight() {
  const dir = join(root, 'dist/dashboard')
  const html = readFileSync(join(dir, 'index.html'))
  const files = [['index.html', html]]
  for (const m of html.toString().matchAll(/(?:src|href)="\/(assets\/[^"]+\.(?:js|css))"/g)) files.push([m[1], readFileSync(join(dir, m[1]))])
  const sum = (f) => files.reduce((n, [, b]) => n + f(b), 0)
  const all = readdirSync(join(dir, 'assets')).reduce((n, f) => n + statSync(join(dir, 'assets', f)).size, 0)
  return {
    files: files.map(([name, b]) => ({ name, bytes: b.length, gzip: gzipSync(b, { level: 9 }).length, brotli: brotliCompressSync(b).length })),
    raw: sum((b) => b.length),
    gzip: sum((b) => gzipSync(b, { level: 9 }).length),
    brotli: sum((b) => brotliCompressSync(b).length),
    all_assets_raw: all,
    budget_compressed: BUDGET,
  }
}

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]

async function apiTimes() {
  const scratch = mkdtempSync(join(tmpdir(), 'tychora-bench-dashboard-'))
  try {
    // SciFact's abstracts, COPIES times over (each copy its own file, ids suffixed): the issue's
    // scale (84k chunks) from real text; the copies rank alike, which a listing does not mind.
    const scifact = resolve(root, '../shared/data/scifact')
    const lines = gunzipSync(readFileSync(join(scifact, 'corpus.jsonl.gz')))
      .toString('utf8')
      .trim()
      .split('\n')
    const corpus = join(scratch, 'corpus')
    mkdirSync(corpus)
    for (let copy = 1; copy <= COPIES; copy++) {
      const suffixed = lines.map((l) => {
        const doc = JSON.parse(l)
        return JSON.stringify({ ...doc, _id: `${doc._id}-${copy}` })
      })
      // 50 abstracts a file, so the source list has pages to turn (~1,660 files at 16 copies).
      for (let at = 0; at < suffixed.length; at += 50) {
        writeFileSync(join(corpus, `scifact-${copy}-${at / 50}.jsonl`), `${suffixed.slice(at, at + 50).join('\n')}\n`)
      }
    }
    const queries = readFileSync(join(scifact, 'queries.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).text)
    const wsDir = join(scratch, 'ws')
    await Workspace.init(wsDir)
    const ws = await Workspace.open(wsDir)
    const receipt = await ws.add({ paths: [corpus] })
    // Recorded runs: the queries again and again, in batches (each search records its run).
    for (let done = 0; done < RUNS; done += 500) {
      await ws.searchBatch(Array.from({ length: Math.min(500, RUNS - done) }, (_, i) => ({ query: queries[(done + i) % queries.length], limit: 10 })))
    }
    // A fresh status (what the dashboard's status route reuses for 5 s or until a job ends): its
    // size breakdown walks every page of the corpus.
    const fresh = []
    for (let i = 0; i < 10; i++) {
      const t = performance.now()
      await ws.status()
      fresh.push(performance.now() - t)
    }
    const registry = new ProjectRegistry()
    registry.register(ws, { tokens: await ensureTokens(wsDir) })
    const dashboard = new Dashboard(registry)
    const server = await startHttpServer(createHttpApp(registry, { port: 0, dashboard }), { port: 0 })
    const login = await fetch(dashboard.loginUrl(server.url), { redirect: 'manual' })
    // A browser's session: the cookie, and the key the page sends on every call (from the redirect's fragment).
    const cookie = login.headers.get('set-cookie').split(';')[0]
    const key = /#key=(.+)$/.exec(login.headers.get('location'))[1]
    const auth = { cookie, 'x-tychora-key': key }
    const p = `${server.url}/ui/api/projects/${encodeURIComponent(ws.name)}`
    const runs = await (await fetch(`${p}/runs?limit=50`, { headers: auth })).json()
    const deep = await (await fetch(`${p}/runs?limit=500&before=${runs.runs[0].id}`, { headers: auth })).json()
    const calls = {
      'GET /ui/api/session': () => fetch(`${server.url}/ui/api/session`, { headers: auth }),
      'GET status': () => fetch(`${p}/status`, { headers: auth }),
      'GET sources (100)': () => fetch(`${p}/sources?limit=100`, { headers: auth }),
      'GET sources (100, offset 1500)': () => fetch(`${p}/sources?limit=100&offset=1500`, { headers: auth }),
      'GET jobs (50)': () => fetch(`${p}/jobs?limit=50`, { headers: auth }),
      'GET runs (50, newest)': () => fetch(`${p}/runs?limit=50`, { headers: auth }),
      'GET runs (50, 500 back)': () => fetch(`${p}/runs?limit=50&before=${deep.runs.at(-1).id}`, { headers: auth }),
      'GET run': () => fetch(`${p}/runs/${runs.runs[3].id}`, { headers: auth }),
      'GET evidence source': () => fetch(`${p}/evidence/source:1`, { headers: auth }),
      'POST search (explain)': () => fetch(`${p}/search`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ query: queries[7], explain: true }) }),
    }
    const results = []
    for (const [name, call] of Object.entries(calls)) {
      const times = []
      for (let i = 0; i < REPEAT; i++) {
        const t = performance.now()
        const response = await call()
        await response.arrayBuffer()
        if (!response.ok) throw new Error(`${name}: ${response.status}`)
        times.push(performance.now() - t)
      }
      results.push({ call: name, p50_ms: pct(times, 50), p95_ms: pct(times, 95) })
    }
    dashboard.close()
    await server.close()
    const status = await ws.status()
    ws.close()
    results.push({ call: 'status, fresh (engine, 10 calls; the route reuses one for 5 s or until a job ends)', p50_ms: pct(fresh, 50), p95_ms: pct(fresh, 95) })
    return {
      corpus: `SciFact corpus ×${COPIES} (${receipt.files.added} files, ${status.counts.chunks} chunks, ingested in ${(receipt.duration_ms / 1000).toFixed(0)} s), ${status.counts.query_runs} recorded runs`,
      repeat: REPEAT,
      results,
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}

const weight = pageWeight()
const api = await apiTimes()
const out = { date: new Date().toISOString(), weight, api }
mkdirSync(join(root, 'bench/results'), { recursive: true })
writeFileSync(join(root, 'bench/results/dashboard.json'), `${JSON.stringify(out, null, 2)}\n`)
const kb = (n) => `${(n / 1024).toFixed(1)} kB`
const md = [
  '# Dashboard bench',
  '',
  `First view (index.html + its JS and CSS): ${kb(weight.raw)} raw, **${kb(weight.gzip)} gzip**, ${kb(weight.brotli)} brotli (budget ${kb(BUDGET)} compressed).`,
  '',
  `API on loopback, ${api.corpus}; p50/p95 of ${api.repeat} calls each (client-measured, so HTTP included):`,
  '',
  '| call | p50 ms | p95 ms |',
  '|---|---:|---:|',
  ...api.results.map((r) => `| ${r.call} | ${r.p50_ms.toFixed(2)} | ${r.p95_ms.toFixed(2)} |`),
  '',
]
writeFileSync(join(root, 'bench/results/dashboard.md'), md.join('\n'))
process.stdout.write(md.join('\n'))
