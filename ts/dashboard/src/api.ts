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

/** A citation in its file: the lines around it (`ts/engine/file-context.ts`). */
export interface FileContext {
  path: string
  first_line: number
  lines: string[]
  cited: [number, number]
  derived: boolean
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
  /** The projects this login opens. */
  projects: string[]
}

/** Where the page keeps its session key: this origin's tab storage (not a cookie: see ts/http/dashboard/access.ts). */
const KEY_STORE = 'tychora.key'

/**
 * Takes the session key from the address the login redirected to (`/#key=…`) into tab storage and
 * drops it from the address bar and history. Call once, before anything else.
 */
export function adoptLoginKey(): void {
  const found = /^#key=([A-Za-z0-9_-]{20,})$/.exec(location.hash)
  if (!found) return
  sessionStorage.setItem(KEY_STORE, found[1] as string)
  history.replaceState(null, '', '/#/search')
}

const sessionKey = () => sessionStorage.getItem(KEY_STORE) ?? ''

let session: Promise<Session> | undefined

/** The session: the projects it opens (read once per page). */
export function currentSession(): Promise<Session> {
  session ??= call<Session>('GET', '/ui/api/session')
  return session
}

async function send(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json', 'x-tychora-key': sessionKey() }
  if (method !== 'GET') headers['content-type'] = 'application/json'
  const response = await fetch(path, { method, headers, credentials: 'same-origin', ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
  if (!response.ok) {
    const text = await response.text()
    let error: { code?: string; message?: string } = {}
    try {
      error = JSON.parse(text) as typeof error
    } catch {
      // Not the daemon's JSON (a proxy's page): the status says enough.
    }
    throw new ApiError(error.code ?? 'E_INTERNAL', error.message ?? response.statusText, response.status)
  }
  return response
}

async function call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const text = await (await send(method, path, body)).text()
  return (text ? JSON.parse(text) : undefined) as T
}

/**
 * An image the API draws (a page, a region, a picture), fetched with the session key and shown
 * from a `blob:` URL (an `<img src>` cannot send the header). The caller revokes it.
 */
export async function imageUrl(path: string): Promise<{ url: string; headers: Headers }> {
  const response = await send('GET', path)
  return { url: URL.createObjectURL(await response.blob()), headers: response.headers }
}

/**
 * The job queue's server-sent events, read with `fetch` (an `EventSource` cannot send the session
 * key): calls `on(event, data)` for each event until `signal` aborts or the stream ends.
 */
export async function streamEvents(path: string, on: (event: string, data: unknown) => void, signal: AbortSignal): Promise<void> {
  const response = await fetch(path, { headers: { accept: 'text/event-stream', 'x-tychora-key': sessionKey() }, credentials: 'same-origin', signal })
  if (!response.ok || !response.body) throw new ApiError('E_UNAUTHORIZED', `the event stream was refused (${response.status})`, response.status)
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
  let buffer = ''
  for (;;) {
    const { value, done } = await reader.read()
    if (done) return
    buffer += value
    for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      const name = /^event: (.*)$/m.exec(block)?.[1]
      const data = /^data: (.*)$/m.exec(block)?.[1]
      if (name && data !== undefined) on(name, JSON.parse(data))
    }
  }
}

const p = (project: string) => `/ui/api/projects/${encodeURIComponent(project)}`

/** The dashboard API, one function per call (`ts/http/dashboard/api.ts` answers them). */
export const api = {
  status: (project: string) => call<Status>('GET', `${p(project)}/status`),
  sizes: (project: string) => call<{ measured_at: number; tables: { table: string; bytes: number }[] }>('GET', `${p(project)}/sizes`),
  doctor: (project: string) => call<{ findings: Finding[] }>('GET', `${p(project)}/doctor`),
  snapshots: (project: string) => call<SnapshotList>('GET', `${p(project)}/snapshots`),
  search: (project: string, request: QueryRequest) => call<QueryResult>('POST', `${p(project)}/search`, request),
  evidence: (project: string, id: string) => call<Evidence>('GET', `${p(project)}/evidence/${encodeURIComponent(id)}`),
  diff: (project: string, from: number, to: number) => call<RevisionDiff>('GET', `${p(project)}/diff?from=${from}&to=${to}`),
  context: (project: string, segment: string) => call<FileContext>('GET', `${p(project)}/context/${encodeURIComponent(segment)}?radius=12`),
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
  eventsUrl: (project: string) => `${p(project)}/events`,
  reviews: () => call<{ enabled: boolean; reviews: PendingReview[]; unreadable: string[] }>('GET', '/ui/api/review'),
  decide: (id: string, decision: 'accept' | 'reject', reason: string, allowStale: boolean) =>
    call<{ migration: Migration }>('POST', `/ui/api/review/${encodeURIComponent(id)}`, { decision, ...(reason.trim() ? { reason } : {}), ...(allowStale ? { allow_stale_evidence: true } : {}) }),
}
