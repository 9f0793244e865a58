import { readFileSync } from 'node:fs'
import { userInfo } from 'node:os'
import { defineCommand } from 'citty'
import type { ApplyReport, KnowledgeChange, Migration, Proposal } from '../../contracts/knowledge.js'
import { TychoraError } from '../../errors.js'
import { type Lines, visibleLines } from '../../format/terminal.js'
import { describeChange } from '../../knowledge/items.js'
import { type ProjectPaths, findProject, initProject, projectPaths } from '../../knowledge/layout.js'
import { type EvidenceLookup, accept, listProposals, propose, readProposal, reject } from '../../knowledge/lifecycle.js'
import { readMigrations, renumber } from '../../knowledge/migrations.js'
import { answeringState, appliedMigrations, applyMigrations, builtState, readInputs, stateHash } from '../../service/knowledge-state.js'
import { repeatedFlag, writeOut } from '../context.js'
import { withLocalWorkspace } from '../route.js'

const common = {
  project: { type: 'string', description: 'The repository (or its .tychora folder); default: the nearest one up from here' },
  format: { type: 'string', description: 'text | json', default: 'text' },
} as const

function project(flag: string | undefined): ProjectPaths {
  const root = findProject(flag ?? process.cwd())
  if (!root) throw new TychoraError('E_NOT_FOUND', 'no knowledge project here or above: run `tychora knowledge init` at the repository root (creates .tychora/project.json)')
  return projectPaths(root)
}

/** Looks cited segments up in the answering state (none built yet: nothing can be cited). */
async function withLookup<T>(paths: ProjectPaths, fn: (lookup: EvidenceLookup) => Promise<T>): Promise<T> {
  const state = answeringState(paths)
  if (!state) return fn(async () => undefined)
  return withLocalWorkspace(state.dir, (ws) => fn((id) => ws.cite(id)))
}

const reviewer = (flag: string | undefined) => flag ?? process.env.TYCHORA_REVIEWER ?? userInfo().username

const proposalLine = (p: Proposal) =>
  `${p.id}  ${describeChange(p.change)}  ${p.evidence.length} cited  ${p.proposed_by.agent ?? 'unknown agent'}${p.proposed_by.task ? `/${p.proposed_by.task}` : ''}  ${p.created_at}`

function out(format: string | undefined, value: unknown, text: () => Lines): void {
  // Titles, bodies and agent names come from strangers: their control characters stay out of the
  // terminal, and a line break in a title or a name cannot start a line of its own.
  writeOut(format === 'json' ? JSON.stringify(value, null, 2) : visibleLines(text()))
}

const init = defineCommand({
  meta: {
    name: 'init',
    description: 'Make this repository a knowledge project: .tychora/ with project.json, migrations/, knowledge/, proposals/, review/ (tracked) and a .gitignore for state/',
  },
  args: {
    dir: { type: 'positional', required: false, description: 'The repository root (default: here)' },
    profile: { type: 'string', description: 'documents | code | verified (default documents)' },
    ceiling: { type: 'string', description: 'The highest sensitivity indexed (default internal)' },
  },
  async run({ args }) {
    const profile = args.profile as 'documents' | 'code' | 'verified' | undefined
    if (profile && !['documents', 'code', 'verified'].includes(profile)) throw new TychoraError('E_INVALID_ARGUMENT', `--profile must be documents, code or verified, got ${profile}`)
    const paths = await initProject(args.dir ?? process.cwd(), {
      ...(profile ? { profile } : {}),
      ...(args.ceiling ? { ceiling: args.ceiling } : {}),
    })
    writeOut(`knowledge project in ${paths.root}: commit project.json, migrations/, knowledge/ (and, as you choose, proposals/ and review/); state/ is rebuilt by \`tychora migrate apply\``)
  },
})

function changeFrom(args: Record<string, string | boolean | undefined>): KnowledgeChange {
  const op = String(args.op)
  const item = String(args.item)
  const body = args['body-file'] ? readFileSync(String(args['body-file']), 'utf8') : typeof args.body === 'string' ? args.body : undefined
  switch (op) {
    case 'create':
      return {
        op,
        item,
        title: String(args.title ?? ''),
        kind: String(args.kind ?? 'guidance'),
        body: body ?? '',
        ...(args.sensitivity ? { sensitivity: String(args.sensitivity) } : {}),
      }
    case 'edit':
      return { op, item, body: body ?? '', ...(args.title ? { title: String(args.title) } : {}) }
    case 'supersede':
      return { op, item, by: String(args.by ?? '') }
    case 'sensitivity':
      return { op, item, sensitivity: String(args.sensitivity ?? '') }
    default:
      throw new TychoraError('E_INVALID_ARGUMENT', `the change is create, edit, supersede or sensitivity, got ${op}`)
  }
}

