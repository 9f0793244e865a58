import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { defineCommand } from 'citty'
import { runtimePath } from '../../contracts/runtime.js'
import { DEFAULT_PORT, Daemon, KNOWLEDGE_ALIAS } from '../../daemon/daemon.js'
import type { JobStatus } from '../../contracts/service.js'
import { TychoraError } from '../../errors.js'
import { Workspace } from '../../engine/workspace.js'
import { oneLine, visible } from '../../format/terminal.js'
import type { WatchPlan } from '../../service/workspace-watch.js'
import { findProject, projectPaths } from '../../knowledge/layout.js'
import { builtStates } from '../../service/knowledge-state.js'
import { debounceMs, resolveWorkspace } from '../context.js'

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

/**
 * In a knowledge project, every built state, each under its own name (knowledge-<hash>): an agent
 * that keeps naming one keeps one unchanging knowledge base while the developer switches branches,
 * and a switch back finds its state already open (`knowledge` names whichever answers now).
 * Elsewhere, the nearest workspace.
 */
async function defaultWorkspaces(): Promise<string[]> {
  const root = process.env.TYCHORA_WORKSPACE ? undefined : findProject(process.cwd())
  if (!root) return [await resolveWorkspace(undefined)]
  const states = builtStates(projectPaths(root))
  if (states.length === 0) throw new TychoraError('E_NOT_FOUND', `${root} is a knowledge project with no built state yet: run \`tychora migrate apply\``)
  return states
}

