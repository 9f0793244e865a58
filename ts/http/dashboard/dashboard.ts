import type { H3, H3Event } from 'h3'
import { TychoraError } from '../../errors.js'
import type { ProjectRegistry } from '../../service/registry.js'
import { ReviewDesk } from '../../service/review.js'
import { type GuardOptions, bearerToken, checkFetchSite, checkHost, checkOrigin } from '../guards.js'
import { isDashboardPath } from './paths.js'
import { DashboardAccess, clearedCookie, sessionCookie } from './access.js'
import { type Asset, PAGE_HEADERS, loadAssets } from './assets.js'
import { type ApiDeps, dashboardApi, refuse } from './api.js'

/**
 * The owner's dashboard at `/` on the daemon's listener: the built single-page app, its JSON API
 * under `/ui/api`, the one-time login. Every request passes the same Host, Sec-Fetch-Site and
 * Origin checks as the evidence API; the page's files then need the session cookie, and every API
 * call the cookie and the session's key header (`access.ts` says why both). Bearer tokens (the
 * agents') open nothing here.
 */
export class Dashboard {
  readonly access: DashboardAccess
  readonly #assets: Map<string, Asset> | undefined
  readonly #streams = new Set<() => void>()
  readonly #review: ReviewDesk | undefined
  readonly #registry: ProjectRegistry
  #closed = false

  /**
   * `knowledge`: the knowledge project the daemon serves (its `.tychora` folder and the name its
   * answering state is served under), for the review view.
   */
  constructor(registry: ProjectRegistry, options: { assetsDir?: string; knowledge?: { root: string; project: string } } = {}) {
    this.access = new DashboardAccess()
    this.#registry = registry
    this.#assets = loadAssets(options.assetsDir)
    const knowledge = options.knowledge
    this.#review = knowledge
      ? new ReviewDesk(knowledge.root, knowledge.project, async () => {
          // Before the first state is built nothing is citable: every cited segment reads as gone.
          const ws = await registry.ownerWorkspace(knowledge.project).catch(() => undefined)
          return ws ? (id: string) => ws.cite(id) : async () => undefined
        })
      : undefined
  }

  /** Whether the app bundle was found (`npm run build:ui`); the API works either way. */
  get built(): boolean {
    return this.#assets !== undefined
  }

  /** A one-time login URL for `base` (`http://127.0.0.1:7419`), as the owner of every project served (the link `serve` prints). */
  loginUrl(base: string): string {
    return `${base}/login?key=${this.access.issueLoginKey('all')}`
  }

  /** Ends every open event stream and refuses new ones (the daemon stops: open streams would hold the server open). */
  close(): void {
    this.#closed = true
    for (const end of this.#streams) end()
    this.#streams.clear()
  }

  /** Registers the dashboard's routes and its guard on `app`. */
  mount(app: H3, guard: GuardOptions, maxBodyBytes: number): void {
    const registry = this.#registry
    app.use((event, next) => {
      if (!isDashboardPath(event.url.pathname)) return next()
      try {
        checkHost(event, guard)
        checkFetchSite(event)
        checkOrigin(event, guard)
      } catch (error) {
        return this.#refuse(error)
      }
      return next()
    })
    // GET only: h3 answers HEAD with a GET route, and a HEAD (a link preview) must not spend the key.
    app.on('GET', '/login', (event) => (event.req.method === 'GET' ? this.#login(event) : this.#refuse(new TychoraError('E_NOT_FOUND', 'open the login link with GET'))))
    app.post('/ui/login-link', (event) => this.#loginLink(event))
    app.post('/logout', (event) => this.#logout(event))
    const deps: ApiDeps = { registry, access: this.access, maxBodyBytes, streams: this.#streams, review: this.#review, closed: () => this.#closed }
    for (const [method, path, handler] of dashboardApi(deps)) app.on(method, path, handler)
    const page = (event: H3Event) => this.#page(event)
    app.get('/', page)
    app.get('/favicon.ico', page)
    app.get('/assets/**', page)
  }

  /**
   * Redeems the login key once, sets the session cookie, and moves to the page with the session's
   * key in the fragment (never sent to a server; the page moves it to its storage and drops it from
   * the address bar).
   */
  #login(event: H3Event): Response {
    const loginKey = event.url.searchParams.get('key') ?? ''
    try {
      const { id, key } = this.access.redeem(loginKey)
      return new Response(null, { status: 303, headers: { ...PAGE_HEADERS, location: `/#key=${key}`, 'set-cookie': sessionCookie(event, id), 'cache-control': 'no-store' } })
    } catch (error) {
      return this.#refuse(error)
    }
  }

  /**
   * A fresh one-time login link, for `tychora dashboard`: the caller proves it owns projects with
   * an owner token (read from `runtime/token`, 0600), and the session opens those projects only,
   * as the token does on the evidence API. An agent token is refused: agents never open the
   * dashboard.
   */
  #loginLink(event: H3Event): Response {
    try {
      const token = bearerToken(event)
      const names = this.#registry.names()
      const owned = new Set(names.filter((name) => this.#registry.scopeFor(name, token) === 'owner'))
      if (owned.size === 0) {
        throw names.some((name) => this.#registry.scopeFor(name, token) === 'agent')
          ? new TychoraError('E_FORBIDDEN', "the dashboard is the owner's: an agent token cannot open it")
          : new TychoraError('E_UNAUTHORIZED', 'wrong bearer token')
      }
      const host = event.req.headers.get('host') as string // checked by the guard
      return new Response(JSON.stringify({ url: `http://${host}/login?key=${this.access.issueLoginKey(owned)}` }), {
        status: 200,
        headers: { ...PAGE_HEADERS, 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
      })
    } catch (error) {
      return this.#refuse(error)
    }
  }

  #logout(event: H3Event): Response {
    try {
      this.access.call(event)
      this.access.end(event)
      return new Response(null, { status: 204, headers: { ...PAGE_HEADERS, 'set-cookie': clearedCookie(event), 'cache-control': 'no-store' } })
    } catch (error) {
      return this.#refuse(error)
    }
  }

  #page(event: H3Event): Response {
    try {
      this.access.page(event)
    } catch (error) {
      // Someone opening the address by hand gets a page that says what to do, not JSON.
      if (event.url.pathname === '/') return new Response(SIGNED_OUT, { status: 401, headers: { ...PAGE_HEADERS, 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' } })
      return this.#refuse(error)
    }
    if (!this.#assets) return this.#refuse(new TychoraError('E_NOT_FOUND', 'the dashboard is not built in this installation (npm run build:ui)'))
    const path = event.url.pathname === '/' ? '/index.html' : event.url.pathname
    const asset = this.#assets.get(path)
    if (!asset) return this.#refuse(new TychoraError('E_NOT_FOUND', 'no such dashboard file'))
    const cache = asset.immutable ? 'public, max-age=31536000, immutable' : 'no-store'
    return new Response(asset.body, { status: 200, headers: { ...PAGE_HEADERS, 'content-type': asset.type, 'cache-control': cache } })
  }

  #refuse(error: unknown): Response {
    return refuse(error)
  }
}

/** What `/` answers without a session: static text, no script. */
const SIGNED_OUT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Tychora</title></head>
<body><main><h1>Tychora dashboard</h1>
<p>Open the one-time login link <code>tychora serve</code> printed, or run <code>tychora dashboard</code> for a new one.</p>
</main></body></html>
`
