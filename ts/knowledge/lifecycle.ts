import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { mkdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import {
  type CitedEvidence,
  type Migration,
  type ProjectConfig,
  type Proposal,
  ProposalSchema,
  type ProposeRequest,
  ProposeRequestSchema,
  type ReviewDecision,
  ReviewDecisionSchema,
} from '../contracts/knowledge.js'
import { ensureValid } from '../contracts/validate.js'
import { TychoraError } from '../errors.js'
import { applyChange, describeChange, foldItems } from './items.js'
import { type ProjectPaths, readProjectConfig } from './layout.js'
import { migrationId, nextSeq, readMigrations, writeAtomic, writeMigration } from './migrations.js'

/** Resolves a cited segment id against the state that answers now; `undefined`: it no longer exists there. */
export type EvidenceLookup = (segmentId: string) => Promise<CitedEvidence | undefined>

/**
 * Writes a proposal folder (`proposals/<id>/proposal.json`): the change, its rationale, the
 * evidence it cites as that evidence stands now, and who proposed it. Approved knowledge does not
 * change; a person decides with `review accept|reject`.
 *
 * @throws E_FORBIDDEN for another tenant; E_INVALID_ARGUMENT for a sensitivity outside the
 *   project's levels; E_NOT_FOUND / E_CONFLICT for a change that does not fit the approved items;
 *   E_NOT_FOUND for cited evidence the current state does not hold.
 */
export async function propose(paths: ProjectPaths, request: ProposeRequest, lookup: EvidenceLookup, now = new Date()): Promise<Proposal> {
  const input = ensureValid(ProposeRequestSchema, request)
  const config = readProjectConfig(paths)
  checkTenant(input.tenant, config)
  const group = input.acl_group ?? (config.acl_groups[0] as string)
  if (!config.acl_groups.includes(group)) {
    throw new TychoraError('E_FORBIDDEN', `access group ${JSON.stringify(group)} is not one of this project's (${config.acl_groups.join(', ')}): a write naming another group is refused`)
  }
  const items = foldItems(
    readMigrations(paths).map((m) => m.migration),
    config,
  )
  applyChange(items, input.change, '(proposal)', config)
  const evidence: CitedEvidence[] = []
  for (const id of input.evidence) {
    const cited = await lookup(id)
    if (!cited) throw new TychoraError('E_NOT_FOUND', `evidence ${JSON.stringify(id)} does not exist in the current state: cite a segment id a search returned`)
    evidence.push(cited)
  }
  const day = now.toISOString().slice(0, 10).replaceAll('-', '')
  const proposal = ProposalSchema.parse({
    version: 1,
    id: `p-${day}-${input.change.item.slice(0, 40).replace(/-+$/, '')}-${randomBytes(3).toString('hex')}`,
    created_at: now.toISOString(),
    tenant: config.tenant,
    acl_group: group,
    change: input.change,
    rationale: input.rationale,
    evidence,
    proposed_by: { ...(input.agent ? { agent: input.agent } : {}), ...(input.task ? { task: input.task } : {}) },
  })
  const dir = join(paths.proposals, proposal.id)
  await mkdir(dir, { recursive: true })
  await writeAtomic(join(dir, 'proposal.json'), `${JSON.stringify(proposal, null, 2)}\n`)
  return proposal
}

/** Pending proposals, oldest first; a folder that does not hold a valid proposal is reported, not skipped silently. */
export function listProposals(paths: ProjectPaths): { proposals: Proposal[]; unreadable: string[] } {
  const proposals: Proposal[] = []
  const unreadable: string[] = []
  if (!existsSync(paths.proposals)) return { proposals, unreadable }
  for (const name of readdirSync(paths.proposals).sort()) {
    try {
      proposals.push(readProposal(paths, name))
    } catch {
      unreadable.push(name)
    }
  }
  proposals.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id))
  return { proposals, unreadable }
}

export function readProposal(paths: ProjectPaths, id: string): Proposal {
  if (!/^p-[0-9a-z-]+$/.test(id)) throw new TychoraError('E_INVALID_ARGUMENT', `${JSON.stringify(id)} is not a proposal id (p-YYYYMMDD-item-xxxxxx)`)
  const file = join(paths.proposals, id, 'proposal.json')
  if (!existsSync(file)) throw new TychoraError('E_NOT_FOUND', `no pending proposal ${id}`)
  const parsed = ProposalSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')))
  if (!parsed.success) throw new TychoraError('E_INVALID_ARGUMENT', `proposals/${id}/proposal.json: ${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message}`)
  return parsed.data
}

