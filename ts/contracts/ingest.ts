import { z } from 'zod'
import { ErrorCodeSchema } from '../errors.js'
import { FormatSchema, KindSchema, SensitivitySchema } from './query.js'

/** Facet values by name: strings, numbers or booleans, typed against the kind's facets. */
export const FacetValuesSchema = z.record(z.string().regex(/^[a-z][a-z0-9_]{0,63}$/), z.union([z.string().max(500), z.number(), z.boolean()]))

export const AddRequestSchema = z
  .object({
    paths: z.array(z.string().min(1)).min(1).describe('Files or directories to capture; a directory added again is synced'),
    collection: z.string().min(1).max(200).optional().describe('Target collection (default "default")'),
    kind: KindSchema.optional().describe('The kind of every file (law, standard, …: one the pack defines); its normalisation may choose the format. A format name is taken as `format`'),
    format: FormatSchema.optional().describe('Parse every file in this format instead of the one its name implies'),
    facets: FacetValuesSchema.optional().describe('Facet values every file gets ({"level": 2}), typed by the facets `kind` declares; needs `kind`'),
    sensitivity: SensitivitySchema.optional().describe(
      "The sensitivity label of every file, one of the workspace's [sensitivity] levels (default: a new source gets [sensitivity] default, a known one keeps its label). Above the ceiling the add is refused (E_FORBIDDEN) and nothing is captured; only the owner labels",
    ),
  })
  .strict()

/** Who asked for a capture: the owner may register new roots; an agent only adds inside existing ones. */
export const RequesterSchema = z.enum(['owner', 'agent'])

/** What makes a capture curated knowledge (only `migrate apply` sends one; no surface accepts it). */
export const StampSchema = z.object({
  trust: z.enum(['approved', 'rejected_approach', 'captured_source']),
  as_of: z.number().int().describe('When its content became what it is, ms since the epoch'),
  origin: z.string().describe('The knowledge migration that made it so'),
})

/** A job's stored request: what to add and who asked. */
export const JobRequestSchema = z.object({
  paths: z.array(z.string()),
  collection: z.string().optional(),
  kind: z.string().optional(),
  format: FormatSchema.optional(),
  facets: FacetValuesSchema.optional(),
  stamp: StampSchema.optional(),
  sensitivity: z.string().optional(),
  requester: RequesterSchema,
  selector: z.string().optional().describe('withdraw and delete-original: what they took out (source:N, revision:N, a URI or a path); such jobs have no paths'),
  reason: z.string().optional().describe('withdraw and delete-original: the reason recorded with the withdrawal or tombstone'),
  snapshot_id: z.number().int().optional().describe('rebuild: the snapshot that was current when it started'),
})

export const ExclusionSchema = z.object({
  rule: z.string().describe('The rule: hidden names, an ignore file and its pattern, or a capture.exclude glob'),
  count: z.number().int().describe('Entries it left out (a directory counts once)'),
  example: z.string().describe('The first entry it left out, relative to its root'),
})

export const DiagnosticSchema = z.object({
  path: z.string(),
  level: z.enum(['info', 'warning', 'error']),
  code: ErrorCodeSchema,
  message: z.string(),
  locator: z.string().optional(),
})

