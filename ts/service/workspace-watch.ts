import { existsSync } from 'node:fs'
import { sep } from 'node:path'
import type { JobStatus } from '../contracts/service.js'
import type { Workspace } from '../engine/workspace.js'
import { Watcher } from './watch.js'

/** What a workspace's watch covers: roots by collection, and the roots it leaves alone with why. */
export interface WatchPlan {
  /** Collection → the outermost roots whose sources all belong to it. */
  collections: Map<string, string[]>
  skipped: Array<{ root: string; reason: string }>
}

export interface WorkspaceWatchOptions {
  /** Quiet time after the last event before a batch (default 300 ms). */
  debounceMs?: number
  /** A batch's job has ended (or stays queued because the workspace stopped its jobs). */
  onBatch?: (status: JobStatus) => void
  onError?: (error: unknown) => void
}

export interface WorkspaceWatch {
  plan: WatchPlan
  /** Unsubscribes at once, then waits for a batch in progress; its job runs on the workspace's runner. */
  stop(): Promise<void>
}

/**
 * Keeps the roots of `ws` in sync from file events while a daemon serves it. Each collection's
 * roots get one `Watcher`, whose batches are queued as add jobs on the workspace's own runner (the
 * daemon's single writer), so nothing else competes for the lock. One sync job per collection is
 * queued at the start, so changes made while nothing watched are caught up.
 */
export async function watchWorkspace(ws: Workspace, options: WorkspaceWatchOptions = {}): Promise<WorkspaceWatch> {
  const plan = await watchPlan(ws)
  const watchers: Watcher[] = []
  const stop = async () => {
    await Promise.all(watchers.map((w) => w.stop()))
  }
  try {
    for (const [collection, roots] of plan.collections) {
      const sync = async (paths: string[]): Promise<JobStatus> => {
        const job = await ws.addSource({ paths, collection })
        // The runner drains the queue in order; this job is in it, so its end is known after.
        await ws.idle()
        return ws.jobStatus(job.job_id)
      }
      const watcher = new Watcher(roots, sync, {
        ...(options.debounceMs === undefined ? {} : { debounceMs: options.debounceMs }),
        ignore: [ws.dir],
        onBatch: (_batch, status) => options.onBatch?.(status as JobStatus),
        ...(options.onError ? { onError: options.onError } : {}),
      })
      watchers.push(watcher)
      // Subscribed before the catch-up sync is queued: a change made during it is synced again.
      await watcher.start()
      await ws.addSource({ paths: roots, collection })
    }
  } catch (error) {
    await stop()
    throw error
  }
  return { plan, stop }
}

/**
 * The workspace's roots, read from the sources of its current snapshot (each source's URI is its
 * root joined with its root-relative path). A root is watched when everything captured under it,
 * nested roots included, belongs to one collection: a watched change is added with that
 * collection, so a root that mixes collections would gain duplicate sources, and no two watchers
 * ever cover the same path. A root that no longer exists, or whose name holds
 * bytes that are not UTF-8 (the watcher takes text paths), is skipped too.
 */
export async function watchPlan(ws: Workspace): Promise<WatchPlan> {
  const found = new Map<string, Set<string>>()
  const skipped: WatchPlan['skipped'] = []
  const undecodable = new Set<string>()
  for (let offset = 0; ; ) {
    const page = await ws.listSources({ limit: 1000, offset })
    for (const s of page.sources) {
      const encoded = rootOf(s.uri, s.path)
      if (encoded === undefined) continue
      const root = decodeName(encoded)
      if (root === undefined) {
        undecodable.add(encoded)
        continue
      }
      const collections = found.get(root) ?? new Set<string>()
      collections.add(s.collection)
      found.set(root, collections)
    }
    offset += page.sources.length
    if (page.sources.length === 0 || offset >= page.total) break
  }
  for (const root of undecodable) skipped.push({ root, reason: 'its name is not valid UTF-8' })
  const roots = [...found.keys()].sort()
  const under = (inner: string, outer: string) => inner === outer || inner.startsWith(outer === sep ? outer : outer + sep)
  const collections = new Map<string, string[]>()
  for (const root of roots) {
    const all = new Set(roots.filter((r) => under(r, root)).flatMap((r) => [...(found.get(r) ?? [])]))
    if (all.size > 1) {
      skipped.push({ root, reason: `its sources are in several collections (${[...all].sort().join(', ')})` })
      continue
    }
    if (!existsSync(root)) {
      skipped.push({ root, reason: 'it no longer exists' })
      continue
    }
    const collection = [...all][0] as string
    const list = collections.get(collection) ?? []
    // Sorted, so an outer root comes before the roots inside it, which it covers.
    if (!list.some((outer) => under(root, outer))) list.push(root)
    collections.set(collection, list)
  }
  return { collections, skipped }
}

/** The root part of a source's `file://` URI (names in the engine's encoded form). */
function rootOf(uri: string, path: string): string | undefined {
  const prefix = 'file://'
  if (!uri.startsWith(prefix) || !uri.endsWith(`/${path}`)) return undefined
  return uri.slice(prefix.length, uri.length - path.length - 1) || '/'
}

/** Reverses the engine's reversible name form: `\\` is a backslash, `\xNN` a byte that is not UTF-8 (undefined: no text path names it). */
function decodeName(encoded: string): string | undefined {
  let out = ''
  for (let i = 0; i < encoded.length; i++) {
    const c = encoded[i] as string
    if (c !== '\\') {
      out += c
      continue
    }
    const next = encoded[i + 1]
    if (next === '\\') {
      out += '\\'
      i++
    } else {
      return undefined
    }
  }
  return out
}
