// One growth-curve measurement in its own process; prints one JSON line.
import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Workspace } from '../../dist/index.js'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const [task, raw] = process.argv.slice(2)
const args = JSON.parse(raw ?? '{}')
const out = {}
if (task === 'full-add') {
  await Workspace.init(args.ws, args.embeddings ? { embeddings: args.embeddings } : {})
  const ws = await Workspace.open(args.ws)
  const receipt = await ws.add({ paths: [args.data], kind: 'jsonl' })
  Object.assign(out, { job_ms: receipt.duration_ms, chunks: receipt.chunks, bytes: receipt.bytes_read })
  ws.close()
} else if (task === 'add') {
  const ws = await Workspace.open(args.ws)
  const receipt = await ws.add({ paths: args.paths })
  // As the CLI and the daemon do after a job: merge small segments, off the job's time.
  const compaction = await ws.compact()
  Object.assign(out, {
    job_ms: receipt.duration_ms,
    chunks: receipt.chunks,
    embedded: receipt.embedding?.embedded ?? null,
    compact_ms: compaction.duration_ms,
    merged: compaction.to_generation !== null,
    folded: compaction.text_folded_to !== null,
  })
  ws.close()
} else if (task === 'status') {
  const ws = await Workspace.open(args.ws)
  const status = await ws.status()
  const queries = readFileSync(resolve(root, '../shared/data/scifact/queries.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l).text)
    .slice(0, 300)
  const lat = []
  for (const q of queries) {
    const t = performance.now()
    await ws.search({ query: q, limit: 10 })
    lat.push(performance.now() - t)
  }
  lat.sort((a, b) => a - b)
  out.query_p50_ms = lat[Math.floor(lat.length / 2)]
  out.disk_bytes = status.bytes.corpus + status.bytes.artifacts + status.bytes.indexes
  out.storage = {
    originals_bytes: status.bytes.artifacts,
    sqlite_bytes: status.bytes.corpus,
    lexical_bytes: status.bytes.lexical,
    vector_bytes: status.bytes.vectors,
    tables: status.bytes.tables.slice(0, 6),
  }
  ws.close()
}
console.log(JSON.stringify(out))
