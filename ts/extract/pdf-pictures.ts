// The figures a PDF's pages draw (photographs, charts, diagrams), inside a reader worker: where
// each image is painted (the operator list, read with its images), and the region as a person sees
// it, drawn by pdf.js on @napi-rs/canvas (so vector labels over a chart are in it too; PNG, or
// JPEG for a photograph). This pass is separate from reading the text: it decodes images, and a
// file whose images are too much for the worker loses its figures, never its text. Captions are
// matched by the core.
import type { Canvas } from '@napi-rs/canvas'
import type { PdfOutput } from './pdf.js'
import { type Box, readGraphics } from './pdf-graphics.js'
import { drawnDocument, undrawnDocument, withPlacementsOnly } from './pdf-undrawn.js'
import { loadPdfjs, onCanvas } from './pdfjs.js'

/** Smaller images are icons, bullets and rules, not figures (points: half an inch). */
const MIN_SIDE = 36
/** An image covering this much of its page is the page (a scan, a background), not a figure. */
const PAGE_SHARE = 0.9
/** Figures kept per file. */
const MAX_PICTURES = 200
/** An image drawn at the same place on this many pages is furniture (a logo), not a figure. */
const FURNITURE_PAGES = 3
/** Resolution figures are drawn at. */
const DPI = 144
/**
 * A figure is a photograph when, among up to 4,096 sampled pixels, its 16 commonest colours cover
 * less than half: drawings, charts and text are mostly a few flat colours (background, ink, fills,
 * whatever their anti-aliased edges add), a photograph, greyscale included, spreads over many. A
 * photograph is kept as JPEG (quality 90): PNG's deflate is ~4× slower on it and its file larger;
 * the rest stay PNG, whose edges JPEG would blur.
 */
const FLAT_COLOURS = 16
/** Side of the nearest-neighbour copy a figure's colours are counted on (4,096 pixels). */
const SAMPLE = 64
const FLAT_SHARE = 0.5

