// `npm run bench:dashboard`: the dashboard's page weight (first view: HTML, JS and CSS, gzip and
// brotli) and each of its API calls' time on loopback (p50/p95 of REPEAT calls) over a workspace of
// SciFact's 5,183 abstracts COPIES times over (16: 84k chunks) with RUNS recorded query runs and
// EVALS evaluation records, and each view opened in Chromium when it is installed. Writes
// bench/results/dashboard.{json,md}.
// Needs `npm run build` (dist/) and ../shared/data/scifact.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { brotliCompressSync, gunzipSync, gzipSync } from 'node:zlib'
import { ensureTokens } from '../dist/engine/tokens.js'
import { evalBeir } from '../dist/eval/beir.js'
import { recordEval } from '../dist/eval/records.js'
import { Workspace } from '../dist/engine/workspace.js'
import { createHttpApp } from '../dist/http/app.js'
import { Dashboard } from '../dist/http/dashboard/dashboard.js'
import { startHttpServer } from '../dist/http/server.js'
import { ProjectRegistry } from '../dist/service/registry.js'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const RUNS = Number(process.env.BENCH_QUERY_RUNS ?? 10_000)
const REPEAT = Number(process.env.BENCH_REPEAT ?? 50)
const COPIES = Number(process.env.BENCH_COPIES ?? 16)
const EVALS = Number(process.env.BENCH_EVALS ?? 30)
const VIEW_REPEAT = Number(process.env.BENCH_VIEW_REPEAT ?? 7)
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
    // EVALS recorded evaluations: one real SciFact test run (300 queries, per query), kept as if run
    // on EVALS days, so the evaluation view lists and plots records of their real size.
    const report = await evalBeir(scifact, { split: 'test', perQuery: true })
    const checkout = { root, version: JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version }
    for (let day = 0; day < EVALS; day++) await recordEval(wsDir, { kind: 'beir', report, settings: { split: 'test' }, checkout, now: Date.UTC(2026, 0, 1) + day * 86_400_000 })
    // A status with the per-table breakdown, which reads every page of the corpus: what the
    // sizes route measures off the request path (after each job, at most once a minute).
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
      'GET sizes': () => fetch(`${p}/sizes`, { headers: auth }),
      'GET snapshots': () => fetch(`${p}/snapshots`, { headers: auth }),
      'GET evals': () => fetch(`${p}/evals`, { headers: auth }),
      'GET sources (100)': () => fetch(`${p}/sources?limit=100`, { headers: auth }),
      'GET sources (100, offset 1500)': () => fetch(`${p}/sources?limit=100&offset=1500`, { headers: auth }),
      'GET jobs (50)': () => fetch(`${p}/jobs?limit=50`, { headers: auth }),
      'GET runs (50, newest)': () => fetch(`${p}/runs?limit=50`, { headers: auth }),
      'GET runs (50, 500 back)': () => fetch(`${p}/runs?limit=50&before=${deep.runs.at(-1).id}`, { headers: auth }),
      'GET run': () => fetch(`${p}/runs/${runs.runs[3].id}`, { headers: auth }),
      'GET evidence source': () => fetch(`${p}/evidence/source:1`, { headers: auth }),
      'POST search (explain)': () => fetch(`${p}/search`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ query: queries[7], explain: true }) }),
    }
    const views = await viewTimes(dashboard.loginUrl(server.url), ws.name, queries[7])
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
    // Doctor runs when the person asks (a button): it re-hashes every original.
    const doctor = []
    for (let i = 0; i < 3; i++) {
      const t = performance.now()
      await ws.doctor()
      doctor.push(performance.now() - t)
    }
    const status = await ws.status()
    ws.close()
    results.push({ call: 'status with the table breakdown (engine, 10 calls; measured off the request path for GET sizes)', p50_ms: pct(fresh, 50), p95_ms: pct(fresh, 95) })
    results.push({ call: 'doctor (engine, 3 calls; on request only)', p50_ms: pct(doctor, 50), p95_ms: pct(doctor, 95) })
    return {
      corpus: `SciFact corpus ×${COPIES} (${receipt.files.added} files, ${status.counts.chunks} chunks, ingested in ${(receipt.duration_ms / 1000).toFixed(0)} s), ${status.counts.query_runs} recorded runs, ${EVALS} evaluation records (SciFact test, ${report.queries} queries each)`,
      repeat: REPEAT,
      results,
      views,
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}

