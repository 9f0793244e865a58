import { H3 } from 'h3'
import type { ProjectRegistry } from '../service/registry.js'
import { DEFAULT_MAX_BODY_BYTES } from './body.js'
import type { Dashboard } from './dashboard/dashboard.js'
import { errorResponse } from './errors.js'
import { guard } from './guards.js'
import { openApiDocument } from './openapi.js'
import { type Route, register } from './route.js'
import { backupWorkspace, verifyWorkspace, workspaceStatus } from './routes/admin.js'
import { getEvidence } from './routes/evidence.js'
import { inspectSymbol } from './routes/symbols.js'
import { cancelJob, jobStatus } from './routes/jobs.js'
import { type McpHandler, mcpRoutes } from './routes/mcp.js'
import { health, openapi } from './routes/meta.js'
import { listProjects } from './routes/projects.js'
import { listProposals, proposeChange } from './routes/proposals.js'
import { search } from './routes/search.js'
import { listSnapshots } from './routes/snapshots.js'
import { addSource, getSource, listSources } from './routes/sources.js'

export interface HttpOptions {
  /** The port the daemon listens on, for the Host/Origin checks; 0: the port each connection arrived at. */
  port: number
  /** Extra `host:port` values accepted in the Host header (besides 127.0.0.1, localhost, [::1]). */
  allowedHosts?: string[]
  /** Extra origins (`scheme://host:port`) accepted in the Origin header. */
  allowedOrigins?: string[]
  /** Largest request body in bytes (default 1 MiB); larger is E_LIMIT_EXCEEDED (413). */
  maxBodyBytes?: number
  /** The MCP Streamable HTTP handler, mounted at /mcp (GET, POST, DELETE) behind the same checks. */
  mcp?: McpHandler
  /** The daemon run's random id, answered by `/health` so a CLI can tell this daemon from a reused pid. */
  instance?: string
  /** The owner's dashboard, mounted at `/` behind its own login (see `dashboard/dashboard.ts`). */
  dashboard?: Dashboard
}

/**
 * The versioned evidence API. Only `addSource` writes to a workspace, and it only queues a
 * capture job; the owner's administration (status, verify, backup, cancel) writes only a backup
 * copy, or takes a queued job off the queue.
 */
export const API_ROUTES: Route[] = [
  listProjects,
  search,
  getEvidence,
  inspectSymbol,
  listSources,
  getSource,
  addSource,
  jobStatus,
  listSnapshots,
  proposeChange,
  listProposals,
  workspaceStatus,
  verifyWorkspace,
  backupWorkspace,
  cancelJob,
]

/**
 * The daemon's HTTP app: the evidence API under `/v1` (the project in the path), `/health`,
 * `/openapi.json` and, when given, the MCP handler at `/mcp`. Every other route passes the Host,
 * Origin and bearer-token checks of `guards.ts` in that order; every error is
 * `{ code, message }` with the status of the code table.
 *
 * @example
 * const app = createHttpApp(registry, { port: 7419 })
 * const server = await startHttpServer(app, { port: 7419 })
 */
export function createHttpApp(registry: ProjectRegistry, options: HttpOptions): H3 {
  const routes: Route[] = [health(options.instance), ...API_ROUTES, ...(options.mcp ? mcpRoutes(options.mcp) : [])]
  let document: Record<string, unknown> | undefined
  const all: Route[] = [...routes, openapi(() => (document ??= openApiDocument(all, { port: options.port })))]

  const app = new H3({ silent: true, onError: (error) => errorResponse(error) })
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
  const { port, allowedHosts, allowedOrigins, dashboard } = options
  app.use(guard(registry, { port, ...(allowedHosts ? { allowedHosts } : {}), ...(allowedOrigins ? { allowedOrigins } : {}), dashboard: dashboard !== undefined }))
  options.dashboard?.mount(app, { port: options.port, allowedHosts: options.allowedHosts ?? [], allowedOrigins: options.allowedOrigins ?? [] }, maxBodyBytes)
  register(app, all, { registry, maxBodyBytes })
  return app
}
