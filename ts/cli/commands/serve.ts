import { defineCommand } from 'citty'
import { runtimePath } from '../../contracts/runtime.js'
import { DEFAULT_PORT, Daemon } from '../../daemon/daemon.js'
import { TychoraError } from '../../errors.js'
import { resolveWorkspace } from '../context.js'

/** `--workspace` may repeat; citty keeps only the last value, so read them from argv. */
function workspaceFlags(argv: string[]): string[] {
  const dirs: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string
    if ((a === '--workspace' || a === '-w') && argv[i + 1]) dirs.push(argv[++i] as string)
    else if (a.startsWith('--workspace=')) dirs.push(a.slice('--workspace='.length))
  }
  return dirs
}

export default defineCommand({
  meta: { name: 'serve', description: 'Run the daemon: HTTP API and MCP (Streamable HTTP at /mcp) for one or more workspaces' },
  args: {
    workspace: { type: 'string', alias: 'w', description: 'Workspace to serve (repeat for several; default: the nearest .tychora/)' },
    port: { type: 'string', description: `Port (default ${DEFAULT_PORT}; 0 picks a free one)` },
    host: { type: 'string', description: 'Address to listen on (default 127.0.0.1: loopback only)', default: '127.0.0.1' },
  },
  async run({ args, rawArgs }) {
    const dirs = workspaceFlags(rawArgs)
    const workspaces = dirs.length > 0 ? dirs.map((d) => resolveWorkspace(d)) : [resolveWorkspace(undefined)]
    const port = args.port === undefined ? DEFAULT_PORT : Number(args.port)
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new TychoraError('E_INVALID_ARGUMENT', `--port must be 0-65535, got ${args.port}`)
    const daemon = await Daemon.start({ workspaces, port, host: args.host })
    process.stdout.write(`tychora daemon listening on ${daemon.url} (pid ${process.pid})\n`)
    for (const name of daemon.registry.names()) {
      const ws = daemon.registry.workspace(name)
      process.stdout.write(
        `  project ${name}: ${ws.dir}\n    owner token: ${runtimePath(ws.dir, 'ownerToken')}\n    agent token: ${runtimePath(ws.dir, 'agentToken')} (give this one to agents)\n    MCP: ${daemon.url}/mcp\n`,
      )
    }
    await new Promise<void>((resolve) => {
      const shutdown = (signal: string) => {
        process.stderr.write(`${signal}: draining requests and jobs…\n`)
        daemon.stop().then(resolve, (error: unknown) => {
          process.stderr.write(`shutdown failed: ${String(error)}\n`)
          resolve()
        })
      }
      process.once('SIGTERM', () => shutdown('SIGTERM'))
      process.once('SIGINT', () => shutdown('SIGINT'))
    })
  },
})
