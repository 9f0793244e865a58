import { readFileSync } from 'node:fs'
import { runtimePath } from '../contracts/runtime.js'
import { type DaemonInfo, runningDaemon } from '../daemon/discovery.js'
import { Workspace } from '../engine/workspace.js'
import { openConfigured } from '../service/providers.js'
import { TychoraError } from '../errors.js'
import type { EvidenceClient } from '../contracts/client.js'
import { resolveWorkspace } from './context.js'

export type Target = { mode: 'daemon'; client: EvidenceClient; daemon: DaemonInfo } | { mode: 'local'; client: Workspace; workspace: Workspace }

/**
 * CLI commands go through the daemon when one owns the workspace (so the CLI never fights it for
 * the lock), and open the workspace in-process otherwise.
 */
export async function withTarget<T>(flag: string | undefined, fn: (target: Target) => Promise<T>): Promise<T> {
  const dir = await resolveWorkspace(flag)
  const daemon = await runningDaemon(dir)
  if (daemon) {
    // The owner's token: the CLI is the workspace owner's tool.
    const token = readFileSync(runtimePath(dir, 'ownerToken'), 'utf8').trim()
    // The HTTP client (and its response schemas) loads only when a daemon answers.
    const { connect } = await import('../client/http-client.js')
    return fn({ mode: 'daemon', client: connect(daemon.url, { token, project: daemon.project }), daemon })
  }
  const workspace = await openConfigured(dir)
  try {
    return await fn({ mode: 'local', client: workspace, workspace })
  } finally {
    workspace.close()
  }
}

/** For administration that needs the lock itself (status, verify, migrate). */
export async function withLocalWorkspace<T>(flag: string | undefined, fn: (ws: Workspace) => Promise<T>): Promise<T> {
  const dir = await resolveWorkspace(flag)
  const daemon = await runningDaemon(dir)
  if (daemon) {
    throw new TychoraError('E_LOCKED', `workspace ${dir} is served by the daemon (pid ${daemon.pid}, ${daemon.url}); stop it to run this command`)
  }
  const ws = await openConfigured(dir)
  try {
    return await fn(ws)
  } finally {
    ws.close()
  }
}
