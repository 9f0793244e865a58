// OCR of a page with no text layer, inside a PDF reader worker (pdf-worker.ts): pdf.js renders the
// page onto a canvas (@napi-rs/canvas, the one pdf.js itself uses in Node), tesseract.js reads it
// offline with the traineddata of each language from its npm package, never from a CDN. The
// words found are derived evidence: each paragraph keeps its box on the page (in PDF points) and
// the recognizer's confidence, and nothing here decides they are a quotation.
import { mkdtempSync, symlinkSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import type { Canvas } from '@napi-rs/canvas'
import type { Worker as Recognizer } from 'tesseract.js'

/** `[ocr]` as the reader gets it. */
export interface OcrSettings {
  languages: string[]
  dpi: number
  page_timeout_ms: number
}

/** A paragraph read from a page's image. */
export interface OcrParagraph {
  text: string
  /** `[x0, y0, x1, y1]` in PDF points, origin bottom-left, as the text layer's boxes are. */
  bbox: number[]
  /** Mean word confidence, 0 to 1. */
  confidence: number
}

export interface OcrPage {
  paragraphs: OcrParagraph[]
  /** The page's confidence, 0 to 1, in the orientation kept. */
  confidence: number
  /** Degrees the image was turned (clockwise) to be read: 0, 90, 180 or 270. */
  turned: number
}

/** Renders a pdf.js page at a resolution and maps image pixels back to PDF points. */
export interface RenderedPage {
  canvas: Canvas
  toPdfPoint: (x: number, y: number) => number[]
}

/** The traineddata flavour read from each `@tesseract.js-data/<lang>` package. */
const TRAINEDDATA = '4.0.0_best_int'
/** A page read below this confidence is read again turned (an upside-down or sideways scan). */
const TURN_BELOW = 0.6
/** A turn read at this confidence is kept without trying the others. */
const GOOD_ENOUGH = 0.75

const require = createRequire(import.meta.url)

export function tesseractVersion(): string {
  return (require('tesseract.js/package.json') as { version: string }).version
}

/**
 * The directory tesseract.js reads `<lang>.traineddata.gz` from. One language reads its package's
 * own directory; several (each in its own package) are linked into one temporary directory,
 * because tesseract.js takes a single path.
 */
function languagePath(languages: string[]): string {
  const dirs = languages.map((lang) => {
    try {
      return join(dirname(require.resolve(`@tesseract.js-data/${lang}/package.json`)), TRAINEDDATA)
    } catch {
      throw new Error(`[ocr] language ${lang} needs the npm package @tesseract.js-data/${lang} (npm install @tesseract.js-data/${lang})`)
    }
  })
  if (dirs.length === 1) return dirs[0]!
  const joined = mkdtempSync(join(tmpdir(), 'tychora-ocr-'))
  for (const [i, lang] of languages.entries()) symlinkSync(join(dirs[i]!, `${lang}.traineddata.gz`), join(joined, `${lang}.traineddata.gz`))
  return joined
}

/** The recognizer for one set of languages and resolution; `stopped` once it is dropped. */
interface Slot {
  key: string
  recognizer: Promise<Recognizer>
  stopped: boolean
}

let current: Slot | null = null

/** One recognizer per worker, for the languages and resolution last asked for. */
async function recognizer(settings: OcrSettings): Promise<Slot> {
  const key = `${settings.languages.join('+')}@${settings.dpi}`
  if (current?.key === key) return current
  await dropRecognizer()
  const made = (async () => {
    const { createWorker, OEM, PSM } = await import('tesseract.js')
    const worker = await createWorker(settings.languages, OEM.LSTM_ONLY, {
      langPath: languagePath(settings.languages),
      cacheMethod: 'none',
      gzip: true,
      logger: () => {},
      errorHandler: () => {},
    })
    await worker.setParameters({
      // Automatic page segmentation finds columns (tesseract.js's own default reads one block).
      tessedit_pageseg_mode: PSM.AUTO,
      user_defined_dpi: String(settings.dpi),
      // tesseract's own messages go nowhere near a terminal.
      debug_file: '/dev/null',
    })
    return worker
  })()
  const slot: Slot = { key, recognizer: made, stopped: false }
  current = slot
  made.catch(() => {
    if (current === slot) current = null
  })
  return slot
}

/** Stops the recognizer (after a page ran past its time, or when the worker is done). */
export async function dropRecognizer(): Promise<void> {
  const old = current
  current = null
  if (!old) return
  // Marked at once, so a page still reading with it stops before asking it again.
  old.stopped = true
  await old.recognizer.then((r) => r.terminate()).catch(() => {})
}

/**
 * Waits for `work` at most `ms`. Past it the recognizer is stopped (its wasm cannot be
 * interrupted otherwise) and the answer is `'late'`; the next page starts a fresh one.
 */
export async function withinTime<T>(work: Promise<T>, ms: number): Promise<T | 'late'> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), ms)
  })
  try {
    const result = await Promise.race([work, late])
    if (result === 'late') {
      work.catch(() => {})
      await dropRecognizer()
    }
    return result
  } finally {
    clearTimeout(timer)
  }
}

