import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { lstat, mkdir, open, rename, rm } from 'node:fs/promises'
import { basename, join, resolve } from 'node:path'
import { EVAL_PER_QUERY_CAP, EVAL_RECORDS_DIR, EVAL_RETURNED_CAP, type EvalKind, type EvalQuery, type EvalRecord, EvalRecordSchema } from '../contracts/eval.js'
import { TychoraError } from '../errors.js'
import type { BeirReport } from './beir.js'
import type { BeirCodeReport } from './beir-code.js'
import type { EvidenceReport } from './evidence.js'

/**
 * Evaluation records: one `tychora eval … --record` run as a JSON file in the workspace's `evals/`
 * folder (`ts/contracts/eval.ts`), read back by `ts/service/eval-records.ts`.
 */

/** The package checkout the evaluation ran from: its root (null when unknown) and version. */
export interface EvalCheckout {
  root: string | null
  version: string
}

/** What one evaluation run produced, by kind; `settings` is what was asked (profile, split, embeddings, …). */
export type EvalRecordInput = { settings: Record<string, unknown>; checkout: EvalCheckout; now?: number } & (
  | { kind: 'beir'; report: BeirReport }
  | { kind: 'cosqa'; report: { baseline: BeirReport; code: BeirCodeReport } }
  | { kind: 'evidence'; report: EvidenceReport; setFile: string }
)

const OBJECT_ID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/

/**
 * HEAD's commit of the git checkout at `root`, read from its `.git` (a folder, or a worktree's
 * `gitdir:` file; loose refs, then packed-refs), so no process is started. Null when `root` is
 * not a checkout, the ref cannot be read or resolved, or anything fails: it never throws.
 */
export function gitCommit(root: string | null): string | null {
  if (!root) return null
  try {
    let gitDir = join(root, '.git')
    const stat = statSync(gitDir)
    if (stat.isFile()) {
      const pointer = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(gitDir, 'utf8'))?.[1]
      if (!pointer) return null
      gitDir = resolve(root, pointer)
    } else if (!stat.isDirectory()) return null
    const commonFile = join(gitDir, 'commondir')
    const common = existsSync(commonFile) ? resolve(gitDir, readFileSync(commonFile, 'utf8').trim()) : gitDir
    let head = readFileSync(join(gitDir, 'HEAD'), 'utf8').trim()
    // A symbolic ref may name another (rarely more than one step).
    for (let step = 0; step < 5; step++) {
      if (OBJECT_ID.test(head)) return head
      const ref = /^ref:\s*(refs\/\S+)$/.exec(head)?.[1]
      if (!ref || ref.split('/').some((part) => part === '' || part === '.' || part === '..')) return null
      const loose = [join(gitDir, ref), join(common, ref)].find((p) => existsSync(p) && statSync(p).isFile())
      if (loose) {
        head = readFileSync(loose, 'utf8').trim()
        continue
      }
      const packedFile = join(common, 'packed-refs')
      if (!existsSync(packedFile)) return null
      for (const line of readFileSync(packedFile, 'utf8').split('\n')) {
        const [sha, name] = line.trim().split(' ')
        if (name === ref && sha && OBJECT_ID.test(sha)) return sha
      }
      return null
    }
    return null
  } catch {
    return null
  }
}

/** A new record id: compact ISO time (`20260115T103045123Z`), kind, 8 random hex digits. */
export function evalRecordId(kind: EvalKind, createdAt: number): string {
  const compact = new Date(createdAt).toISOString().replace(/[-:.]/g, '')
  return `${compact}-${kind}-${randomBytes(4).toString('hex')}`
}

const finite = (entries: [string, number | undefined][]): Record<string, number> => Object.fromEntries(entries.filter((e): e is [string, number] => typeof e[1] === 'number' && Number.isFinite(e[1])))

/** A BEIR report's headline figures under the record's stable keys (`prefix` for a second run in one record). */
export function beirMetrics(report: BeirReport, prefix = ''): Record<string, number> {
  return finite([
    [`${prefix}ndcg@10`, report.ndcg_at_10],
    [`${prefix}recall@100`, report.recall_at_100],
    [`${prefix}mrr@10`, report.mrr_at_10],
    [`${prefix}recall@10`, report.recall_at_10],
    [`${prefix}queries`, report.queries],
    [`${prefix}documents`, report.documents],
    [`${prefix}ingest_s`, report.ingest_seconds],
    [`${prefix}query_p50_ms`, report.query_latency_ms.p50],
    [`${prefix}query_p99_ms`, report.query_latency_ms.p99],
    [`${prefix}query_mean_ms`, report.query_latency_ms.mean],
  ])
}

/** An evidence report's headline figures, overall and per question type (`by_type.<type>.<metric>`). */
export function evidenceMetrics(report: EvidenceReport): Record<string, number> {
  return finite([
    ['accuracy@1', report.accuracy_at_1],
    ['ndcg@10', report.ndcg_at_10],
    ['forbidden@10', report.forbidden_at_10],
    ['queries', report.questions],
    ['corpus_files', report.corpus_files],
    ['ingest_s', report.ingest_seconds],
    ['query_p50_ms', report.query_latency_ms.p50],
    ['query_p99_ms', report.query_latency_ms.p99],
    ...Object.entries(report.by_type).flatMap(([type, s]): [string, number][] => [
      [`by_type.${type}.accuracy@1`, s.accuracy_at_1],
      [`by_type.${type}.ndcg@10`, s.ndcg_at_10],
      [`by_type.${type}.forbidden@10`, s.forbidden_at_10],
      [`by_type.${type}.queries`, s.questions],
    ]),
  ])
}

