// One measurement in its own process, so peak RSS belongs to one engine only.
// Usage: node bench/worker.mjs <task> <json-args>; prints one JSON line.
import { readFileSync } from 'node:fs'
import { performance } from 'node:perf_hooks'

const [task, raw] = process.argv.slice(2)
const args = JSON.parse(raw ?? '{}')
const queries = args.queries ? JSON.parse(readFileSync(args.queries, 'utf8')) : []
const docs = args.docs ? JSON.parse(readFileSync(args.docs, 'utf8')) : []

function median(xs) {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)] ?? 0
}
function pct(xs, p) {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? 0
}
/** Query latency over `rounds` passes; returns p50/p99 and the last pass's rankings. */
async function timeQueries(run, rounds = 3) {
  const lat = []
  let rankings = []
  for (let r = 0; r < rounds; r++) {
    rankings = []
    for (const q of queries) {
      const t = performance.now()
      rankings.push(await run(q.text))
      lat.push(performance.now() - t)
    }
  }
  return { p50_ms: median(lat), p99_ms: pct(lat, 99), rankings }
}
const terms = (text) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []

const out = {}
if (task === 'tychora-ingest') {
  const { Workspace } = await import('../dist/index.js')
  await Workspace.init(args.ws)
  const ws = await Workspace.open(args.ws)
  const t = performance.now()
  const receipt = await ws.add({ paths: args.paths, ...(args.kind ? { kind: args.kind } : {}) })
  out.seconds = (performance.now() - t) / 1000
  out.bytes = receipt.bytes_read
  out.files = receipt.files.added
  out.units = receipt.units
  out.chunks = receipt.chunks
  ws.close()
} else if (task === 'tychora-query') {
  const { Workspace } = await import('../dist/index.js')
  const ws = await Workspace.open(args.ws)
  const r = await timeQueries(async (q) => {
    const res = await ws.search({ query: q, limit: args.limit, max_per_source: 0, budget_tokens: 100_000_000 })
    return res.segments.map((s) => s.locator.anchor ?? String(s.chunk_id))
  })
  Object.assign(out, r)
  ws.close()
} else if (task === 'fts5') {
  const { default: Database } = await import('better-sqlite3')
  const db = new Database(':memory:')
  const t = performance.now()
  db.exec("CREATE VIRTUAL TABLE t USING fts5(id UNINDEXED, body, tokenize = 'porter unicode61')")
  const insert = db.prepare('INSERT INTO t (id, body) VALUES (?, ?)')
  db.transaction(() => {
    for (const d of docs) insert.run(d.id, d.text)
  })()
  out.build_seconds = (performance.now() - t) / 1000
  // Fetch the text too: a caller needs the evidence, not only ids (tychora returns text and citations).
  const search = db.prepare('SELECT id, body FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?')
  Object.assign(
    out,
    await timeQueries(async (q) => {
      const ts = [...new Set(terms(q))]
      if (ts.length === 0) return []
      return search.all(ts.map((x) => `"${x}"`).join(' OR '), args.limit).map((r) => r.id)
    }),
  )
} else if (task === 'minisearch') {
  const { default: MiniSearch } = await import('minisearch')
  const t = performance.now()
  const ms = new MiniSearch({ fields: ['text'], storeFields: ['id', 'text'], idField: 'id' })
  ms.addAll(docs)
  out.build_seconds = (performance.now() - t) / 1000
  Object.assign(
    out,
    await timeQueries(async (q) =>
      ms
        .search(q)
        .slice(0, args.limit)
        .map((r) => r.id),
    ),
  )
} else if (task === 'compare-query') {
  // tychora and FTS5 in one process, queries interleaved (rotating which goes first), so machine
  // noise hits both alike. MiniSearch stays in its own process: its large JS heap would put GC
  // pauses into the others' measurements.
  const { Workspace } = await import('../dist/index.js')
  const { default: Database } = await import('better-sqlite3')
  const ws = await Workspace.open(args.ws)
  const db = new Database(':memory:')
  db.exec("CREATE VIRTUAL TABLE t USING fts5(id UNINDEXED, body, tokenize = 'porter unicode61')")
  const insert = db.prepare('INSERT INTO t (id, body) VALUES (?, ?)')
  db.transaction(() => {
    for (const d of docs) insert.run(d.id, d.text)
  })()
  const fts = db.prepare('SELECT id, body FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?')
  const engines = {
    tychora: async (q) => (await ws.search({ query: q, limit: args.limit, max_per_source: 0, budget_tokens: 100_000_000 })).segments.map((s) => s.locator.anchor ?? String(s.chunk_id)),
    fts5: async (q) => {
      const ts = [...new Set(terms(q))]
      return ts.length === 0 ? [] : fts.all(ts.map((x) => `"${x}"`).join(' OR '), args.limit).map((r) => r.id)
    },
  }
  const names = Object.keys(engines)
  const lat = Object.fromEntries(names.map((n) => [n, []]))
  const rankings = Object.fromEntries(names.map((n) => [n, []]))
  // One warm-up pass, then the measured rounds.
  for (const q of queries) for (const n of names) await engines[n](q.text)
  for (let round = 0; round < (args.rounds ?? 5); round++) {
    for (const [i, q] of queries.entries()) {
      for (let k = 0; k < names.length; k++) {
        const n = names[(i + round + k) % names.length]
        const t = performance.now()
        const r = await engines[n](q.text)
        lat[n].push(performance.now() - t)
        if (round === 0) rankings[n][i] = r
      }
    }
  }
  for (const n of names) out[n] = { p50_ms: median(lat[n]), p99_ms: pct(lat[n], 99), rankings: rankings[n] }
  ws.close()
} else {
  throw new Error(`unknown task ${task}`)
}
out.peak_rss_mb = process.resourceUsage().maxRSS / 1024
process.stdout.write(`${JSON.stringify(out)}\n`)
