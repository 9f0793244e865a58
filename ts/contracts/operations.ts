import { z } from 'zod'
import { ReceiptSchema } from './ingest.js'

/** What `manage compact` did: the current snapshot's lexical generation merged, and its vector layer folded, or left as they were. */
export const CompactReportSchema = z.object({
  snapshot_id: z.number().int().nullable(),
  from_generation: z.string().nullable(),
  to_generation: z.string().nullable().describe('the compacted generation; null when the merge policy found nothing to merge'),
  segments_before: z.number().int(),
  segments_after: z.number().int(),
  deleted_before: z.number().int().describe('deleted documents the generation still held (purged by the merge)'),
  text_folded_to: z.string().nullable().describe('the full vector generation a grown layer was folded into; null when none was'),
  duration_ms: z.number(),
})
export type CompactReport = z.output<typeof CompactReportSchema>

export const WithdrawReportSchema = z.object({
  receipt: ReceiptSchema.describe("the job that published a snapshot without the sources ('removed' lists them)"),
  withdrawn: z.array(z.object({ source_id: z.number().int(), uri: z.string(), path: z.string() })),
  erased: z
    .array(
      z.object({
        sha256: z.string(),
        size: z.number().int(),
        source_id: z.number().int(),
        revision_id: z.number().int(),
        reason: z.string(),
        deleted_at: z.number().int(),
      }),
    )
    .describe('tombstones written (delete-original only)'),
})
export type WithdrawReport = z.output<typeof WithdrawReportSchema>

export const BackupReportSchema = z.object({
  dir: z.string(),
  files: z.number().int(),
  bytes: z.number().int(),
  artifacts: z.number().int(),
  generations: z.number().int(),
  current_snapshot_id: z.number().int().nullable(),
  duration_ms: z.number(),
})
export type BackupReport = z.output<typeof BackupReportSchema>

export const PurgeReportSchema = z.object({
  snapshots: z.number().int(),
  query_runs: z.number().int(),
  relation_sets: z.number().int(),
  extractions: z.number().int(),
  evidence_units: z.number().int(),
  chunks: z.number().int(),
  revisions_expired: z.number().int(),
  artifacts_removed: z.number().int(),
  artifact_bytes: z.number().int(),
  generations_removed: z.number().int(),
  duration_ms: z.number(),
})
export type PurgeReport = z.output<typeof PurgeReportSchema>

/** A recorded query run: what `inspect run` shows and `search --replay` re-runs. */
export const RunRecordSchema = z.object({
  run_id: z.string(),
  snapshot_id: z.number().int().nullable().describe('null once retention purged the snapshot'),
  request: z.record(z.string(), z.unknown()),
  summary: z.object({
    returned: z.number().int(),
    segments: z.array(z.string()),
    citations: z.array(z.string()).optional(),
    applied_scope: z.unknown().optional(),
    coverage: z.unknown().optional(),
    trace: z.array(z.object({ stage: z.string(), ms: z.number(), candidates: z.number().int().optional() }).passthrough()).optional(),
    warnings: z.array(z.string()),
  }),
  agent_id: z.string().nullable(),
  task_id: z.string().nullable(),
  duration_ms: z.number(),
  created_at: z.number().int(),
})
export type RunRecord = z.output<typeof RunRecordSchema>

/** One `manage doctor` check: what it found and the fix. */
export const FindingSchema = z.object({
  check: z.string(),
  status: z.string().describe('ok | warn | fail'),
  detail: z.string(),
  fix: z.string(),
})
export type Finding = z.output<typeof FindingSchema>
