import { userInfo } from 'node:os'
import { diffLines } from 'diff'
import type { DiffLine, Migration, PendingReview, ProjectConfig, Proposal, ReviewCheck } from '../contracts/knowledge.js'
import { TychoraError } from '../errors.js'
import { type Item, applyChange, foldItems } from '../knowledge/items.js'
import { type ProjectPaths, projectPaths, readProjectConfig } from '../knowledge/layout.js'
import { type EvidenceLookup, accept, listProposals, reject } from '../knowledge/lifecycle.js'
import { readMigrations } from '../knowledge/migrations.js'

/** Someone's decision on a proposal: accept or reject, with the reason (required to reject). */
export interface ReviewAct {
  decision: 'accept' | 'reject'
  reason?: string
  allow_stale_evidence?: boolean
}

/** Who decides from this machine: `$TYCHORA_REVIEWER`, else the user the daemon runs as. */
export const localReviewer = () => process.env.TYCHORA_REVIEWER ?? userInfo().username

/**
 * The person's side of a knowledge project (its root holding `.tychora/`): the pending proposals
 * with what a reviewer needs, and the decision, which writes the migration as `review accept|reject`
 * does. `lookup` resolves cited evidence against the state that answers now.
 */
export class ReviewDesk {
  readonly paths: ProjectPaths
  /** The name the project is served under: whose owner may decide. */
  readonly project: string
  readonly #lookup: () => Promise<EvidenceLookup>
  /** Decisions one at a time: each reads the migrations and writes the next one. */
  #deciding: Promise<unknown> = Promise.resolve()

  constructor(root: string, project: string, lookup: () => Promise<EvidenceLookup>) {
    this.paths = projectPaths(root)
    this.project = project
    this.#lookup = lookup
  }

  async pending(): Promise<{ reviews: PendingReview[]; unreadable: string[] }> {
    const { proposals, unreadable } = listProposals(this.paths)
    const lookup = await this.#lookup()
    const config = readProjectConfig(this.paths)
    const items = foldItems(
      readMigrations(this.paths).map((m) => m.migration),
      config,
    )
    const reviews: PendingReview[] = []
    for (const proposal of proposals) reviews.push(await this.#review(proposal, lookup, config, items))
    return { reviews, unreadable }
  }

  /** A decision, after any in flight: two at once (a double click, two tabs) would both take the same sequence number. */
  decide(id: string, act: ReviewAct): Promise<Migration> {
    const next = this.#deciding.then(() => this.#decide(id, act))
    this.#deciding = next.catch(() => undefined)
    return next
  }

  async #decide(id: string, act: ReviewAct): Promise<Migration> {
    const decision = {
      proposal: id,
      reviewer: localReviewer(),
      ...(act.reason ? { reason: act.reason } : {}),
      ...(act.allow_stale_evidence ? { allow_stale_evidence: true } : {}),
    }
    if (act.decision === 'reject') return reject(this.paths, decision)
    return accept(this.paths, decision, await this.#lookup())
  }

  async #review(proposal: Proposal, lookup: EvidenceLookup, config: ProjectConfig, items: Map<string, Item>): Promise<PendingReview> {
    const change = proposal.change
    const item = items.get(change.item)
    const checks: ReviewCheck[] = []
    try {
      applyChange(items, change, '(review)', config)
      checks.push({ check: 'fits the approved items', ok: true, detail: `${change.op} ${change.item} applies to the approved items` })
    } catch (error) {
      checks.push({ check: 'fits the approved items', ok: false, detail: error instanceof TychoraError ? error.message : String(error) })
    }
    const stale: string[] = []
    for (const cited of proposal.evidence) {
      const now = await lookup(cited.segment_id)
      if (!now || now.sha256 !== cited.sha256) stale.push(cited.segment_id)
    }
    checks.push({
      check: 'evidence still holds',
      ok: stale.length === 0,
      detail:
        proposal.evidence.length === 0
          ? 'cites no evidence'
          : stale.length === 0
            ? `all ${proposal.evidence.length} cited segments hold`
            : `${stale.length} of ${proposal.evidence.length} cited segments changed or left: ${stale.join(', ')}`,
    })
    const level = change.op === 'create' ? (change.sensitivity ?? config.sensitivity.default) : change.op === 'sensitivity' ? change.sensitivity : item?.sensitivity
    if (level !== undefined) {
      const within = config.sensitivity.levels.indexOf(level) <= config.sensitivity.levels.indexOf(config.sensitivity.ceiling)
      checks.push({ check: 'within the ceiling', ok: within, detail: `${level} (ceiling ${config.sensitivity.ceiling})` })
    }
    const before = item?.body ?? ''
    const after = change.op === 'create' || change.op === 'edit' ? change.body : before
    return {
      proposal,
      current: item ? { title: item.title, body: item.body, sensitivity: item.sensitivity } : null,
      diff: reviewDiff(before, after),
      checks,
      stale_evidence: stale,
    }
  }
}

/**
 * The diff a reviewer reads: the shortest one, or, for two texts too far apart to compare within
 * the bounds, the whole body replaced (every old line removed, every new one added: still exact,
 * only longer), so that one huge proposal cannot fail the listing of every other.
 */
export function reviewDiff(before: string, after: string): DiffLine[] {
  try {
    return lineDiff(before, after)
  } catch (error) {
    if (!(error instanceof TychoraError && error.code === 'E_LIMIT_EXCEEDED')) throw error
    const lines = (text: string, op: '+' | '-'): DiffLine[] =>
      text === ''
        ? []
        : text
            .replace(/\n$/, '')
            .split('\n')
            .map((line) => ({ op, text: line }))
    return [...lines(before, '-'), ...lines(after, '+')]
  }
}

/** Bounds on a line diff, which runs on the event loop: edits (lines added plus removed) and time. */
const MAX_EDIT_LENGTH = 20_000
const DIFF_TIMEOUT_MS = 250
/**
 * Texts of at most this many lines together are diffed without the clock: Myers' diff is
 * O(lines × edits), a few million steps here, milliseconds. A clock on them would fail a two-line
 * edit whenever the process is paused for 250 ms (a GC, a loaded machine), which is no property of
 * the texts.
 */
const UNTIMED_LINES = 2_000

/** `before` → `after` line by line (jsdiff's Myers diff); the texts' last newline is not a change. */
export function lineDiff(before: string, after: string): DiffLine[] {
  const out: DiffLine[] = []
  // A last line without its newline would differ from the same line with one.
  const ended = (text: string) => (text === '' || text.endsWith('\n') ? text : `${text}\n`)
  const timed = lineCount(before) + lineCount(after) > UNTIMED_LINES
  const parts = diffLines(ended(before), ended(after), { maxEditLength: MAX_EDIT_LENGTH, ...(timed ? { timeout: DIFF_TIMEOUT_MS } : {}) })
  if (!parts) throw new TychoraError('E_LIMIT_EXCEEDED', `the two texts differ too much to compare line by line (over ${MAX_EDIT_LENGTH} edits or ${DIFF_TIMEOUT_MS} ms)`)
  for (const part of parts) {
    const op = part.added ? '+' : part.removed ? '-' : ' '
    const lines = part.value.endsWith('\n') ? part.value.slice(0, -1).split('\n') : part.value.split('\n')
    for (const text of lines) out.push({ op, text })
  }
  return out
}

function lineCount(text: string): number {
  let lines = 1
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) lines += 1
  return lines
}
