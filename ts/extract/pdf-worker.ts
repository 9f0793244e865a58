// One pdf.js reader in a worker thread (see pdf.ts): a PDF's bytes in, text blocks in reading
// order with their page and box out. pdf.js gives positioned text items; pdf-layout.ts groups
// them into lines, blocks and headings; here text drawn unseen is set apart, ruled tables are
// taken out (pdf-tables.ts), running headers, footers and page numbers (text in the top or bottom
// band that repeats across pages) are kept out of the blocks, and pages without text are read by
// OCR when it is on.
import { getHeapStatistics } from 'node:v8'
import type { PDFDocumentProxy } from 'pdfjs-dist/legacy/build/pdf.mjs'
import { parentPort } from 'node:worker_threads'
import type { PdfOutput } from './pdf.js'
import { appendTo, type PageGraphics, readGraphics, type TextRun } from './pdf-graphics.js'
import { type Block, blocks, blockText, FaceCount, faceOf, headingRule, type Item, type Line, linePitch, lines, sizeOf } from './pdf-layout.js'
import { findTables, type Table } from './pdf-tables.js'
import { findAlignedTables } from './pdf-aligned.js'
import { type Frame, uprightFrame } from './pdf-orient.js'
import { type OcrSettings, recognizePage, tesseractVersion, withinTime } from './ocr.js'
// Before pdf.js loads: it reads the platform's ImageDecoder once, as its worker module loads.
import { drawnDocument, undrawnDocument, withPlacementsOnly } from './pdf-undrawn.js'
import { loadPdfjs, onCanvas } from './pdfjs.js'

const LAYOUT = 'layout.4'

/**
 * Splits a page's text items into what a reader sees and what is drawn unseen (with why), by the
 * runs the operator list shows starting on each item's baseline within its width. An item mostly
 * unseen is unseen; an unseen run inside a seen item is cut out of it into an item of its own.
 */
function partition(items: Item[], runs: TextRun[]): { seen: Item[]; unseen: Map<string, Item[]> } {
  const unseen = new Map<string, Item[]>()
  const hide = (why: string, item: Item) => appendTo(unseen, why, item)
  if (!runs.some((r) => r.hidden)) return { seen: items, unseen }
  const byRow = new Map<number, TextRun[]>()
  for (const r of runs) appendTo(byRow, Math.round(r.y), r)
  const seen: Item[] = []
  const placed = new Set<TextRun>()
  for (const item of items) {
    const [x, y] = [item.transform[4] ?? 0, item.transform[5] ?? 0]
    const reach = Math.max(1, 0.5 * sizeOf(item.transform))
    const near: TextRun[] = []
    for (let row = Math.floor(y - reach); row <= Math.ceil(y + reach); row++) {
      for (const r of byRow.get(row) ?? []) if (Math.abs(r.y - y) <= reach && r.x >= x - 1 && r.x <= x + item.width + 1) near.push(r)
    }
    const hidden = near.filter((r) => r.hidden)
    if (hidden.length === 0 || item.str.trim() === '') {
      seen.push(item)
      continue
    }
    const total = near.reduce((n, r) => n + r.text.length, 0)
    const unseenChars = hidden.reduce((n, r) => n + r.text.length, 0)
    for (const r of hidden) placed.add(r)
    if (unseenChars * 2 >= total) {
      hide(hidden[0]!.hidden!, item)
      continue
    }
    let rest = item.str
    for (const r of hidden) {
      const at = rest.indexOf(r.text.trim())
      if (at < 0) continue
      rest = `${rest.slice(0, at)} ${rest.slice(at + r.text.trim().length)}`
      hide(r.hidden!, {
        ...item,
        str: r.text.trim(),
        transform: [...item.transform.slice(0, 4), r.x, r.y],
        width: (item.width * r.text.length) / Math.max(1, total),
      })
    }
    seen.push({ ...item, str: rest })
  }
  // pdf.js leaves some unseen text out of its text content (text beyond the page): it is kept
  // from the operator list, so it is flagged rather than lost.
  for (const r of runs) {
    if (!r.hidden || placed.has(r)) continue
    hide(r.hidden, { str: r.text, transform: [r.size, 0, 0, r.size, r.x, r.y], width: 0.5 * r.size * r.text.length, height: r.size, hasEOL: true })
  }
  return { seen, unseen }
}

