// The PDF reader the engine hands to the core: pdf.js runs in worker threads, never on the event
// loop, so a hostile file can neither stall nor crash the process. One document per worker at a
// time; a worker that runs past the time allowed per page, or out of memory, is terminated, its
// file fails with one diagnostic, and the next file gets a fresh worker. pdf.js loads only inside
// the workers, and only when a PDF is read, so opening a workspace costs nothing.
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import { packageRoot } from '../package-root.js'

/** One PDF to read, with the bounds from the workspace's `[documents]` section. */
export interface PdfCall {
  bytes: Buffer
  path: string
  password?: string | null
  max_pages: number
  page_timeout_ms: number
  worker_memory_mb: number
  /**
   * Pixels an image may have for pdf.js to decode it (`maxImageSize`) in a pass that looks at
   * images: one over it is left out undecoded. 1: no image is decoded. Absent: the default
   * `[documents] max_image_pixels`.
   */
  max_image_pixels?: number
  /** Pages with no text layer to recognize, and how (absent: `[ocr]` is off). */
  ocr?: { languages: string[]; dpi: number; page_timeout_ms: number } | null
  /** The bytes are a grey PNG of an image file (decoded by the core) to recognize, not a PDF. */
  image?: boolean
  /** Draw these regions (one per page, stacked top to bottom in one PNG) instead of reading the file. */
  render?: { regions: Array<{ page: number; box: number[] }>; dpi: number }
  /** Find the figures the pages draw (each drawn to PNG) instead of reading the text. */
  pictures?: boolean
  /** Within the pool: only find where the figures are (`placements`), or draw these. */
  place?: boolean
  draw?: Array<{ page: number; figures: Array<{ x0: number; y0: number; x1: number; y1: number }> }>
}

export interface PdfOutput {
  extractor: string
  pages: number
  pages_without_text: number[]
  /** Pages pdf.js could not read (a Pages tree that loops back on itself), with why; the rest is kept. */
  unreadable_pages?: Array<{ page: number; reason: string }>
  /** `hidden`: why a reader of the page cannot see this text (it is flagged, never plain evidence). */
  blocks: Array<{
    kind: 'heading' | 'paragraph' | 'list_item' | 'table_row'
    text: string
    level?: number
    page: number
    bbox: number[]
    hidden?: string
    /** Recognized by OCR from the page's image, with this confidence (0 to 1). */
    ocr_confidence?: number
    /** A table row: its logical table (kept across pages), row, header flag and cells with boxes. */
    table?: number
    row?: number
    header?: boolean
    cells?: Array<{ col: number; col_span: number; text: string; bbox: number[] }>
  }>
  furniture: Array<{ page: number; text: string }>
  diagnostics: string[]
  /** Figures the pages draw, each drawn to PNG (a `pictures` call). */
  pictures?: Array<{ page: number; bbox: number[]; png: Buffer }>
  /** Where each page draws its figures (a `place` call within the pool). */
  placements?: NonNullable<PdfCall['draw']>
  /** Regions drawn to PNG, stacked (a `render` call): where each page's region sits in it. */
  rendered?: {
    png: Uint8Array
    width: number
    height: number
    /** Each page's part; `transform` maps PDF points `[x, y]` to the part's pixels: `[a·x + c·y + e, b·x + d·y + f]`. */
    parts: Array<{ page: number; top: number; width: number; height: number; transform: number[] }>
  }
  /** The worker's largest heap (V8 heap plus the buffers it holds) while it read this file. */
  peak_memory_bytes?: number
  failure?: { code: 'E_UNSUPPORTED_FORMAT' | 'E_LIMIT_EXCEEDED' | 'E_INVALID_ARGUMENT' | 'E_INTERNAL'; message: string }
}

/** `[documents] max_image_pixels` by default (a call that does not come from a workspace's reading). */
const DEFAULT_MAX_IMAGE_PIXELS = 100_000_000

/** What the worker posts back: a page done (the timer restarts), or the answer. */
type WorkerMessage = { page: number; ocr?: boolean } | { done: PdfOutput }

/** A reading that produced nothing but its failure (the pool's and the page renderer's). */
export function pdfFailure(code: NonNullable<PdfOutput['failure']>['code'], message: string): PdfOutput {
  return { extractor: '', pages: 0, pages_without_text: [], blocks: [], furniture: [], diagnostics: [], failure: { code, message } }
}

function workerPath(): string {
  const root = packageRoot()
  if (!root) throw new Error('cannot find the tychora package (its dist/extract/pdf-worker.js)')
  return join(root, 'dist/extract/pdf-worker.js')
}

