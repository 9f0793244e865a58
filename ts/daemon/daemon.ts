import { randomUUID } from 'node:crypto'
import { statSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { ensureTokens } from '../engine/tokens.js'
import type { Workspace } from '../engine/workspace.js'
import { openConfigured } from '../service/providers.js'
import { TychoraError } from '../errors.js'
import { createHttpApp } from '../http/app.js'
import { Dashboard } from '../http/dashboard/dashboard.js'
import { startHttpServer } from '../http/server.js'
import { createMcpHttpHandler } from '../mcp/http.js'
import { ProjectRegistry } from '../service/registry.js'
import type { JobStatus } from '../contracts/service.js'
import { type WatchPlan, type WorkspaceWatch, watchWorkspace } from '../service/workspace-watch.js'
import { Announcements } from './announce.js'
import { type DaemonInfo, runningDaemon } from './discovery.js'
import { projectPaths } from '../knowledge/paths.js'
import { answeringState, stateName } from '../service/knowledge-state.js'

export { type DaemonInfo, runningDaemon } from './discovery.js'

export interface DaemonOptions {
  /** Workspace directories to serve; each becomes a project named by its workspace.toml. */
  workspaces: string[]
  port?: number
  host?: string
  /** Keep each workspace's roots in sync from file events, through its own job queue (`serve --watch`). */
  watch?: DaemonWatchOptions
  /**
   * A knowledge project (its `.tychora` folder): the daemon also serves `knowledge`, which answers
   * each call from the state its tracked migrations build now (the branch checked out), opening a
   * state built after the daemon started on first use. Its tokens are the project's
   * (`.tychora/runtime/`); each state keeps its own name and tokens, for a pinned knowledge base.
   */
  knowledge?: { root: string }
}

/** The name a knowledge project's moving state is served under. */
export const KNOWLEDGE_ALIAS = 'knowledge'

export interface DaemonWatchOptions {
  /** Quiet time after the last event before a batch (default 300 ms). */
  debounceMs?: number
  /** What a project watches, once its watchers are subscribed. */
  onWatching?: (project: string, plan: WatchPlan) => void
  onBatch?: (project: string, status: JobStatus) => void
  onError?: (project: string, error: unknown) => void
}

export const DEFAULT_PORT = 7419

async function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, host, () => {
      const address = probe.address()
      const port = typeof address === 'object' && address ? address.port : 0
      probe.close(() => resolve(port))
    })
  })
}

/**
 * One process that owns its workspaces (their OS locks) and serves them over HTTP and MCP.
 * Writes go through each workspace's single writer (its job runner); reads run concurrently.
 */
export class Daemon {
  readonly registry: ProjectRegistry
  readonly url: string
  readonly port: number
  /** The owner's dashboard at `/` (`loginUrl()` for the one-time link `serve` prints). */
  readonly dashboard: Dashboard
  readonly #close: () => Promise<void>
  #stopping: Promise<void> | undefined

  private constructor(registry: ProjectRegistry, url: string, port: number, close: () => Promise<void>, dashboard: Dashboard) {
    this.registry = registry
    this.dashboard = dashboard
    this.url = url
    this.port = port
    this.#close = close
  }