const proposeCommand = defineCommand({
  meta: { name: 'propose', description: 'Propose a change to approved knowledge (a proposal folder for review; nothing approved changes)' },
  args: {
    ...common,
    op: { type: 'positional', required: true, description: 'create | edit | supersede | sensitivity' },
    item: { type: 'positional', required: true, description: 'The item id (lower-case words joined by hyphens)' },
    title: { type: 'string', description: 'create: the title (edit: a new one)' },
    kind: { type: 'string', description: 'create: its kind (decision, guidance, procedure, architecture_decision…; default guidance)' },
    body: { type: 'string', description: 'create/edit: the Markdown body' },
    'body-file': { type: 'string', description: 'create/edit: read the body from this file' },
    by: { type: 'string', description: 'supersede: the item that replaces it' },
    sensitivity: { type: 'string', description: "create: its level (default: the project's default); sensitivity: the new level" },
    rationale: { type: 'string', required: true, description: 'Why the change is right' },
    evidence: { type: 'string', description: 'A segment id (seg_S_C) that supports it; repeat for several' },
    agent: { type: 'string', description: 'The proposing agent' },
    task: { type: 'string', description: 'Its task' },
  },
  async run({ args, rawArgs }) {
    const paths = project(args.project)
    const request = {
      change: changeFrom(args as Record<string, string | boolean | undefined>),
      rationale: String(args.rationale),
      evidence: repeatedFlag(rawArgs, 'evidence'),
      ...(args.agent ? { agent: args.agent } : {}),
      ...(args.task ? { task: args.task } : {}),
    }
    const proposal = await withLookup(paths, (lookup) => propose(paths, request, lookup))
    out(args.format, proposal, () => [`proposed ${proposalLine(proposal)}`, `review it with \`tychora review show ${proposal.id}\``])
  },
})

export const knowledge = defineCommand({
  meta: { name: 'knowledge', description: "A project's curated knowledge: agents propose, people review, Git carries approved migrations" },
  subCommands: { init, propose: proposeCommand },
})

const reviewList = defineCommand({
  meta: { name: 'list', description: 'Pending proposals, oldest first' },
  args: { ...common },
  run({ args }) {
    const list = listProposals(project(args.project))
    out(args.format, list, () => [...list.proposals.map(proposalLine), ...list.unreadable.map((n) => `proposals/${n}: not a valid proposal (left as it is)`), `${list.proposals.length} pending`])
  },
})

const reviewShow = defineCommand({
  meta: { name: 'show', description: 'One proposal: the change, its rationale and its cited evidence (checked against the state that answers now)' },
  args: { ...common, id: { type: 'positional', required: true, description: 'The proposal id' } },
  async run({ args }) {
    const paths = project(args.project)
    const proposal = readProposal(paths, String(args.id))
    const stale = await withLookup(paths, async (lookup) => {
      const gone: string[] = []
      for (const e of proposal.evidence) if ((await lookup(e.segment_id))?.sha256 !== e.sha256) gone.push(e.segment_id)
      return gone
    })
    out(args.format, { ...proposal, stale_evidence: stale }, () => {
      const c = proposal.change
      const lines: Array<Lines[number]> = [proposalLine(proposal), { block: `rationale: ${proposal.rationale}` }]
      if (c.op === 'create' || c.op === 'edit') lines.push('body:', { block: c.body })
      for (const e of proposal.evidence) {
        lines.push(`evidence ${e.segment_id} ${e.citation} @${e.sha256.slice(0, 12)}${stale.includes(e.segment_id) ? '  (no longer in the current state)' : ''}`, `  ${e.quote.replaceAll('\n', ' ')}`)
      }
      return lines
    })
  },
})

const decisionArgs = {
  ...common,
  id: { type: 'positional', required: true, description: 'The proposal id' },
  reviewer: { type: 'string', description: 'Who decides (default $TYCHORA_REVIEWER, else the user name)' },
  reason: { type: 'string', description: 'Why (required to reject)' },
} as const

const migrationLine = (m: Migration) => `migrations/${m.id}.json (${m.decision}: ${describeChange(m.change)})`