// Digits dropped, not replaced: odd and even pages put the page number at either end.
const furnitureKey = (text: string) => text.toLowerCase().replace(/\d+/g, '').replace(/\s+/g, ' ').trim()
const PAGE_NUMBER = /^(page\s*)?[-–]?\s*\d{1,4}\s*[-–]?(\s*(of|\/)\s*\d{1,4})?$/i
const LIST_MARKER = /^([•·▪‣◦●○■□–-]|\(?\d{1,3}[.)]|\(?[a-z][.)]|\(?[ivx]{1,5}[.)])\s/

interface Request {
  bytes: Uint8Array
  password?: string
  maxPages: number
  /** pdf.js's `maxImageSize` in passes that decode images: one over it is left out (1: none is decoded). */
  maxImagePixels: number
  /** Pages with no text layer are recognized (`[ocr]` on). */
  ocr?: OcrSettings
  /** The bytes are a grey PNG of an image file to recognize (the core decoded it), not a PDF. */
  image?: boolean
  /** Draw regions of pages to one PNG instead of reading the file. */
  render?: import('./render-page.js').RenderRequest
  /** Find where the pages draw their figures instead of reading the text; or draw these. */
  place?: boolean
  draw?: import('./pdf-pictures.js').PagePlacement[]
}

/** This worker's heap plus the memory outside it that V8 is told of (pdf.js's decoded buffers). */
const heapInUse = () => {
  const h = getHeapStatistics()
  return h.used_heap_size + h.external_memory
}

