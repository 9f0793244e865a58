import { z } from 'zod'
import type { AddRequest } from '../contracts/ingest.js'
import { type Proposal, type ProposalList, ProposalListSchema, ProposalSchema, type ProposeRequest } from '../contracts/knowledge.js'
import type { QueryRequest } from '../contracts/query.js'
import { type QueryResult, QueryResultSchema } from '../contracts/result.js'
import {
  type Evidence,
  EvidenceSchema,
  type JobRef,
  JobRefSchema,
  type JobStatus,
  JobStatusSchema,
  type ListSourcesRequest,
  type ProjectInfo,
  ProjectListSchema,
  type SnapshotList,
  SnapshotListSchema,
  type SourceList,
  SourceListSchema,
} from '../contracts/service.js'
import { TychoraError, isErrorCode } from '../errors.js'
import type { EvidenceClient } from '../contracts/client.js'
import { type InspectSymbolRequest, type SymbolReport, SymbolReportSchema } from '../contracts/symbol.js'

export interface ConnectOptions {
  /** The project's bearer token (`runtime/token` of its workspace). */
  token: string
  /** The project every call names. */
  project: string
  /** Sent as `X-Tychora-Agent`; recorded with each search. */
  agentId?: string
  /** Sent as `X-Tychora-Task`; recorded with each search. */
  taskId?: string
}

export type HttpEvidenceClient = EvidenceClient & {
  /** The projects this token opens on the daemon. */
  projects(): Promise<ProjectInfo[]>
}

const ErrorBodySchema = z.object({ code: z.string(), message: z.string() })

/**
 * A typed client for one project of a running daemon: the same `EvidenceClient` interface as an
 * open `Workspace`, over HTTP. Responses are parsed with the zod contracts; error responses become
 * `TychoraError`s with the server's code (an unknown one is E_INTERNAL, an unreachable daemon E_IO).
 *
 * @example
 * const client = connect('http://127.0.0.1:7419', { token, project: 'docs' })
 * const result = await client.search({ query: 'conditional request', limit: 3 })
 * for (const s of result.segments) console.log(s.citation, s.text)
 */
export function connect(baseUrl: string, options: ConnectOptions): HttpEvidenceClient {
  const base = baseUrl.replace(/\/+$/, '')
  const projectPath = `/v1/projects/${encodeURIComponent(options.project)}`
  const headers: Record<string, string> = { authorization: `Bearer ${options.token}`, accept: 'application/json' }
  if (options.agentId !== undefined) headers['x-tychora-agent'] = options.agentId
  if (options.taskId !== undefined) headers['x-tychora-task'] = options.taskId

  async function call<S extends z.ZodType>(schema: S, method: 'GET' | 'POST', path: string, body?: unknown): Promise<z.output<S>> {
    const send = () =>
      fetch(`${base}${path}`, {
        method,
        headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      })
    let response: Response
    try {
      // A GET is idempotent: retry it once when a kept-alive socket was closed under it.
      response = await send().catch((error: unknown) => (method === 'GET' && isStaleSocket(error) ? send() : Promise.reject(error)))
    } catch (error) {
      throw new TychoraError('E_IO', `cannot reach the daemon at ${base}: ${(error as Error).message}`, { cause: error })
    }
    const text = await response.text()
    let payload: unknown
    try {
      payload = text === '' ? undefined : JSON.parse(text)
    } catch {
      payload = undefined
    }
    if (!response.ok) throw toError(response.status, payload)
    const parsed = schema.safeParse(payload)
    if (!parsed.success) throw new TychoraError('E_INTERNAL', `response of ${method} ${path} does not match its contract: ${parsed.error.message}`)
    return parsed.data
  }

  return {
    search: (request: QueryRequest): Promise<QueryResult> => call(QueryResultSchema, 'POST', `${projectPath}/search`, request),
    getEvidence: (id: string): Promise<Evidence> => call(EvidenceSchema, 'GET', `${projectPath}/evidence/${encodeURIComponent(id)}`),
    listSources: (request: Omit<ListSourcesRequest, 'project'> = {}): Promise<SourceList> => {
      const query = new URLSearchParams()
      for (const [key, value] of Object.entries(request)) if (value !== undefined) query.set(key, String(value))
      const qs = query.toString()
      return call(SourceListSchema, 'GET', `${projectPath}/sources${qs ? `?${qs}` : ''}`)
    },
    addSource: (request: AddRequest): Promise<JobRef> => call(JobRefSchema, 'POST', `${projectPath}/sources`, request),
    jobStatus: (jobId: number): Promise<JobStatus> => call(JobStatusSchema, 'GET', `${projectPath}/jobs/${encodeURIComponent(String(jobId))}`),
    listSnapshots: (): Promise<SnapshotList> => call(SnapshotListSchema, 'GET', `${projectPath}/snapshots`),
    inspectSymbol: ({ name, ...options }: InspectSymbolRequest): Promise<SymbolReport> => {
      const query = new URLSearchParams()
      for (const [key, value] of Object.entries(options)) if (value !== undefined) query.set(key, String(value))
      const qs = query.toString()
      return call(SymbolReportSchema, 'GET', `${projectPath}/symbols/${encodeURIComponent(name)}${qs ? `?${qs}` : ''}`)
    },
    proposeChange: (request: ProposeRequest): Promise<Proposal> => call(ProposalSchema, 'POST', `${projectPath}/proposals`, request),
    listProposals: (): Promise<ProposalList> => call(ProposalListSchema, 'GET', `${projectPath}/proposals`),
    projects: async (): Promise<ProjectInfo[]> => (await call(ProjectListSchema, 'GET', '/v1/projects')).projects,
  }
}

/** The server closed a reused keep-alive connection as the request went out (not a refusal). */
function isStaleSocket(error: unknown): boolean {
  const code = (error as { cause?: { code?: string } } | undefined)?.cause?.code
  return code === 'UND_ERR_SOCKET' || code === 'ECONNRESET'
}

/** An error response as the `TychoraError` of its code (an unknown code is E_INTERNAL). */
export function toError(status: number, payload: unknown): TychoraError {
  const body = ErrorBodySchema.safeParse(payload)
  if (body.success && isErrorCode(body.data.code)) return new TychoraError(body.data.code, body.data.message, { details: { status } })
  return new TychoraError('E_INTERNAL', body.success ? `${body.data.code}: ${body.data.message}` : `HTTP ${status}`, { details: { status } })
}