const reviewAccept = defineCommand({
  meta: {
    name: 'accept',
    description: 'Accept a proposal: it becomes the next knowledge migration (commit it; `tychora migrate apply` after the merge makes it approved)',
  },
  args: {
    ...decisionArgs,
    'allow-stale-evidence': { type: 'boolean', description: 'Accept even though cited evidence no longer exists in the current state' },
  },
  async run({ args }) {
    const paths = project(args.project)
    const decision = {
      proposal: String(args.id),
      reviewer: reviewer(args.reviewer),
      ...(args.reason ? { reason: args.reason } : {}),
      ...(args['allow-stale-evidence'] ? { allow_stale_evidence: true } : {}),
    }
    const migration = await withLookup(paths, (lookup) => accept(paths, decision, lookup))
    out(args.format, migration, () => [`accepted: ${migrationLine(migration)} and its .sha256; commit both, then run \`tychora migrate apply\``])
  },
})

const reviewReject = defineCommand({
  meta: { name: 'reject', description: 'Reject a proposal: recorded as a rejected approach (a migration), searchable so agents stop proposing it' },
  args: { ...decisionArgs },
  async run({ args }) {
    const paths = project(args.project)
    const migration = await reject(paths, {
      proposal: String(args.id),
      reviewer: reviewer(args.reviewer),
      ...(args.reason ? { reason: args.reason } : {}),
    })
    out(args.format, migration, () => [`rejected: ${migrationLine(migration)}; commit it, then run \`tychora migrate apply\``])
  },
})

export const review = defineCommand({
  meta: { name: 'review', description: "A person's decisions on proposals: list, show, accept, reject" },
  subCommands: { list: reviewList, show: reviewShow, accept: reviewAccept, reject: reviewReject },
})

function applyText(r: ApplyReport): string[] {
  const how = {
    reused: 'already built: switched to it',
    descendant: 'copied its nearest built ancestor and applied the delta',
    empty: 'built from the migrations',
  }[r.base]
  return [
    `state ${r.state_hash.slice(0, 12)} (${how}) in ${r.duration_ms.toFixed(0)} ms; snapshot ${r.snapshot_id ?? '–'}`,
    ...(r.applied.length > 0 ? [`applied ${r.applied.length}: ${r.applied.join(', ')}`] : []),
    ...(r.withheld.length > 0 ? [`withheld above the sensitivity ceiling (never indexed): ${r.withheld.join(', ')}`] : []),
    ...(r.purged.length > 0 ? [`purged (sensitivity raised past the ceiling): ${r.purged.join(', ')}`] : []),
    ...r.diagnostics.map((d) => `warning: ${d}`),
  ]
}

const migrateApply = defineCommand({
  meta: {
    name: 'apply',
    description: 'Build (or switch to) the knowledge state of the tracked migrations: a built state is reused, a descendant applies only the delta',
  },
  args: { ...common },
  async run({ args }) {
    const report = await applyMigrations(project(args.project))
    out(args.format, report, () => applyText(report))
  },
})

const migrateStatus = defineCommand({
  meta: { name: 'status', description: 'The migrations, whether the answering state has applied each, and the state hash of the tracked inputs' },
  args: { ...common },
  run({ args }) {
    const paths = project(args.project)
    const inputs = readInputs(paths)
    const hash = stateHash(inputs)
    const built = builtState(paths)
    const answering = answeringState(paths)
    const applied = new Set((answering ? appliedMigrations(answering.dir) : []).map((m) => `${m.id} ${m.checksum}`))
    const migrations = readMigrations(paths).map((m) => ({
      id: m.migration.id,
      decision: m.migration.decision,
      change: describeChange(m.migration.change),
      checksum: m.checksum,
      applied: applied.has(`${m.migration.id} ${m.checksum}`),
    }))
    const status = { state_hash: hash, built: built !== undefined, answering: answering?.hash ?? null, behind: answering?.behind ?? true, migrations }
    out(args.format, status, () => [
      ...migrations.map((m) => `${m.applied ? 'applied' : 'pending'}  ${m.id}  ${m.decision}  ${m.change}  ${m.checksum.slice(0, 12)}`),
      `state ${hash.slice(0, 12)}: ${built ? 'built' : 'not built (run `tychora migrate apply`)'}${answering && answering.hash !== hash ? `; answering meanwhile: ${answering.hash.slice(0, 12)}` : ''}`,
    ])
  },
})

const migrateRenumber = defineCommand({
  meta: { name: 'renumber', description: 'Give a migration the next free number (after a merge left two migrations with one number)' },
  args: { ...common, id: { type: 'positional', required: true, description: 'The migration id (NNNN-name)' } },
  async run({ args }) {
    const moved = await renumber(project(args.project), String(args.id))
    out(args.format, moved.migration, () => [`renumbered to ${moved.migration.id}; commit the rename`])
  },
})

export const migrate = defineCommand({
  meta: { name: 'migrate', description: "Apply a knowledge project's migrations: apply, status, renumber" },
  subCommands: { apply: migrateApply, status: migrateStatus, renumber: migrateRenumber },
})

export default knowledge