/** Why pdf.js could not read something, short and on one line (its messages can quote the file). */
const reasonOf = (error: unknown) => (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ').slice(0, 200)

/** No text, rules or images: what a page pdf.js could not read contributes. */
const NOTHING: PageGraphics = { runs: [], rules: [], images: [], rtlWords: new Map() }

async function read({ bytes, password, maxPages, maxImagePixels, ocr }: Request, onPage: (page: number, ocr?: boolean) => void): Promise<PdfOutput> {
  const pdfjs = await loadPdfjs()
  const OPS = pdfjs.OPS as unknown as Record<string, number>
  const open = (options: { data: Uint8Array; password?: string; maxImageSize: number; draws?: boolean }) =>
    pdfjs.getDocument({
      data: options.data,
      password: options.password,
      maxImageSize: options.maxImageSize,
      isEvalSupported: false,
      // Reading text draws nothing (pdf-undrawn.ts); pages that are drawn (OCR) are opened to be.
      ...(options.draws ? drawnDocument : undrawnDocument()),
      verbosity: 0,
      useSystemFonts: false,
    }).promise
  const graphicsOf = async (page: Awaited<ReturnType<typeof doc.getPage>>) => {
    const [x0, y0, x1, y1] = page.view as number[]
    return readGraphics(await page.getOperatorList({ intent: 'print' }), OPS, { x0: x0 ?? 0, y0: y0 ?? 0, x1: x1 ?? 612, y1: y1 ?? 792 })
  }
  const version = (pdfjs as { version?: string }).version ?? 'unknown'
  let extractor = `pdfjs-dist@${version}+${LAYOUT}`
  let doc: Awaited<ReturnType<typeof pdfjs.getDocument>['promise']>
  try {
    doc = await open({ data: bytes.slice(), password, maxImageSize: 1 })
  } catch (error) {
    const e = error as { name?: string; code?: number; message?: string }
    if (e.name === 'PasswordException')
      return fail(
        'E_UNSUPPORTED_FORMAT',
        e.code === 2 ? 'encrypted PDF: the configured password is wrong' : 'encrypted PDF: it needs a password ([[documents.passwords]] in workspace.toml names the variable that holds it)',
      )
    return fail('E_UNSUPPORTED_FORMAT', `not a readable PDF: ${e.message ?? String(error)}`)
  }
  if (doc.numPages > maxPages) {
    await doc.destroy()
    return fail('E_LIMIT_EXCEEDED', `${doc.numPages} pages, over max_pages = ${maxPages}`)
  }
  let peak = heapInUse()
  const pages: Array<{ items: Item[]; graphics: PageGraphics; view: number[] }> = []
  // A page pdf.js cannot read (its Pages tree loops back on itself, its dictionary is broken) is
  // that page's loss, not the file's: it is left out, with why, and the other pages are read.
  const unreadable: NonNullable<PdfOutput['unreadable_pages']> = []
  for (let n = 1; n <= doc.numPages; n++) {
    onPage(n - 1)
    let page: Awaited<ReturnType<typeof doc.getPage>> | undefined
    try {
      page = await doc.getPage(n)
      const content = await page.getTextContent()
      const graphics = await graphicsOf(page)
      // The operator list loaded the page's fonts, so their names can be read now.
      const items = content.items.filter((i) => 'str' in i) as Item[]
      for (const item of items) {
        Object.assign(item, faceOf(page.commonObjs, item.fontName))
        if (item.dir === 'rtl' && graphics.rtlWords.size > 0) item.str = item.str.replace(/\S+/g, (w) => graphics.rtlWords.get(w) ?? w)
      }
      pages.push({ items, graphics, view: page.view as number[] })
    } catch (error) {
      unreadable.push({ page: n, reason: reasonOf(error) })
      pages.push({ items: [], graphics: NOTHING, view: [0, 0, 612, 792] })
    } finally {
      page?.cleanup()
    }
    peak = Math.max(peak, heapInUse())
  }
  await doc.destroy()
  if (unreadable.length === pages.length && pages.length > 0) {
    return fail('E_UNSUPPORTED_FORMAT', `not a readable PDF: none of its ${pages.length} page(s) could be read (p.1: ${unreadable[0]!.reason})`)
  }
  const lost = new Set(unreadable.map((u) => u.page))
  // The pass above leaves images out (decoding them is most of an operator list's cost). Text
  // judged unseen by what lies under it (invisible text over a scan is its OCR layer; light text
  // over a photograph is seen) is judged again on its page read with its images.
  const underneath = new Set(['invisible render mode', 'same colour as its background'])
  const again = pages.flatMap((p, i) => (p.graphics.runs.some((r) => r.hidden && underneath.has(r.hidden)) ? [i] : []))
  if (again.length > 0) {
    // Where the images are is what counts here, not their pixels.
    const full = await open({ data: bytes.slice(), password, maxImageSize: maxImagePixels })
    await withPlacementsOnly(async () => {
      for (const i of again) {
        onPage(i)
        const page = await full.getPage(i + 1)
        pages[i]!.graphics = await graphicsOf(page)
        peak = Math.max(peak, heapInUse())
        page.cleanup()
      }
    })
    await full.destroy()
  }

  const perPage: Array<{ lines: Line[]; height: number; tables: Table[]; frame: Frame }> = []
  // Characters by size and face over everything a reader sees (tables too): the body's size and face.
  const faces = new FaceCount()
  const unseenBlocks: Array<{ page: number; block: Block; why: string }> = []
  const pagesWithoutText: number[] = []
  pages.forEach(({ items, graphics, view }, i) => {
    const parts = partition(items, graphics.runs)
    // Laid out where the text is upright; boxes go back to page space as they are emitted.
    const frame = uprightFrame(parts.seen, view)
    const seen = parts.seen.map(frame.item)
    for (const [why, hidden] of parts.unseen) for (const block of blocks(lines(hidden.map(frame.item)), i + 1)) unseenBlocks.push({ page: i + 1, block, why })
    faces.add(seen)
    const ruled = findTables(graphics.rules.map(frame.rule), seen)
    const unruled = seen.flatMap((item, at) => (ruled.used.has(at) ? [] : [{ item, at }]))
    // Tables drawn without rules, among the text the ruled ones left.
    const aligned = findAlignedTables(unruled.map((f) => f.item))
    for (const table of aligned.tables) table.order = unruled[table.order]!.at
    const tables = [...ruled.tables, ...aligned.tables].sort((a, b) => a.order - b.order)
    const free = unruled.filter((_, k) => !aligned.used.has(k))
    const pageLines = lines(
      free.map((f) => f.item),
      (k) => free[k]!.at,
    )
    if (pageLines.length === 0 && tables.length === 0 && !unseenBlocks.some((b) => b.page === i + 1) && !lost.has(i + 1)) pagesWithoutText.push(i + 1)
    perPage.push({ lines: pageLines, height: frame.height || 792, tables, frame })
  })

  // Pages with no text layer, read from their image when [ocr] is on.
  const recognized = new Map<number, PdfOutput['blocks']>()
  const diagnostics: string[] = []
  if (ocr && pagesWithoutText.length > 0) {
    const done = await recognizePages(bytes, password, pagesWithoutText, ocr, open, maxImagePixels, onPage, diagnostics)
    for (const [page, found] of done) recognized.set(page, found)
    if (done.size > 0) extractor += `+ocr.tesseract.js@${tesseractVersion()}/${ocr.languages.join('+')}/${ocr.dpi}dpi`
  }
  const stillEmpty = pagesWithoutText.filter((p) => !recognized.has(p))

  // Furniture: a line in the top or bottom 8% whose text (digits aside) is on a third of the pages,
  // or a page number there.
  const band = (l: Line, height: number) => l.y > height * 0.92 || l.y < height * 0.08
  const seen = new Map<string, number>()
  for (const { lines: ls, height } of perPage) {
    for (const key of new Set(ls.filter((l) => band(l, height)).map((l) => furnitureKey(l.text)))) seen.set(key, (seen.get(key) ?? 0) + 1)
  }
  const repeated = (text: string) => perPage.length >= 3 && furnitureKey(text).length > 0 && (seen.get(furnitureKey(text)) ?? 0) >= Math.max(2, perPage.length / 3)
  const furniture: PdfOutput['furniture'] = []
  const allBlocks: Block[] = []
  const pitch = linePitch(perPage.map((p) => p.lines))
  perPage.forEach(({ lines: ls, height }, i) => {
    const body = ls.filter((l) => {
      const isFurniture = band(l, height) && (repeated(l.text) || PAGE_NUMBER.test(l.text))
      if (isFurniture) furniture.push({ page: i + 1, text: l.text })
      return !isFurniture
    })
    allBlocks.push(...blocks(body, i + 1, pitch))
  })

  const headings = headingRule(faces, allBlocks)
  const out: PdfOutput['blocks'] = []
  const blocksOf = new Map<number, Block[]>()
  for (const b of allBlocks) appendTo(blocksOf, b.page, b)
  const numbering = tableNumbering(perPage.map((p, i) => ({ tables: p.tables, blocks: blocksOf.get(i + 1) ?? [] })))
  perPage.forEach(({ tables, frame }, i) => {
    const page = i + 1
    const pageBlocks = blocksOf.get(page) ?? []
    // Tables take their place in reading order: before the first block that follows their text.
    let t = 0
    const emitTables = (before: number) => {
      for (; t < tables.length && tables[t]!.order < before; t++) out.push(...tableRows(tables[t]!, page, numbering.get(tables[t]!)!, frame))
    }
    for (const b of pageBlocks) {
      emitTables(b.lines[0]?.order ?? 0)
      const text = blockText(b)
      const level = headings(b)
      const bbox = frame.toPage(bboxOf(b))
      if (level !== null) out.push({ kind: 'heading', text, level, page, bbox })
      else out.push({ kind: LIST_MARKER.test(text) ? 'list_item' : 'paragraph', text, page, bbox })
    }
    emitTables(Number.POSITIVE_INFINITY)
    out.push(...(recognized.get(page) ?? []))
    // Text drawn unseen on this page follows what a reader sees on it.
    while (unseenBlocks.length > 0 && unseenBlocks[0]!.page <= page) out.push(unseenBlock(unseenBlocks.shift()!, frame))
  })
  return {
    extractor,
    pages: perPage.length,
    pages_without_text: stillEmpty,
    unreadable_pages: unreadable,
    blocks: out,
    furniture,
    diagnostics,
    peak_memory_bytes: peak,
  }
}

type Open = (options: { data: Uint8Array; password?: string; maxImageSize: number; draws?: boolean }) => Promise<PDFDocumentProxy>

/**
 * Renders each page at `[ocr] dpi` and recognizes it. A page past `[ocr] page_timeout_ms` stops
 * the recognizer and stays without text (the rest of the file is kept); a recognizer that cannot
 * start (a language whose package is missing) leaves every page as it was, with why.
 */
async function recognizePages(
  bytes: Uint8Array,
  password: string | undefined,
  pages: number[],
  settings: OcrSettings,
  open: Open,
  maxImagePixels: number,
  onPage: (page: number, ocr?: boolean) => void,
  diagnostics: string[],
): Promise<Map<number, PdfOutput['blocks']>> {
  const { createCanvas } = await import('@napi-rs/canvas')
  const found = new Map<number, PdfOutput['blocks']>()
  const doc = await open({ data: bytes.slice(), password, maxImageSize: maxImagePixels, draws: true })
  const confidences: number[] = []
  const turnedPages: string[] = []
  try {
    for (const n of pages) {
      onPage(n - 1, true)
      const page = await doc.getPage(n)
      const viewport = page.getViewport({ scale: settings.dpi / 72 })
      const canvas = createCanvas(Math.ceil(viewport.width), Math.ceil(viewport.height))
      const ctx = canvas.getContext('2d')
      ctx.fillStyle = 'white'
      ctx.fillRect(0, 0, canvas.width, canvas.height)
      const work = (async () => {
        // pdf.js draws on @napi-rs/canvas in Node (its own canvas factory uses the same package).
        await page.render({
          ...onCanvas(canvas),
          viewport,
        }).promise
        return recognizePage({ canvas, toPdfPoint: (x, y) => viewport.convertToPdfPoint(x, y) as number[] }, settings)
      })()
      let result: Awaited<typeof work> | 'late'
      try {
        result = await withinTime(work, settings.page_timeout_ms)
      } catch (error) {
        diagnostics.push(`OCR could not run: ${error instanceof Error ? error.message : String(error)}`)
        break
      } finally {
        page.cleanup()
      }
      if (result === 'late') {
        diagnostics.push(`p.${n}: OCR took longer than [ocr] page_timeout_ms = ${settings.page_timeout_ms}; the page stays without text`)
        continue
      }
      if (result.paragraphs.length === 0) continue
      confidences.push(result.confidence)
      if (result.turned !== 0) turnedPages.push(`p.${n} ${result.turned}°`)
      found.set(
        n,
        result.paragraphs.map((p) => ({ kind: 'paragraph' as const, text: p.text, page: n, bbox: p.bbox, ocr_confidence: p.confidence })),
      )
    }
  } finally {
    await doc.destroy()
  }
  if (found.size > 0) {
    const mean = confidences.reduce((a, b) => a + b, 0) / confidences.length
    diagnostics.push(
      `${found.size} page(s) with no text layer read by OCR (p.${[...found.keys()].slice(0, 20).join(', ')}), mean confidence ${mean.toFixed(2)}` +
        (turnedPages.length > 0 ? `; read turned: ${turnedPages.join(', ')}` : ''),
    )
  }
  return found
}

interface TablePlace {
  table: number
  /** The number of its first row (a continuation counts on from the rows before it). */
  firstRow: number
  /** Its first row repeats the header of the table it continues. */
  repeatsHeader: boolean
  continues: boolean
}

/**
 * Numbers the tables of a document. A table that opens a page, with no text above it, whose
 * columns are those of the table that closed the previous page (no text below it), continues
 * that table: one table number, rows counted on, each row keeping its own page.
 */
function tableNumbering(pages: Array<{ tables: Table[]; blocks: Block[] }>): Map<Table, TablePlace> {
  const out = new Map<Table, TablePlace>()
  let count = 0
  let open: { table: Table; place: TablePlace; rows: number } | null = null
  pages.forEach(({ tables, blocks: pageBlocks }) => {
    tables.forEach((table, k) => {
      // Nothing printed above it on its page (PDF y grows upward).
      const first = k === 0 && !pageBlocks.some((b) => bboxOf(b)[1]! > table.bbox[3]!)
      const same = open !== null && open.table.columns.length === table.columns.length && open.table.columns.every((x, i) => Math.abs(x - table.columns[i]!) <= 3)
      if (first && same && open) {
        const header = open.table.rows[0]?.cells.map((c) => c.text).join('|')
        const place: TablePlace = {
          table: open.place.table,
          firstRow: open.rows + 1,
          repeatsHeader: table.rows[0]?.cells.map((c) => c.text).join('|') === header,
          continues: true,
        }
        out.set(table, place)
        open = { table, place: open.place, rows: open.rows + table.rows.length }
      } else {
        const place: TablePlace = { table: ++count, firstRow: 1, repeatsHeader: false, continues: false }
        out.set(table, place)
        open = { table, place, rows: table.rows.length }
      }
    })
    // Text printed below the page's last table closes it.
    const last = tables.at(-1)
    if (!last || pageBlocks.some((b) => bboxOf(b)[3]! < last.bbox[1]!)) open = null
  })
  return out
}

/** A table's rows as blocks: the first row of a table (or its repeat on a continuation) is its header. */
function tableRows(table: Table, page: number, place: TablePlace, frame: Frame): PdfOutput['blocks'] {
  return table.rows.map((row, i) => ({
    kind: 'table_row' as const,
    text: row.cells.map((c) => c.text).join(' | '),
    page,
    bbox: frame.toPage(row.bbox),
    table: place.table,
    row: place.firstRow + i,
    header: i === 0 && table.rows.length > 1 && (!place.continues || place.repeatsHeader),
    cells: row.cells.map((c) => ({ col: c.col, col_span: c.colSpan, text: c.text, bbox: frame.toPage(c.bbox) })),
  }))
}

const bboxOf = (b: Block) =>
  [Math.min(...b.lines.map((l) => l.x0)), Math.min(...b.lines.map((l) => l.y - 0.25 * l.size)), Math.max(...b.lines.map((l) => l.x1)), Math.max(...b.lines.map((l) => l.y + l.size))].map(
    (v) => Math.round(v * 100) / 100,
  )

/** Text drawn where a reader cannot see it: its own block, flagged, never a paragraph of the page. */
const unseenBlock = ({ page, block, why }: { page: number; block: Block; why: string }, frame: Frame): PdfOutput['blocks'][number] => ({
  kind: 'paragraph',
  text: blockText(block),
  page,
  bbox: frame.toPage(bboxOf(block)),
  hidden: why,
})

function fail(code: NonNullable<PdfOutput['failure']>['code'], message: string): PdfOutput {
  return { extractor: '', pages: 0, pages_without_text: [], blocks: [], furniture: [], diagnostics: [], failure: { code, message } }
}

// Text from a hostile file never reaches a terminal through pdf.js's warnings.
for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const) console[method] = () => {}

