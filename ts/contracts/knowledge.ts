import { z } from 'zod'
import { KindSchema } from './query.js'

/**
 * Team knowledge (DESIGN §10): agents propose, people review, Git carries the approved changes as
 * ordered, checksummed knowledge migrations, and `migrate apply` makes them approved knowledge.
 */

/** An item's id: lower-case words joined by hyphens; its body lives in knowledge/<item>.md. */
export const ItemIdSchema = z.string().regex(/^[a-z0-9][a-z0-9-]{0,79}$/, 'an item id is 1–80 lower-case letters, digits and hyphens, starting with a letter or digit')

/** A sensitivity label: one of the project's configured levels (checked against them where used). */
export const SensitivitySchema = z.string().regex(/^[a-z][a-z0-9_-]{0,31}$/)

/** The default tenant: a project serves one tenant until tenancy is configured. */
export const DEFAULT_TENANT = 'default'

export const TenantSchema = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/)

/** The default access group: every item is readable by it until groups are configured. */
export const DEFAULT_GROUP = 'default'

/** An access (ACL) group an item belongs to: one of the project's configured groups. */
export const GroupSchema = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/)

/** What a change does to approved knowledge. */
export const KnowledgeChangeSchema = z.discriminatedUnion('op', [
  z
    .object({
      op: z.literal('create'),
      item: ItemIdSchema,
      title: z.string().min(1).max(200),
      kind: KindSchema.describe('One of the pack’s kinds (decision, guidance, procedure, architecture_decision, …)'),
      body: z.string().min(1).max(200_000).describe('Markdown'),
      sensitivity: SensitivitySchema.optional().describe("One of the project's levels (default: its default level)"),
    })
    .strict(),
  z
    .object({
      op: z.literal('edit'),
      item: ItemIdSchema,
      title: z.string().min(1).max(200).optional(),
      body: z.string().min(1).max(200_000),
    })
    .strict(),
  z.object({ op: z.literal('supersede'), item: ItemIdSchema, by: ItemIdSchema.describe('The item that replaces it') }).strict(),
  z.object({ op: z.literal('sensitivity'), item: ItemIdSchema, sensitivity: SensitivitySchema }).strict(),
])

/** Evidence a proposal cites, as it stood when it was cited. */
export const CitedEvidenceSchema = z.object({
  segment_id: z.string(),
  citation: z.string().describe('path:line-line'),
  sha256: z.string().length(64).describe("The cited revision's bytes"),
  quote: z.string().describe('The first 300 characters of the cited text'),
})

/** Who proposed: the agent and its task (an agent names them; a person may too). */
export const ProposerSchema = z.object({
  agent: z.string().min(1).max(200).optional(),
  task: z.string().min(1).max(200).optional(),
})

export const ProposeRequestSchema = z
  .object({
    change: KnowledgeChangeSchema,
    rationale: z.string().min(1).max(20_000).describe('Why the change is right'),
    evidence: z.array(z.string().min(1)).max(50).default([]).describe('Segment ids (seg_<snapshot>_<chunk>) of the evidence that supports it'),
    agent: z.string().min(1).max(200).optional(),
    task: z.string().min(1).max(200).optional(),
    tenant: TenantSchema.optional().describe("The project's tenant; any other is refused"),
    acl_group: GroupSchema.optional().describe("The access group the change is for: one of the project's acl_groups (default the first); any other is refused"),
  })
  .strict()

/** What a proposal asks for, and a migration records once reviewed (one shape, in both files' key order). */
const PROPOSED = {
  tenant: TenantSchema,
  acl_group: GroupSchema.default(DEFAULT_GROUP),
  change: KnowledgeChangeSchema,
  rationale: z.string(),
  evidence: z.array(CitedEvidenceSchema),
  proposed_by: ProposerSchema,
}

export const ProposalSchema = z.object({
  version: z.literal(1),
  id: z.string().regex(/^p-[0-9]{8}-[a-z0-9-]+-[0-9a-f]{6}$/),
  created_at: z.string().describe('ISO 8601'),
  ...PROPOSED,
})

