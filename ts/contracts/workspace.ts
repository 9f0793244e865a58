import { z } from 'zod'
import { ErrorCodeSchema } from '../errors.js'

export const InitReportSchema = z.object({
  dir: z.string(),
  created: z.array(z.string()),
  schema_version: z.number().int(),
})

export const VerifyReportSchema = z.object({
  ok: z.boolean(),
  artifacts_checked: z.number().int(),
  references_checked: z.number().int(),
  snapshots_checked: z.number().int(),
  erasures_checked: z.number().int().describe('revisions erased on request checked to be out of every snapshot, row and lexical generation'),
  problems: z.array(z.object({ object: z.string(), code: ErrorCodeSchema, message: z.string() })),
})

export const StatusSchema = z.object({
  dir: z.string(),
  schema_version: z.number().int(),
  engine_version: z.string(),
  profile: z.string(),
  current_snapshot: z
    .object({
      id: z.number().int(),
      created_at: z.number().int(),
      chunks: z.number().int(),
      sources: z.number().int(),
      job_id: z.number().int().nullable(),
    })
    .nullable(),
  collections: z.array(z.object({ name: z.string(), active_sources: z.number().int() })),
  kinds: z
    .array(
      z.object({
        name: z.string(),
        version: z.number().int(),
        fingerprint: z.string().describe('sha256 of the definition recorded (all zeros: recorded by a migration)'),
        pack: z.string(),
        lane: z.string(),
        sources: z.number().int().describe('Active sources of this kind'),
      }),
    )
    .describe('The kinds sources were assigned, with the definition recorded when last used'),
  counts: z.object({
    sources: z.number().int(),
    removed_sources: z.number().int(),
    revisions: z.number().int(),
    extractions: z.number().int(),
    evidence_units: z.number().int(),
    chunks: z.number().int(),
    identifiers: z.number().int(),
    artifacts: z.number().int(),
    snapshots: z.number().int(),
    jobs: z.number().int(),
    query_runs: z.number().int(),
    vector_records: z.number().int(),
    erased_revisions: z.number().int().describe('revisions whose originals were erased on request'),
    erasures_pending: z.number().int().describe('erasures some snapshot or row still holds (interrupted); `manage purge` finishes them'),
  }),
  bytes: z
    .object({
      corpus: z.number().int(),
      artifacts: z.number().int(),
      indexes: z.number().int(),
      lexical: z.number().int(),
      vectors: z.number().int(),
      tables: z
        .array(z.object({ table: z.string(), bytes: z.number().int() }))
        .optional()
        .describe('corpus.sqlite3 by table, each with its indexes, largest first (absent when not asked for)'),
    })
    .describe('bytes on disk; a file hard-linked into several index generations counts once'),
})

export type InitReport = z.infer<typeof InitReportSchema>
export type VerifyReport = z.infer<typeof VerifyReportSchema>
export type Status = z.infer<typeof StatusSchema>