  static async start(options: DaemonOptions): Promise<Daemon> {
    if (options.workspaces.length === 0) throw new TychoraError('E_INVALID_ARGUMENT', 'serve needs at least one workspace')
    const host = options.host ?? '127.0.0.1'
    const port = options.port === 0 ? await freePort(host) : (options.port ?? DEFAULT_PORT)
    const registry = new ProjectRegistry()
    const opened: Workspace[] = []
    const watches: WorkspaceWatch[] = []
    const announcements = new Announcements()
    try {
      for (const dir of options.workspaces) {
        const ws = await openConfigured(dir).catch(async (error: unknown) => {
          const owner = error instanceof TychoraError && error.code === 'E_LOCKED' ? await runningDaemon(dir) : undefined
          if (owner)
            throw new TychoraError('E_LOCKED', `workspace ${dir} is served by another daemon (pid ${owner.pid}, port ${owner.port})`, {
              cause: error,
            })
          throw error
        })
        opened.push(ws)
        registry.register(ws, { tokens: await ensureTokens(ws.dir), allowAgentAdd: ws.allowAgentAdd })
      }
      // Before the server listens: a root that cannot be watched fails the start, and nothing is left serving.
      if (options.watch) {
        for (const ws of opened) watches.push(await startWatch(ws, options.watch))
      }
      const instance = randomUUID()
      const dashboard = new Dashboard(registry, options.knowledge ? { knowledge: { root: options.knowledge.root, project: KNOWLEDGE_ALIAS } } : {})
      const app = createHttpApp(registry, { port, instance, mcp: createMcpHttpHandler(registry), dashboard })
      const server = await startHttpServer(app, { host, port })
      const started = new Date().toISOString()
      /** Announces a served workspace to CLIs (they route through the daemon) and resumes its queue. */
      const announce = async (ws: Workspace) => {
        const info: DaemonInfo = { pid: process.pid, host, port: server.port, url: server.url, project: ws.name, started_at: started, instance }
        announcements.announce(ws.dir, info)
        // Jobs queued before a restart resume now, in order.
        ws.resumeQueuedJobs()
      }
      for (const ws of opened) await announce(ws)
      if (options.knowledge) {
        registry.registerAlias(KNOWLEDGE_ALIAS, {
          tokens: await ensureTokens(options.knowledge.root),
          current: followState(options.knowledge.root, registry, async (dir) => {
            const ws = await openConfigured(dir)
            opened.push(ws)
            registry.register(ws, { tokens: await ensureTokens(ws.dir), allowAgentAdd: ws.allowAgentAdd })
            await announce(ws)
            return ws.name
          }),
        })
      }
      const close = async () => {
        // Unsubscribed first, so no batch starts while the jobs drain; one in progress ends with its job.
        const watching = Promise.all(watches.map((w) => w.stop()))
        dashboard.close() // open event streams would keep the server from closing
        await server.close()
        for (const ws of opened) await ws.stopJobs() // no new job starts; a running one finishes (queued ones stay queued)
        await watching
        announcements.stop()
        for (const ws of opened) ws.close()
      }
      return new Daemon(registry, server.url, server.port, close, dashboard)
    } catch (error) {
      announcements.stop()
      const watching = Promise.all(watches.map((w) => w.stop()))
      for (const ws of opened) await ws.stopJobs()
      await watching
      for (const ws of opened) ws.close()
      throw error
    }
  }

  /** A fresh one-time login URL for the dashboard, as the owner of every project served. */
  loginUrl(): string {
    return this.dashboard.loginUrl(this.url)
  }

  /** Stops accepting, lets in-flight requests finish and running jobs reach their end, then releases the locks. */
  stop(): Promise<void> {
    this.#stopping ??= this.#close()
    return this.#stopping
  }
}

/**
 * The name of the state a knowledge project answers from now (`answeringState`: the one its
 * tracked migrations build, else the last complete one), opened through `open` the first time it
 * is asked for. A branch switch, an accepted migration or a newly built state is seen by the next
 * call, with no restart. Resolving hashes every migration file (5–12 ms for 200), so it runs again
 * only when what it reads may have changed: the migrations folder, project.json, the states
 * folder or its `current` pointer (Git replaces the files a checkout changes, so the folder's
 * mtime moves). Two calls that find the same new state open it once.
 */
function followState(root: string, registry: ProjectRegistry, open: (dir: string) => Promise<string>): () => Promise<string> {
  const paths = projectPaths(root)
  const opening = new Map<string, Promise<string>>()
  const watched = [paths.migrations, paths.config, paths.states, join(paths.states, 'current')]
  const stamp = () => watched.map((p) => statSync(p, { bigint: true, throwIfNoEntry: false })?.mtimeNs ?? -1n).join(',')
  let last: { stamp: string; name: string } | undefined
  return async () => {
    const now = stamp()
    if (last?.stamp === now && registry.names().includes(last.name)) return last.name
    const state = answeringState(paths)
    if (!state) throw new TychoraError('E_NOT_FOUND', `${root} has no built knowledge state yet: run \`tychora migrate apply\``)
    const name = stateName(state.hash)
    if (!registry.names().includes(name)) {
      let pending = opening.get(state.hash)
      if (!pending) {
        pending = open(state.dir).finally(() => opening.delete(state.hash))
        opening.set(state.hash, pending)
      }
      await pending
    }
    last = { stamp: now, name }
    return name
  }
}

async function startWatch(ws: Workspace, options: DaemonWatchOptions): Promise<WorkspaceWatch> {
  const project = ws.name
  const watch = await watchWorkspace(ws, {
    ...(options.debounceMs === undefined ? {} : { debounceMs: options.debounceMs }),
    onBatch: (status) => options.onBatch?.(project, status),
    onError: (error) => options.onError?.(project, error),
  })
  options.onWatching?.(project, watch.plan)
  return watch
}
