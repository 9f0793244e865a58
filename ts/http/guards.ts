import type { H3Event, Middleware } from 'h3'
import type { Scope } from '../contracts/runtime.js'
import { TychoraError } from '../errors.js'
import type { ProjectRegistry } from '../service/registry.js'
import { isDashboardPath } from './dashboard/paths.js'

/**
 * The checks every request passes before a route runs (DESIGN §11, §14): a Host the daemon
 * answers to (defeats DNS rebinding), an Origin that is absent or local (defeats cross-site
 * requests from a browser), and a bearer token (the real gate against other local processes,
 * since requests without an Origin pass the second check).
 */
export interface GuardOptions {
  /** The port the daemon was asked to listen on; 0 means "the port the connection arrived at". */
  port: number
  allowedHosts?: string[]
  allowedOrigins?: string[]
  /** Whether the dashboard is mounted: its paths are then left to its own guard. */
  dashboard?: boolean
}

/** Routes that reveal nothing about content and need no check. */
const PUBLIC_PATHS = new Set(['/health', '/openapi.json'])

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]']

function isPublic(event: H3Event): boolean {
  return (event.req.method === 'GET' || event.req.method === 'HEAD') && PUBLIC_PATHS.has(event.url.pathname)
}

/** The port this request must name: the configured one, else the local port of its connection. */
function expectedPort(event: H3Event, configured: number): number | undefined {
  if (configured > 0) return configured
  return event.runtime?.node?.req.socket.localPort
}

export function allowedHostSet(port: number | undefined, extra: string[] = []): Set<string> {
  const hosts = new Set(extra.map((h) => h.toLowerCase()))
  if (port !== undefined) {
    for (const name of LOOPBACK_NAMES) {
      hosts.add(`${name}:${port}`)
      if (port === 80) hosts.add(name)
    }
  }
  return hosts
}

export function allowedOriginSet(port: number | undefined, extra: string[] = []): Set<string> {
  const origins = new Set(extra.map((o) => o.toLowerCase().replace(/\/$/, '')))
  if (port !== undefined) {
    for (const name of LOOPBACK_NAMES) {
      origins.add(`http://${name}:${port}`)
      if (port === 80) origins.add(`http://${name}`)
    }
  }
  return origins
}

export function checkHost(event: H3Event, options: GuardOptions): void {
  const host = event.req.headers.get('host')?.trim().toLowerCase()
  if (!host || !allowedHostSet(expectedPort(event, options.port), options.allowedHosts).has(host)) {
    throw new TychoraError('E_FORBIDDEN', 'Host header not allowed')
  }
}

/**
 * Browsers label every request with where it came from (`Sec-Fetch-Site`). Nothing cross-site or
 * same-site (another port of localhost is same-site) has business with this API, and refusing
 * those defeats requests a page sends without a preflight. Clients that are not browsers send no
 * such header and pass, as do a page of the daemon's own origin (`same-origin`) and a request the
 * user typed (`none`).
 */
export function checkFetchSite(event: H3Event): void {
  const site = event.req.headers.get('sec-fetch-site')?.trim().toLowerCase()
  if (site === 'cross-site' || site === 'same-site') throw new TychoraError('E_FORBIDDEN', `Sec-Fetch-Site ${site} refused: browser pages of other origins may not call this API`)
}

export function checkOrigin(event: H3Event, options: GuardOptions): void {
  const origin = event.req.headers.get('origin')
  if (origin === null) return
  if (!allowedOriginSet(expectedPort(event, options.port), options.allowedOrigins).has(origin.trim().toLowerCase())) {
    throw new TychoraError('E_FORBIDDEN', 'Origin not allowed')
  }
}

/** The bearer token of the request, or E_UNAUTHORIZED. */
export function bearerToken(event: H3Event): string {
  const header = event.req.headers.get('authorization') ?? ''
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header)
  if (!match?.[1]) throw new TychoraError('E_UNAUTHORIZED', 'missing bearer token')
  return match[1]
}

/** Names of the served projects that `token` opens, as owner or agent (every project is compared). */
export function projectsForToken(registry: ProjectRegistry, token: string): string[] {
  return registry.names().filter((name) => registry.scopeFor(name, token) !== undefined)
}

/**
 * Authorises a call on `project` and says with which scope. A token valid for no project is
 * E_UNAUTHORIZED; a token valid for other projects gets E_NOT_FOUND whether `project` exists or
 * not, so a caller cannot learn which projects the daemon serves beyond its own.
 */
export function authorizeProject(registry: ProjectRegistry, project: string, token: string): Scope {
  const scope = registry.scopeFor(project, token)
  if (scope) return scope
  if (projectsForToken(registry, token).length === 0) throw new TychoraError('E_UNAUTHORIZED', 'wrong bearer token')
  throw new TychoraError('E_NOT_FOUND', `project not served here: ${project}`)
}

const tokens = new WeakMap<H3Event, string>()

/** The token the guard accepted for this request (it matches at least one served project). */
export function requestToken(event: H3Event): string {
  const token = tokens.get(event)
  if (token === undefined) throw new TychoraError('E_UNAUTHORIZED', 'missing bearer token')
  return token
}

/**
 * Global middleware, in this order: Host, Sec-Fetch-Site, Origin, bearer token valid for at least
 * one served project. Runs before routing, so unknown paths are refused the same way as known ones.
 */
export function guard(registry: ProjectRegistry, options: GuardOptions): Middleware {
  return (event, next) => {
    if (isPublic(event)) return next()
    // The dashboard's own guard (same Host/Origin checks, then its session cookie) answers these.
    if (options.dashboard && isDashboardPath(event.url.pathname)) return next()
    checkHost(event, options)
    checkFetchSite(event)
    checkOrigin(event, options)
    const token = bearerToken(event)
    if (projectsForToken(registry, token).length === 0) throw new TychoraError('E_UNAUTHORIZED', 'wrong bearer token')
    tokens.set(event, token)
    return next()
  }
}
