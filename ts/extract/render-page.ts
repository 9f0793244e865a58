// A region of a PDF page drawn to PNG, inside a reader worker (pdf-worker.ts): what `inspect
// --render` shows a person beside a citation (people would rather look than read). pdf.js draws
// onto @napi-rs/canvas, as it does for OCR; the page's own images are decoded by pdf.js (in
// JavaScript), never by a native decoder.
import { drawnDocument } from './pdf-undrawn.js'
import { loadPdfjs } from './pdfjs.js'
import type { RenderParameters } from 'pdfjs-dist/types/src/display/api.js'
import type { PdfOutput } from './pdf.js'

/** Which region, and how sharp. */
export interface RenderRequest {
  page: number
  /** `[x0, y0, x1, y1]` in PDF points, origin bottom-left. */
  box: number[]
  dpi: number
}

/** Pixels one rendered region may have (a full A4 page at 600 dpi is 34.8 million). */
const MAX_PIXELS = 40_000_000

export async function renderRegion(bytes: Uint8Array, password: string | undefined, request: RenderRequest): Promise<PdfOutput> {
  const failed = (code: NonNullable<PdfOutput['failure']>['code'], message: string): PdfOutput => ({
    extractor: '',
    pages: 0,
    pages_without_text: [],
    blocks: [],
    furniture: [],
    diagnostics: [],
    failure: { code, message },
  })
  const pdfjs = await loadPdfjs()
  const { createCanvas } = await import('@napi-rs/canvas')
  let doc: Awaited<ReturnType<typeof pdfjs.getDocument>['promise']>
  try {
    doc = await pdfjs.getDocument({ data: bytes, password, isEvalSupported: false, ...drawnDocument, verbosity: 0, useSystemFonts: false, maxImageSize: -1 }).promise
  } catch (error) {
    const e = error as { name?: string; message?: string }
    return failed('E_UNSUPPORTED_FORMAT', e.name === 'PasswordException' ? 'encrypted PDF: it needs its password to be drawn' : `not a readable PDF: ${e.message ?? String(error)}`)
  }
  try {
    if (request.page < 1 || request.page > doc.numPages) return failed('E_INVALID_ARGUMENT', `page ${request.page} is not in the file (${doc.numPages} pages)`)
    const page = await doc.getPage(request.page)
    const viewport = page.getViewport({ scale: request.dpi / 72 })
    const [ax, ay, bx, by] = viewport.convertToViewportRectangle(request.box) as number[]
    const left = Math.max(0, Math.floor(Math.min(ax!, bx!)))
    const top = Math.max(0, Math.floor(Math.min(ay!, by!)))
    const width = Math.min(Math.ceil(viewport.width), Math.ceil(Math.max(ax!, bx!))) - left
    const height = Math.min(Math.ceil(viewport.height), Math.ceil(Math.max(ay!, by!))) - top
    if (width <= 0 || height <= 0) return failed('E_INVALID_ARGUMENT', `the region ${JSON.stringify(request.box)} is outside page ${request.page}`)
    if (width * height > MAX_PIXELS) return failed('E_LIMIT_EXCEEDED', `${width}×${height} pixels at ${request.dpi} dpi, over ${MAX_PIXELS}; ask for fewer dpi`)
    const canvas = createCanvas(width, height)
    const ctx = canvas.getContext('2d')
    ctx.fillStyle = 'white'
    ctx.fillRect(0, 0, width, height)
    await page.render({
      canvasContext: ctx as unknown as RenderParameters['canvasContext'],
      canvas: canvas as unknown as RenderParameters['canvas'],
      viewport,
      // The page drawn shifted so the region's corner is the canvas's.
      transform: [1, 0, 0, 1, -left, -top],
    }).promise
    page.cleanup()
    const png = new Uint8Array(await canvas.encode('png'))
    return { extractor: `pdfjs-dist@${(pdfjs as { version?: string }).version ?? 'unknown'}`, pages: doc.numPages, pages_without_text: [], blocks: [], furniture: [], diagnostics: [], rendered: { png, width, height } }
  } finally {
    await doc.destroy()
  }
}
