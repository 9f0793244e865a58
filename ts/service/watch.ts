import { existsSync } from 'node:fs'
import { stat } from 'node:fs/promises'
import { basename, dirname, resolve, sep } from 'node:path'

/** One batch the watcher handed to its runner. */
export interface WatchBatch {
  /** Files and directories synced (a vanished file's nearest existing directory). */
  targets: string[]
  /** Paths whose events the batch coalesced. */
  events: number
  /** Paths deferred to a later batch because they were still being written. */
  unstable: number
}

export interface WatchOptions {
  /** Quiet time after the last event before a batch starts (default 300 ms). */
  debounceMs?: number
  /** A file is read only when its size and mtime stay the same this long (default 200 ms). */
  stableMs?: number
  /** Paths never watched (the workspace's own folder, at least). */
  ignore?: string[]
  onBatch?: (batch: WatchBatch, result: unknown) => void
  onError?: (error: unknown) => void
}

/**
 * Keeps roots in sync from OS file events (@parcel/watcher: inotify, FSEvents, ReadDirectoryChangesW).
 *
 * Events only mark paths dirty; a batch starts after `debounceMs` of quiet, runs one job (`run`)
 * and waits for it. While a job runs, new events accumulate in one set of paths, so a tree that
 * changes faster than jobs finish is coalesced into the next batch, never queued without bound.
 * Before a batch, every file is stat-ed twice `stableMs` apart; one still growing or being
 * replaced goes to the next batch, so an editor's partial write is not captured half-way. Editor
 * scratch files (swap, backup, lock and temp names) are ignored; a file that vanished (deleted,
 * or renamed over) syncs its nearest existing directory, which records the removal.
 */
export class Watcher {
  readonly #roots: string[]
  readonly #run: (targets: string[]) => Promise<unknown>
  readonly #options: Required<Pick<WatchOptions, 'debounceMs' | 'stableMs'>> & WatchOptions
  readonly #pending = new Set<string>()
  #subscriptions: Array<{ unsubscribe(): Promise<void> }> = []
  #timer: NodeJS.Timeout | undefined
  #running: Promise<void> | undefined
  #stopped = false

  constructor(roots: string[], run: (targets: string[]) => Promise<unknown>, options: WatchOptions = {}) {
    this.#roots = roots.map((r) => resolve(r))
    this.#run = run
    this.#options = { debounceMs: 300, stableMs: 200, ...options }
  }

  async start(): Promise<void> {
    // Loaded on use: a CLI that never watches never loads the native watcher.
    const watcher = await import('@parcel/watcher')
    const ignore = [...(this.#options.ignore ?? []), '**/.git/**', '**/node_modules/**']
    for (const root of this.#roots) {
      this.#subscriptions.push(
        await watcher.subscribe(
          root,
          (error, events) => {
            if (error) return this.#options.onError?.(error)
            for (const event of events) if (!scratch(event.path)) this.#pending.add(event.path)
            if (events.length > 0) this.#arm()
          },
          { ignore },
        ),
      )
    }
  }

  /** Paths waiting for the next batch (coalesced). */
  get pending(): number {
    return this.#pending.size
  }

  /** Resolves when no batch is running and none is due. */
  async idle(): Promise<void> {
    while (this.#running || this.#timer) {
      if (this.#running) await this.#running
      else await new Promise((r) => setTimeout(r, this.#options.debounceMs))
    }
  }

  /** Stops watching; a running batch finishes. */
  async stop(): Promise<void> {
    this.#stopped = true
    if (this.#timer) clearTimeout(this.#timer)
    this.#timer = undefined
    await Promise.all(this.#subscriptions.map((s) => s.unsubscribe()))
    this.#subscriptions = []
    await this.#running
  }

  #arm(): void {
    if (this.#stopped) return
    if (this.#timer) clearTimeout(this.#timer)
    this.#timer = setTimeout(() => {
      this.#timer = undefined
      if (!this.#running) this.#running = this.#batch().finally(() => (this.#running = undefined))
    }, this.#options.debounceMs)
  }

  async #batch(): Promise<void> {
    const paths = [...this.#pending]
    this.#pending.clear()
    const first = await Promise.all(paths.map(probe))
    await new Promise((r) => setTimeout(r, this.#options.stableMs))
    const second = await Promise.all(paths.map(probe))
    const targets = new Set<string>()
    let unstable = 0
    for (const [i, path] of paths.entries()) {
      const [a, b] = [first[i], second[i]]
      if (a !== b) {
        // Still being written or replaced: the next batch reads it.
        this.#pending.add(path)
        unstable++
      } else if (b === 'missing') {
        const dir = this.#existingDir(dirname(path))
        if (dir) targets.add(dir)
      } else if (b !== 'dir') {
        targets.add(path)
      }
    }
    const collapsed = [...targets].filter((t) => ![...targets].some((d) => d !== t && t.startsWith(d + sep)))
    // Stopped during the probes: no job is queued behind a shutdown (its owner syncs at the next start).
    if (collapsed.length > 0 && !this.#stopped) {
      try {
        const result = await this.#run(collapsed.sort())
        this.#options.onBatch?.({ targets: collapsed, events: paths.length, unstable }, result)
      } catch (error) {
        this.#options.onError?.(error)
      }
    }
    if (this.#pending.size > 0) this.#arm()
  }

  /** The nearest existing directory at or above `dir` inside a watched root (removals sync from there). */
  #existingDir(dir: string): string | undefined {
    const root = this.#roots.find((r) => dir === r || dir.startsWith(r + sep))
    if (!root) return undefined
    let current = dir
    while (current !== root && !existsSync(current)) current = dirname(current)
    return current
  }
}

/** Size and mtime (or `missing` / `dir`): equal twice in a row means the file is at rest. */
async function probe(path: string): Promise<string> {
  try {
    const s = await stat(path)
    return s.isDirectory() ? 'dir' : `${s.size}:${s.mtimeMs}:${s.ino}`
  } catch {
    return 'missing'
  }
}

/** Editors' scratch files: vim swap/backup and its 4913 probe, emacs lock/autosave, temp names. */
function scratch(path: string): boolean {
  const name = basename(path)
  return name.startsWith('.') || name.endsWith('~') || name === '4913' || /^#.*#$/.test(name) || /\.(sw[a-p]|swx|tmp|temp|crdownload|part)$/i.test(name)
}
