// `npm run bench:opensearch`: the lexical and vector generations on an OpenSearch cluster
// (`[search]`) beside the embedded tantivy/usearch default, same corpus, same queries, same
// process, interleaved:
//   1. SciFact ×1 and ×COPIES (16 by default: 84k chunks): the full add (MB/s), the 300 test
//      queries' latency (p50/p99, lexical; then hybrid and the text channel alone with the local
//      model, the copies' identical texts embedded once), a one-file add;
//   2. a node SIGKILLed during 60 s of 32 searching and 4 adding clients (a failed query is
//      retried once, a failed add once): failures before and after the retry, adds lost, and the
//      time until the cluster is green again once the node is back.
// A 3-node cluster (scripts/opensearch.mjs: JVMs of -Xmx384m), every index with 1 replica, all on
// this machine's cores beside the engine. Writes bench/results/opensearch.{json,md}. Needs
// `npm run build`, ../shared/data/scifact and the test node (`node scripts/opensearch.mjs build`).
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { Workspace } from '../../dist/engine/workspace.js'
import { startOpenSearch } from '../../scripts/opensearch.mjs'
import { root, scifactFiles, shared } from './common.mjs'

const COPIES = Number(process.env.BENCH_COPIES ?? 16)
const FAULT_SECONDS = Number(process.env.BENCH_FAULT_SECONDS ?? 60)
const scratch = mkdtempSync(join(tmpdir(), 'tychora-bench-opensearch-'))
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]
}

