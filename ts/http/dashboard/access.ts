import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { H3Event } from 'h3'
import { TychoraError } from '../../errors.js'

/**
 * The header every dashboard API call carries: the session's key, which the page keeps in its
 * origin's `sessionStorage` and never in a cookie. Browsers send cookies to every port of a host,
 * so another server on 127.0.0.1 the owner visits would receive the session cookie; it cannot read
 * this origin's storage, so the cookie alone opens nothing. A page of another origin cannot set it
 * either, which also makes it the CSRF token.
 */
export const KEY_HEADER = 'x-tychora-key'

/** How long a one-time login key stays good after it was issued. */
const LOGIN_KEY_TTL_MS = 15 * 60_000
/** How long a dashboard session lives without a new login. */
const SESSION_TTL_MS = 12 * 60 * 60_000
/** Old sessions and keys beyond these counts are dropped first (a loop of logins cannot grow memory). */
const MAX_SESSIONS = 64
const MAX_LOGIN_KEYS = 16

/** The projects whose ownership a login proved: every one (the link `serve` printed) or these names. */
export type Owned = 'all' | ReadonlySet<string>

interface Session {
  key: string
  owned: Owned
  expires: number
}

export interface DashboardSession {
  /** Whether the session may act as the owner of project `name`. */
  owns(name: string): boolean
}

const secret = () => randomBytes(32).toString('base64url')
const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest()

/**
 * Who may open the dashboard: its owner. `serve` prints a one-time login URL (as Jupyter does) for
 * everything it serves; `tychora dashboard` asks for one with a project's owner token, for the
 * projects that token owns. Redeeming a key sets a session cookie (HttpOnly, SameSite=Strict, named
 * after the port) and hands the page the session's key in the redirect's fragment; every API call
 * needs both. Sessions and keys live in this daemon's memory only, so another daemon, or this one
 * restarted, knows none of them. Agent tokens never enter here.
 */
export class DashboardAccess {
  readonly #keys = new Map<string, { owned: Owned; expires: number }>()
  readonly #sessions = new Map<string, Session>()
  readonly #now: () => number

  constructor(now: () => number = Date.now) {
    this.#now = now
  }

  /** A fresh one-time login key for the projects `owned`. */
  issueLoginKey(owned: Owned): string {
    this.#prune()
    const key = secret()
    this.#keys.set(key, { owned, expires: this.#now() + LOGIN_KEY_TTL_MS })
    dropOldest(this.#keys, MAX_LOGIN_KEYS)
    return key
  }

  /** Redeems a login key once: the new session's id (for the cookie) and key (for the page), or E_UNAUTHORIZED. */
  redeem(loginKey: string): { id: string; key: string } {
    this.#prune()
    const found = this.#keys.get(loginKey)
    this.#keys.delete(loginKey)
    if (!found || found.expires <= this.#now())
      throw new TychoraError('E_UNAUTHORIZED', 'this login link was used already, has expired, or is not from this daemon: run `tychora dashboard` for a new one')
    const id = secret()
    const key = secret()
    this.#sessions.set(id, { key, owned: found.owned, expires: this.#now() + SESSION_TTL_MS })
    dropOldest(this.#sessions, MAX_SESSIONS)
    return { id, key }
  }

  /** The session the request's cookie names (enough for the page's static files), or E_UNAUTHORIZED. */
  page(event: H3Event): DashboardSession {
    return view(this.#find(event))
  }

  /** The session of an API call: its cookie and its key header, or E_UNAUTHORIZED / E_FORBIDDEN. */
  call(event: H3Event): DashboardSession {
    const found = this.#find(event)
    const given = event.req.headers.get(KEY_HEADER) ?? ''
    if (!timingSafeEqual(digest(given), digest(found.key))) throw new TychoraError('E_FORBIDDEN', `missing or wrong ${KEY_HEADER} header`)
    return view(found)
  }

  /** Ends the request's session (log out). */
  end(event: H3Event): void {
    const id = readCookie(event.req.headers.get('cookie'), cookieName(event))
    if (id !== undefined) this.#sessions.delete(id)
  }

  #find(event: H3Event): Session {
    const id = readCookie(event.req.headers.get('cookie'), cookieName(event))
    const found = id === undefined ? undefined : this.#sessions.get(id)
    if (!found || found.expires <= this.#now()) {
      if (id !== undefined) this.#sessions.delete(id)
      throw new TychoraError('E_UNAUTHORIZED', 'no dashboard session: open the one-time login link `tychora serve` printed, or run `tychora dashboard` for a new one')
    }
    return found
  }

  #prune(): void {
    const now = this.#now()
    for (const [k, v] of this.#keys) if (v.expires <= now) this.#keys.delete(k)
    for (const [k, v] of this.#sessions) if (v.expires <= now) this.#sessions.delete(k)
  }
}

const view = (s: Session): DashboardSession => ({ owns: (name) => s.owned === 'all' || s.owned.has(name) })

/**
 * The session cookie's name: one per port, so two daemons on one host keep their own sessions.
 * (`__Host-` would demand Secure, which a loopback http origin cannot have.)
 */
export function cookieName(event: H3Event): string {
  const port = /:(\d{1,5})$/.exec(event.req.headers.get('host') ?? '')?.[1] ?? '80'
  return `tychora_session_${port}`
}

/** The Set-Cookie value of a new session: never readable by script, never sent cross-site. */
export function sessionCookie(event: H3Event, id: string): string {
  return `${cookieName(event)}=${id}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${SESSION_TTL_MS / 1000}`
}

/** The Set-Cookie value that removes the session cookie. */
export function clearedCookie(event: H3Event): string {
  return `${cookieName(event)}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`
}

/**
 * One cookie's value from a Cookie header. h3's `parseCookies` decodes every value and keeps the
 * last of repeated names; a session id is plain base64url and the first value is the one meant.
 */
export function readCookie(header: string | null, name: string): string | undefined {
  if (!header) return undefined
  for (const pair of header.split(';')) {
    const at = pair.indexOf('=')
    if (at > 0 && pair.slice(0, at).trim() === name) return pair.slice(at + 1).trim()
  }
  return undefined
}

function dropOldest<K, V>(map: Map<K, V>, keep: number): void {
  while (map.size > keep) {
    const first = map.keys().next()
    if (first.done) return
    map.delete(first.value)
  }
}
