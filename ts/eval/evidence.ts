import { existsSync } from 'node:fs'
import { copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, dirname, join, resolve } from 'node:path'
import { z } from 'zod'
import { EVAL_RETURNED_CAP, type EvalQuery } from '../contracts/eval.js'
import type { Segment } from '../contracts/result.js'
import { Workspace } from '../engine/workspace.js'
import { TychoraError } from '../errors.js'
import { ndcgAt, percentile } from './metrics.js'

/** Evidence a question expects (or forbids): a file of the corpus and a 1-based inclusive line range. */
const LocatorSchema = z.object({
  path: z.string().min(1).describe('The file, relative to the set’s data directory'),
  lines: z.tuple([z.number().int().min(1), z.number().int().min(1)]).describe('First and last line'),
})

/**
 * An evidence evaluation set: a corpus (files and the kind each is added as) and questions, each
 * with the evidence a correct answer cites and the near misses it must not.
 */
export const EvidenceSetSchema = z
  .object({
    name: z.string(),
    description: z.string().optional(),
    data: z.string().describe('Where the corpus files are, relative to the set file'),
    corpus: z.array(z.object({ path: z.string(), kind: z.string().optional() })).min(1),
    questions: z
      .array(
        z.object({
          id: z.string(),
          type: z.string().describe('exact_id, paraphrase, …: reported apart'),
          query: z.string().min(1),
          expected: z.array(LocatorSchema).min(1),
          forbidden: z.array(LocatorSchema).default([]),
        }),
      )
      .min(1),
  })
  .strict()

export type EvidenceSet = z.infer<typeof EvidenceSetSchema>
type Locator = z.infer<typeof LocatorSchema>

export interface EvidenceScores {
  questions: number
  /** The top segment is expected evidence and not forbidden. */
  accuracy_at_1: number
  /** Binary gains, each expected item credited once, ideal from the expected items. */
  ndcg_at_10: number
  /** Share of questions with forbidden evidence in the top 10. */
  forbidden_at_10: number
}

export interface EvidenceReport extends EvidenceScores {
  set: string
  corpus_files: number
  by_type: Record<string, EvidenceScores>
  query_latency_ms: { p50: number; p99: number }
  ingest_seconds: number
  /** Questions whose top segment missed, with what came first instead. */
  misses: { id: string; query: string; top: string | null }[]
  /** With `perQuery`: each question, in the set's order: expected and forbidden evidence, the first segments and their channels. */
  per_query?: EvalQuery[]
}

const overlaps = (s: Segment, l: Locator) => basename(s.source.path) === basename(l.path) && s.locator.line_start <= l.lines[1] && s.locator.line_end >= l.lines[0]

interface Judged {
  type: string
  accuracy: number
  ndcg: number
  forbidden: number
}

function judge(segments: Segment[], expected: Locator[], forbidden: Locator[]): Omit<Judged, 'type'> {
  const top = segments[0]
  const accuracy = top && expected.some((l) => overlaps(top, l)) && !forbidden.some((l) => overlaps(top, l)) ? 1 : 0
  // Each segment stands for the first expected item it covers that no earlier segment did.
  const credited = new Set<number>()
  const ranked = segments.slice(0, 10).map((s, i) => {
    const item = expected.findIndex((l, k) => !credited.has(k) && overlaps(s, l))
    if (item === -1) return `other:${i}`
    credited.add(item)
    return `expected:${item}`
  })
  const judged = new Map(expected.map((_, k) => [`expected:${k}`, 1]))
  const hitForbidden = segments.slice(0, 10).some((s) => forbidden.some((l) => overlaps(s, l))) ? 1 : 0
  return { accuracy, ndcg: ndcgAt(ranked, judged, 10), forbidden: hitForbidden }
}