/**
 * Each view opened in Debian's Chromium (driven by playwright-core, as the browser tests do), from
 * the click that opens it to its data on screen: median and max of VIEW_REPEAT openings. Null when
 * there is no Chromium here.
 */
async function viewTimes(loginUrl, project, query) {
  const chromiumPath = process.env.TYCHORA_CHROMIUM ?? '/usr/bin/chromium'
  if (!existsSync(chromiumPath)) return null
  const { chromium } = createRequire(import.meta.url)('playwright-core')
  const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] })
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    let t = performance.now()
    await page.goto(loginUrl)
    await page.getByLabel('Query').waitFor()
    const firstLoad = performance.now() - t
    const p = encodeURIComponent(project)
    // What each view shows once its data is in: the list's first row, the status and sizes.
    const opened = {
      'Ingestion (jobs)': [`#/jobs/${p}`, '.job'],
      'Corpus (sources, 100 a page)': [`#/corpus/${p}`, 'table.sources tbody tr'],
      'Retrieval history (runs, 50 a page)': [`#/history/${p}`, 'table.runs tbody tr'],
      'Evaluation (records, chart drawn)': [`#/evaluation/${p}`, 'figure.chart canvas'],
      'Operations (status, sizes, snapshots)': [`#/operations/${p}`, 'section[aria-label="corpus.sqlite3 by table"] tbody tr'],
    }
    const rows = [{ view: 'first load (login link to the search view)', median_ms: firstLoad, max_ms: firstLoad }]
    for (const [view, [hash, selector]] of Object.entries(opened)) {
      const times = []
      for (let i = 0; i < VIEW_REPEAT; i++) {
        await page.evaluate(() => {
          location.hash = '#/search'
        })
        await page.getByLabel('Query').waitFor()
        t = performance.now()
        await page.evaluate((h) => {
          location.hash = h
        }, hash)
        await page.locator(selector).first().waitFor()
        times.push(performance.now() - t)
      }
      rows.push({ view, median_ms: pct(times, 50), max_ms: Math.max(...times) })
    }
    const times = []
    for (let i = 0; i < VIEW_REPEAT; i++) {
      await page.evaluate((h) => {
        location.hash = h
      }, `#/search/${p}`)
      await page.getByLabel('Query').fill(`${query} ${i}`)
      t = performance.now()
      await page.getByRole('button', { name: 'Search' }).click()
      await page.getByRole('heading', { name: 'Explain' }).waitFor()
      times.push(performance.now() - t)
      await page.evaluate(() => {
        location.hash = '#/jobs'
      })
    }
    rows.push({ view: 'Search (query with explain, results drawn)', median_ms: pct(times, 50), max_ms: Math.max(...times) })
    return rows
  } finally {
    await browser.close()
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
  ...(api.views
    ? [
        `Views in Chromium (median and max of ${VIEW_REPEAT} openings; from the navigation to its data on screen, same workspace):`,
        '',
        '| view | median ms | max ms |',
        '|---|---:|---:|',
        ...api.views.map((v) => `| ${v.view} | ${v.median_ms.toFixed(0)} | ${v.max_ms.toFixed(0)} |`),
        '',
      ]
    : ['Views in a browser: not measured (no Chromium here).', '']),
]
writeFileSync(join(root, 'bench/results/dashboard.md'), md.join('\n'))
process.stdout.write(md.join('\n'))