/** An ordered, checksummed knowledge migration: a reviewed proposal, accepted or rejected. */
export const MigrationSchema = z.object({
  version: z.literal(1),
  id: z.string().regex(/^[0-9]{4}-[a-z0-9-]+$/),
  seq: z.number().int().positive(),
  decision: z.enum(['accepted', 'rejected']),
  proposal: z.string(),
  ...PROPOSED,
  reviewed_by: z.string(),
  reviewed_at: z.string().describe('ISO 8601'),
  reason: z.string().optional().describe("The reviewer's reason (always given for a rejection)"),
})

/** `.tychora/project.json`: what a project's knowledge states are built with. */
export const ProjectConfigSchema = z
  .object({
    version: z.literal(1),
    tenant: TenantSchema.default(DEFAULT_TENANT),
    acl_groups: z.array(GroupSchema).min(1).default([DEFAULT_GROUP]).describe('The access groups items may belong to; a write naming another is refused'),
    profile: z.enum(['documents', 'code', 'verified']).default('documents'),
    sensitivity: z
      .object({
        levels: z.array(SensitivitySchema).min(1).describe('Lowest first'),
        default: SensitivitySchema,
        ceiling: SensitivitySchema.describe('The highest level this deployment indexes; content above it is never indexed'),
      })
      .strict()
      .default({ levels: ['public', 'internal', 'confidential', 'secret'], default: 'internal', ceiling: 'internal' }),
  })
  .strict()

export const ReviewDecisionSchema = z
  .object({
    proposal: z.string().min(1),
    reviewer: z.string().min(1).max(200),
    reason: z.string().min(1).max(20_000).optional(),
    allow_stale_evidence: z.boolean().optional().describe('Accept even when cited evidence no longer exists in the current state'),
  })
  .strict()

export const MigrationStateSchema = z.object({
  id: z.string(),
  decision: z.enum(['accepted', 'rejected']),
  change: z.string().describe('op and item'),
  checksum: z.string().length(64),
  applied: z.boolean(),
})

export const ApplyReportSchema = z.object({
  state_hash: z.string().length(64),
  state_dir: z.string(),
  base: z.enum(['reused', 'empty', 'descendant']).describe('reused: already built (no work); descendant: a copy of an ancestor state plus the delta; empty: built from nothing'),
  applied: z.array(z.string()).describe('Migrations applied by this call'),
  snapshot_id: z.number().int().nullable(),
  withheld: z.array(z.string()).describe('Items above the sensitivity ceiling: never indexed'),
  purged: z.array(z.string()).describe('Items whose sensitivity rose past the ceiling: their rows and bytes erased in this apply'),
  diagnostics: z.array(z.string()),
  duration_ms: z.number(),
})

export const ProposalListSchema = z.object({
  proposals: z.array(ProposalSchema),
  unreadable: z.array(z.string()).describe('Folders under proposals/ that do not hold a valid proposal'),
})

export type KnowledgeChange = z.infer<typeof KnowledgeChangeSchema>
export type CitedEvidence = z.infer<typeof CitedEvidenceSchema>
export type ProposeRequest = z.input<typeof ProposeRequestSchema>
export type Proposal = z.infer<typeof ProposalSchema>
export type Migration = z.infer<typeof MigrationSchema>
export type ProjectConfig = z.infer<typeof ProjectConfigSchema>
export type ReviewDecision = z.infer<typeof ReviewDecisionSchema>
export type MigrationState = z.infer<typeof MigrationStateSchema>
export type ApplyReport = z.infer<typeof ApplyReportSchema>
export type ProposalList = z.infer<typeof ProposalListSchema>

/** One line of a change: kept, added or removed; `…` stands for a run of kept lines left out (its text counts them). */
export interface DiffLine {
  op: ' ' | '+' | '-' | '…'
  text: string
}

/** What a reviewer checks before deciding; `ok: false` is what would stop (or should stop) an accept. */
export interface ReviewCheck {
  check: 'fits the approved items' | 'evidence still holds' | 'within the ceiling'
  ok: boolean
  detail: string
}

/** A pending proposal as a person reviews it: the change, its diff, its cited evidence, the checks. */
export interface PendingReview {
  proposal: Proposal
  /** The approved item it changes, as it stands (null for a new item). */
  current: { title: string; body: string; sensitivity: string } | null
  /** The body's change, line by line (a new item: every line added). */
  diff: DiffLine[]
  checks: ReviewCheck[]
  /** Cited segment ids whose text the answering state no longer holds. */
  stale_evidence: string[]
}