export function photographic(data: Uint8ClampedArray, width: number, height: number): boolean {
  const step = Math.max(1, Math.floor(Math.sqrt((width * height) / 4096)))
  const counts = new Map<number, number>()
  let samples = 0
  for (let y = 0; y < height; y += step) {
    for (let x = 0; x < width; x += step) {
      const i = (y * width + x) * 4
      const colour = (data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!
      counts.set(colour, (counts.get(colour) ?? 0) + 1)
      samples++
    }
  }
  const flat = [...counts.values()]
    .sort((a, b) => b - a)
    .slice(0, FLAT_COLOURS)
    .reduce((a, b) => a + b, 0)
  return flat < FLAT_SHARE * samples
}

type Picture = NonNullable<PdfOutput['pictures']>[number]

/** Images whose boxes overlap are one figure (a chart drawn as several tiles). */
function merged(boxes: Box[]): Box[] {
  const out: Box[] = []
  for (const b of boxes) {
    const hit = out.find((o) => b.x0 <= o.x1 && o.x0 <= b.x1 && b.y0 <= o.y1 && o.y0 <= b.y1)
    if (hit) Object.assign(hit, { x0: Math.min(hit.x0, b.x0), y0: Math.min(hit.y0, b.y0), x1: Math.max(hit.x1, b.x1), y1: Math.max(hit.y1, b.y1) })
    else out.push({ ...b })
  }
  return out
}

/** The figures of one page to draw, in page space. */
export interface PagePlacement {
  page: number
  figures: Box[]
}

/** `[documents] max_image_pixels` when the caller names no bound. */
const DEFAULT_MAX_IMAGE_PIXELS = 100_000_000

// An image over `maxImagePixels` is left out by pdf.js before it is decoded: it is neither found
// nor drawn, so a file declaring a gigapixel image loses that picture, not its other figures.
const open = async (bytes: Uint8Array, password: string | undefined, maxImagePixels: number, options: typeof drawnDocument | ReturnType<typeof undrawnDocument>) => {
  const pdfjs = await loadPdfjs()
  const doc = await pdfjs.getDocument({
    data: bytes.slice(),
    password,
    isEvalSupported: false,
    verbosity: 0,
    useSystemFonts: false,
    maxImageSize: maxImagePixels,
    ...options,
  }).promise
  return { pdfjs, doc }
}
const extractor = (pdfjs: { version?: string }) => `pdfjs-dist@${pdfjs.version ?? 'unknown'}+figures.2`
const answer = (pdfjs: { version?: string }, pages: number, diagnostics: string[], more: Partial<PdfOutput>): PdfOutput => ({
  extractor: extractor(pdfjs),
  pages,
  pages_without_text: [],
  blocks: [],
  furniture: [],
  diagnostics,
  ...more,
})

/**
 * Where each page draws its figures, read without drawing or decoding anything: an image drawn
 * at the same place on several pages is a logo or a letterhead (page furniture), not a figure, and
 * pages without figures are never drawn.
 */
export async function placeFigures(bytes: Uint8Array, password: string | undefined, maxPages: number, maxImagePixels: number, onPage: (page: number) => void): Promise<PdfOutput> {
  const { pdfjs, doc } = await open(bytes, password, maxImagePixels, undrawnDocument())
  const OPS = pdfjs.OPS as unknown as Record<string, number>
  const diagnostics: string[] = []
  const placed: PagePlacement[] = []
  const seen = new Map<string, number>()
  const key = (b: Box) => [b.x0, b.y0, b.x1, b.y1].map((v) => Math.round(v)).join(',')
  const pages = Math.min(doc.numPages, maxPages)
  try {
    await withPlacementsOnly(async () => {
      for (let n = 1; n <= pages; n++) {
        onPage(n - 1)
        // A page pdf.js cannot read has no figures to find (the text pass says why it is lost).
        const page = await doc.getPage(n).catch(() => null)
        if (!page) continue
        const [px0 = 0, py0 = 0, px1 = 612, py1 = 792] = page.view as number[]
        const pageArea = Math.abs((px1 - px0) * (py1 - py0)) || 1
        const graphics = readGraphics(await page.getOperatorList({ intent: 'print' }), OPS, { x0: px0, y0: py0, x1: px1, y1: py1 })
        const figures = merged(
          graphics.images
            .map((b) => ({ x0: Math.max(b.x0, px0), y0: Math.max(b.y0, py0), x1: Math.min(b.x1, px1), y1: Math.min(b.y1, py1) }))
            .filter((b) => b.x1 - b.x0 >= MIN_SIDE && b.y1 - b.y0 >= MIN_SIDE && ((b.x1 - b.x0) * (b.y1 - b.y0)) / pageArea < PAGE_SHARE),
        )
        page.cleanup()
        if (figures.length === 0) continue
        placed.push({ page: n, figures })
        for (const f of new Set(figures.map(key))) seen.set(f, (seen.get(f) ?? 0) + 1)
      }
    })
  } finally {
    await doc.destroy()
  }
  const repeated = [...seen].filter(([, count]) => count >= FURNITURE_PAGES)
  if (repeated.length > 0) {
    diagnostics.push(`${repeated.length} image(s) drawn at the same place on ${FURNITURE_PAGES} or more pages (logos, letterheads) are page furniture, not kept as figures`)
  }
  const placements: PagePlacement[] = []
  let count = 0
  for (const { page, figures: all } of placed) {
    const figures = all.filter((f) => (seen.get(key(f)) ?? 0) < FURNITURE_PAGES)
    if (figures.length === 0) continue
    if (count + figures.length > MAX_PICTURES) {
      diagnostics.push(`more than ${MAX_PICTURES} figures; those from p.${page} on are not kept`)
      break
    }
    count += figures.length
    placements.push({ page, figures })
  }
  return answer(pdfjs, doc.numPages, diagnostics, { placements })
}

/** Draws the pages `placements` names, each once, and cuts their figures from it. */
export async function drawFigures(bytes: Uint8Array, password: string | undefined, placements: PagePlacement[], maxImagePixels: number, onPage: (page: number) => void): Promise<PdfOutput> {
  const { createCanvas } = await import('@napi-rs/canvas')
  const { pdfjs, doc } = await open(bytes, password, maxImagePixels, drawnDocument)
  const pictures: Picture[] = []
  let sheet: Canvas | null = null
  // Figures in page order, each encoded on libuv's threads while the next page is drawn. Each
  // keeps its canvas until its encoding is done: the encoding reads the canvas's pixels on another
  // thread, so the canvas must not be collected meanwhile.
  const encoding: Array<{ page: number; bbox: number[]; png: Promise<Buffer>; canvas: Canvas }> = []
  const settle = async () => {
    const next = encoding[pictures.length]!
    pictures.push({ page: next.page, bbox: next.bbox, png: await next.png })
    next.canvas.width = 0 // its pixels are not needed any more
  }
  try {
    for (const { page: n, figures } of placements) {
      onPage(n - 1)
      const page = await doc.getPage(n)
      // The page is drawn once; each figure is cut from it.
      const viewport = page.getViewport({ scale: DPI / 72 })
      const [w, h] = [Math.ceil(viewport.width), Math.ceil(viewport.height)]
      // Pages of one size share a canvas (a 144 dpi Letter page is 7.8 MB of pixels).
      if (!sheet || sheet.width !== w || sheet.height !== h) sheet = createCanvas(w, h)
      const canvas = sheet
      const ctx = canvas.getContext('2d')
      ctx.setTransform(1, 0, 0, 1, 0, 0)
      ctx.fillStyle = 'white'
      ctx.fillRect(0, 0, canvas.width, canvas.height)
      await page.render({
        ...onCanvas(canvas),
        viewport,
      }).promise
      for (const f of figures) {
        const [ax, ay, bx, by] = viewport.convertToViewportRectangle([f.x0, f.y0, f.x1, f.y1]) as number[]
        const left = Math.max(0, Math.floor(Math.min(ax!, bx!)))
        const top = Math.max(0, Math.floor(Math.min(ay!, by!)))
        const width = Math.min(canvas.width, Math.ceil(Math.max(ax!, bx!))) - left
        const height = Math.min(canvas.height, Math.ceil(Math.max(ay!, by!))) - top
        if (width <= 0 || height <= 0) continue
        // Copied and sampled by the canvas (native), not through JavaScript arrays.
        const cut = createCanvas(width, height)
        cut.getContext('2d').drawImage(canvas, left, top, width, height, 0, 0, width, height)
        const sample = createCanvas(SAMPLE, SAMPLE).getContext('2d')
        sample.imageSmoothingEnabled = false
        sample.drawImage(cut, 0, 0, width, height, 0, 0, SAMPLE, SAMPLE)
        const photo = photographic(sample.getImageData(0, 0, SAMPLE, SAMPLE).data, SAMPLE, SAMPLE)
        const bbox = [f.x0, f.y0, f.x1, f.y1].map((v) => Math.round(v * 100) / 100)
        const png = photo ? cut.encode('jpeg', 90) : cut.encode('png')
        // Awaited in turn below; a failure while later pages are drawn must not go unhandled.
        png.catch(() => {})
        encoding.push({ page: n, bbox, png, canvas: cut })
        // Four encodings in flight at most, so their pixels do not pile up.
        while (encoding.length - pictures.length >= 4) await settle()
      }
      page.cleanup()
    }
    while (pictures.length < encoding.length) await settle()
  } finally {
    await doc.destroy()
  }
  return answer(pdfjs, doc.numPages, [], { pictures })
}

/** Places and draws a file's figures in one thread (the reader pool splits the drawing instead). */
export async function readPictures(bytes: Uint8Array, password: string | undefined, maxPages: number, onPage: (page: number) => void, maxImagePixels = DEFAULT_MAX_IMAGE_PIXELS): Promise<PdfOutput> {
  const placed = await placeFigures(bytes, password, maxPages, maxImagePixels, onPage)
  if (!placed.placements?.length) return { ...placed, pictures: [] }
  const drawn = await drawFigures(bytes, password, placed.placements, maxImagePixels, onPage)
  return { ...placed, placements: undefined, pictures: drawn.pictures }
}
