import { type Readable, Writable } from 'node:stream'
import { readFile } from 'node:fs/promises'
import { connect } from '../client/http-client.js'
import { runningDaemon } from '../daemon/discovery.js'
import { runtimePath } from '../contracts/runtime.js'
import { ensureTokens } from '../engine/tokens.js'
import { Workspace } from '../engine/workspace.js'
import { ProjectRegistry } from '../service/registry.js'
import { RemoteProjectService } from '../service/remote.js'
import type { EvidenceService } from '../service/types.js'
import { LineTransport } from './line-transport.js'
import { createMcpServer } from './server.js'

/**
 * stdout belongs to the protocol. The transport gets a private stream onto fd 1, and for the
 * session `process.stdout.write` (and with it console.log) goes to stderr instead, so no stray
 * write from this process can corrupt the JSON-RPC stream. Returns the undo.
 */
function claimStdout(): { protocol: Writable; release: () => void } {
  const stdout = process.stdout
  const write = stdout.write
  const toStdout = write.bind(stdout) as (chunk: unknown, encoding: BufferEncoding, callback: (error?: Error | null) => void) => boolean
  const protocol = new Writable({
    write(chunk: Buffer, encoding, callback) {
      toStdout(chunk, encoding, callback)
    },
  })
  stdout.write = ((...args: Parameters<typeof process.stderr.write>) => process.stderr.write(...args)) as typeof stdout.write
  return {
    protocol,
    release: () => {
      stdout.write = write
    },
  }
}

/**
 * Serves one workspace over MCP on stdin/stdout, in-process: opens it (taking its lock), serves it
 * as the one project of a registry, and resolves when the session ends (the client closes stdin,
 * the transport closes, or SIGINT/SIGTERM), after closing the workspace. Diagnostics go to stderr.
 */
export async function runStdio(dir: string, stdin: Readable = process.stdin): Promise<void> {
  const { protocol, release } = claimStdout()
  let workspace: Workspace | undefined
  try {
    // A daemon that owns the workspace serves it; this session then proxies to it over HTTP.
    const daemon = await runningDaemon(dir)
    let service: EvidenceService
    let label: string
    if (daemon) {
      // The agents' token: this session serves an agent, so the daemon gives it the agent scope.
      const token = (await readFile(runtimePath(dir, 'agentToken'), 'utf8')).trim()
      service = new RemoteProjectService(connect(daemon.url, { token, project: daemon.project }), daemon.project)
      label = `${daemon.project} via the daemon at ${daemon.url}`
    } else {
      workspace = await Workspace.open(dir)
      const registry = new ProjectRegistry()
      registry.register(workspace, { tokens: await ensureTokens(workspace.dir), allowAgentAdd: workspace.allowAgentAdd })
      service = registry
      label = `${workspace.name} (${workspace.dir})`
    }
    const server = createMcpServer(service)
    server.server.onerror = (error) => process.stderr.write(`tychora mcp: ${error.message}\n`)

    let finish: () => void = () => undefined
    const ended = new Promise<void>((resolve) => (finish = resolve))
    const onSignal = () => finish()
    server.server.onclose = onSignal
    stdin.once('end', onSignal)
    stdin.once('close', onSignal)
    process.once('SIGINT', onSignal)
    process.once('SIGTERM', onSignal)

    await server.connect(new LineTransport(stdin, protocol))
    // Jobs a previous session queued run now, in order, on this process's single writer.
    workspace?.resumeQueuedJobs()
    process.stderr.write(`tychora mcp: serving ${label} on stdio\n`)
    await ended

    stdin.off('end', onSignal)
    stdin.off('close', onSignal)
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
    server.server.onclose = undefined
    await server.close()
    stdin.pause()
  } finally {
    workspace?.close()
    await new Promise<void>((resolve) => protocol.end(resolve))
    release()
  }
}
