import { readFile } from 'node:fs/promises'
import type { Readable } from 'node:stream'
import { connect } from '../client/http-client.js'
import { runtimePath } from '../contracts/runtime.js'
import { ensureTokens } from '../engine/tokens.js'
import { openConfigured } from '../service/providers.js'
import { type StdioSession, serveStdio } from '../mcp/stdio.js'
import { ProjectRegistry } from '../service/registry.js'
import { RemoteProjectService } from '../service/remote.js'
import { runningDaemon } from './discovery.js'

/**
 * `tychora mcp`: serves one workspace over MCP on stdin/stdout until the session ends. A daemon
 * that owns the workspace serves it and this session proxies to it; otherwise the workspace is
 * opened here (taking its lock) as the one project of a registry, and closed when the session ends.
 */
export function runStdio(dir: string, stdin?: Readable): Promise<void> {
  return serveStdio(() => openSession(dir), stdin)
}

async function openSession(dir: string): Promise<StdioSession> {
  const daemon = await runningDaemon(dir)
  if (daemon) {
    // The agents' token: this session serves an agent, so the daemon gives it the agent scope.
    const token = (await readFile(runtimePath(dir, 'agentToken'), 'utf8')).trim()
    return {
      service: new RemoteProjectService(connect(daemon.url, { token, project: daemon.project }), daemon.project),
      project: daemon.project,
      label: `${daemon.project} via the daemon at ${daemon.url}`,
    }
  }
  const workspace = await openConfigured(dir)
  try {
    const registry = new ProjectRegistry()
    registry.register(workspace, { tokens: await ensureTokens(workspace.dir), allowAgentAdd: workspace.allowAgentAdd })
    return {
      service: registry,
      project: workspace.name,
      label: `${workspace.name} (${workspace.dir})`,
      // Jobs a previous session queued run now, in order, on this process's single writer.
      started: () => workspace.resumeQueuedJobs(),
      close: () => workspace.close(),
    }
  } catch (error) {
    workspace.close()
    throw error
  }
}
