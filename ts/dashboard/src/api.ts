import type { Status, VerifyReport } from '../../contracts/workspace.js'
import type { QueryRequest } from '../../contracts/query.js'
import type { QueryResult } from '../../contracts/result.js'
import type { Evidence, JobList, JobStatus, RunList } from '../../contracts/evidence.js'
import type { Finding, ReplayDiff, RunRecord } from '../../contracts/operations.js'
import type { DiffLine, Migration, PendingReview } from '../../contracts/knowledge.js'
import type { SourceList, SnapshotList } from '../../contracts/service.js'
import type { SymbolReport } from '../../contracts/symbol.js'
import type { EvalRecord, EvalRecordList } from '../../contracts/eval.js'

export type {
  EvalRecord,
  EvalRecordList,
  Evidence,
  SymbolReport,
  Migration,
  PendingReview,
  Finding,
  JobList,
  JobStatus,
  QueryRequest,
  QueryResult,
  ReplayDiff,
  RunList,
  RunRecord,
  SnapshotList,
  SourceList,
  Status,
  VerifyReport,
}

/** Two revisions of a source compared by their extracted text (`ts/service/revision-diff.ts`). */
export interface RevisionDiff {
  from: { revision_id: number; seq: number; extraction_id: number | null }
  to: { revision_id: number; seq: number; extraction_id: number | null }
  added: number
  removed: number
  lines: DiffLine[]
}

/** An error the daemon answered: its stable code and message. */
export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
  ) {
    super(message)
  }
}

interface Session {
  csrf: string
  projects: Array<{ name: string; alias: boolean }>
}

let session: Promise<Session> | undefined

/** The session: its CSRF token and the projects served (read once per page). */
export function currentSession(): Promise<Session> {
  session ??= call<Session>('GET', '/ui/api/session')
  return session
}

async function call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' }
  if (method !== 'GET') {
    headers['content-type'] = 'application/json'
    headers['x-tychora-csrf'] = (await currentSession()).csrf
  }
  const response = await fetch(path, { method, headers, credentials: 'same-origin', ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
  const text = await response.text()
  const parsed: unknown = text ? JSON.parse(text) : undefined
  if (!response.ok) {
    const error = (parsed ?? {}) as { code?: string; message?: string }
    throw new ApiError(error.code ?? 'E_INTERNAL', error.message ?? response.statusText, response.status)
  }
  return parsed as T
}

const p = (project: string) => `/ui/api/projects/${encodeURIComponent(project)}`

/** The dashboard API, one function per call (`ts/http/dashboard/api.ts` answers them). */
export const api = {
  status: (project: string) => call<Status>('GET', `${p(project)}/status`),
  doctor: (project: string) => call<{ findings: Finding[] }>('GET', `${p(project)}/doctor`),
  snapshots: (project: string) => call<SnapshotList>('GET', `${p(project)}/snapshots`),
  search: (project: string, request: QueryRequest) => call<QueryResult>('POST', `${p(project)}/search`, request),
  evidence: (project: string, id: string) => call<Evidence>('GET', `${p(project)}/evidence/${encodeURIComponent(id)}`),
  diff: (project: string, from: number, to: number) => call<RevisionDiff>('GET', `${p(project)}/diff?from=${from}&to=${to}`),
  symbol: (project: string, name: string) => call<SymbolReport>('GET', `${p(project)}/symbols?name=${encodeURIComponent(name)}`),
  evals: (project: string) => call<EvalRecordList>('GET', `${p(project)}/evals`),
  evalRecord: (project: string, id: string) => call<EvalRecord>('GET', `${p(project)}/evals/${encodeURIComponent(id)}`),
  sources: (project: string, offset = 0, limit = 100) => call<SourceList>('GET', `${p(project)}/sources?offset=${offset}&limit=${limit}`),
  jobs: (project: string, before?: number) => call<JobList>('GET', `${p(project)}/jobs?limit=50${before ? `&before=${before}` : ''}`),
  cancel: (project: string, id: number) => call<JobStatus>('POST', `${p(project)}/jobs/${id}/cancel`, {}),
  sync: (project: string, paths: string[]) => call<{ job_id: number }>('POST', `${p(project)}/sync`, { paths }),
  runs: (project: string, before?: string) => call<RunList>('GET', `${p(project)}/runs?limit=50${before ? `&before=${encodeURIComponent(before)}` : ''}`),
  run: (project: string, id: string) => call<RunRecord>('GET', `${p(project)}/runs/${encodeURIComponent(id)}`),
  replay: (project: string, id: string, snapshot: 'recorded' | 'current') => call<ReplayDiff>('POST', `${p(project)}/runs/${encodeURIComponent(id)}/replay`, { snapshot }),
  pictureUrl: (project: string, extraction: number, ordinal: number) => `${p(project)}/pictures/${extraction}/${ordinal}`,
  reviewDescription: (project: string, id: number, status: 'accepted' | 'rejected' | 'unreviewed') => call<unknown>('POST', `${p(project)}/descriptions/${id}/review`, { status }),
  pageUrl: (project: string, revision: number, page: number, dpi: number) => `${p(project)}/pages/${revision}/${page}?dpi=${dpi}`,
  renderUrl: (project: string, id: string) => `${p(project)}/render/${encodeURIComponent(id)}?dpi=110`,
  events: (project: string) => new EventSource(`${p(project)}/events`),
  reviews: () => call<{ enabled: boolean; reviews: PendingReview[]; unreadable: string[] }>('GET', '/ui/api/review'),
  decide: (id: string, decision: 'accept' | 'reject', reason: string, allowStale: boolean) =>
    call<{ migration: Migration }>('POST', `/ui/api/review/${encodeURIComponent(id)}`, { decision, ...(reason.trim() ? { reason } : {}), ...(allowStale ? { allow_stale_evidence: true } : {}) }),
}
