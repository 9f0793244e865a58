import { basename, extname, join } from 'node:path'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { EVAL_RETURNED_CAP } from '../contracts/eval.js'
import { initWorkspace, openWorkspace } from '../engine/workspace.js'
import { TychoraError } from '../errors.js'
import { type BeirOptions, type BeirReport, appendEmbeddings, appendLexical, lines, locate, readQrels, useSearchCluster } from './beir.js'
import { type Qrels, type Run, percentile, score } from './metrics.js'
import { type RankedDoc, beirQuery, channelRanks } from './per-query.js'

export interface BeirCodeOptions {
  split?: 'test' | 'dev' | 'train'
  /** Extension of the materialised files, which picks the language (CoSQA: `.py`). */
  extension?: string
  keep?: boolean
  batchSize?: number
  /** Overrides of the pack's lexical analyzer and term weighting (for choosing settings on dev data). */
  lexical?: BeirOptions['lexical']
  /** The text (dense) channel with the local model, as for `evalBeir`. */
  embeddings?: BeirOptions['embeddings']
  /** Also report each query's details (`per_query`), as for `evalBeir`. */
  perQuery?: boolean
  /** The lexical generations on this OpenSearch cluster, as for `evalBeir`. */
  search?: string
}

export interface BeirCodeReport extends BeirReport {
  profile: 'code'
  channels: string[]
  units: number
}

/**
 * A BEIR set whose documents are code (CoSQA), evaluated with the code profile: every document is
 * written as its own source file named by its id, so capture turns it into symbol units the way it
 * would in a repository; a segment maps back to its document through its file name.
 */
export async function evalBeirAsCode(dir: string, options: BeirCodeOptions = {}): Promise<BeirCodeReport> {
  const split = options.split ?? 'test'
  const extension = options.extension ?? '.py'
  const qrels = await readQrels(dir, split)
  const queries = new Map<string, string>()
  for await (const line of lines(locate(dir, 'queries.jsonl'))) {
    const q = JSON.parse(line) as { _id: string; text: string }
    if (qrels.has(String(q._id))) queries.set(String(q._id), q.text)
  }
  const scratch = await mkdtemp(join(tmpdir(), 'tychora-beir-code-'))
  const data = join(scratch, 'data')
  await mkdir(data)
  let documents = 0
  for await (const line of lines(locate(dir, 'corpus.jsonl'))) {
    const d = JSON.parse(line) as { _id: string; title?: string; text?: string }
    const id = String(d._id)
    if (!/^[\w.-]+$/.test(id)) throw new TychoraError('E_INVALID_ARGUMENT', `document id ${JSON.stringify(id)} cannot be a file name`)
    await writeFile(join(data, `${id}${extension}`), d.title ? `# ${d.title}\n${d.text ?? ''}\n` : `${d.text ?? ''}\n`)
    documents++
  }
  const wsDir = join(scratch, 'ws')
  await initWorkspace(wsDir, { profile: 'code', ...(options.embeddings ? { embeddings: 'local' as const } : {}) })
  if (options.embeddings) await appendEmbeddings(wsDir, options.embeddings)
  if (options.lexical) await appendLexical(wsDir, options.lexical)
  const cluster = options.search ? await useSearchCluster(wsDir, options.search) : undefined
  const ws = await openWorkspace(wsDir)
  try {
    const started = performance.now()
    const receipt = await ws.add({ paths: [data] })
    const ingestSeconds = (performance.now() - started) / 1000
    if (receipt.status === 'failed') throw new TychoraError('E_INVALID_ARGUMENT', `corpus could not be ingested: ${receipt.diagnostics[0]?.message ?? 'unknown'}`)
    const run: Run = new Map()
    const details = new Map<string, RankedDoc[]>()
    const latencies: number[] = []
    const channels = new Set<string>()
    const ids = [...queries.keys()]
    const batchSize = options.batchSize ?? 50
    for (let i = 0; i < ids.length; i += batchSize) {
      const batch = ids.slice(i, i + batchSize)
      // No `channels`: the profile's defaults are what is being measured.
      const results = await ws.searchBatch(batch.map((qid) => ({ query: queries.get(qid) ?? '', limit: 100, max_per_source: 0, budget_tokens: 100_000_000 })))
      for (const [j, result] of results.entries()) {
        latencies.push(result.duration_ms)
        for (const c of result.applied_scope.channels) channels.add(c)
        const ranked: string[] = []
        const detail: RankedDoc[] = []
        for (const s of result.segments) {
          const doc = basename(s.source.path, extname(s.source.path))
          if (ranked.includes(doc)) continue
          ranked.push(doc)
          if (options.perQuery && detail.length < EVAL_RETURNED_CAP) detail.push({ doc, channels: channelRanks(s) })
        }
        run.set(batch[j] as string, ranked)
        if (options.perQuery) details.set(batch[j] as string, detail)
      }
    }
    const judged: Qrels = new Map([...qrels].filter(([qid]) => queries.has(qid)))
    const sorted = [...latencies].sort((a, b) => a - b)
    return {
      dataset: dir,
      split,
      profile: 'code',
      channels: [...channels],
      documents,
      units: receipt.units,
      ...score(judged, run),
      ingest_seconds: ingestSeconds,
      query_latency_ms: { p50: percentile(sorted, 50), p99: percentile(sorted, 99), mean: sorted.reduce((a, b) => a + b, 0) / (sorted.length || 1) },
      ignore_identical_ids: false,
      ...(receipt.embedding ? { embedding: receipt.embedding } : {}),
      ...(options.keep ? { workspace: wsDir } : {}),
      ...(options.perQuery ? { per_query: [...judged].map(([qid, j]) => beirQuery(qid, queries.get(qid) ?? '', j, details.get(qid) ?? [])) } : {}),
    }
  } finally {
    ws.close()
    if (!options.keep) {
      await rm(scratch, { recursive: true, force: true })
      await cluster?.drop()
    }
  }
}
