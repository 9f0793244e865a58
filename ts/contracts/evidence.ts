import { z } from 'zod'
import { DescriptionEntrySchema } from './description.js'
import { DiagnosticSchema, JobRequestSchema, ProgressSchema, ReceiptSchema } from './ingest.js'

/**
 * `inspect ID` / `get_evidence`: one object of the corpus with its provenance. `type` says which:
 * a source, a revision, a unit, a chunk (also what a segment id names), a snapshot or a job.
 */

const RevisionBriefSchema = z.object({
  id: z.number().int(),
  seq: z.number().int(),
  sha256: z.string(),
  size: z.number().int(),
  captured_at: z.number().int(),
})

/** A document extraction's reader, derived text, furniture and outside references. */
export const DocumentBriefSchema = z.object({
  format: z.string(),
  extractor: z.string(),
  pages: z.number().int().nullable().describe("A PDF's page count"),
  derived_sha256: z.string().describe("The artifact the units' byte and line spans index"),
  furniture: z.array(z.object({ part: z.string(), text: z.string() })).describe('Headers, footers, page numbers: kept out of units'),
  external_targets: z.array(z.string()).describe('Relationship targets outside the package: recorded, never followed'),
  assets: z
    .array(
      z.object({
        ordinal: z.number().int().positive(),
        sha256: z.string().describe('The artifact holding its bytes'),
        media_type: z.string(),
        width: z.number().int().nullable(),
        height: z.number().int().nullable(),
        part: z.string().describe("'image' for an image file itself, or the DOCX part that draws it"),
        relationship: z.string().nullable().describe("DOCX: 'rId7 → word/media/image2.png'"),
        page: z.number().int().positive().nullable().describe('PDF: its page'),
        bbox: z.array(z.number()).length(4).nullable().describe('PDF: where it is drawn, [x0, y0, x1, y1] in points, origin bottom-left'),
        alt_text: z.string().nullable(),
        caption: z.string().nullable(),
        context: z.string().nullable().describe('Text of the paragraph it is anchored in'),
        unit_id: z.number().int().nullable().describe('The unit that finds it (alt text, name or OCR text)'),
        descriptions: z.array(DescriptionEntrySchema).describe('What vision models said it shows: derived evidence, never a quotation of the source'),
      }),
    )
    .describe('Pictures kept as visual assets: the image file itself, or those a document embeds'),
})

/** A document unit's place: part, paragraph, table row and cells; pages and boxes for a PDF. */
export const UnitDocumentSchema = z.object({
  part: z.string(),
  paragraph: z.number().int().nullable(),
  table: z.number().int().nullable(),
  row: z.number().int().nullable(),
  header: z.boolean(),
  marker: z.string().nullable(),
  level: z.number().int().nullable(),
  page_start: z.number().int().positive().nullable(),
  page_end: z.number().int().positive().nullable(),
  boxes: z.array(z.array(z.number()).length(5)).describe('PDF boxes [page, x0, y0, x1, y1] in points, origin bottom-left'),
  flags: z.array(z.string()).describe("Findings such as 'hidden: invisible render mode'"),
  origin: z.enum(['text', 'ocr']).describe('Where the text came from: the text layer, or OCR of the page image'),
  confidence: z.number().min(0).max(1).nullable().describe("OCR: the recognizer's mean word confidence"),
  cells: z.array(
    z.object({
      col: z.number().int(),
      col_span: z.number().int(),
      continues_above: z.boolean(),
      text: z.string(),
      bbox: z.array(z.number()).length(4).optional().describe("PDF: the cell's box [x0, y0, x1, y1] in points on its row's page"),
    }),
  ),
})

export const SourceEvidenceSchema = z.object({
  type: z.literal('source'),
  id: z.number().int(),
  uri: z.string(),
  path: z.string(),
  root: z.string(),
  collection: z.string(),
  kind: z.string().nullable().describe('The kind it was assigned; null: none'),
  format: z.string().describe('How its bytes are parsed'),
  facets: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])).describe('Its facet values, by name'),
  status: z.enum(['active', 'removed']).describe('active, or removed once a sync no longer finds its file or it is withdrawn'),
  sensitivity: z.string().nullable().describe("Its sensitivity label, one of the workspace's [sensitivity] levels (null: captured before labels existed)"),
  created_at: z.number().int(),
  updated_at: z.number().int(),
  revisions: z.array(RevisionBriefSchema),
})