/** Settings as JSON holds them: undefined values dropped, so the record states only what was set. */
const plain = (settings: Record<string, unknown>): Record<string, unknown> => JSON.parse(JSON.stringify(settings)) as Record<string, unknown>

/**
 * The record of one run: its id and time, the checkout's commit and version, what was asked, the
 * headline metrics, and each query (at most `EVAL_PER_QUERY_CAP`, each with at most
 * `EVAL_RETURNED_CAP` returned items). Checked against `EvalRecordSchema` before it is returned.
 */
export function buildEvalRecord(input: EvalRecordInput): EvalRecord {
  const createdAt = input.now ?? Date.now()
  let set: string
  let split: string | undefined
  let metrics: Record<string, number>
  let queries: EvalQuery[]
  if (input.kind === 'beir') {
    set = basename(input.report.dataset)
    split = input.report.split
    metrics = beirMetrics(input.report)
    queries = input.report.per_query ?? []
  } else if (input.kind === 'cosqa') {
    // The code profile is the headline; the documents-profile baseline sits beside it.
    set = basename(input.report.code.dataset)
    split = input.report.code.split
    metrics = { ...beirMetrics(input.report.code), ...beirMetrics(input.report.baseline, 'baseline.') }
    queries = input.report.code.per_query ?? []
  } else {
    set = basename(input.setFile)
    metrics = evidenceMetrics(input.report)
    queries = input.report.per_query ?? []
  }
  const truncated = queries.length > EVAL_PER_QUERY_CAP
  return EvalRecordSchema.parse({
    version: 1,
    id: evalRecordId(input.kind, createdAt),
    kind: input.kind,
    set,
    ...(split !== undefined ? { split } : {}),
    created_at: createdAt,
    git_commit: gitCommit(input.checkout.root),
    engine_version: input.checkout.version,
    settings: plain(input.settings),
    metrics,
    ...(truncated ? { per_query_truncated: true } : {}),
    per_query: queries.slice(0, EVAL_PER_QUERY_CAP).map((q) => ({ ...q, returned: q.returned.slice(0, EVAL_RETURNED_CAP) })),
  })
}

/**
 * Refuses, with E_INVALID_ARGUMENT, a folder that is not a workspace (no workspace.toml): checked
 * before an evaluation runs, so a run with nowhere to be recorded fails at once.
 */
export function assertRecordWorkspace(workspaceDir: string): void {
  if (!existsSync(join(workspaceDir, 'workspace.toml'))) throw new TychoraError('E_INVALID_ARGUMENT', `${workspaceDir} is not a workspace (no workspace.toml): cannot record the evaluation there`)
}

/**
 * Writes a record to `<workspaceDir>/evals/<id>.json` (the folder made when missing): a temp file
 * in the same folder, flushed, then renamed, so a reader sees the whole file or none. Returns the
 * path. A folder that is not a workspace, or an `evals` that is not a real folder (a symlink), is
 * refused with E_INVALID_ARGUMENT.
 */
export async function writeEvalRecord(workspaceDir: string, record: EvalRecord): Promise<string> {
  const checked = EvalRecordSchema.parse(record)
  assertRecordWorkspace(workspaceDir)
  const dir = join(workspaceDir, EVAL_RECORDS_DIR)
  await mkdir(dir, { recursive: true })
  const stat = await lstat(dir)
  if (!stat.isDirectory()) throw new TychoraError('E_INVALID_ARGUMENT', `${dir} is not a folder (a symlink or a file): evaluation records are written only into the workspace's own evals/`)
  const target = join(dir, `${checked.id}.json`)
  const temp = join(dir, `.${checked.id}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`)
  try {
    const handle = await open(temp, 'wx', 0o644)
    try {
      await handle.writeFile(`${JSON.stringify(checked, null, 2)}\n`)
      await handle.sync()
    } finally {
      await handle.close()
    }
    await rename(temp, target)
  } catch (error) {
    await rm(temp, { force: true })
    throw new TychoraError('E_IO', `could not write ${target}: ${(error as Error).message}`, { cause: error })
  }
  // The rename is durable once the folder is flushed (best effort: not every file system allows it).
  try {
    const folder = await open(dir, 'r')
    try {
      await folder.sync()
    } finally {
      await folder.close()
    }
  } catch {
    // Nothing to undo: the record is in place.
  }
  return target
}

/** Builds the record of a run and writes it into the workspace: what `tychora eval … --record` does. */
export async function recordEval(workspaceDir: string, input: EvalRecordInput): Promise<{ path: string; record: EvalRecord }> {
  const record = buildEvalRecord(input)
  return { path: await writeEvalRecord(workspaceDir, record), record }
}
