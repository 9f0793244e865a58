import { z } from 'zod'
import { ErrorCodeSchema } from '../errors.js'
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
  erased_from_snapshots: z.number().int().describe('erasure: snapshots the erased text was taken out of, pinned ones included (their index generations rewritten without it)'),
})
export type WithdrawReport = z.output<typeof WithdrawReportSchema>

/** What `manage sensitivity` did: the source's label, for every snapshot at once, and the erasure when it went above the ceiling. */
export const RelabelReportSchema = z.object({
  source_id: z.number().int(),
  path: z.string(),
  from: z.string().nullable().describe('the label before; null: captured before labels, counted as the default'),
  to: z.string(),
  summary_trees_deleted: z.number().int().describe('summary trees that summarised it under its old label (rebuild with `index build --raptor`)'),
  erased: WithdrawReportSchema.nullable().describe('above the ceiling: the erasure that took it out of new snapshots'),
})
export type RelabelReport = z.output<typeof RelabelReportSchema>

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

/** `POST /v1/projects/:project/backup`: where the daemon writes the copy (on its own machine). */
export const BackupRequestSchema = z
  .object({
    dest: z.string().min(1).max(4096).describe("Absolute path of the backup folder on the daemon's machine; it must not exist, or be empty (409 E_CONFLICT otherwise)"),
  })
  .strict()
export type BackupRequest = z.output<typeof BackupRequestSchema>

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
  jobs: z.number().int(),
  erased_revisions: z.number().int().describe('revisions erased on request whose text this pass took out of every snapshot (non-zero when an erasure had been interrupted)'),
  erased_from_snapshots: z.number().int(),
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

/** A recorded run replayed (`search --replay`, the dashboard's history), and how its results moved. */
export const ReplayDiffSchema = z.object({
  run_id: z.string(),
  replay_run_id: z.string().describe('The replay is itself a recorded run'),
  recorded_snapshot_id: z.number().int().nullable(),
  snapshot_id: z.number().int().nullable().describe('The snapshot the replay read'),
  same: z.boolean().describe('The same chunks in the same order'),
  before: z.array(z.string()).describe("The recorded run's segment ids"),
  after: z.array(z.string()).describe("The replay's segment ids"),
  added: z.array(z.string()),
  removed: z.array(z.string()),
  moved: z.array(z.string()),
  before_citations: z.array(z.string()).describe("The recorded citations, in `before`'s order (empty for runs recorded before citations were kept)"),
  after_citations: z.array(z.string()),
  warnings: z.array(z.string()),
})
export type ReplayDiff = z.output<typeof ReplayDiffSchema>

/** One `manage doctor` check: what it found and the fix. */
export const FindingSchema = z.object({
  check: z.string(),
  status: z.enum(['ok', 'warn', 'fail']),
  detail: z.string(),
  fix: z.string(),
})
export type Finding = z.output<typeof FindingSchema>

/** What `index build --raptor` did: the summary tree of the current snapshot, replacing the previous one. */
export const SummaryReportSchema = z.object({
  tree_id: z.number().int().nullable().describe('the tree written; null for a dry run'),
  snapshot_id: z.number().int().describe('the snapshot whose windows were clustered'),
  dry_run: z.boolean(),
  windows: z.number().int().describe('windows clustered'),
  left_out: z.number().int().describe('windows left out: flagged by the safety detector (text addressed to an agent, hidden text) or without a vector'),
  documents: z.number().int(),
  nodes: z.number().int().describe('summary nodes'),
  levels: z.array(z.number().int()).describe('nodes per level, level 1 first'),
  summarizer: z.string().describe('extractive, or the provider that summarised the permitted collections'),
  model: z.string().nullable(),
  by_model: z.number().int().describe('nodes the model summarised in this build'),
  cached: z.number().int().describe("nodes whose model summary came from the cache (the same cluster's text was summarised before)"),
  extractive: z.number().int().describe('nodes summarised by their most central sentences (offline, not permitted, or the model declined)'),
  calls: z.number().int().describe('provider requests, retries included'),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  planned_input_tokens: z.number().int().describe('tokens of the text that would be sent to the model (dry run), cache hits excluded'),
  cluster_ms: z.number(),
  summarize_ms: z.number(),
  build_ms: z.number(),
  diagnostics: z
    .array(z.object({ path: z.string(), level: z.enum(['info', 'warning', 'error']), code: ErrorCodeSchema, message: z.string() }))
    .describe('clusters the model declined or answered with something that is not a summary (each kept its extractive summary)'),
})
export type SummaryReport = z.output<typeof SummaryReportSchema>
