import { readFileSync } from 'node:fs'
import { runtimePath } from '../contracts/runtime.js'
import { type DaemonInfo, reannouncedDaemon, runningDaemon, unreachableHolder } from '../daemon/discovery.js'
import { lockOwner, type Workspace } from '../engine/workspace.js'
import { openConfigured } from '../service/providers.js'
import { TychoraError } from '../errors.js'
import type { AdminClient, EvidenceClient } from '../contracts/client.js'
import { resolveWorkspace } from './context.js'

export type Target = { mode: 'daemon'; client: EvidenceClient; daemon: DaemonInfo } | { mode: 'local'; client: Workspace; workspace: Workspace }

/**
 * CLI commands go through the daemon when one owns the workspace (so the CLI never fights it for
 * the lock), and open the workspace in-process otherwise.
 */
export async function withTarget<T>(flag: string | undefined, fn: (target: Target) => Promise<T>): Promise<T> {
  const dir = await resolveWorkspace(flag)
  const found = await ownerOrOpen(dir, () => openConfigured(dir))
  if ('daemon' in found) {
    // The HTTP client (and its response schemas) loads only when a daemon answers.
    const { connect } = await import('../client/http-client.js')
    return fn({ mode: 'daemon', client: connect(found.daemon.url, { token: ownerToken(dir), project: found.daemon.project }), daemon: found.daemon })
  }
  try {
    return await fn({ mode: 'local', client: found.opened, workspace: found.opened })
  } finally {
    found.opened.close()
  }
}

/**
 * For a command that runs until stopped (`watch`): through the daemon that owns the workspace, or
 * else through one this process starts for it on a free loopback port and announces in
 * `runtime/daemon.json` as `serve` does, so that every other command (search, add, status…) goes
 * through it meanwhile instead of failing E_LOCKED. That daemon stops, draining its jobs, when
 * `fn` returns.
 */
export async function withServedTarget<T>(flag: string | undefined, fn: (client: EvidenceClient, served: { dir: string; url: string; own: boolean }) => Promise<T>): Promise<T> {
  const dir = await resolveWorkspace(flag)
  // Loaded here: the daemon's HTTP and MCP stack is no part of the other commands' start.
  const { Daemon } = await import('../daemon/daemon.js')
  const found = await ownerOrOpen(dir, () => Daemon.start({ workspaces: [dir], port: 0 }))
  if ('daemon' in found) {
    const { connect } = await import('../client/http-client.js')
    return fn(connect(found.daemon.url, { token: ownerToken(dir), project: found.daemon.project }), { dir, url: found.daemon.url, own: false })
  }
  const daemon = found.opened
  try {
    const [project] = daemon.registry.names()
    return await fn(daemon.registry.project(project as string, 'owner'), { dir, url: daemon.url, own: true })
  } finally {
    await daemon.stop()
  }
}

/**
 * For administration that reads the workspace while it serves (status, verify, backup): through
 * the daemon that owns it, with the owner's token, or in-process when none does.
 */
export async function withAdmin<T>(flag: string | undefined, fn: (admin: AdminClient) => Promise<T>): Promise<T> {
  const dir = await resolveWorkspace(flag)
  const found = await ownerOrOpen(dir, () => openConfigured(dir))
  if ('daemon' in found) {
    const { connectAdmin } = await import('../client/admin-client.js')
    return fn(connectAdmin(found.daemon.url, { token: ownerToken(dir), project: found.daemon.project }))
  }
  try {
    return await fn(found.opened)
  } finally {
    found.opened.close()
  }
}

/** For administration that needs the lock itself (rebuild, purge, withdraw, migrate…). */
export async function withLocalWorkspace<T>(flag: string | undefined, fn: (ws: Workspace) => Promise<T>): Promise<T> {
  const dir = await resolveWorkspace(flag)
  const found = await ownerOrOpen(dir, () => openConfigured(dir))
  if ('daemon' in found) {
    const { pid, url } = found.daemon
    throw new TychoraError('E_LOCKED', `workspace ${dir} is served by the daemon (pid ${pid}, ${url}); stop it to run this command`)
  }
  try {
    return await fn(found.opened)
  } finally {
    found.opened.close()
  }
}

/** The CLI is the workspace owner's tool: it talks to the daemon with the owner's token. */
export function ownerToken(dir: string): string {
  return readFileSync(runtimePath(dir, 'ownerToken'), 'utf8').trim()
}

/**
 * The daemon that owns the workspace in `dir`, else what `open` opens here (taking the lock). When
 * another process holds the lock and no daemon answered at first, it waits briefly for one to
 * announce itself (a live daemon rewrites a deleted or overwritten `daemon.json` within a second);
 * a holder that is no daemon fails `E_LOCKED` with its pid and the fix.
 */
async function ownerOrOpen<T>(dir: string, open: () => Promise<T>): Promise<{ daemon: DaemonInfo } | { opened: T }> {
  const daemon = await runningDaemon(dir)
  if (daemon) return { daemon }
  try {
    return { opened: await open() }
  } catch (error) {
    if (!(error instanceof TychoraError) || error.code !== 'E_LOCKED') throw error
    const announced = await reannouncedDaemon(dir)
    if (announced) return { daemon: announced }
    const holder = lockOwner(dir)
    // Released meanwhile (a daemon that was stopping): open it here after all.
    if (holder === undefined) return { opened: await open() }
    const { detail, fix } = unreachableHolder(dir, holder)
    throw new TychoraError('E_LOCKED', `${detail}: ${fix}`, { cause: error })
  }
}
