import { type H3Event, type HTTPMethod, getRouterParams } from 'h3'
import { z } from 'zod'
import { AddRequestSchema } from '../../contracts/ingest.js'
import { QueryRequestSchema } from '../../contracts/query.js'
import { InspectSymbolRequestSchema } from '../../contracts/symbol.js'
import { TychoraError } from '../../errors.js'
import type { ProjectRegistry } from '../../service/registry.js'
import { listEvalRecords, readEvalRecord } from '../../service/eval-records.js'
import { replayRun } from '../../service/replay.js'
import { revisionDiff } from '../../service/revision-diff.js'
import type { ReviewDesk } from '../../service/review.js'
import { readJson, validate } from '../body.js'
import { errorResponse, json } from '../errors.js'
import type { DashboardAccess, DashboardSession } from './access.js'
import { PAGE_HEADERS } from './assets.js'

export interface ApiDeps {
  registry: ProjectRegistry
  access: DashboardAccess
  maxBodyBytes: number
  /** Open event streams, each with the function that ends it (the daemon ends them on stop). */
  streams: Set<() => void>
  /** The knowledge project's review, when the daemon serves one. */
  review: ReviewDesk | undefined
  /** Whether the daemon is stopping (no new event stream opens then). */
  closed: () => boolean
}

type Handler = (event: H3Event) => Promise<Response>
type Workspace = Awaited<ReturnType<ProjectRegistry['ownerWorkspace']>>

interface Call {
  event: H3Event
  session: DashboardSession
  /** The project in the path, as its owner. */
  ws(): Promise<Workspace>
  param(name: string): string
  body<S extends z.ZodType>(schema: S): Promise<z.output<S>>
}

/** Keep-alive comment on an idle event stream (proxies and browsers drop silent connections). */
const STREAM_PING_MS = 15_000

const Paging = z.object({
  limit: z.coerce.number().int().min(1).max(500).optional(),
  before: z.string().min(1).max(200).optional(),
})
const SourcePaging = z.object({ limit: z.coerce.number().int().min(1).max(1000).optional(), offset: z.coerce.number().int().min(0).optional() })
const ReplayBody = z.object({ snapshot: z.union([z.literal('recorded'), z.literal('current'), z.number().int().positive()]) }).strict()
const ReviewBody = z
  .object({
    decision: z.enum(['accept', 'reject']),
    reason: z.string().trim().min(1).max(2000).optional(),
    allow_stale_evidence: z.boolean().optional(),
  })
  .strict()
const ContextQuery = z.object({ radius: z.coerce.number().int().min(0).max(60).optional() }).strict()
const DescriptionReviewBody = z.object({ status: z.enum(['accepted', 'rejected', 'unreviewed']), note: z.string().trim().min(1).max(2000).optional() }).strict()
const DiffQuery = z.object({ from: z.coerce.number().int().positive(), to: z.coerce.number().int().positive() }).strict()
const CancelBody = z.object({ reason: z.string().trim().min(1).max(500).optional() }).strict()
const PageQuery = z.object({ dpi: z.coerce.number().int().min(36).max(300).optional() }).strict()
const RenderQuery = z
  .object({ dpi: z.coerce.number().int().min(72).max(300).optional(), page: z.coerce.number().int().min(1).optional(), margin: z.coerce.number().min(0).max(200).optional() })
  .strict()

/**
 * The dashboard's JSON API: what each view reads, as the owner of the project in the path. Every
 * call needs the session cookie; POSTs also the session's CSRF header. Request bodies and query
 * strings are validated as the evidence API's are; errors are `{ code, message }`.
 */
