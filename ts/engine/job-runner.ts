import type { Progress, Receipt } from '../contracts/ingest.js'
import { TychoraError } from '../errors.js'
import { oneLine } from '../format/terminal.js'

/** What happens to a job on the queue, as the runner sees it (for live views such as the dashboard). */
export type JobEvent = { job_id: number; phase: 'queued' | 'started' | 'finished' } | { job_id: number; phase: 'progress'; progress: Progress }

/** Progress events a running job sends at most this often (a job of 50k files reports every file). */
const PROGRESS_EVERY_MS = 250

/**
 * Runs a workspace's queued jobs one at a time (the single writer), oldest first. Jobs are
 * durable rows in the corpus, so the queue itself is the database: `kick()` drains it.
 */
export class JobRunner {
  readonly #run: (jobId: number, onProgress?: (p: Progress) => void) => Promise<Receipt>
  #queued: () => Promise<number[]> = async () => []
  #maintain: () => Promise<unknown> = async () => undefined
  #draining: Promise<void> | undefined
  #stopped = false
  #poller: ReturnType<typeof setInterval> | undefined
  /** The end of the last turn on the writer: a job, the maintenance, or an exclusive task. */
  #turn: Promise<unknown> = Promise.resolve()
  readonly #listeners = new Set<(event: JobEvent) => void>()

  constructor(run: (jobId: number, onProgress?: (p: Progress) => void) => Promise<Receipt>) {
    this.#run = run
  }

  /** Where to read queued job ids from (set by the owner once the handle exists). */
  source(queued: () => Promise<number[]>): void {
    this.#queued = queued
  }

  /** What runs once a drain that ran jobs finds the queue empty (index compaction). */
  maintain(task: () => Promise<unknown>): void {
    this.#maintain = task
  }

  /** Calls `listener` for each job event from now on; the returned function unsubscribes. */
  watch(listener: (event: JobEvent) => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  /** Tells the listeners; one that throws is reported and the rest still hear of it. */
  notify(event: JobEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event)
      } catch (error) {
        this.#report('a job listener', error)
      }
    }
  }

  /**
   * On a store shared with other daemons, looks at the queue every `everyMs` as well: a job
   * queued through another daemon, or one whose daemon died (its lease expired), is anyone's to
   * take. The timer never keeps the process alive.
   */
  poll(everyMs: number): void {
    if (this.#poller) return
    this.#poller = setInterval(() => this.kick(), everyMs)
    this.#poller.unref()
  }

  kick(): void {
    if (this.#stopped || this.#draining) return
    this.#draining = this.#drain().finally(() => {
      this.#draining = undefined
    })
  }

  async #drain(): Promise<void> {
    let ran = false
    for (;;) {
      if (this.#stopped) return
      const ids = await this.#queued().catch((error: unknown) => {
        this.#report('reading the job queue', error)
        return []
      })
      if (ids.length === 0) {
        if (!ran || this.#stopped) return
        // A failed compaction leaves the published generation as it was; the next drain tries again.
        await this.#take(() => this.#maintain()).catch((error: unknown) => this.#report('maintenance after the queue drained', error))
        // A job queued meanwhile found the runner busy (kick() was a no-op): look again.
        ran = false
        continue
      }
      ran = true
      // One job, then the queue is read again: a job cancelled while another ran is not taken.
      const id = ids[0] as number
      // A failed job is recorded on its row (status failed, error); the runner says so and moves on.
      // E_CONFLICT before it ran: another daemon (or the owner's cancellation) took it first.
      await this.#take(() => this.#runWatched(id)).catch((error: unknown) => {
        if (!(error instanceof TychoraError && error.code === 'E_CONFLICT')) this.#report(`job ${id}`, error)
      })
    }
  }

  /** Runs one job, telling listeners when it starts, how it progresses (throttled) and when it ends. */
  async #runWatched(id: number): Promise<Receipt> {
    this.notify({ job_id: id, phase: 'started' })
    let last = 0
    // Always passed: a view that starts watching mid-job gets this job's progress too.
    const onProgress = (progress: Progress) => {
      const now = Date.now()
      if (this.#listeners.size === 0 || now - last < PROGRESS_EVERY_MS) return
      last = now
      this.notify({ job_id: id, phase: 'progress', progress })
    }
    try {
      return await this.#run(id, onProgress)
    } finally {
      this.notify({ job_id: id, phase: 'finished' })
    }
  }

  /** A failure the runner survives: one line on stderr, its text escaped (it may name a stranger's file). */
  #report(what: string, error: unknown): void {
    process.stderr.write(`tychora: ${what} failed: ${oneLine(error instanceof Error ? error.message : String(error))}\n`)
  }

  /**
   * Runs `task` between jobs: it starts once the running job (or maintenance) ends, and the next
   * one waits for it. What reads the whole workspace at rest (verify) goes through here, so a purge
   * cannot delete, under it, a file it has just listed.
   */
  exclusive<T>(task: () => Promise<T>): Promise<T> {
    return this.#take(task)
  }

  /** Queues `fn` behind the current turn (turns run one at a time, in the order taken). */
  #take<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.#turn.then(fn)
    this.#turn = result.catch(() => undefined)
    return result
  }

  /** Resolves once the current drain (if any) has finished. */
  async idle(): Promise<void> {
    while (this.#draining) await this.#draining
  }

  /** No new job starts after this; a running one finishes (jobs stop only at safe points). */
  stop(): void {
    this.#stopped = true
    if (this.#poller) clearInterval(this.#poller)
  }
}
