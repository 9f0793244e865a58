import { z } from 'zod'

/**
 * Evaluation records: what `tychora eval … --record` keeps in a workspace (`<workspace>/evals/<id>.json`),
 * so quality can be followed over time per set and metric, and each query looked into.
 */

/** The folder under a workspace holding its evaluation records, one JSON file per run. */
export const EVAL_RECORDS_DIR = 'evals'

/** Per query, at most this many returned items are kept. */
export const EVAL_RETURNED_CAP = 10

/** A record keeps at most this many queries (`per_query_truncated: true` when cut). */
export const EVAL_PER_QUERY_CAP = 5000

export const EvalKindSchema = z.enum(['beir', 'cosqa', 'evidence'])
export type EvalKind = z.infer<typeof EvalKindSchema>

/**
 * A record's id, which is also its file name: the compact ISO time it was made (UTC, to the
 * millisecond), its kind and 8 random hex digits, e.g. `20260115T103045123Z-beir-1a2b3c4d`. Ids
 * sort as their times do; nothing else is a valid id (no path separators, no dots).
 */
export const EVAL_RECORD_ID = /^\d{8}T\d{9}Z-(?:beir|cosqa|evidence)-[0-9a-f]{8}$/

const LinesSchema = z.tuple([z.number().int().min(1), z.number().int().min(1)]).describe('First and last line, 1-based, inclusive')

/** What a query expects: a judged document (BEIR) or a file and line range (evidence sets). */
export const EvalExpectedSchema = z.union([
  z.object({ doc: z.string(), relevance: z.number().optional().describe('The judged relevance (qrels)') }),
  z.object({ path: z.string(), lines: LinesSchema, relevance: z.number().optional() }),
])
export type EvalExpected = z.infer<typeof EvalExpectedSchema>

/** A channel that ranked a returned item, and at which rank (of the item's best segment). */
export const EvalChannelRankSchema = z.object({ channel: z.string(), rank: z.number().int().positive() })

const ReturnedCommon = {
  rank: z.number().int().positive().describe('1-based, in the order the query returned them'),
  channels: z.array(EvalChannelRankSchema).optional().describe('The channels that ranked it, with their own ranks'),
  relevance: z.number().optional().describe('BEIR: its judged relevance, when judged; evidence: 1 when it overlaps expected evidence'),
}

/** What came back: a document (BEIR) or a cited segment (evidence sets). */
export const EvalReturnedSchema = z.union([
  z.object({ ...ReturnedCommon, doc: z.string() }),
  z.object({
    ...ReturnedCommon,
    citation: z.string().describe('path:line-line'),
    path: z.string().optional(),
    lines: LinesSchema.optional(),
    forbidden: z.boolean().optional().describe('It overlaps evidence the question forbids'),
  }),
])
export type EvalReturned = z.infer<typeof EvalReturnedSchema>

/** One query of a run: what was asked, expected and returned, and its own metrics. */
export const EvalQuerySchema = z.object({
  id: z.string(),
  query: z.string(),
  type: z.string().optional().describe('The question type of an evidence set (exact_id, paraphrase, …)'),
  expected: z.array(EvalExpectedSchema),
  forbidden: z.array(EvalExpectedSchema).optional().describe('Evidence the answer must not cite (evidence sets)'),
  returned: z.array(EvalReturnedSchema).max(EVAL_RETURNED_CAP),
  metrics: z.record(z.string(), z.number()),
})
export type EvalQuery = z.infer<typeof EvalQuerySchema>

const EvalRecordBase = z.object({
  version: z.literal(1),
  id: z.string().regex(EVAL_RECORD_ID),
  kind: EvalKindSchema,
  set: z.string().min(1).describe("The set's name: the BEIR folder's basename, the evidence set's file name"),
  split: z.string().optional(),
  created_at: z.number().int().nonnegative().describe('ms since the epoch'),
  git_commit: z
    .string()
    .regex(/^[0-9a-f]{40}(?:[0-9a-f]{24})?$/)
    .nullable()
    .describe("HEAD of the package's checkout; null when it is not a git checkout"),
  engine_version: z.string().describe("The package's version"),
  settings: z.record(z.string(), z.unknown()).describe('What was asked: profile, embeddings, lexical overrides, split, limit, …'),
  metrics: z.record(z.string(), z.number()).describe('Every headline figure under a stable key: ndcg@10, recall@100, mrr@10, accuracy@1, forbidden@10, …'),
  per_query_truncated: z.boolean().optional().describe(`The run had more than ${EVAL_PER_QUERY_CAP} queries; the first ones are kept`),
})

export const EvalRecordSchema = EvalRecordBase.extend({ per_query: z.array(EvalQuerySchema).max(EVAL_PER_QUERY_CAP) })
export type EvalRecord = z.infer<typeof EvalRecordSchema>

/** A record without its queries: what a listing shows. */
export const EvalRecordBriefSchema = EvalRecordBase
export type EvalRecordBrief = z.infer<typeof EvalRecordBriefSchema>

export const EvalRecordListSchema = z.object({
  records: z.array(EvalRecordBriefSchema).describe('Newest first'),
  skipped: z.array(z.object({ file: z.string(), reason: z.string() })).describe('Files of the folder that are not readable records, and why'),
})
export type EvalRecordList = z.infer<typeof EvalRecordListSchema>