/**
 * pdf.js's own exceptions (its parser's errors reach this thread as `UnknownErrorException`) say
 * the file is malformed: the file's failure, not the reader's. Anything else is a fault here.
 */
const PDFJS_ERRORS = new Set(['UnknownErrorException', 'InvalidPDFException', 'FormatError', 'MissingPDFException'])

parentPort?.on('message', (message: Request) => {
  const onPage = (page: number, ocr?: boolean) => parentPort?.postMessage({ page, ocr })
  const bound = message.maxImagePixels
  ;(message.place
    ? import('./pdf-pictures.js').then((m) => m.placeFigures(message.bytes, message.password, message.maxPages, bound, onPage))
    : message.draw
      ? import('./pdf-pictures.js').then((m) => m.drawFigures(message.bytes, message.password, message.draw!, bound, onPage))
      : message.render
        ? import('./render-page.js').then((m) => m.renderRegions(message.bytes, message.password, message.render!, bound))
        : message.image && message.ocr
          ? import('./image.js').then((m) => m.readImage(message.bytes, message.ocr!, onPage))
          : read(message, onPage)
  )
    .then((done) => parentPort?.postMessage({ done }))
    .catch((error: unknown) =>
      parentPort?.postMessage({
        done:
          error instanceof Error && PDFJS_ERRORS.has(error.name)
            ? fail('E_UNSUPPORTED_FORMAT', `not a readable PDF: ${reasonOf(error)}`)
            : fail('E_INTERNAL', `the PDF reader failed: ${reasonOf(error)}`),
      }),
    )
})