export const RevisionEvidenceSchema = z.object({
  type: z.literal('revision'),
  id: z.number().int(),
  source_id: z.number().int(),
  path: z.string(),
  seq: z.number().int(),
  sha256: z.string(),
  size: z.number().int(),
  metadata: z.record(z.string(), z.unknown()).describe('Capture provenance: path, kind, Git commit and branch'),
  captured_at: z.number().int(),
  extractions: z.array(
    z.object({
      id: z.number().int(),
      parser: z.string(),
      fingerprint: z.string(),
      units: z.number().int(),
      chunks: z.number().int(),
      diagnostics: z.array(DiagnosticSchema),
      document: DocumentBriefSchema.optional(),
    }),
  ),
  tombstones: z
    .array(
      z.object({
        kind: z.enum(['erasure', 'retention']),
        sha256: z.string(),
        reason: z.string(),
        deleted_at: z.number().int(),
        job_id: z.number().int().nullable(),
      }),
    )
    .describe('why its bytes are gone: an erasure on request (its text is out of every snapshot) or retention (the original only)'),
})

/** What an evidence unit is: the closed set the core's parsers emit (`UnitType` in the core). */
export const UnitTypeSchema = z
  .enum([
    'section',
    'heading',
    'paragraph',
    'list_item',
    'code_block',
    'table_row',
    'record',
    'block_quote',
    'html',
    'footnote',
    'hidden_text',
    'ocr_text',
    'recital',
    'point',
    'subpoint',
    'image',
    'module',
    'class',
    'interface',
    'type',
    'function',
    'method',
    'header',
    'statement',
  ])
  .describe('What the unit is: a section, heading, paragraph, table row, record, code symbol (module, class, function, …), hidden or OCR text, …')

export const UnitEvidenceSchema = z.object({
  type: z.literal('unit'),
  id: z.number().int(),
  unit_type: UnitTypeSchema,
  extraction_id: z.number().int(),
  revision_id: z.number().int(),
  path: z.string(),
  sha256: z.string(),
  heading_path: z.array(z.string()),
  anchor: z.string().nullable(),
  tokens: z.number().int(),
  locator: z.object({
    byte_start: z.number().int(),
    byte_end: z.number().int(),
    line_start: z.number().int(),
    col_start: z.number().int(),
    line_end: z.number().int(),
    col_end: z.number().int(),
    json_pointer: z.string().nullable(),
  }),
  document: UnitDocumentSchema.optional(),
  citation: z.string().describe('path:12-14, or for a document file.docx ¶34'),
  identifiers: z.array(z.object({ kind: z.string(), value: z.string() })),
  text: z.string(),
})

export const ChunkEvidenceSchema = z.object({
  type: z.literal('chunk'),
  id: z.number().int(),
  extraction_id: z.number().int(),
  revision_id: z.number().int(),
  path: z.string(),
  sha256: z.string(),
  owner: z.string(),
  units: z.tuple([z.number().int(), z.number().int()]).describe('First and last unit id'),
  tokens: z.number().int(),
  locator: z.object({ byte_start: z.number().int(), byte_end: z.number().int(), line_start: z.number().int(), line_end: z.number().int() }),
  citation: z.string().describe('path:12-30, or for a document file.docx ¶34–36'),
  regions: z.array(z.array(z.number()).length(5)).describe('PDF and image windows: the region covered on each page, [page, x0, y0, x1, y1] in PDF points (an image: pixels), origin bottom-left'),
  capsule: z.object({
    title: z.string(),
    kind: z.string(),
    heading_path: z.array(z.string()),
    table_header: z.string().optional(),
    signature: z.string().optional(),
  }),
  text: z.string(),
})

export const SnapshotEvidenceSchema = z.object({
  type: z.literal('snapshot'),
  id: z.number().int(),
  parent_id: z.number().int().nullable(),
  job_id: z.number().int().nullable(),
  chunks: z.number().int(),
  created_at: z.number().int(),
  current: z.boolean(),
  indexes: z.array(z.object({ family: z.string(), generation: z.string(), documents: z.number().int(), status: z.enum(['verified', 'retired']) })),
  members: z.array(z.object({ source_id: z.number().int(), path: z.string(), revision_id: z.number().int(), sha256: z.string() })),
})

