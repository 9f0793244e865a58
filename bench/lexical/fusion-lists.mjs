#!/usr/bin/env node
// Each channel's own ranked list, with its own scores, per dev-set query (issue 33, item 3): what a
// fusion rule is chosen on. Loads a BEIR-format set into a scratch workspace with the local model,
// runs every judged query once through the lexical channels (exact + lexical) and once through the
// text channel, 30 results each with --explain scores, and writes
// ~/.cache/tychora/fusion-lists/<set>.json: { metric, qrels, queries: { qid: { terms, lexical, text } } }
// (lists of [doc, score], best first). bench/lexical/fusion-rules.mjs replays fusion rules on them.
//
//   node bench/lexical/fusion-lists.mjs [--only scifact-train,cisi,...]
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { homedir, tmpdir } from 'node:os'
import { basename, extname, join } from 'node:path'
import { Workspace } from '../../dist/index.js'
import { appendEmbeddings, lines, locate, readQrels } from '../../dist/eval/beir.js'
import { FUSION_SETS } from './fusion-sets.mjs'

const cache = join(homedir(), '.cache', 'tychora')
const args = process.argv.slice(2)
const only = (args.includes('--only') ? args[args.indexOf('--only') + 1] : '').split(',').filter(Boolean)
const DEPTH = 30

async function dump(set) {
  const qrels = await readQrels(set.dir, set.split)
  const queries = new Map()
  for await (const line of lines(locate(set.dir, 'queries.jsonl'))) {
    const q = JSON.parse(line)
    if (qrels.has(String(q._id))) queries.set(String(q._id), q.text)
  }
  const scratch = await mkdtemp(join(tmpdir(), 'tychora-fusion-'))
  // A code set is laid out as eval beir --profile code does it: one source file per document, named
  // by its id, captured with the code profile; a document set is one JSON Lines file.
  const data = join(scratch, set.profile === 'code' ? 'data' : 'corpus.jsonl')
  const corpus = []
  if (set.profile === 'code') await mkdir(data)
  for await (const line of lines(locate(set.dir, 'corpus.jsonl'))) {
    const d = JSON.parse(line)
    if (set.profile === 'code') await writeFile(join(data, `${d._id}.py`), d.title ? `# ${d.title}\n${d.text ?? ''}\n` : `${d.text ?? ''}\n`)
    else corpus.push(JSON.stringify({ _id: String(d._id), title: d.title ?? '', text: d.text ?? '' }))
  }
  if (set.profile !== 'code') await writeFile(data, `${corpus.join('\n')}\n`)
  const wsDir = join(scratch, 'ws')
  await Workspace.init(wsDir, { embeddings: 'local', ...(set.profile === 'code' ? { profile: 'code' } : {}) })
  await appendEmbeddings(wsDir, { cache_dir: join(cache, 'fusion-dev-embeddings') })
  const ws = await Workspace.open(wsDir)
  const out = {}
  try {
    const receipt = await ws.add(set.profile === 'code' ? { paths: [data] } : { paths: [data], kind: 'jsonl' })
    if (receipt.status === 'failed') throw new Error(`${set.name}: ${receipt.diagnostics[0]?.message}`)
    const ids = [...queries.keys()]
    for (let i = 0; i < ids.length; i += 50) {
      const batch = ids.slice(i, i + 50)
      const per = {}
      for (const [name, channels] of [
        ['lexical', ['exact', 'lexical']],
        ['text', ['text']],
      ]) {
        const results = await ws.searchBatch(batch.map((qid) => ({ query: queries.get(qid), limit: DEPTH, max_per_source: 0, budget_tokens: 100_000_000, channels, explain: true })))
        per[name] = results.map((r) => {
          const seen = new Set()
          const list = []
          for (const s of r.segments) {
            const doc = set.profile === 'code' ? basename(s.source.path, extname(s.source.path)) : s.locator.anchor
            if (doc === undefined || seen.has(doc)) continue
            seen.add(doc)
            const own = s.channels.find((c) => c.channel === (name === 'text' ? 'text' : 'lexical')) ?? s.channels[0]
            list.push([doc, own?.score ?? 0, own?.channel ?? ''])
          }
          return list
        })
      }
      for (const [j, qid] of batch.entries()) out[qid] = { chars: queries.get(qid).length, query: queries.get(qid), lexical: per.lexical[j], text: per.text[j] }
    }
  } finally {
    ws.close()
    await rm(scratch, { recursive: true, force: true })
  }
  const judged = Object.fromEntries([...qrels].filter(([qid]) => queries.has(qid)).map(([qid, m]) => [qid, Object.fromEntries(m)]))
  return { set: set.name, metric: set.metric, qrels: judged, queries: out }
}

const target = join(cache, 'fusion-lists')
mkdirSync(target, { recursive: true })
for (const set of FUSION_SETS) {
  if (only.length > 0 && !only.includes(set.name)) continue
  if (!existsSync(join(set.dir, 'qrels'))) {
    console.error(`${set.name}: not on this machine, skipped`)
    continue
  }
  const started = performance.now()
  const data = await dump(set)
  writeFileSync(join(target, `${set.name}.json`), JSON.stringify(data))
  console.error(`${set.name}: ${Object.keys(data.queries).length} queries, ${((performance.now() - started) / 1000).toFixed(0)} s`)
}