/** The page's image turned clockwise by `turn` degrees, and how to map its pixels back. */
async function turnImage(source: Canvas, turn: number): Promise<{ canvas: Canvas; back: (u: number, v: number) => [number, number] }> {
  const { createCanvas } = await import('@napi-rs/canvas')
  const [w, h] = [source.width, source.height]
  if (turn === 0) return { canvas: source, back: (u, v) => [u, v] }
  const canvas = turn === 180 ? createCanvas(w, h) : createCanvas(h, w)
  const ctx = canvas.getContext('2d')
  if (turn === 90) ctx.translate(h, 0)
  else if (turn === 180) ctx.translate(w, h)
  else ctx.translate(0, w)
  ctx.rotate((turn * Math.PI) / 180)
  ctx.drawImage(source, 0, 0)
  const back: (u: number, v: number) => [number, number] = turn === 90 ? (u, v) => [v, h - u] : turn === 180 ? (u, v) => [w - u, h - v] : (u, v) => [w - v, u]
  return { canvas, back }
}

/** Joins a paragraph's lines, mending words hyphenated across a line break. */
function paragraphText(lines: string[]): string {
  let text = ''
  for (const raw of lines) {
    const line = raw.replace(/\s+/g, ' ').trim()
    if (!line) continue
    if (/\p{L}-$/u.test(text) && /^\p{Ll}/u.test(line)) text = text.slice(0, -1) + line
    else text = text ? `${text} ${line}` : line
  }
  return text
}

/**
 * Reads one rendered page. A page read with low confidence is read again turned by 180, 90 and
 * 270 degrees (scans are often fed upside down or sideways), and the best reading is kept.
 * Paragraphs with no word of two letters or digits, or read at under 30% confidence (specks,
 * rules, illustrations), are left out.
 */
export async function recognizePage(page: RenderedPage, settings: OcrSettings): Promise<OcrPage> {
  const slot = await recognizer(settings)
  const engine = await slot.recognizer
  let best: { result: Awaited<ReturnType<Recognizer['recognize']>>['data']; turn: number; back: (u: number, v: number) => [number, number] } | null = null
  for (const turn of [0, 180, 90, 270]) {
    const image = await turnImage(page.canvas, turn)
    const png = await image.canvas.encode('png')
    // Past its time the page's recognizer was stopped (`withinTime`): asking a terminated
    // tesseract.js worker for another turn throws outside any promise and kills the reader.
    if (slot.stopped) throw new Error('the recognizer was stopped: the page ran past page_timeout_ms')
    const { data } = await engine.recognize(png, { rotateAuto: true }, { blocks: true, text: false })
    if (!best || data.confidence > best.result.confidence) best = { result: data, turn, back: image.back }
    if (best.result.confidence >= GOOD_ENOUGH * 100 || (turn === 0 && data.confidence >= TURN_BELOW * 100)) break
  }
  const { result, turn, back } = best!
  const paragraphs: OcrParagraph[] = []
  for (const block of result.blocks ?? []) {
    for (const para of block.paragraphs) {
      const text = paragraphText(para.lines.map((l) => l.text))
      if (para.confidence < 30 || !/[\p{L}\p{N}]{2}/u.test(text)) continue
      const corners = [back(para.bbox.x0, para.bbox.y0), back(para.bbox.x1, para.bbox.y1)].map(([x, y]) => page.toPdfPoint(x, y))
      const xs = corners.map((c) => c[0]!)
      const ys = corners.map((c) => c[1]!)
      paragraphs.push({
        text,
        bbox: [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)].map((v) => Math.round(v * 100) / 100),
        confidence: Math.round(para.confidence) / 100,
      })
    }
  }
  return { paragraphs, confidence: Math.round(result.confidence) / 100, turned: turn }
}
