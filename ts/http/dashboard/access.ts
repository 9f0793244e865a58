import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { H3Event } from 'h3'
import { TychoraError } from '../../errors.js'

/** The session cookie. `__Host-` would demand Secure, which a loopback http origin cannot have. */
export const SESSION_COOKIE = 'tychora_session'
/** The header every state-changing dashboard call carries (double submit is not enough: the token is per session). */
export const CSRF_HEADER = 'x-tychora-csrf'

/** How long a one-time login key stays good after it was issued. */
const LOGIN_KEY_TTL_MS = 15 * 60_000
/** How long a dashboard session lives without a new login. */
const SESSION_TTL_MS = 12 * 60 * 60_000
/** Old sessions and keys beyond these counts are dropped first (a loop of logins cannot grow memory). */
const MAX_SESSIONS = 64
const MAX_LOGIN_KEYS = 16

interface Session {
  csrf: string
  /** The owner capability the session was opened with: each served project's owner token, digested. */
  owner: Map<string, Buffer>
  expires: number
}

export interface DashboardSession {
  csrf: string
}

const secret = () => randomBytes(32).toString('base64url')
const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest()

/**
 * Who may open the dashboard: the person who started the daemon. `serve` prints a one-time login
 * URL (as Jupyter does); redeeming its key sets a session cookie and the key is gone. Sessions and
 * keys live in this daemon's memory only, so a restarted daemon (another instance) knows none of
 * the old ones, and each is bound to the owner capability it was opened under: if an owner token
 * changes, its sessions stop working. Agent tokens never enter here: the dashboard reads no
 * Authorization header.
 */
export class DashboardAccess {
  readonly #keys = new Map<string, { owner: Map<string, Buffer>; expires: number }>()
  readonly #sessions = new Map<string, Session>()
  readonly #owner: () => Map<string, Buffer>
  readonly #now: () => number

  /** `owner` gives the owner capability now: each served project's owner token, digested. */
  constructor(owner: () => Map<string, Buffer>, now: () => number = Date.now) {
    this.#owner = owner
    this.#now = now
  }

  /** A fresh one-time login key (for the URL `serve` prints). */
  issueLoginKey(): string {
    this.#prune()
    const key = secret()
    this.#keys.set(key, { owner: this.#owner(), expires: this.#now() + LOGIN_KEY_TTL_MS })
    dropOldest(this.#keys, MAX_LOGIN_KEYS)
    return key
  }

  /** Redeems a login key once: the new session's id (for the cookie), or E_UNAUTHORIZED. */
  redeem(key: string): string {
    this.#prune()
    const found = this.#keys.get(key)
    this.#keys.delete(key)
    if (!found || found.expires <= this.#now() || !this.#holds(found.owner))
      throw new TychoraError('E_UNAUTHORIZED', 'this login link was used already, has expired, or is not from this daemon: run `tychora dashboard` for a new one')
    const id = secret()
    this.#sessions.set(id, { csrf: secret(), owner: found.owner, expires: this.#now() + SESSION_TTL_MS })
    dropOldest(this.#sessions, MAX_SESSIONS)
    return id
  }

  /** The session the request's cookie names, or E_UNAUTHORIZED. */
  session(event: H3Event): DashboardSession {
    const id = readCookie(event.req.headers.get('cookie'), SESSION_COOKIE)
    const found = id === undefined ? undefined : this.#sessions.get(id)
    if (!found || found.expires <= this.#now() || !this.#holds(found.owner)) {
      if (id !== undefined) this.#sessions.delete(id)
      throw new TychoraError('E_UNAUTHORIZED', 'no dashboard session: open the one-time login link `tychora serve` printed, or run `tychora dashboard` for a new one')
    }
    return { csrf: found.csrf }
  }

  /** E_FORBIDDEN unless the request carries the session's CSRF token. */
  checkCsrf(event: H3Event, session: DashboardSession): void {
    const given = event.req.headers.get(CSRF_HEADER) ?? ''
    if (!timingSafeEqual(digest(given), digest(session.csrf))) throw new TychoraError('E_FORBIDDEN', `missing or wrong ${CSRF_HEADER} header`)
  }

  /** Ends the request's session (log out). */
  end(event: H3Event): void {
    const id = readCookie(event.req.headers.get('cookie'), SESSION_COOKIE)
    if (id !== undefined) this.#sessions.delete(id)
  }

  /**
   * Whether the owner capability a key or session was issued under still holds: every project it
   * covered has the same owner token now (a project opened later, such as a knowledge state, is
   * not part of it and does not end the session).
   */
  #holds(owner: Map<string, Buffer>): boolean {
    const now = this.#owner()
    for (const [name, was] of owner) {
      const is = now.get(name)
      if (!is || !timingSafeEqual(is, was)) return false
    }
    return owner.size > 0
  }

  #prune(): void {
    const now = this.#now()
    for (const [k, v] of this.#keys) if (v.expires <= now) this.#keys.delete(k)
    for (const [k, v] of this.#sessions) if (v.expires <= now) this.#sessions.delete(k)
  }
}

/** The Set-Cookie value of a new session: never readable by script, never sent cross-site. */
export function sessionCookie(id: string): string {
  return `${SESSION_COOKIE}=${id}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${SESSION_TTL_MS / 1000}`
}

/** The Set-Cookie value that removes the session cookie. */
export function clearedCookie(): string {
  return `${SESSION_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`
}

/** One cookie's value from a Cookie header (RFC 6265 pairs); undefined when absent. */
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