export const ReceiptSchema = z.object({
  job_id: z.number().int(),
  status: z.enum(['succeeded', 'partial', 'failed']),
  snapshot_id: z.number().int().nullable(),
  previous_snapshot_id: z.number().int().nullable(),
  published: z.boolean(),
  files: z.object({
    scanned: z.number().int(),
    added: z.number().int(),
    changed: z.number().int(),
    unchanged: z.number().int(),
    removed: z.number().int(),
    skipped: z.number().int(),
    failed: z.number().int(),
  }),
  bytes_read: z.number().int(),
  units: z.number().int(),
  chunks: z.number().int(),
  duration_ms: z.number(),
  added: z.array(z.string()),
  changed: z.array(z.string()),
  removed: z.array(z.string()),
  diagnostics: z.array(DiagnosticSchema),
  excluded: z.array(ExclusionSchema).describe('Entries the walk left out, counted per rule'),
  embedding: z
    .object({
      inputs: z.number().int().describe('Distinct embedding inputs of the snapshot'),
      workspace_cached: z.number().int().describe("Found among the workspace's vector records"),
      user_cached: z.number().int().describe('Found in the user-level vector cache'),
      embedded: z.number().int().describe('Sent to the embedder'),
      tokens_embedded: z.number().int(),
      calls: z.number().int(),
      embed_ms: z.number(),
    })
    .optional()
    .describe("What the text channel's embedding did (workspaces with [embeddings])"),
  visual: z
    .object({
      pictures: z.number().int().describe('Distinct pictures held by collections that permit upload'),
      cached: z.number().int().describe('Already embedded by this model'),
      embedded: z.number().int().describe('Sent to the multimodal model'),
      skipped: z.number().int().describe('Not embeddable: pixels that do not decode within the limits, or bytes no longer retained'),
      not_permitted: z.number().int().describe('Held only by collections [visual] does not list: never sent'),
      tokens: z.number().int(),
      calls: z.number().int(),
      embed_ms: z.number(),
    })
    .optional()
    .describe("What the visual channel's embedding did (workspaces with [visual])"),
})

export const ProgressSchema = z.object({
  phase: z.enum(['walk', 'prepare', 'commit', 'embed', 'index', 'publish']),
  done: z.number().int(),
  total: z.number().int(),
})

export type AddRequest = z.infer<typeof AddRequestSchema>
export type Requester = z.infer<typeof RequesterSchema>
export type Exclusion = z.infer<typeof ExclusionSchema>
export type JobRequest = z.infer<typeof JobRequestSchema>
export type Diagnostic = z.infer<typeof DiagnosticSchema>
export type Receipt = z.infer<typeof ReceiptSchema>
export type Progress = z.infer<typeof ProgressSchema>

export const EmbedPlanSchema = z.object({
  provider: z.string(),
  model: z.string(),
  inputs: z.number().int().describe('Distinct embedding inputs of the new and changed windows'),
  cached: z.number().int().describe('Already embedded (this workspace or the user cache): free'),
  new_inputs: z.number().int(),
  new_tokens: z.number().int().describe("Tokens to embed (the provider's count, or an estimate)"),
  cached_tokens: z.number().int(),
  usd: z.number().nullable().optional().describe('Estimated cost in US dollars (0 for the local model)'),
  usd_per_million_tokens: z.number().nullable().optional(),
  prices_as_of: z.string().describe("Date of the pack's price table"),
  month_tokens: z.number().int().describe('Tokens this workspace embedded this month'),
  max_embed_tokens_per_job: z.number().int().nullable().optional(),
  max_embed_tokens_per_month: z.number().int().nullable().optional(),
  over_budget: z.boolean().describe('Whether the real run would stop before its first provider call (E_BUDGET_EXCEEDED)'),
})

/** What `add --dry-run` found: nothing was written and no provider was called. */
export const AddPlanSchema = z.object({
  files: ReceiptSchema.shape.files,
  bytes: z.number().int(),
  units: z.number().int(),
  windows: z.number().int(),
  embedding: EmbedPlanSchema.nullable().optional(),
  diagnostics: z.array(DiagnosticSchema),
  excluded: z.array(ExclusionSchema),
  warnings: z.array(z.string()).describe('What would stop the real run that the plan could not count (a provider without an API key)'),
})

/** What `manage rebuild` did. */
export const RebuildReportSchema = z.object({
  job_id: z.number().int(),
  repaired: z.array(z.object({ snapshot_id: z.number().int(), generation: z.string() })).describe('Vector files rewritten from the vector records'),
  republished: z.boolean().describe("Whether the current snapshot's members were published again"),
  reason: z.string(),
  snapshot_id: z.number().int().nullable(),
  embedding: ReceiptSchema.shape.embedding,
  visual: ReceiptSchema.shape.visual,
  duration_ms: z.number(),
})

export type AddPlan = z.infer<typeof AddPlanSchema>
export type RebuildReport = z.infer<typeof RebuildReportSchema>
