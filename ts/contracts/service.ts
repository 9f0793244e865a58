import { z } from 'zod'
import { AddRequestSchema } from './ingest.js'
import { QueryRequestSchema } from './query.js'

/**
 * Contracts of the agent surfaces (HTTP, MCP, typed clients). Every call names its project: there
 * is no implicit current project. `.describe()` strings double as HTTP and MCP field docs.
 */
export const ProjectSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/)
  .describe('Project (workspace) name, as listed by the daemon')

export const CallContextSchema = z.object({
  agent_id: z.string().max(200).optional().describe('Calling agent, recorded with the query'),
  task_id: z.string().max(200).optional().describe('Calling task, recorded with the query'),
})

export const SearchEvidenceRequestSchema = QueryRequestSchema.extend({ project: ProjectSchema }).strict()

export const EvidenceIdSchema = z
  .string()
  .min(1)
  .max(200)
  .regex(/^(seg_\d+_\d+|(source|src|revision|rev|unit|chunk|snapshot|snap|job):\d+)$/)
  .describe('A segment id (seg_S_C) or source:N, revision:N, extraction:N, unit:N, chunk:N')

export const GetEvidenceRequestSchema = z.object({ project: ProjectSchema, id: EvidenceIdSchema }).strict()

export const ListSourcesRequestSchema = z
  .object({
    project: ProjectSchema,
    collection: z.string().min(1).optional().describe('Only this collection'),
    snapshot_id: z.number().int().positive().optional().describe('Pin a snapshot; default current'),
    limit: z.number().int().min(1).max(1000).optional().describe('Page size (default 100)'),
    offset: z.number().int().min(0).optional().describe('Page offset'),
  })
  .strict()

export const AddSourceRequestSchema = AddRequestSchema.extend({ project: ProjectSchema }).strict()

export const JobStatusRequestSchema = z.object({ project: ProjectSchema, job_id: z.number().int().positive() }).strict()

export const SourceSummarySchema = z.object({
  id: z.number().int(),
  path: z.string(),
  uri: z.string(),
  collection: z.string(),
  kind: z.string().nullable().describe('The kind it was assigned; null: none'),
  format: z.string().describe('How its bytes are parsed'),
  revision_id: z.number().int(),
  seq: z.number().int(),
  sha256: z.string(),
  size: z.number().int(),
  captured_at: z.number().int(),
})

export const SourceListSchema = z.object({
  snapshot_id: z.number().int().nullable(),
  total: z.number().int(),
  sources: z.array(SourceSummarySchema),
})

export const SnapshotListSchema = z.object({
  snapshots: z.array(
    z.object({
      id: z.number().int(),
      parent_id: z.number().int().nullable(),
      job_id: z.number().int().nullable(),
      chunks: z.number().int(),
      sources: z.number().int(),
      created_at: z.number().int(),
      current: z.boolean(),
      retained: z.boolean(),
    }),
  ),
})

export const JobRefSchema = z.object({ project: ProjectSchema, job_id: z.number().int(), status: z.string() })

export const ProjectInfoSchema = z.object({ name: ProjectSchema, dir: z.string(), snapshot_id: z.number().int().nullable() })

export type CallContext = z.infer<typeof CallContextSchema>
export type SearchEvidenceRequest = z.infer<typeof SearchEvidenceRequestSchema>
export type GetEvidenceRequest = z.infer<typeof GetEvidenceRequestSchema>
export type ListSourcesRequest = z.infer<typeof ListSourcesRequestSchema>
export type AddSourceRequest = z.infer<typeof AddSourceRequestSchema>
export type JobStatusRequest = z.infer<typeof JobStatusRequestSchema>
export type SourceList = z.infer<typeof SourceListSchema>
export type SnapshotList = z.infer<typeof SnapshotListSchema>
export type JobRef = z.infer<typeof JobRefSchema>
export type ProjectInfo = z.infer<typeof ProjectInfoSchema>

/** `GET /v1/projects`: the projects the caller's token opens. */
export const ProjectListSchema = z.object({ projects: z.array(ProjectInfoSchema) })
export type ProjectList = z.infer<typeof ProjectListSchema>

export { CancelJobRequestSchema, EvidenceSchema, JobStatusSchema, type CancelJobRequest, type Evidence, type JobStatus } from './evidence.js'