/** One question's details: its evidence, the segments it returned (judged), and its own metrics. */
function questionDetail(q: EvidenceSet['questions'][number], segments: Segment[], j: Omit<Judged, 'type'>): EvalQuery {
  return {
    id: q.id,
    query: q.query,
    type: q.type,
    expected: q.expected.map((l) => ({ path: l.path, lines: l.lines })),
    forbidden: q.forbidden.map((l) => ({ path: l.path, lines: l.lines })),
    returned: segments.slice(0, EVAL_RETURNED_CAP).map((s, i) => ({
      rank: i + 1,
      citation: s.citation,
      path: s.source.path,
      lines: [s.locator.line_start, s.locator.line_end] as [number, number],
      channels: s.channels.map((c) => ({ channel: c.channel, rank: c.rank })),
      ...(q.expected.some((l) => overlaps(s, l)) ? { relevance: 1 } : {}),
      ...(q.forbidden.some((l) => overlaps(s, l)) ? { forbidden: true } : {}),
    })),
    metrics: { 'accuracy@1': j.accuracy, 'ndcg@10': j.ndcg, 'forbidden@10': j.forbidden },
  }
}

function mean(items: Judged[]): EvidenceScores {
  const n = items.length || 1
  const sum = (f: (j: Judged) => number) => items.reduce((a, j) => a + f(j), 0) / n
  return { questions: items.length, accuracy_at_1: sum((j) => j.accuracy), ndcg_at_10: sum((j) => j.ndcg), forbidden_at_10: sum((j) => j.forbidden) }
}

/**
 * Runs an evidence set: its corpus added to a scratch workspace (each file with its kind), every
 * question through the production query path, each answer judged against the expected and
 * forbidden evidence by file and line overlap.
 */
export async function evalEvidence(setFile: string, options: { data?: string; perQuery?: boolean } = {}): Promise<EvidenceReport> {
  const set = EvidenceSetSchema.parse(JSON.parse(await readFile(setFile, 'utf8')))
  const data = resolve(options.data ?? resolve(dirname(setFile), set.data))
  const missing = set.corpus.filter((c) => !existsSync(join(data, c.path)))
  if (missing.length > 0) throw new TychoraError('E_NOT_FOUND', `corpus files missing under ${data}: ${missing.map((m) => m.path).join(', ')} (pass --data DIR)`)
  const scratch = await mkdtemp(join(tmpdir(), 'tychora-evidence-'))
  try {
    const wsDir = join(scratch, 'ws')
    await Workspace.init(wsDir)
    const ws = await Workspace.open(wsDir)
    try {
      const started = performance.now()
      for (const [i, file] of set.corpus.entries()) {
        // One folder per file: its name is what segments cite.
        const dir = join(scratch, 'corpus', String(i))
        await mkdir(dir, { recursive: true })
        const copy = join(dir, basename(file.path))
        await copyFile(join(data, file.path), copy)
        const receipt = await ws.add({ paths: [copy], ...(file.kind ? { kind: file.kind } : {}) })
        if (receipt.status === 'failed') throw new TychoraError('E_INVALID_ARGUMENT', `${file.path} could not be added: ${receipt.diagnostics[0]?.message ?? 'unknown'}`)
      }
      const ingestSeconds = (performance.now() - started) / 1000
      const judged: Judged[] = []
      const latencies: number[] = []
      const misses: EvidenceReport['misses'] = []
      const details: EvalQuery[] = []
      const results = await ws.searchBatch(set.questions.map((q) => ({ query: q.query, limit: 10, max_per_source: 0, budget_tokens: 100_000_000 })))
      for (const [i, result] of results.entries()) {
        const q = set.questions[i]!
        latencies.push(result.duration_ms)
        const j = judge(result.segments, q.expected, q.forbidden)
        judged.push({ type: q.type, ...j })
        if (options.perQuery) details.push(questionDetail(q, result.segments, j))
        if (j.accuracy === 0) {
          const top = result.segments[0]
          misses.push({ id: q.id, query: q.query, top: top ? `${top.citation}` : null })
        }
      }
      const types = [...new Set(judged.map((j) => j.type))].sort()
      latencies.sort((a, b) => a - b)
      return {
        set: set.name,
        corpus_files: set.corpus.length,
        ...mean(judged),
        by_type: Object.fromEntries(types.map((t) => [t, mean(judged.filter((j) => j.type === t))])),
        query_latency_ms: { p50: percentile(latencies, 50), p99: percentile(latencies, 99) },
        ingest_seconds: ingestSeconds,
        misses,
        ...(options.perQuery ? { per_query: details } : {}),
      }
    } finally {
      ws.close()
    }
  } finally {
    await rm(scratch, { recursive: true, force: true })
  }
}