export function dashboardApi(deps: ApiDeps): Array<[HTTPMethod, string, Handler]> {
  const { registry } = deps
  const route = (method: HTTPMethod, path: string, run: (call: Call) => Promise<unknown>): [HTTPMethod, string, Handler] => [
    method,
    path,
    async (event) => {
      try {
        // Every call, reads too: the cookie reaches other servers of this host, the key does not.
        const session = deps.access.call(event)
        const params = getRouterParams(event, { decode: true })
        const param = (name: string) => params[name] ?? ''
        const call: Call = {
          event,
          session,
          param,
          ws: () => project(registry, session, param('project')),
          body: async (schema) => validate(schema, await readJson(event, deps.maxBodyBytes), 'request body'),
        }
        const result = await run(call)
        return result instanceof Response ? result : json(200, result, PAGE_HEADERS)
      } catch (error) {
        return refuse(error)
      }
    },
  ]
  const query = <S extends z.ZodType>(event: H3Event, schema: S): z.output<S> => validate(schema, Object.fromEntries(event.url.searchParams), 'query parameter')

  return [
    route('GET', '/ui/api/session', async ({ session }) => ({ projects: registry.names().filter((name) => session.owns(name)) })),
    route('GET', '/ui/api/review', async ({ session }) =>
      deps.review && session.owns(deps.review.project) ? { enabled: true, ...(await deps.review.pending()) } : { enabled: false, reviews: [], unreadable: [] },
    ),
    route('POST', '/ui/api/review/:id', async ({ session, param, body }) => {
      if (!deps.review || !session.owns(deps.review.project)) throw new TychoraError('E_NOT_FOUND', 'no knowledge project of yours is served here (run `tychora serve` inside one)')
      return { migration: await deps.review.decide(param('id'), await body(ReviewBody)) }
    }),
    route('GET', '/ui/api/projects/:project/evals', async ({ ws }) => listEvalRecords((await ws()).dir)),
    route('GET', '/ui/api/projects/:project/evals/:id', async ({ ws, param }) => readEvalRecord((await ws()).dir, param('id'))),
    route('GET', '/ui/api/projects/:project/status', async ({ ws }) => (await ws()).status({ tables: false })),
    route('GET', '/ui/api/projects/:project/sizes', async ({ ws }) => sizesOf(await ws())),
    route('GET', '/ui/api/projects/:project/doctor', async ({ ws }) => ({ findings: await (await ws()).doctor() })),
    route('GET', '/ui/api/projects/:project/snapshots', async ({ ws }) => (await ws()).listSnapshots()),
    route('POST', '/ui/api/projects/:project/search', async ({ ws, body }) => (await ws()).search(await body(QueryRequestSchema))),
    route('GET', '/ui/api/projects/:project/evidence/:id', async ({ ws, param }) => (await ws()).getEvidence(param('id'))),
    route('GET', '/ui/api/projects/:project/diff', async ({ ws, event }) => {
      const { from, to } = query(event, DiffQuery)
      return revisionDiff(await ws(), from, to)
    }),
    route('GET', '/ui/api/projects/:project/symbols', async ({ ws, event }) => (await ws()).inspectSymbol(query(event, InspectSymbolRequestSchema))),
    route('GET', '/ui/api/projects/:project/sources', async ({ ws, event }) => (await ws()).listSources(query(event, SourcePaging))),
    route('GET', '/ui/api/projects/:project/jobs', async ({ ws, event }) => {
      const { limit, before } = query(event, Paging)
      return (await ws()).listJobs({ ...(limit ? { limit } : {}), ...(before ? { before: positive(before, 'before') } : {}) })
    }),
    route('GET', '/ui/api/projects/:project/jobs/:id', async ({ ws, param }) => (await ws()).jobStatus(positive(param('id'), 'job id'))),
    route('POST', '/ui/api/projects/:project/jobs/:id/cancel', async ({ ws, param, body }) => {
      const { reason } = await body(CancelBody)
      return (await ws()).cancelJob(positive(param('id'), 'job id'), reason)
    }),
    route('POST', '/ui/api/projects/:project/sync', async ({ ws, body }) => (await ws()).addSource(await body(AddRequestSchema))),
    route('GET', '/ui/api/projects/:project/events', async ({ ws, event }) => {
      if (deps.closed()) throw new TychoraError('E_CLOSED', 'the daemon is stopping')
      return jobStream(await ws(), event, deps.streams)
    }),
    route('GET', '/ui/api/projects/:project/runs', async ({ ws, event }) => {
      const { limit, before } = query(event, Paging)
      return (await ws()).listRuns({ ...(limit ? { limit } : {}), ...(before ? { before } : {}) })
    }),
    route('GET', '/ui/api/projects/:project/runs/:id', async ({ ws, param }) => (await ws()).inspectRun(param('id'))),
    route('POST', '/ui/api/projects/:project/runs/:id/replay', async ({ ws, param, body }) => {
      const { snapshot } = await body(ReplayBody)
      return replayRun(await ws(), param('id'), snapshot === 'recorded' ? undefined : snapshot)
    }),
    route('GET', '/ui/api/projects/:project/context/:segment', async ({ ws, param, event }) => {
      const { radius } = query(event, ContextQuery)
      // A segment id (`seg_<snapshot>_<chunk>`) or a chunk id names the chunk.
      const chunk = /^(?:seg_\d+_|chunk:)?(\d+)$/.exec(param('segment'))?.[1]
      if (!chunk) throw new TychoraError('E_INVALID_ARGUMENT', 'a segment id (seg_S_C) or chunk id (chunk:N)')
      return (await ws()).fileContext(Number(chunk), radius ?? 12)
    }),
    route('GET', '/ui/api/projects/:project/pictures/:extraction/:ordinal', async ({ ws, param }) => {
      const picture = await (await ws()).picture(positive(param('extraction'), 'extraction'), positive(param('ordinal'), 'picture'))
      return new Response(new Uint8Array(picture.bytes), { status: 200, headers: { ...PAGE_HEADERS, 'content-type': picture.media_type, 'cache-control': 'no-store' } })
    }),
    route('POST', '/ui/api/projects/:project/descriptions/:id/review', async ({ ws, param, body }) => {
      const { status, note } = await body(DescriptionReviewBody)
      return (await ws()).reviewDescription(positive(param('id'), 'description'), status, note)
    }),
    route('GET', '/ui/api/projects/:project/pages/:revision/:page', async ({ ws, param, event }) => {
      const { dpi } = query(event, PageQuery)
      const drawn = await (await ws()).renderPage(positive(param('revision'), 'revision'), positive(param('page'), 'page'), dpi ?? 96)
      // Where a box's PDF points fall on the picture (rotation and origin included), for the page view's boxes.
      const transform = drawn.transform.map((n) => Number(n.toFixed(6))).join(' ')
      return new Response(new Uint8Array(drawn.png), {
        status: 200,
        headers: { ...PAGE_HEADERS, 'content-type': 'image/png', 'cache-control': 'no-store', 'x-tychora-page-transform': transform },
      })
    }),
    route('GET', '/ui/api/projects/:project/render/:id', async ({ ws, param, event }) => {
      const options = Object.fromEntries(Object.entries(query(event, RenderQuery)).filter(([, v]) => v !== undefined))
      const region = await (await ws()).render(param('id'), options)
      return new Response(new Uint8Array(region.png), { status: 200, headers: { ...PAGE_HEADERS, 'content-type': 'image/png', 'cache-control': 'no-store' } })
    }),
  ]
}