function testQueries() {
  const judged = new Set(
    readFileSync(join(shared, 'scifact/qrels/test.tsv'), 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split('\t')[0]),
  )
  return readFileSync(join(shared, 'scifact/queries.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
    .filter((q) => judged.has(String(q._id)))
    .map((q) => q.text)
}

async function workspace(name, { url, embeddings } = {}) {
  const dir = join(scratch, name)
  await Workspace.init(dir, embeddings ? { embeddings: 'local' } : {})
  if (url) appendFileSync(join(dir, 'workspace.toml'), `\n[search]\nurl = ${JSON.stringify(url)}\nprefix = ${JSON.stringify(`bench-${name}`)}\nreplicas = 1\n`)
  return Workspace.open(dir)
}

/** Ms per query for each workspace, the queries asked of each in turn. */
async function latencies(spaces, queries, channels) {
  const ms = spaces.map(() => [])
  for (const q of queries) {
    for (const [i, ws] of spaces.entries()) {
      const t = performance.now()
      await ws.search({ query: q, limit: 10, ...(channels ? { channels } : {}) })
      ms[i].push(performance.now() - t)
    }
  }
  return ms.map((xs) => ({ p50: pct(xs, 50), p99: pct(xs, 99) }))
}

/** A one-file add (50 new abstracts) on each workspace, three times; the median job time. */
async function oneFileAdds(spaces, tag) {
  const ms = spaces.map(() => [])
  for (let k = 0; k < 3; k++) {
    const dir = join(scratch, `one-${tag}-${k}`)
    const lines = Array.from({ length: 50 }, (_, i) =>
      JSON.stringify({ _id: `one-${tag}-${k}-${i}`, title: `Added later ${k}`, text: `Abstract ${i} of a file added alone, about cholesterol and statins (${tag} ${k}).` }),
    )
    mkdirSync(dir)
    writeFileSync(join(dir, `one-${k}.jsonl`), `${lines.join('\n')}\n`)
    for (const [i, ws] of spaces.entries()) {
      const t = performance.now()
      await ws.add({ paths: [dir], kind: 'jsonl' })
      ms[i].push(performance.now() - t)
    }
  }
  return ms.map((xs) => pct(xs, 50))
}

async function size(cluster, copies, queries) {
  const docs = join(scratch, `docs-${copies}`)
  const bytes = scifactFiles(docs, copies)
  const spaces = [await workspace(`emb-${copies}`), await workspace(`os-${copies}`, { url: cluster.url })]
  const ingest = []
  for (const ws of spaces) {
    const t = performance.now()
    const receipt = await ws.add({ paths: [docs], kind: 'jsonl' })
    if (receipt.status === 'failed') throw new Error(`add failed: ${receipt.diagnostics[0]?.message}`)
    const s = (performance.now() - t) / 1000
    ingest.push({ s, mb_per_s: bytes / 1e6 / s })
  }
  await latencies(spaces, queries.slice(0, 30)) // warm both (the JVM's JIT, the page cache)
  const lexical = await latencies(spaces, queries)
  const one = await oneFileAdds(spaces, `x${copies}`)
  const chunks = (await spaces[0].listSnapshots()).snapshots.find((s) => s.current)?.chunks ?? 0
  for (const ws of spaces) ws.close()
  // What the cluster holds for it: primary bytes of every part (the tokens' postings, norms, doc
  // values and _source), and the nodes' heap.
  const http = cluster.urls[0]
  const parts = await (await fetch(`${http}/_cat/indices/bench-os-${copies}-lex-*?format=json&bytes=b`)).json()
  const primary_bytes = parts.reduce((n, p) => n + Number(p['pri.store.size']), 0)
  const nodes = await (await fetch(`${http}/_nodes/stats/jvm`)).json()
  const heap_used_mb = Object.values(nodes.nodes).map((n) => n.jvm.mem.heap_used_in_bytes / 1e6)
  return { copies, mb: bytes / 1e6, chunks, ingest, lexical, one_file_ms: one, cluster_primary_bytes: primary_bytes, bytes_per_chunk: primary_bytes / chunks, heap_used_mb }
}

/** Hybrid (exact + lexical + text) on SciFact ×`copies`: both channels' generations on the cluster. */
async function hybrid(cluster, queries, copies) {
  const docs = join(scratch, `docs-${copies}`)
  const spaces = [await workspace(`emb-hybrid-${copies}`, { embeddings: true }), await workspace(`os-hybrid-${copies}`, { url: cluster.url, embeddings: true })]
  const add_s = []
  for (const ws of spaces) {
    const t = performance.now()
    const receipt = await ws.add({ paths: [docs], kind: 'jsonl' })
    if (receipt.status === 'failed') throw new Error(`add failed: ${receipt.diagnostics[0]?.message}`)
    add_s.push((performance.now() - t) / 1000)
  }
  const channels = ['exact', 'lexical', 'text']
  await latencies(spaces, queries.slice(0, 30), channels)
  const ms = await latencies(spaces, queries, channels)
  // The text channel alone: where the vectors are read.
  const text = await latencies(spaces, queries, ['text'])
  const one = await oneFileAdds(spaces, `hybrid-${copies}`)
  const chunks = (await spaces[0].listSnapshots()).snapshots.find((s) => s.current)?.chunks ?? 0
  for (const ws of spaces) ws.close()
  const parts = await (await fetch(`${cluster.urls[0]}/_cat/indices/bench-os-hybrid-${copies}-vec-*?format=json&bytes=b`)).json()
  const vector_bytes = parts.reduce((n, p) => n + Number(p['pri.store.size']), 0)
  return { copies, chunks, add_s, hybrid: ms, text, one_file_ms: one, vector_bytes_per_chunk: vector_bytes / chunks }
}

/** 32 searching and 4 adding clients for FAULT_SECONDS; node 0 (the first the URL names) killed a third of the way in. */
async function fault(cluster, queries) {
  // Hybrid, so that both channels' generations on the cluster are written and read throughout.
  const ws = await workspace('os-fault', { url: cluster.url, embeddings: true })
  await ws.add({ paths: [join(scratch, 'docs-1')], kind: 'jsonl' })
  const stats = { queries: 0, failed_first: 0, failed_after_retry: 0, adds: 0, adds_failed_first: 0, adds_lost: 0, errors: {} }
  const note = (e) => {
    const code = e?.code ?? String(e).slice(0, 60)
    stats.errors[code] = (stats.errors[code] ?? 0) + 1
  }
  const end = Date.now() + FAULT_SECONDS * 1000
  const searcher = async (i) => {
    for (let n = i; Date.now() < end; n += 32) {
      const query = queries[n % queries.length]
      stats.queries++
      try {
        await ws.search({ query, limit: 10 })
      } catch (e) {
        stats.failed_first++
        note(e)
        await new Promise((r) => setTimeout(r, 1000))
        try {
          await ws.search({ query, limit: 10 })
        } catch (e2) {
          stats.failed_after_retry++
          note(e2)
        }
      }
    }
  }
  const adder = async (i) => {
    for (let n = 0; Date.now() < end; n++) {
      const dir = join(scratch, `fault-${i}-${n}`)
      mkdirSync(dir)
      writeFileSync(join(dir, 'f.jsonl'), `${JSON.stringify({ _id: `fault-${i}-${n}`, title: 'fault', text: `written by adder ${i} round ${n}` })}\n`)
      stats.adds++
      let ok = false
      for (let attempt = 0; attempt < 2 && !ok; attempt++) {
        try {
          const r = await ws.add({ paths: [dir], kind: 'jsonl' })
          ok = r.status !== 'failed'
          if (!ok) note({ code: r.diagnostics[0]?.code ?? 'failed' })
        } catch (e) {
          note(e)
        }
        if (!ok && attempt === 0) {
          stats.adds_failed_first++
          await new Promise((r) => setTimeout(r, 1000))
        }
      }
      if (!ok) stats.adds_lost++
      else {
        const found = await ws.search({ query: `adder ${i} round ${n}`, limit: 3 }).catch(() => null)
        if (!found?.segments.some((s) => s.text.includes(`adder ${i} round ${n}`))) stats.adds_lost++
      }
    }
  }
  const killAt = Date.now() + (FAULT_SECONDS * 1000) / 3
  const killer = (async () => {
    await new Promise((r) => setTimeout(r, killAt - Date.now()))
    await cluster.kill(0)
  })()
  await Promise.all([...Array.from({ length: 32 }, (_, i) => searcher(i)), ...Array.from({ length: 4 }, (_, i) => adder(i)), killer])
  const t = performance.now()
  await cluster.revive(0, 'green')
  stats.green_again_ms = performance.now() - t
  const verify = await ws.verify()
  stats.verify_ok = verify.ok
  ws.close()
  return stats
}

const cluster = await startOpenSearch({ nodes: 3 })
// Every node, so the engine's client moves on when one does not answer.
cluster.url = `opensearch://${cluster.urls.map((u) => u.replace('http://', '')).join(',')}`
try {
  const queries = testQueries()
  const sizes = []
  for (const copies of [1, COPIES]) sizes.push(await size(cluster, copies, queries))
  const hybridMs = []
  for (const copies of [1, COPIES]) hybridMs.push(await hybrid(cluster, queries, copies))
  const faults = await fault(cluster, queries)
  const out = {
    date: new Date().toISOString(),
    corpus: 'SciFact (5,183 abstracts, 50 a file) ×1 and ×' + COPIES + ', its 300 test queries, 10 results each',
    cluster: `OpenSearch 2.19.1, 3 nodes (JVMs of -Xmx384m) on loopback, 1 shard + 1 replica per index; the engine in the same process as the embedded twin`,
    cores: cpus().length,
    sizes,
    hybrid: hybridMs,
    fault: faults,
  }
  mkdirSync(join(root, 'bench/results'), { recursive: true })
  writeFileSync(join(root, 'bench/results/opensearch.json'), `${JSON.stringify(out, null, 2)}\n`)
  const f = (x) => x.toFixed(1)
  const md = [
    '# Lexical and vector generations on OpenSearch beside the embedded path',
    '',
    `${out.date.slice(0, 10)}; ${out.corpus}; ${out.cluster}; ${out.cores} cores for everything. Queries interleaved (embedded, cluster) after 30 warm-up queries each.`,
    '',
    '| corpus | chunks (after the one-file adds) | path | full add s | MB/s | lexical p50 ms | lexical p99 ms | one-file add ms (50 abstracts) |',
    '|---|---:|---|---:|---:|---:|---:|---:|',
    ...sizes.flatMap((s) =>
      ['tantivy (embedded)', 'OpenSearch'].map(
        (name, i) =>
          `| SciFact ×${s.copies} | ${s.chunks} | ${name} | ${f(s.ingest[i].s)} | ${s.ingest[i].mb_per_s.toFixed(2)} | ${f(s.lexical[i].p50)} | ${f(s.lexical[i].p99)} | ${s.one_file_ms[i].toFixed(0)} |`,
      ),
    ),
    '',
    ...sizes.map(
      (s) =>
        `SciFact ×${s.copies} on the cluster: ${(s.cluster_primary_bytes / 1e6).toFixed(1)} MB primary (${s.bytes_per_chunk.toFixed(0)} B per chunk; a replica doubles it); heap in use per node ${s.heap_used_mb.map((h) => h.toFixed(0)).join(' / ')} MB.`,
    ),
    '',
    'Hybrid (exact + lexical + text, local all-MiniLM-L6-v2; on the cluster both the lexical and the vector generations, HNSW on the Lucene engine, m 16, ef_construction 128):',
    '',
    '| corpus | chunks | path | full add s | hybrid p50 ms | hybrid p99 ms | text channel p50 ms | text p99 ms | one-file add ms | vector bytes per chunk |',
    '|---|---:|---|---:|---:|---:|---:|---:|---:|---:|',
    ...hybridMs.flatMap((h) =>
      ['usearch + tantivy (embedded)', 'OpenSearch'].map(
        (name, i) =>
          `| SciFact ×${h.copies} | ${h.chunks} | ${name} | ${f(h.add_s[i])} | ${f(h.hybrid[i].p50)} | ${f(h.hybrid[i].p99)} | ${f(h.text[i].p50)} | ${f(h.text[i].p99)} | ${h.one_file_ms[i].toFixed(0)} | ${i === 1 ? h.vector_bytes_per_chunk.toFixed(0) : ''} |`,
      ),
    ),
    '',
    `Node 0 (the first the URL names) SIGKILLed ${FAULT_SECONDS / 3} s into ${FAULT_SECONDS} s of 32 searching (hybrid) and 4 adding (embedding) clients: ${faults.queries} queries, ${faults.failed_first} failed at first, **${faults.failed_after_retry} after one retry**; ${faults.adds} adds, ${faults.adds_failed_first} failed at first, **${faults.adds_lost} lost** (an add counts as lost unless it succeeded and its text is then found); green again ${(faults.green_again_ms / 1000).toFixed(1)} s after the node restarted; verify ${faults.verify_ok ? 'clean' : 'NOT clean'}. Errors seen: ${JSON.stringify(faults.errors)}.`,
    '',
  ].join('\n')
  writeFileSync(join(root, 'bench/results/opensearch.md'), md)
  process.stdout.write(md)
} finally {
  await cluster.stop()
  rmSync(scratch, { recursive: true, force: true })
}
