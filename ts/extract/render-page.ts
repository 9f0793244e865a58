// Regions of PDF pages drawn to one PNG, inside a reader worker (pdf-worker.ts): what `inspect
// --render` shows a person beside a citation (people would rather look than read). pdf.js draws
// onto @napi-rs/canvas, as it does for OCR; the page's own images are decoded by pdf.js (in
// JavaScript), never by a native decoder.
import { drawnDocument } from './pdf-undrawn.js'
import { loadPdfjs, onCanvas } from './pdfjs.js'
import { type PdfOutput, pdfFailure } from './pdf.js'

/** Which regions (one per page, in order), and how sharp. */
export interface RenderRequest {
  /** `box`: `[x0, y0, x1, y1]` in PDF points, origin bottom-left, on page `page`. */
  regions: Array<{ page: number; box: number[] }>
  dpi: number
}

/** Pixels one rendering may have, all its pages together (a full A4 page at 600 dpi is 34.8 million). */
const MAX_PIXELS = 40_000_000

/** Grey rows between two pages' regions, so a reader sees where one page ends. */
const SEPARATOR = 4

/**
 * Draws each region on its page and stacks them top to bottom in one PNG, in the order given: a
 * citation that runs over pages is shown whole, not cut at its first page.
 */
export async function renderRegions(bytes: Uint8Array, password: string | undefined, request: RenderRequest, maxImagePixels: number): Promise<PdfOutput> {
  if (request.regions.length === 0) return pdfFailure('E_INVALID_ARGUMENT', 'no region to draw')
  const pdfjs = await loadPdfjs()
  const { createCanvas } = await import('@napi-rs/canvas')
  let doc: Awaited<ReturnType<typeof pdfjs.getDocument>['promise']>
  try {
    // An image over `[documents] max_image_pixels` is left out undecoded, as when the file was read.
    doc = await pdfjs.getDocument({
      data: bytes,
      password,
      isEvalSupported: false,
      ...drawnDocument,
      verbosity: 0,
      useSystemFonts: false,
      maxImageSize: maxImagePixels,
    }).promise
  } catch (error) {
    const e = error as { name?: string; message?: string }
    return pdfFailure('E_UNSUPPORTED_FORMAT', e.name === 'PasswordException' ? 'encrypted PDF: it needs its password to be drawn' : `not a readable PDF: ${e.message ?? String(error)}`)
  }
  try {
    // Each region's place on its page, in pixels, before anything is drawn: the size is known first.
    const planned: Array<{
      page: number
      left: number
      top: number
      width: number
      height: number
      viewport: ReturnType<Awaited<ReturnType<typeof doc.getPage>>['getViewport']>
    }> = []
    for (const { page: n, box } of request.regions) {
      if (!Number.isInteger(n) || n < 1 || n > doc.numPages) return pdfFailure('E_INVALID_ARGUMENT', `page ${n} is not in the file (${doc.numPages} pages)`)
      const page = await doc.getPage(n)
      const viewport = page.getViewport({ scale: request.dpi / 72 })
      const [ax, ay, bx, by] = viewport.convertToViewportRectangle(box) as number[]
      const left = Math.max(0, Math.floor(Math.min(ax!, bx!)))
      const top = Math.max(0, Math.floor(Math.min(ay!, by!)))
      const width = Math.min(Math.ceil(viewport.width), Math.ceil(Math.max(ax!, bx!))) - left
      const height = Math.min(Math.ceil(viewport.height), Math.ceil(Math.max(ay!, by!))) - top
      if (width <= 0 || height <= 0) return pdfFailure('E_INVALID_ARGUMENT', `the region ${JSON.stringify(box)} is outside page ${n}`)
      planned.push({ page: n, left, top, width, height, viewport })
    }
    const width = Math.max(...planned.map((p) => p.width))
    const height = planned.reduce((sum, p) => sum + p.height, 0) + SEPARATOR * (planned.length - 1)
    if (width * height > MAX_PIXELS) return pdfFailure('E_LIMIT_EXCEEDED', `${width}×${height} pixels at ${request.dpi} dpi, over ${MAX_PIXELS}; ask for fewer dpi or one page (--page)`)
    const canvas = createCanvas(width, height)
    const ctx = canvas.getContext('2d')
    ctx.fillStyle = 'white'
    ctx.fillRect(0, 0, width, height)
    const parts: NonNullable<PdfOutput['rendered']>['parts'] = []
    let y = 0
    for (const p of planned) {
      if (y > 0) {
        ctx.fillStyle = '#9e9e9e'
        ctx.fillRect(0, y, width, SEPARATOR)
        y += SEPARATOR
      }
      const page = await doc.getPage(p.page)
      // Each region is drawn on a canvas of its own size (the whole page drawn into the stack
      // would spill over the regions above and below it), then copied into its place.
      const sheet = createCanvas(p.width, p.height)
      const sheetCtx = sheet.getContext('2d')
      sheetCtx.fillStyle = 'white'
      sheetCtx.fillRect(0, 0, p.width, p.height)
      await page.render({
        ...onCanvas(sheet),
        viewport: p.viewport,
        // The page drawn shifted so the region's corner is the canvas's.
        transform: [1, 0, 0, 1, -p.left, -p.top],
      }).promise
      page.cleanup()
      ctx.drawImage(sheet, 0, y)
      // Where PDF points land in this part's pixels (rotation and the page's origin included):
      // the viewport's matrix, shifted as the drawing was.
      const [a, b, c, d, e, f] = p.viewport.transform as number[]
      parts.push({ page: p.page, top: y, width: p.width, height: p.height, transform: [a!, b!, c!, d!, e! - p.left, f! - p.top] })
      y += p.height
    }
    const png = new Uint8Array(await canvas.encode('png'))
    return {
      extractor: `pdfjs-dist@${(pdfjs as { version?: string }).version ?? 'unknown'}`,
      pages: doc.numPages,
      pages_without_text: [],
      blocks: [],
      furniture: [],
      diagnostics: [],
      rendered: { png, width, height, parts },
    }
  } finally {
    await doc.destroy()
  }
}