export default defineCommand({
  meta: { name: 'serve', description: 'Run the daemon: HTTP API and MCP (Streamable HTTP at /mcp) for one or more workspaces' },
  args: {
    workspace: {
      type: 'string',
      alias: 'w',
      description: 'Workspace to serve (repeat for several; default: the nearest .tychora/; in a knowledge project, every built state)',
    },
    port: { type: 'string', description: `Port (default ${DEFAULT_PORT}; 0 picks a free one)` },
    host: { type: 'string', description: 'Address to listen on (default 127.0.0.1: loopback only)', default: '127.0.0.1' },
    watch: {
      type: 'boolean',
      description: "Keep each workspace's roots in sync from file events: a catch-up sync at start, then each debounced batch is one job on the workspace's queue",
      default: false,
    },
    'debounce-ms': { type: 'string', description: 'With --watch: quiet time after the last event before a batch (default 300)' },
    store: {
      type: 'string',
      description:
        'Serve from a PostgreSQL store shared with other daemons (postgres://user@host:port/db; the password only from PGPASSWORD or ~/.pgpass). Each daemon names a folder of its own with -w (made if missing).',
    },
    artifacts: { type: 'string', description: 'Keep artifacts in an S3 bucket shared with other daemons (s3://bucket/prefix; credentials only from AWS_* variables)' },
    'artifacts-endpoint': { type: 'string', description: "With --artifacts: the bucket's endpoint when it is not AWS (http://127.0.0.1:8333)" },
    search: {
      type: 'string',
      description: 'Keep the lexical indexes on an OpenSearch cluster shared with other daemons (opensearch://host:port[,host:port…]; credentials only from TYCHORA_OPENSEARCH_USER/_PASSWORD)',
    },
  },
  async run({ args, rawArgs }) {
    const dirs = workspaceFlags(rawArgs)
    if (args.store !== undefined || args.artifacts !== undefined || args['artifacts-endpoint'] !== undefined || args.search !== undefined) await attachService(dirs, args)
    const workspaces = dirs.length > 0 ? await Promise.all(dirs.map((d) => resolveWorkspace(d))) : await defaultWorkspaces()
    const port = args.port === undefined ? DEFAULT_PORT : Number(args.port)
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new TychoraError('E_INVALID_ARGUMENT', `--port must be 0-65535, got ${args.port}`)
    if (!args.watch && args['debounce-ms'] !== undefined) throw new TychoraError('E_INVALID_ARGUMENT', '--debounce-ms applies only with --watch')
    const watched: string[] = []
    const watch = args.watch
      ? {
          debounceMs: debounceMs(args['debounce-ms']),
          onWatching: (project: string, plan: WatchPlan) => watched.push(...watchLines(project, plan)),
          onBatch: (project: string, status: JobStatus) => {
            const r = status.receipt
            const files = r ? `${r.files.added} added, ${r.files.changed} changed, ${r.files.removed} removed` : 'no receipt'
            process.stderr.write(visible(`watch ${project}: job ${status.id} ${status.status}: ${files}\n`))
          },
          onError: (project: string, error: unknown) => process.stderr.write(`${oneLine(`watch ${project}: ${error instanceof Error ? error.message : String(error)}`)}\n`),
        }
      : undefined
    // In a knowledge project (served by default, not named with -w), `knowledge` follows the
    // state the checked-out branch builds, including states built after the daemon started.
    const knowledge = dirs.length === 0 && !process.env.TYCHORA_WORKSPACE ? findProject(process.cwd()) : undefined
    const daemon = await Daemon.start({
      workspaces,
      port,
      host: args.host,
      ...(watch ? { watch } : {}),
      ...(knowledge ? { knowledge: { root: knowledge } } : {}),
    })
    process.stdout.write(`tychora daemon listening on ${daemon.url} (pid ${process.pid})\n`)
    // One use: opening it sets the owner's session cookie and the key is spent (as Jupyter's token URL).
    process.stdout.write(`  dashboard: ${daemon.loginUrl()} (one-time login link for the owner)\n`)
    if (knowledge) {
      process.stdout.write(
        visible(
          `  project ${KNOWLEDGE_ALIAS}: the state the checked-out migrations build (${knowledge})\n    owner token: ${runtimePath(knowledge, 'ownerToken')}\n    agent token: ${runtimePath(knowledge, 'agentToken')} (give this one to agents)\n`,
        ),
      )
    }
    for (const name of daemon.registry.names().filter((n) => !daemon.registry.aliases().includes(n))) {
      const ws = daemon.registry.workspace(name)
      process.stdout.write(
        `  project ${name}: ${ws.dir}\n    owner token: ${runtimePath(ws.dir, 'ownerToken')}\n    agent token: ${runtimePath(ws.dir, 'agentToken')} (give this one to agents)\n    MCP: ${daemon.url}/mcp\n`,
      )
    }
    for (const line of watched) process.stdout.write(visible(`${line}\n`))
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

/**
 * `--store` / `--artifacts` / `--search`: each named folder (made when missing) is attached to the shared
 * service. The service's schema is applied by `tychora manage migrate` (opening never migrates).
 */
async function attachService(dirs: string[], args: { store?: string; artifacts?: string; 'artifacts-endpoint'?: string; search?: string }): Promise<void> {
  if (dirs.length === 0) throw new TychoraError('E_INVALID_ARGUMENT', "--store, --artifacts and --search need a folder of this daemon's own: name it with -w")
  const settings = {
    ...(args.store !== undefined ? { store: args.store } : {}),
    ...(args.artifacts !== undefined ? { artifacts: args.artifacts } : {}),
    ...(args['artifacts-endpoint'] !== undefined ? { endpoint: args['artifacts-endpoint'] } : {}),
    ...(args.search !== undefined ? { search: args.search } : {}),
  }
  for (const dir of dirs) {
    if (!existsSync(join(dir, 'workspace.toml'))) await Workspace.init(dir)
    await Workspace.attachService(dir, settings)
  }
}

/** What `--watch` covers for one project, as the daemon's start-up lines. */
function watchLines(project: string, plan: WatchPlan): string[] {
  const lines = [...plan.collections].flatMap(([collection, roots]) => roots.map((root) => `  watch ${project}: ${root} (collection ${collection})`))
  if (lines.length === 0) lines.push(`  watch ${project}: no roots yet (add sources, then restart the daemon)`)
  for (const s of plan.skipped) lines.push(`  watch ${project}: not watching ${s.root}: ${s.reason}`)
  return lines
}
