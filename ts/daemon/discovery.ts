import { readFileSync, rmSync } from 'node:fs'
import { runtimePath } from '../contracts/runtime.js'
import { lockOwner } from '../engine/workspace.js'

/** What `runtime/daemon.json` records, so CLIs route through the daemon instead of fighting it for the lock. */
export interface DaemonInfo {
  pid: number
  host: string
  port: number
  url: string
  project: string
  started_at: string
  /** A random id of this daemon run; `/health` answers with it (the handshake). */
  instance: string
}

/** How long the handshake may take before the daemon is judged unreachable. */
const HANDSHAKE_MS = 2000

/**
 * The daemon serving the workspace in `dir`, if one is alive. A pid alone proves nothing (after a
 * kill -9 it may belong to another process by now), so liveness is the workspace's OS lock being
 * held *and* the recorded URL answering with the recorded instance id. A `daemon.json` whose lock
 * is free is stale: it is removed, and the caller opens the workspace itself. A held lock whose
 * holder does not answer the handshake is not a daemon: the caller's own open then fails with
 * `E_LOCKED` naming the real holder.
 */
export async function runningDaemon(dir: string): Promise<DaemonInfo | undefined> {
  const path = runtimePath(dir, 'daemon')
  let info: DaemonInfo
  try {
    // A few hundred bytes, read synchronously: a CLI search checks this file first, and loading
    // node:fs/promises for it alone cost ~2 ms of the search's start (issue 11).
    info = JSON.parse(readFileSync(path, 'utf8')) as DaemonInfo
  } catch {
    return undefined
  }
  if (lockOwner(dir) === undefined) {
    try {
      rmSync(path, { force: true })
    } catch {
      // Another process removed or replaced it: either way this one is not a daemon's.
    }
    return undefined
  }
  return (await handshake(info)) ? info : undefined
}

async function handshake(info: DaemonInfo): Promise<boolean> {
  if (typeof info.url !== 'string' || typeof info.instance !== 'string') return false
  try {
    const response = await fetch(new URL('/health', info.url), { signal: AbortSignal.timeout(HANDSHAKE_MS) })
    const body = (await response.json()) as { instance?: unknown }
    return response.ok && body.instance === info.instance
  } catch {
    return false
  }
}