export const JobStatusSchema = z.object({
  type: z.literal('job'),
  id: z.number().int(),
  kind: z.enum(['add', 'rebuild', 'withdraw', 'delete-original']),
  status: z
    .enum(['queued', 'running', 'succeeded', 'partial', 'failed', 'interrupted', 'cancelled'])
    .describe('`cancelled`: taken off the queue by the owner before it ran (`finished_at` says when, `error` why)'),
  request: JobRequestSchema,
  receipt: ReceiptSchema.nullable(),
  error: z.string().nullable(),
  created_at: z.number().int(),
  finished_at: z.number().int().nullable(),
  steps: z.array(z.object({ name: z.string(), status: z.enum(['running', 'done']), started_at: z.number().int(), finished_at: z.number().int().nullable(), detail: z.unknown() })),
  progress: ProgressSchema.nullable().describe('The latest progress while the job runs in the serving process'),
})

/** `POST /v1/projects/:project/jobs/:job_id/cancel` (`cancelJob`): why the owner cancels a queued job. */
export const CancelJobRequestSchema = z
  .object({
    reason: z.string().max(500).optional().describe('Why, recorded in the job\'s `error` after "cancelled by the owner: " (at most 500 characters)'),
  })
  .strict()
export type CancelJobRequest = z.output<typeof CancelJobRequestSchema>

/** One page of the workspace's jobs, newest first (`listJobs`). */
export const JobListSchema = z.object({
  jobs: z.array(JobStatusSchema).describe('Each job exactly as job status shows it, by descending id'),
  next_before: z.number().int().nullable().describe('The `before` of the next page; null when no older job is left'),
})

/** A recorded query run as the runs listing shows it (`inspect run` has the rest). */
export const RunBriefSchema = z.object({
  id: z.string().describe('The run id (`qr_` and 20 hex digits)'),
  created_at: z.number().int().describe('When the run was logged, in ms since the Unix epoch'),
  snapshot_id: z.number().int().nullable().describe('The snapshot it read; null once retention purged it'),
  query: z.string().describe('The query text of its request'),
  duration_ms: z.number(),
  results: z.number().int().nonnegative().describe('Segments it returned'),
  agent_id: z.string().nullable(),
  task_id: z.string().nullable(),
})

/** One page of the recorded query runs, newest first (`listRuns`). */
export const RunListSchema = z.object({
  runs: z.array(RunBriefSchema),
  next_before: z.string().nullable().describe('The `before` (a run id) of the next page; null when no older run is left'),
})

export const ExtractionEvidenceSchema = z.object({
  type: z.literal('extraction'),
  id: z.number().int(),
  revision_id: z.number().int(),
  path: z.string(),
  parser: z.string(),
  document: DocumentBriefSchema.optional(),
  units: z.array(
    z.object({
      id: z.number().int(),
      unit_type: UnitTypeSchema,
      heading_path: z.array(z.string()),
      document: UnitDocumentSchema.optional(),
      text: z.string(),
    }),
  ),
})

export const EvidenceSchema = z.discriminatedUnion('type', [
  SourceEvidenceSchema,
  RevisionEvidenceSchema,
  UnitEvidenceSchema,
  ChunkEvidenceSchema,
  SnapshotEvidenceSchema,
  JobStatusSchema,
  ExtractionEvidenceSchema,
])

export type SourceEvidence = z.infer<typeof SourceEvidenceSchema>
export type RevisionEvidence = z.infer<typeof RevisionEvidenceSchema>
export type UnitEvidence = z.infer<typeof UnitEvidenceSchema>
export type ExtractionEvidence = z.infer<typeof ExtractionEvidenceSchema>
export type ChunkEvidence = z.infer<typeof ChunkEvidenceSchema>
export type SnapshotEvidence = z.infer<typeof SnapshotEvidenceSchema>
export type JobStatus = z.infer<typeof JobStatusSchema>
export type JobList = z.infer<typeof JobListSchema>
export type RunBrief = z.infer<typeof RunBriefSchema>
export type RunList = z.infer<typeof RunListSchema>
export type Evidence = z.infer<typeof EvidenceSchema>
