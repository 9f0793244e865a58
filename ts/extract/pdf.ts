// The PDF reader the engine hands to the core: pdf.js runs in worker threads, never on the event
// loop, so a hostile file can neither stall nor crash the process. One document per worker at a
// time; a worker that runs past the time allowed per page, or out of memory, is terminated, its
// file fails with one diagnostic, and the next file gets a fresh worker. pdf.js loads only inside
// the workers, and only when a PDF is read, so opening a workspace costs nothing.
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import { packageRoot } from '../package-root.js'

export interface PdfCall {
  bytes: Buffer
  path: string
}

export interface PdfOutput {
  extractor: string
  pages: number
  pages_without_text: number[]
  blocks: Array<{ kind: 'heading' | 'paragraph' | 'list_item'; text: string; level?: number; page: number; bbox: number[] }>
  furniture: Array<{ page: number; text: string }>
  diagnostics: string[]
  failure?: { code: 'E_UNSUPPORTED_FORMAT' | 'E_LIMIT_EXCEEDED' | 'E_INVALID_ARGUMENT' | 'E_INTERNAL'; message: string }
}

/** Bounds on one document (defaults; DESIGN's `[documents]` limits). */
export interface PdfLimits {
  maxPages: number
  pageTimeoutMs: number
  workerHeapMb: number
}

export const DEFAULT_PDF_LIMITS: PdfLimits = { maxPages: 2000, pageTimeoutMs: 10_000, workerHeapMb: 256 }

/** What the worker posts back: a page done (the timer restarts), or the answer. */
type WorkerMessage = { page: number } | { done: PdfOutput }

const failed = (code: NonNullable<PdfOutput['failure']>['code'], message: string): PdfOutput => ({
  extractor: '',
  pages: 0,
  pages_without_text: [],
  blocks: [],
  furniture: [],
  diagnostics: [],
  failure: { code, message },
})

function workerPath(): string {
  const root = packageRoot()
  if (!root) throw new Error('cannot find the tychora package (its dist/extract/pdf-worker.js)')
  return join(root, 'dist/extract/pdf-worker.js')
}

/** A pool of pdf.js workers, created on first use and shared by every workspace of the process. */
class PdfPool {
  readonly #size = Math.max(1, Math.min(2, availableParallelism()))
  readonly #idle: Worker[] = []
  #busy = 0
  readonly #waiting: Array<() => void> = []

  constructor(readonly limits: PdfLimits) {}

  async read(call: PdfCall): Promise<PdfOutput> {
    const worker = await this.#take()
    try {
      return await this.#run(worker, call)
    } finally {
      this.#busy--
      this.#waiting.shift()?.()
    }
  }

  async #take(): Promise<Worker> {
    while (this.#busy >= this.#size) await new Promise<void>((resolve) => this.#waiting.push(resolve))
    this.#busy++
    const reused = this.#idle.pop()
    if (reused) return reused
    const worker = new Worker(workerPath(), {
      workerData: { maxPages: this.limits.maxPages },
      resourceLimits: { maxOldGenerationSizeMb: this.limits.workerHeapMb },
      // pdf.js's own console output never reaches the user's terminal (the worker silences its
      // console too, so nothing piles up here; a drained stream would keep the process alive).
      stdout: true,
      stderr: true,
    })
    worker.unref()
    return worker
  }

  #run(worker: Worker, call: PdfCall): Promise<PdfOutput> {
    return new Promise((resolve) => {
      let page = 0
      let timer: NodeJS.Timeout
      const finish = (out: PdfOutput, keep: boolean) => {
        clearTimeout(timer)
        worker.off('message', onMessage)
        worker.off('error', onError)
        worker.off('exit', onExit)
        if (keep) this.#idle.push(worker)
        else void worker.terminate()
        resolve(out)
      }
      const arm = () => {
        clearTimeout(timer)
        timer = setTimeout(
          () => finish(failed('E_LIMIT_EXCEEDED', `page ${page + 1} took longer than ${this.limits.pageTimeoutMs} ms to read; the reader was stopped`), false),
          this.limits.pageTimeoutMs,
        )
      }
      const onMessage = (message: WorkerMessage) => {
        if ('page' in message) {
          page = message.page
          arm()
        } else finish(message.done, true)
      }
      const onError = (error: Error & { code?: string }) =>
        finish(
          error.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? failed('E_LIMIT_EXCEEDED', `reading page ${page + 1} needed more than the reader's ${this.limits.workerHeapMb} MB heap`)
            : failed('E_INTERNAL', `the PDF reader failed: ${error.message}`),
          false,
        )
      const onExit = () => finish(failed('E_INTERNAL', 'the PDF reader stopped before answering'), false)
      worker.on('message', onMessage)
      worker.on('error', onError)
      worker.on('exit', onExit)
      arm()
      // The worker gets its own copy, transferred, so the caller's buffer stays the caller's.
      const bytes = new Uint8Array(call.bytes)
      worker.postMessage({ bytes, path: call.path }, [bytes.buffer])
    })
  }
}

let pool: PdfPool | undefined

/** The hook the engine passes to the core: one PDF's bytes in, its blocks (or a failure) out. */
export function readPdf(call: PdfCall): Promise<PdfOutput> {
  pool ??= new PdfPool(DEFAULT_PDF_LIMITS)
  return pool.read(call)
}