/**
 * A pool of pdf.js workers with one heap limit, created on first use and shared by every
 * workspace of the process that sets that limit.
 */
class PdfPool {
  readonly #size = Math.max(1, Math.min(2, availableParallelism()))
  readonly #idle: Worker[] = []
  #busy = 0
  readonly #waiting: Array<() => void> = []

  constructor(readonly heapMb: number) {}

  async read(call: PdfCall): Promise<PdfOutput> {
    return call.pictures ? this.#pictures(call) : this.#one(call)
  }

  /**
   * A file's figures: where they are, read by one worker, then the pages that hold them drawn by
   * every worker of the pool at once, each a run of pages holding about as many figures, so one
   * picture-heavy file does not draw on one core while the other waits.
   */
  async #pictures(call: PdfCall): Promise<PdfOutput> {
    const placed = await this.#one({ ...call, pictures: false, place: true })
    const placements = placed.placements ?? []
    if (placed.failure || placements.length === 0) return { ...placed, placements: undefined, pictures: [] }
    const total = placements.reduce((n, p) => n + p.figures.length, 0)
    const parts: Array<typeof placements> = [[]]
    let inPart = 0
    for (const p of placements) {
      if (inPart >= total / this.#size && parts.length < this.#size) {
        parts.push([])
        inPart = 0
      }
      parts.at(-1)!.push(p)
      inPart += p.figures.length
    }
    const drawn = await Promise.all(parts.map((draw) => this.#one({ ...call, pictures: false, draw })))
    const failure = drawn.find((d) => d.failure)
    if (failure) return failure
    return {
      ...placed,
      placements: undefined,
      pictures: drawn.flatMap((d) => d.pictures ?? []),
      diagnostics: [...placed.diagnostics, ...drawn.flatMap((d) => d.diagnostics)],
    }
  }

  async #one(call: PdfCall): Promise<PdfOutput> {
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
      resourceLimits: { maxOldGenerationSizeMb: this.heapMb },
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
      // OCR of a page has its own, longer time; the worker enforces it and keeps the rest of the
      // file, so this timer (with a margin) only stops a worker that stopped answering.
      const arm = (ocr = false) => {
        clearTimeout(timer)
        const limit = ocr && call.ocr ? call.ocr.page_timeout_ms + 10_000 : call.page_timeout_ms
        const name = ocr ? '[ocr] page_timeout_ms' : 'page_timeout_ms'
        timer = setTimeout(() => finish(pdfFailure('E_LIMIT_EXCEEDED', `page ${page + 1} took longer than ${name} = ${limit} to read; the reader was stopped`), false), limit)
      }
      const onMessage = (message: WorkerMessage) => {
        if ('page' in message) {
          page = message.page
          arm(message.ocr === true)
        } else finish(message.done, true)
      }
      const onError = (error: Error & { code?: string }) =>
        finish(
          error.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? pdfFailure('E_LIMIT_EXCEEDED', `reading page ${page + 1} needed more than worker_memory_mb = ${this.heapMb} of heap`)
            : pdfFailure('E_INTERNAL', `the PDF reader failed: ${error.message}`),
          false,
        )
      const onExit = () => finish(pdfFailure('E_INTERNAL', 'the PDF reader stopped before answering'), false)
      worker.on('message', onMessage)
      worker.on('error', onError)
      worker.on('exit', onExit)
      arm()
      // The worker gets its own copy, transferred, so the caller's buffer stays the caller's.
      const bytes = new Uint8Array(call.bytes)
      worker.postMessage(
        {
          bytes,
          password: call.password ?? undefined,
          maxPages: call.max_pages,
          maxImagePixels: call.max_image_pixels ?? DEFAULT_MAX_IMAGE_PIXELS,
          ocr: call.ocr ?? undefined,
          image: call.image === true,
          render: call.render,
          place: call.place === true,
          draw: call.draw,
        },
        [bytes.buffer],
      )
    })
  }
}

const pools = new Map<number, PdfPool>()

/** The hook the engine passes to the core: one PDF's bytes in, its blocks (or a failure) out. */
export function readPdf(call: PdfCall): Promise<PdfOutput> {
  let pool = pools.get(call.worker_memory_mb)
  if (!pool) pools.set(call.worker_memory_mb, (pool = new PdfPool(call.worker_memory_mb)))
  return pool.read(call).then((out) => {
    // Figures cross to the core as Buffers (a worker's answer arrives as plain Uint8Arrays,
    // whatever its type says).
    for (const p of out.pictures ?? []) p.png = Buffer.from(p.png.buffer, p.png.byteOffset, p.png.byteLength)
    return out
  })
}
