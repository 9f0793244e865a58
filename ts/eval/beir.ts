import { createReadStream, existsSync } from 'node:fs'
import { appendFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { createGunzip } from 'node:zlib'
import { Workspace } from '../engine/workspace.js'
import { EVAL_RETURNED_CAP, type EvalQuery } from '../contracts/eval.js'
import type { Receipt } from '../contracts/ingest.js'
import { TychoraError } from '../errors.js'
import { type Qrels, type Run, type Scores, percentile, score } from './metrics.js'
import { type RankedDoc, beirQuery, channelRanks } from './per-query.js'

export interface BeirOptions {
  split?: 'test' | 'dev' | 'train'
  ignoreIdenticalIds?: boolean
  /** Keep the scratch workspace (its path is in the report). */
  keep?: boolean
  /** Queries per native crossing. */
  batchSize?: number
  /** Overrides of the pack's lexical analyzer, written to the scratch workspace.toml (for tuning on train). */
  lexical?: {
    stemmer?: boolean
    stopwords?: boolean
    capsule_boost?: number
    split_identifiers?: boolean
    idf?: 'lucene' | 'probabilistic'
    max_query_terms?: number
  }
  /**
   * The text (dense) channel with the local model: `[embeddings]` settings for the scratch
   * workspace (model_dir, representation, long_inputs, weight, depth, cache_dir).
   */
  embeddings?: {
    model_dir?: string
    representation?: 'window' | 'window+capsule'
    long_inputs?: 'truncate' | 'pool'
    weight?: number
    depth?: number
    cache_dir?: string
  }
  /** Channels each query runs (default: the profile's, plus text when `embeddings` is given). */
  channels?: Array<'exact' | 'lexical' | 'text' | 'graph'>
  /**
   * Segments per query (default 100, for Recall@100). Each channel ranks three per requested
   * segment (at least 30), so a smaller limit measures fusion as an agent's 10-result query sees it.
   */
  limit?: number
  /** Also report each query's details (`per_query`): what it expected, what came back and from which channel. */
  perQuery?: boolean
  /**
   * The scratch workspace's canonical rows in this PostgreSQL database (`[store] url`; a
   * `postgres://user@host:port/db` URL or `host=… dbname=…`, its password from `PGPASSWORD`),
   * migrated before the add. The database should be empty: the evaluation's rows stay in it.
   */
  store?: string
  /**
   * The scratch workspace's lexical generations on this OpenSearch cluster (`[search] url`,
   * `opensearch://host:port`), under a prefix of their own that is deleted afterwards unless
   * `keep` is set.
   */
  search?: string
}

export interface BeirReport extends Scores {
  dataset: string
  split: string
  documents: number
  ingest_seconds: number
  query_latency_ms: { p50: number; p99: number; mean: number }
  workspace?: string
  ignore_identical_ids: boolean
  /** What embedding the corpus did (text channel). */
  embedding?: Receipt['embedding']
  channels?: string[]
  /** With `perQuery`: each judged query, in the qrels file's order. */
  per_query?: EvalQuery[]
}

/** Finds `name` or `name.gz` in `dir`. */
export function locate(dir: string, name: string): string {
  for (const candidate of [join(dir, name), join(dir, `${name}.gz`)]) if (existsSync(candidate)) return candidate
  throw new TychoraError('E_NOT_FOUND', `${join(dir, name)}(.gz) not found: not a BEIR-format directory`)
}

export async function* lines(path: string): AsyncGenerator<string> {
  const raw = createReadStream(path)
  const input = path.endsWith('.gz') ? raw.pipe(createGunzip()) : raw
  for await (const line of createInterface({ input, crlfDelay: Infinity })) if (line.trim()) yield line
}

export async function readQrels(dir: string, split: string): Promise<Qrels> {
  const path = join(dir, 'qrels', `${split}.tsv`)
  if (!existsSync(path)) throw new TychoraError('E_NOT_FOUND', `${path} not found`)
  const qrels: Qrels = new Map()
  let first = true
  for await (const line of lines(path)) {
    const [qid, did, rel] = line.split('\t')
    if (first && Number.isNaN(Number(rel))) {
      first = false
      continue // header
    }
    first = false
    if (!qid || !did) continue
    const judged = qrels.get(qid) ?? new Map<string, number>()
    judged.set(did, Number(rel))
    qrels.set(qid, judged)
  }
  return qrels
}

/**
 * Loads a BEIR set into a scratch workspace (corpus as JSON Lines, one record per document, its
 * `_id` registered as an identifier), runs every judged query through the production query path,
 * and scores the ranked document ids.
 */
export async function evalBeir(dir: string, options: BeirOptions = {}): Promise<BeirReport> {
  const split = options.split ?? 'test'
  const qrels = await readQrels(dir, split)
  const queries = new Map<string, string>()
  for await (const line of lines(locate(dir, 'queries.jsonl'))) {
    const q = JSON.parse(line) as { _id: string; text: string }
    if (qrels.has(String(q._id))) queries.set(String(q._id), q.text)
  }
  const scratch = await mkdtemp(join(tmpdir(), 'tychora-beir-'))
  const data = join(scratch, 'data')
  await mkdir(data)
  const corpus: string[] = []
  for await (const line of lines(locate(dir, 'corpus.jsonl'))) {
    const d = JSON.parse(line) as { _id: string; title?: string; text?: string }
    corpus.push(JSON.stringify({ _id: String(d._id), title: d.title ?? '', text: d.text ?? '' }))
  }
  await writeFile(join(data, 'corpus.jsonl'), `${corpus.join('\n')}\n`)
  const wsDir = join(scratch, 'ws')
  await Workspace.init(wsDir, options.embeddings ? { embeddings: 'local' } : {})
  if (options.embeddings) await appendEmbeddings(wsDir, options.embeddings)
  if (options.lexical) await appendLexical(wsDir, options.lexical)
  if (options.store) await useServiceStore(wsDir, options.store)
  const cluster = options.search ? await useSearchCluster(wsDir, options.search) : undefined
  const ws = await Workspace.open(wsDir)
  try {
    const started = performance.now()
    const receipt = await ws.add({ paths: [join(data, 'corpus.jsonl')], kind: 'jsonl' })
    const ingestSeconds = (performance.now() - started) / 1000
    if (receipt.status === 'failed') throw new TychoraError('E_INVALID_ARGUMENT', `corpus could not be ingested: ${receipt.diagnostics[0]?.message ?? 'unknown'}`)
    const run: Run = new Map()
    const details = new Map<string, RankedDoc[]>()
    const latencies: number[] = []
    const ids = [...queries.keys()]
    const batchSize = options.batchSize ?? 50
    for (let i = 0; i < ids.length; i += batchSize) {
      const batch = ids.slice(i, i + batchSize)
      const results = await ws.searchBatch(
        batch.map((qid) => ({
          query: queries.get(qid) ?? '',
          limit: options.limit ?? 100,
          max_per_source: 0,
          budget_tokens: 100_000_000,
          ...(options.channels ? { channels: options.channels } : {}),
        })),
      )
      for (const [j, result] of results.entries()) {
        const qid = batch[j] as string
        latencies.push(result.duration_ms)
        const ranked: string[] = []
        const detail: RankedDoc[] = []
        for (const s of result.segments) {
          const doc = s.locator.anchor
          if (doc === undefined || ranked.includes(doc)) continue
          if (options.ignoreIdenticalIds && doc === qid) continue
          ranked.push(doc)
          if (options.perQuery && detail.length < EVAL_RETURNED_CAP) detail.push({ doc, channels: channelRanks(s) })
        }
        run.set(qid, ranked)
        if (options.perQuery) details.set(qid, detail)
      }
    }
    const judged: Qrels = new Map([...qrels].filter(([qid]) => queries.has(qid)))
    const sorted = [...latencies].sort((a, b) => a - b)
    return {
      dataset: dir,
      split,
      documents: corpus.length,
      ...score(judged, run),
      ingest_seconds: ingestSeconds,
      query_latency_ms: { p50: percentile(sorted, 50), p99: percentile(sorted, 99), mean: sorted.reduce((a, b) => a + b, 0) / (sorted.length || 1) },
      ignore_identical_ids: options.ignoreIdenticalIds ?? false,
      ...(receipt.embedding ? { embedding: receipt.embedding } : {}),
      ...(options.channels ? { channels: options.channels } : {}),
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

/**
 * Writes `[embeddings]` settings into a scratch workspace created with `embeddings: 'local'` (its
 * `[embeddings]` section is the file's last, so the lines land in it), before it is opened.
 */
export async function appendEmbeddings(wsDir: string, embeddings: NonNullable<BeirOptions['embeddings']>): Promise<void> {
  const lines = Object.entries(embeddings).map(([k, v]) => `${k} = ${JSON.stringify(v)}`)
  await appendFile(join(wsDir, 'workspace.toml'), `${lines.join('\n')}\n`)
}

/** Puts a scratch workspace's canonical rows in a PostgreSQL database and migrates it, before it is opened. */
export async function useServiceStore(wsDir: string, url: string): Promise<void> {
  await appendFile(join(wsDir, 'workspace.toml'), `\n[store]\nurl = ${JSON.stringify(url)}\n`)
  await Workspace.migrate(wsDir)
}

/**
 * Puts a scratch workspace's lexical generations on an OpenSearch cluster, under a prefix of its
 * own (no replicas: an evaluation measures ranking, not durability); `drop` deletes its indices.
 */
export async function useSearchCluster(wsDir: string, url: string): Promise<{ drop: () => Promise<void> }> {
  const prefix = `eval-${process.pid}-${Date.now()}`
  await appendFile(join(wsDir, 'workspace.toml'), `\n[search]\nurl = ${JSON.stringify(url)}\nprefix = ${JSON.stringify(prefix)}\nreplicas = 0\n`)
  const host = url
    .replace(/^opensearch\+https:\/\//, 'https://')
    .replace(/^opensearch:\/\//, 'http://')
    .split(',')[0]
  return {
    drop: async () => {
      for (const pattern of [`${prefix}-lex-*`, `${prefix}-manifests`]) {
        await fetch(`${host}/${pattern}`, { method: 'DELETE', signal: AbortSignal.timeout(30_000) }).catch(() => undefined)
      }
    },
  }
}

/** Writes lexical overrides into a scratch workspace's workspace.toml, before it is opened. */
export async function appendLexical(wsDir: string, lexical: NonNullable<BeirOptions['lexical']>): Promise<void> {
  const overrides = Object.entries(lexical).map(([k, v]) => `${k} = ${JSON.stringify(v)}`)
  await appendFile(join(wsDir, 'workspace.toml'), `\n[lexical]\n${overrides.join('\n')}\n`)
}
