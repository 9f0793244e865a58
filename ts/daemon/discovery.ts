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
  // A few hundred bytes, read synchronously: a CLI search checks this file first, and loading
  // node:fs/promises for it alone cost ~2 ms of the search's start (issue 11).
  const info = readInfo(dir)
  if (!info) return undefined
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

/**
 * How long a command that found the lock held, and no daemon answering, waits for one to announce
 * itself: a daemon checks its `daemon.json` every `ANNOUNCE_CHECK_MS` and rewrites it when it is
 * missing or not its own, so a file deleted under a live daemon costs a command this wait at most.
 */
export const ANNOUNCE_CHECK_MS = 500
const REANNOUNCE_WAIT_MS = 4 * ANNOUNCE_CHECK_MS

/**
 * The daemon holding the lock of `dir`, waited for (up to `waitMs`) while some process holds the
 * lock: the first look can miss a live daemon whose `daemon.json` was deleted or overwritten.
 * Undefined when the lock is free or its holder never answers as a daemon.
 */
export async function reannouncedDaemon(dir: string, waitMs = REANNOUNCE_WAIT_MS): Promise<DaemonInfo | undefined> {
  const end = Date.now() + waitMs
  for (;;) {
    if (lockOwner(dir) === undefined) return undefined
    const daemon = await runningDaemon(dir)
    if (daemon || Date.now() >= end) return daemon
    await new Promise((r) => setTimeout(r, 100))
  }
}

/**
 * Why the process holding the lock of `dir` (pid `holder`) is not a daemon a command can reach,
 * and what to do about it: what a locked command and `manage doctor` both say.
 */
export function unreachableHolder(dir: string, holder: string): { detail: string; fix: string } {
  const info = readInfo(dir)
  const why = !info
    ? 'no runtime/daemon.json announces a daemon'
    : String(info.pid) !== holder
      ? `runtime/daemon.json names pid ${String(info.pid)}, not the holder`
      : `the daemon runtime/daemon.json names (${String(info.url)}) does not answer`
  return {
    detail: `workspace ${dir} is locked by pid ${holder}, which is not a daemon this command can reach (${why})`,
    fix: `if pid ${holder} is \`tychora serve\` or \`tychora watch\` (an older version, or one that hangs), stop it (kill ${holder}) and start it again; if it is another tychora command, let it finish; otherwise stop that process`,
  }
}

function readInfo(dir: string): DaemonInfo | undefined {
  try {
    return JSON.parse(readFileSync(runtimePath(dir, 'daemon'), 'utf8')) as DaemonInfo
  } catch {
    return undefined
  }
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