/** How long a measured size breakdown is served as it is before the next call measures again (in the background). */
const SIZES_TTL_MS = 60_000
type Sizes = { measured_at: number; tables: { table: string; bytes: number }[] }
const sizes = new WeakMap<Workspace, { at: number; value: Promise<Sizes>; refreshing: boolean }>()
const watched = new WeakSet<Workspace>()

/**
 * corpus.sqlite3 by table. Measuring reads every page (70 ms at 84k chunks), so a measurement is
 * served stale while the next one runs off the request path: one is taken when a job finishes
 * (what changes sizes most), and a call finding it older than `SIZES_TTL_MS` starts another
 * (query runs and reviews grow the corpus between jobs). Only the first call waits for one.
 */
function sizesOf(ws: Workspace): Promise<Sizes> {
  const measure = (): Promise<Sizes> => ws.status().then((s) => ({ measured_at: Date.now(), tables: s.bytes.tables ?? [] }))
  const refresh = () => {
    const entry = sizes.get(ws)
    if (!entry || entry.refreshing) return
    entry.refreshing = true
    measure().then(
      (fresh) => sizes.set(ws, { at: fresh.measured_at, value: Promise.resolve(fresh), refreshing: false }),
      () => {
        entry.refreshing = false
      },
    )
  }
  if (!watched.has(ws)) {
    watched.add(ws)
    ws.watchJobs((e) => e.phase === 'finished' && refresh())
  }
  const cached = sizes.get(ws)
  if (cached) {
    if (Date.now() - cached.at >= SIZES_TTL_MS) refresh()
    return cached.value
  }
  const value = measure()
  sizes.set(ws, { at: Date.now(), value, refreshing: false })
  value.catch(() => sizes.delete(ws))
  return value
}

/** The project `name` as its owner, if the session's login proved that ownership (else as unknown). */
async function project(registry: ProjectRegistry, session: DashboardSession, name: string): Promise<Workspace> {
  if (!registry.names().includes(name) || !session.owns(name)) throw new TychoraError('E_NOT_FOUND', `project not served here: ${name}`)
  return registry.ownerWorkspace(name)
}

function positive(text: string, what: string): number {
  if (!/^[1-9]\d{0,15}$/.test(text)) throw new TychoraError('E_INVALID_ARGUMENT', `${what} must be a positive integer`)
  return Number(text)
}

/**
 * The job queue as server-sent events: `job` with a job's status each time one is queued, starts
 * or finishes, `progress` while it runs. The stream ends when the client goes or the daemon stops.
 */
function jobStream(ws: Workspace, event: H3Event, streams: Set<() => void>): Response {
  const encoder = new TextEncoder()
  let end = () => {}
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      let open = true
      const send = (name: string, data: unknown) => {
        if (open) controller.enqueue(encoder.encode(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`))
      }
      // Statuses are read one after another, so events leave in the order they happened.
      let order: Promise<unknown> = Promise.resolve()
      const unwatch = ws.watchJobs((e) => {
        if (e.phase === 'progress') return send('progress', e)
        order = order
          .then(() => ws.jobStatus(e.job_id))
          .then(
            (status) => send('job', { phase: e.phase, status }),
            () => undefined, // a job row that cannot be read now is read on the next event
          )
      })
      const ping = setInterval(() => open && controller.enqueue(encoder.encode(': ping\n\n')), STREAM_PING_MS)
      end = () => {
        if (!open) return
        open = false
        clearInterval(ping)
        unwatch()
        streams.delete(end)
        controller.close()
      }
      streams.add(end)
      event.req.signal?.addEventListener('abort', () => end())
      send('ready', { project: ws.name })
    },
    cancel() {
      end()
    },
  })
  return new Response(body, { status: 200, headers: { ...PAGE_HEADERS, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store' } })
}

/** An error as the evidence API answers it (`{ code, message }`), with the page headers and no bearer challenge. */
export function refuse(error: unknown): Response {
  const response = errorResponse(error)
  const headers = new Headers(response.headers)
  headers.delete('www-authenticate')
  for (const [k, v] of Object.entries(PAGE_HEADERS)) headers.set(k, v)
  return new Response(response.body, { status: response.status, headers })
}
