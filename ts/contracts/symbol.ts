import { z } from 'zod'
import { UnitTypeSchema } from './evidence.js'

/** `inspect symbol`: what to look up. */
export const InspectSymbolRequestSchema = z
  .object({
    name: z.string().min(1).max(500).describe('A symbol name: simple (parse_args), qualified (Workspace.search) or a full symbol path (pkg.mod.Class.method, src/a.ts#Foo.bar)'),
    repo: z.string().min(1).max(4096).optional().describe('Only definitions captured under a root whose path ends with this (a repository directory)'),
    snapshot_id: z.number().int().positive().optional().describe('Pin a published snapshot; default is the current one'),
  })
  .strict()

export const SiteSchema = z.object({
  path: z.string().describe('File, relative to its root'),
  root: z.string().describe('The capture root (repository) the file came from'),
  line_start: z.number().int().positive(),
  line_end: z.number().int().positive(),
  revision_id: z.number().int(),
  commit: z.string().optional().describe('Repository commit the bytes were captured at'),
  citation: z.string().describe('path:line or path:start-end'),
})

export const SymbolRelationSchema = z.object({
  kind: z.enum(['defines', 'contains', 'imports', 'references', 'calls', 'inherits', 'implements']),
  symbol: z.string().nullable().describe('The other symbol: the referring one for references and callers, the target for callees'),
  text: z.string().describe('The site as written, e.g. self.parse'),
  outcome: z.enum(['resolved', 'ambiguous', 'unresolved']),
  reason: z.string().optional().describe('Why it did not resolve'),
  candidates: z.array(z.string()).optional().describe('Candidate symbol paths of an ambiguous site'),
  site: SiteSchema,
})

export const SymbolDefinitionSchema = z.object({
  unit_id: z.number().int(),
  symbol: z.string().describe('Symbol path'),
  unit_type: UnitTypeSchema,
  site: SiteSchema,
  signature: z.string().describe('The declaration line'),
  references: z.array(SymbolRelationSchema).describe('Sites that resolve to this definition'),
  references_total: z.number().int().nonnegative(),
  callers: z.array(SymbolRelationSchema).describe('One call site per calling symbol'),
  callers_total: z.number().int().nonnegative(),
  callees: z.array(SymbolRelationSchema).describe('Calls made from this symbol, with their outcome'),
  callees_total: z.number().int().nonnegative(),
})

export const SymbolReportSchema = z.object({
  name: z.string(),
  snapshot_id: z.number().int().nullable(),
  resolution: z.literal('syntactic').describe('Scope rules and import bindings, not a compiler'),
  definitions: z.array(SymbolDefinitionSchema),
  unresolved: z.array(SymbolRelationSchema).describe('Sites naming the symbol that resolved nowhere or to several candidates'),
  unresolved_total: z.number().int().nonnegative(),
})

export type InspectSymbolRequest = z.infer<typeof InspectSymbolRequestSchema>
export type SymbolReport = z.infer<typeof SymbolReportSchema>
export type SymbolRelation = z.infer<typeof SymbolRelationSchema>
