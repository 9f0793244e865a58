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
 * Origin checks as the evidence API; everything but `/login` then needs the session cookie, and
 * every state-changing call its CSRF header. Bearer tokens (the agents') open nothing here.
 */
export class Dashboard {
  readonly access: DashboardAccess
  readonly #assets: Map<string, Asset> | undefined
  readonly #streams = new Set<() => void>()

  readonly #review: ReviewDesk | undefined

  /**
   * `knowledge`: the knowledge project the daemon serves (its `.tychora` folder and the name its
   * answering state is served under), for the review view.
   */
  constructor(registry: ProjectRegistry, options: { assetsDir?: string; knowledge?: { root: string; project: string } } = {}) {
    this.access = new DashboardAccess(() => registry.ownerDigests())
    this.#assets = loadAssets(options.assetsDir)
    const knowledge = options.knowledge
    this.#review = knowledge
      ? new ReviewDesk(knowledge.root, async () => {
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

  /** A one-time login URL for `base` (`http://127.0.0.1:7419`). */
  loginUrl(base: string): string {
    return `${base}/login?key=${this.access.issueLoginKey()}`
  }

  /** Ends every open event stream (the daemon stops: open streams would hold the server open). */
  close(): void {
    for (const end of this.#streams) end()
    this.#streams.clear()
  }

  /** Registers the dashboard's routes and its guard on `app`. */
  mount(app: H3, registry: ProjectRegistry, guard: GuardOptions, maxBodyBytes: number): void {
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
    app.get('/login', (event) => this.#login(event))
    app.post('/ui/login-link', (event) => this.#loginLink(event, registry))
    app.post('/logout', (event) => this.#logout(event))
    const deps: ApiDeps = { registry, access: this.access, maxBodyBytes, streams: this.#streams, review: this.#review }
    for (const [method, path, handler] of dashboardApi(deps)) app.on(method, path, handler)
    const page = (event: H3Event) => this.#page(event)
    app.get('/', page)
    app.get('/favicon.ico', page)
    app.get('/assets/**', page)
  }

  /** Redeems the key once, sets the session cookie, and moves to a URL without the secret. */
  #login(event: H3Event): Response {
    const key = event.url.searchParams.get('key') ?? ''
    try {
      const id = this.access.redeem(key)
      return new Response(null, { status: 303, headers: { ...PAGE_HEADERS, location: '/', 'set-cookie': sessionCookie(id), 'cache-control': 'no-store' } })
    } catch (error) {
      return this.#refuse(error)
    }
  }

  /**
   * A fresh one-time login link, for `tychora dashboard`: the caller proves it is the owner with
   * an owner token of a served project (read from `runtime/token`, 0600). An agent token is
   * refused: agents never open the dashboard.
   */
  #loginLink(event: H3Event, registry: ProjectRegistry): Response {
    try {
      const token = bearerToken(event)
      const scopes = registry.names().map((name) => registry.scopeFor(name, token))
      if (!scopes.includes('owner')) {
        throw scopes.includes('agent') ? new TychoraError('E_FORBIDDEN', "the dashboard is the owner's: an agent token cannot open it") : new TychoraError('E_UNAUTHORIZED', 'wrong bearer token')
      }
      const host = event.req.headers.get('host') as string // checked by the guard
      return new Response(JSON.stringify({ url: this.loginUrl(`http://${host}`) }), {
        status: 200,
        headers: { ...PAGE_HEADERS, 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
      })
    } catch (error) {
      return this.#refuse(error)
    }
  }

  #logout(event: H3Event): Response {
    try {
      const session = this.access.session(event)
      this.access.checkCsrf(event, session)
      this.access.end(event)
      return new Response(null, { status: 204, headers: { ...PAGE_HEADERS, 'set-cookie': clearedCookie(), 'cache-control': 'no-store' } })
    } catch (error) {
      return this.#refuse(error)
    }
  }

  #page(event: H3Event): Response {
    try {
      this.access.session(event)
    } catch (error) {
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
