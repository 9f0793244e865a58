import { QueryRequestSchema } from '../contracts/query.js'
import type { QueryResult } from '../contracts/result.js'
import type { ReplayDiff, RunRecord } from '../contracts/operations.js'
import { validate } from '../contracts/validate.js'
import { TychoraError } from '../errors.js'

/** What a replay needs of a workspace. */
export interface Replayable {
  inspectRun(runId: string): Promise<RunRecord>
  search(request: ReturnType<typeof QueryRequestSchema.parse>): Promise<QueryResult>
}

/** The chunk a segment id (`seg_S_C`) stands for: what stays the same across snapshots. */
export function chunkOf(segmentId: string): string {
  return /^seg_\d+_(\d+)$/.exec(segmentId)?.[1] ?? segmentId
}

/**
 * The recorded request of `runId` run again — on the snapshot it read (`snapshot` undefined), on
 * snapshot N, or on the current one (`'current'`) — and its results diffed against the recorded
 * ones. Segment ids carry their snapshot, so results are matched by chunk: the same evidence is
 * the same result on any snapshot, and changed text is a different chunk. The CLI's
 * `search --replay` and the dashboard's history view both answer with this.
 */
export async function replayRun(ws: Replayable, runId: string, snapshot: number | 'current' | undefined): Promise<ReplayDiff> {
  const run = await ws.inspectRun(runId)
  if (snapshot === undefined && run.snapshot_id === null) {
    throw new TychoraError('E_NOT_FOUND', `run ${runId} read a snapshot that retention has purged; replay it on another with --snapshot N or --snapshot current`)
  }
  const recorded = Object.fromEntries(Object.entries(run.request).filter(([key, v]) => v !== null && key !== 'snapshot_id'))
  const pin = snapshot === 'current' ? undefined : (snapshot ?? run.snapshot_id ?? undefined)
  const request = validate(QueryRequestSchema, { ...recorded, ...(pin === undefined ? {} : { snapshot_id: pin }) })
  const result = await ws.search(request)
  const before = run.summary.segments
  const after = result.segments.map((s) => s.id)
  const was = before.map(chunkOf)
  const now = after.map(chunkOf)
  return {
    run_id: runId,
    replay_run_id: result.run_id,
    recorded_snapshot_id: run.snapshot_id,
    snapshot_id: result.snapshot_id,
    same: was.length === now.length && was.every((chunk, i) => now[i] === chunk),
    before,
    after,
    added: after.filter((_, i) => !was.includes(now[i] as string)),
    removed: before.filter((_, i) => !now.includes(was[i] as string)),
    moved: after.filter((_, i) => was.includes(now[i] as string) && was[i] !== now[i]),
    before_citations: run.summary.citations ?? [],
    after_citations: result.segments.map((s) => s.citation),
    warnings: result.warnings,
  }
}
