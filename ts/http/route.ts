import { type H3, type H3Event, type HTTPMethod, getQuery, getRouterParams } from 'h3'
import { z } from 'zod'
import type { Scope } from '../contracts/runtime.js'
import { type ErrorCode, TychoraError } from '../errors.js'
import type { ProjectRegistry } from '../service/registry.js'
import type { EvidenceClient } from '../contracts/client.js'
import { readJson, validate } from './body.js'
import { json } from './errors.js'
import { authorizeProject, requestToken } from './guards.js'

/**
 * One HTTP route, described once: the app registers it and the OpenAPI document is generated
 * from the same description, so the two cannot drift apart.
 */
export interface Route {
  method: HTTPMethod
  /** h3/rou3 syntax: `/v1/projects/:project/search`. */
  path: string
  operationId: string
  summary: string
  description?: string
  /** `none`: public; `token`: any served project's token; `project`: the token of `:project`. */
  auth: 'none' | 'token' | 'project'
  /** Only the owner's token of `:project` (`runtime/token`); the agents' token gets E_FORBIDDEN. */
  ownerOnly?: boolean
  /** Codes the work itself can answer besides those of the route's kind (documentation only). */
  errors?: ErrorCode[]
  /** Path parameters other than `:project`. */
  params?: z.ZodObject
  query?: z.ZodObject
  body?: z.ZodType
  /** Request headers the route reads (documentation only). */
  headers?: Record<string, string>
  response: z.ZodType
  /** Success status (default 200). */
  status?: number
  run(event: H3Event, deps: RouteDeps): Promise<Response>
}

export interface RouteDeps {
  registry: ProjectRegistry
  maxBodyBytes: number
}

export interface RouteInput<P, Q, B> {
  event: H3Event
  registry: ProjectRegistry
  token: string
  params: P
  query: Q
  body: B
}

export interface ProjectInput<P, Q, B> extends RouteInput<P, Q, B> {
  project: string
  /** What the caller's token may do on this project. */
  scope: Scope
  /** The project with exactly the capabilities of `scope`. */
  client: EvidenceClient
}

type Out<S> = S extends z.ZodType ? z.output<S> : undefined

interface Spec<P extends z.ZodObject | undefined, Q extends z.ZodObject | undefined, B extends z.ZodType | undefined> {
  method: HTTPMethod
  path: string
  operationId: string
  summary: string
  description?: string
  params?: P
  query?: Q
  body?: B
  headers?: Record<string, string>
  response: z.ZodType
  status?: number
  /** Administration: the owner's token only, never the agents'. */
  ownerOnly?: boolean
  errors?: ErrorCode[]
}

/** A route under `/v1/projects/:project/…`: authorised with that project's token. */
export function projectRoute<P extends z.ZodObject | undefined = undefined, Q extends z.ZodObject | undefined = undefined, B extends z.ZodType | undefined = undefined>(
  spec: Spec<P, Q, B> & { handle(input: ProjectInput<Out<P>, Out<Q>, Out<B>>): Promise<unknown> },
): Route {
  return {
    ...spec,
    auth: 'project',
    async run(event, deps) {
      const token = requestToken(event)
      const project = getRouterParams(event, { decode: true }).project ?? ''
      const scope = authorizeProject(deps.registry, project, token)
      if (spec.ownerOnly && scope !== 'owner') throw new TychoraError('E_FORBIDDEN', `${spec.operationId} needs the owner's token of project ${project} (runtime/token), not the agents'`)
      const input = await readInput<P, Q, B>(spec, event, deps)
      const result = await spec.handle({ ...input, token, project, scope, client: deps.registry.project(project, scope) })
      return respond(spec, result)
    },
  }
}

/** A route that needs no project: `auth: 'token'` (any served project's token) or `'none'`. */
export function route<P extends z.ZodObject | undefined = undefined, Q extends z.ZodObject | undefined = undefined, B extends z.ZodType | undefined = undefined>(
  spec: Spec<P, Q, B> & { auth: 'none' | 'token'; handle(input: RouteInput<Out<P>, Out<Q>, Out<B>>): Promise<unknown> },
): Route {
  return {
    ...spec,
    async run(event, deps) {
      const token = spec.auth === 'token' ? requestToken(event) : ''
      const input = await readInput<P, Q, B>(spec, event, deps)
      return respond(spec, await spec.handle({ ...input, token }))
    },
  }
}

async function readInput<P extends z.ZodObject | undefined, Q extends z.ZodObject | undefined, B extends z.ZodType | undefined>(
  spec: Spec<P, Q, B>,
  event: H3Event,
  deps: RouteDeps,
): Promise<Omit<RouteInput<Out<P>, Out<Q>, Out<B>>, 'token'>> {
  const { project: _project, ...rawParams } = getRouterParams(event, { decode: true })
  const params = spec.params ? validate(spec.params, coerceNumbers(spec.params, rawParams), 'path parameter') : undefined
  const query = spec.query ? validate(spec.query, coerceNumbers(spec.query, getQuery(event)), 'query parameter') : undefined
  const body = spec.body ? validate(spec.body, await readJson(event, deps.maxBodyBytes), 'request body') : undefined
  return { event, registry: deps.registry, params: params as Out<P>, query: query as Out<Q>, body: body as Out<B> }
}

/** Paths and query strings carry text: turn integer-looking values into numbers where the schema wants one. */
function coerceNumbers(schema: z.ZodObject, raw: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(raw)) {
    const field = schema.shape[key]
    out[key] = typeof value === 'string' && field && wantsNumber(field) && /^-?\d+$/.test(value) ? Number(value) : value
  }
  return out
}

function wantsNumber(field: z.core.$ZodType): boolean {
  let inner = field
  while (inner instanceof z.ZodOptional || inner instanceof z.ZodNullable || inner instanceof z.ZodDefault) inner = inner.unwrap() as z.core.$ZodType
  return inner instanceof z.ZodNumber
}

/**
 * Responses are typed by their contract; in development and tests they are also parsed with it
 * before they leave (a mismatch is our bug, E_INTERNAL). Production does not walk every segment of
 * a result a second time: the engine's output is checked against the same schemas in the suites.
 */
function respond(spec: { response: z.ZodType; status?: number }, result: unknown): Response {
  if (!VALIDATE_RESPONSES) return json(spec.status ?? 200, result)
  const parsed = spec.response.safeParse(result)
  if (!parsed.success) throw new TychoraError('E_INTERNAL', `response does not match its contract: ${parsed.error.message}`)
  return json(spec.status ?? 200, parsed.data)
}

const VALIDATE_RESPONSES = process.env.NODE_ENV === 'test' || process.env.NODE_ENV === 'development' || process.env.TYCHORA_VALIDATE_OUTPUT === '1'

export function register(app: H3, routes: Route[], deps: RouteDeps): void {
  for (const r of routes) app.on(r.method, r.path, (event) => r.run(event, deps))
}
