import { z } from 'zod'

/** Which relation assertions to list. */
export const ListRelationsRequestSchema = z
  .object({
    key: z.string().min(1).optional().describe('Assertions with this key at either end (RFC 3986, V1.2.3)'),
    relation: z.string().min(1).optional(),
    status: z.enum(['proposed', 'accepted', 'rejected']).optional(),
  })
  .strict()

/** An assertion to declare (the owner: accepted at once) or propose (reviewed later). */
export const DeclareRelationRequestSchema = z
  .object({
    relation: z.string().min(1).describe('A relation type the pack defines (obsoletes, supersedes, implements…)'),
    from: z.string().min(1).describe("The subject's key"),
    to: z.string().min(1).describe("The object's key"),
    evidence: z.string().min(1).optional().describe('The supporting evidence: unit:N, chunk:N or a segment id'),
    note: z.string().max(2000).optional(),
    propose: z.boolean().optional().describe('Propose it for review instead of declaring it'),
    actor: z.string().max(200).optional(),
  })
  .strict()

export const RelationAssertionSchema = z.object({
  id: z.number().int(),
  relation: z.string(),
  from_kind: z.string(),
  from_key: z.string(),
  to_kind: z.string(),
  to_key: z.string(),
  method: z.enum(['parsed', 'declared', 'proposed']),
  status: z.enum(['proposed', 'accepted', 'rejected']),
  actor: z.string(),
  note: z.string().nullable(),
  support: z.string().nullable().describe('path:line-line of the unit that supports it'),
  revision_id: z.number().int().nullable(),
  created_at: z.number().int(),
})

export type ListRelationsRequest = z.infer<typeof ListRelationsRequestSchema>
export type DeclareRelationRequest = z.infer<typeof DeclareRelationRequestSchema>
export type RelationAssertion = z.infer<typeof RelationAssertionSchema>
