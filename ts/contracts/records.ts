import { z } from 'zod'
import { FacetConditionSchema } from './query.js'

/** Which structured records to list. */
export const ListRecordsRequestSchema = z
  .object({
    kind: z.string().optional().describe('Only records of this kind (standard, decision, …)'),
    record_type: z.string().optional().describe('Only records of this type (requirement, decision, …)'),
    facets: z.array(FacetConditionSchema).max(32).optional().describe('Facet conditions on the records\' values: "level<=2", "chapter=V1"'),
    limit: z.number().int().min(1).max(1000).optional().describe('At most this many (default 100)'),
  })
  .strict()

const RecordStatusSchema = z.enum(['captured', 'reviewed', 'rejected']).describe('captured: read from a source; reviewed or rejected: a person decided')

/** A structured record: one per (kind, record type, key), however many files state it. */
export const RecordSummarySchema = z.object({
  id: z.number().int(),
  kind: z.string(),
  record_type: z.string(),
  key: z.string().describe('Its identifier, e.g. V1.2.3'),
  status: RecordStatusSchema,
  body: z.record(z.string(), z.unknown()).describe("The record, valid against its kind's schema for the type"),
  evidence_count: z.number().int().describe('Units that state it'),
})

export const RecordListSchema = z.object({
  records: z.array(RecordSummarySchema),
  total: z.number().int().describe('How many match in all'),
})

/** One unit that states a record: where, in which revision, and what it says there. */
export const RecordEvidenceSchema = z.object({
  source_id: z.number().int(),
  path: z.string(),
  collection: z.string(),
  format: z.string(),
  revision_id: z.number().int(),
  seq: z.number().int(),
  current: z.boolean().describe("Whether this is the source's newest revision"),
  unit_id: z.number().int(),
  citation: z.string().describe('path:line-line'),
  json_pointer: z.string().nullable(),
  body: z.record(z.string(), z.unknown()).describe('The record as this unit states it'),
})

export const RecordDetailSchema = RecordSummarySchema.extend({ evidence: z.array(RecordEvidenceSchema) })

export type ListRecordsRequest = z.infer<typeof ListRecordsRequestSchema>
export type RecordList = z.infer<typeof RecordListSchema>
export type RecordDetail = z.infer<typeof RecordDetailSchema>