/** Cited evidence that the state answering now no longer holds (its text changed or its source left). */
export async function staleEvidence(proposal: Proposal, lookup: EvidenceLookup): Promise<string[]> {
  const stale: string[] = []
  for (const cited of proposal.evidence) {
    const now = await lookup(cited.segment_id)
    if (!now || now.sha256 !== cited.sha256) stale.push(`${cited.segment_id} (${cited.citation})`)
  }
  return stale
}

/**
 * A person accepts a proposal: it becomes the next knowledge migration (with its checksum file),
 * its body is written to `knowledge/<item>.md`, the review is recorded in `review/`, and the
 * proposal folder goes. Approved knowledge changes only when `migrate apply` runs (after the pull
 * request is merged).
 *
 * @throws E_CONFLICT when cited evidence no longer exists (unless `allow_stale_evidence`) or the
 *   change no longer fits the approved items.
 */
export async function accept(paths: ProjectPaths, decision: ReviewDecision, lookup: EvidenceLookup, now = new Date()): Promise<Migration> {
  const input = ensureValid(ReviewDecisionSchema, decision)
  const proposal = readProposal(paths, input.proposal)
  const config = readProjectConfig(paths)
  const migrations = readMigrations(paths)
  applyChange(
    foldItems(
      migrations.map((m) => m.migration),
      config,
    ),
    proposal.change,
    '(review)',
    config,
  )
  const stale = await staleEvidence(proposal, lookup)
  if (stale.length > 0 && !input.allow_stale_evidence) {
    throw new TychoraError(
      'E_CONFLICT',
      `proposal ${proposal.id} cites evidence the current state no longer holds: ${stale.join(', ')}. Check the change still holds, then accept with --allow-stale-evidence, or reject it`,
    )
  }
  const migration = await record(paths, proposal, migrations, 'accepted', input, now)
  const change = proposal.change
  if (change.op === 'create' || change.op === 'edit') await writeAtomic(join(paths.knowledge, `${change.item}.md`), change.body)
  return migration
}

/** A person rejects a proposal: it becomes a migration recording the rejected approach, so agents find it and stop proposing it. */
export async function reject(paths: ProjectPaths, decision: ReviewDecision, now = new Date()): Promise<Migration> {
  const input = ensureValid(ReviewDecisionSchema, decision)
  if (!input.reason) throw new TychoraError('E_INVALID_ARGUMENT', 'a rejection needs a reason (--reason): it is what agents will read')
  const proposal = readProposal(paths, input.proposal)
  return record(paths, proposal, readMigrations(paths), 'rejected', input, now)
}

async function record(paths: ProjectPaths, proposal: Proposal, migrations: ReturnType<typeof readMigrations>, decision: 'accepted' | 'rejected', input: ReviewDecision, now: Date): Promise<Migration> {
  const seq = nextSeq(migrations)
  const verb = decision === 'accepted' ? proposal.change.op : 'reject'
  const migration: Migration = {
    version: 1,
    id: migrationId(seq, `${verb}-${proposal.change.item}`),
    seq,
    decision,
    proposal: proposal.id,
    tenant: proposal.tenant,
    acl_group: proposal.acl_group,
    change: proposal.change,
    rationale: proposal.rationale,
    evidence: proposal.evidence,
    proposed_by: proposal.proposed_by,
    reviewed_by: input.reviewer,
    reviewed_at: now.toISOString(),
    ...(input.reason ? { reason: input.reason } : {}),
  }
  await mkdir(paths.migrations, { recursive: true })
  await mkdir(paths.review, { recursive: true })
  await writeMigration(paths, migration)
  await writeAtomic(
    join(paths.review, `${proposal.id}.json`),
    `${JSON.stringify({ proposal: proposal.id, decision, change: describeChange(proposal.change), migration: migration.id, reviewer: input.reviewer, reason: input.reason ?? null, at: migration.reviewed_at }, null, 2)}\n`,
  )
  await rm(join(paths.proposals, proposal.id), { recursive: true, force: true })
  return migration
}

function checkTenant(tenant: string | undefined, config: ProjectConfig): void {
  if (tenant !== undefined && tenant !== config.tenant) {
    throw new TychoraError('E_FORBIDDEN', `tenant ${JSON.stringify(tenant)} is not this project's (${config.tenant}): a write naming another tenant is refused`)
  }
}
