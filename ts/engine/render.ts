// `inspect --render`: the page regions a piece of PDF evidence covers, drawn to one PNG (every page
// it runs over, stacked) so a person can look at what the citation points to. The regions come
// from the evidence itself (a unit's boxes, a window's regions), the bytes from the retained
// original: nothing is re-extracted.
import type { Evidence } from '../contracts/evidence.js'
import { TychoraError } from '../errors.js'
import { readPdf } from '../extract/pdf.js'
import type { ReadArtifact } from './artifact-reader.js'

/** The region of one page drawn, and where it sits in the PNG. */
export interface RenderedPage {
  page: number
  /** `[x0, y0, x1, y1]` in PDF points, origin bottom-left: the evidence's box on this page plus the margin. */
  region: number[]
  /** Its first row in the PNG (pages are stacked top to bottom, a grey band between two). */
  top: number
  width: number
  height: number
}

/** The regions a piece of evidence covers, one per page, drawn into one PNG. */
export interface RenderedRegion {
  png: Buffer
  /** The file, relative to its root. */
  path: string
  /** The first page drawn, and its region (as `pages[0]`). */
  page: number
  region: number[]
  /** Every page drawn, in order. */
  pages: RenderedPage[]
  dpi: number
  /** The whole PNG's size. */
  width: number
  height: number
}

export interface RenderOptions {
  /** Resolution (72–600, default 144). */
  dpi?: number
  /** Points of page kept around the region (default 12). */
  margin?: number
  /** Only this page of the evidence (default: every page it covers). */
  page?: number
}

/** The boxes of a unit or window, `[page, x0, y0, x1, y1]`, with its file. */
function boxesOf(evidence: Evidence): { boxes: number[][]; sha256: string; path: string } {
  if (evidence.type === 'unit') return { boxes: evidence.document?.boxes ?? [], sha256: evidence.sha256, path: evidence.path }
  if (evidence.type === 'chunk') return { boxes: evidence.regions, sha256: evidence.sha256, path: evidence.path }
  throw new TychoraError('E_INVALID_ARGUMENT', `--render takes a unit, chunk or segment id, not a ${evidence.type}`)
}

/** One region per page, the union of the boxes on it, pages in the order the evidence reaches them. */
function perPage(boxes: number[][]): Array<{ page: number; box: number[] }> {
  const pages = new Map<number, number[]>()
  for (const [page, x0, y0, x1, y1] of boxes as Array<[number, number, number, number, number]>) {
    const had = pages.get(page)
    pages.set(page, had ? [Math.min(had[0]!, x0), Math.min(had[1]!, y0), Math.max(had[2]!, x1), Math.max(had[3]!, y1)] : [x0, y0, x1, y1])
  }
  return [...pages].map(([page, box]) => ({ page, box }))
}

export async function renderEvidence(read: ReadArtifact, evidence: Evidence, options: RenderOptions = {}): Promise<RenderedRegion> {
  const dpi = options.dpi ?? 144
  if (!Number.isInteger(dpi) || dpi < 72 || dpi > 600) throw new TychoraError('E_INVALID_ARGUMENT', '--dpi must be an integer from 72 to 600')
  const margin = options.margin ?? 12
  const { boxes, sha256, path } = boxesOf(evidence)
  let regions = perPage(boxes)
  if (regions.length === 0) throw new TychoraError('E_UNSUPPORTED_FORMAT', `${path}: this evidence has no region on a page to draw (only PDF evidence has one)`)
  if (options.page !== undefined) {
    const covered = regions.map((r) => r.page)
    regions = regions.filter((r) => r.page === options.page)
    if (regions.length === 0) throw new TychoraError('E_INVALID_ARGUMENT', `--page ${options.page} is not a page this evidence covers (p.${covered.join(', ')})`)
  }
  const bytes = await originalPdf(read, sha256, path)
  const wanted = regions.map(({ page, box }) => ({ page, box: [box[0]! - margin, box[1]! - margin, box[2]! + margin, box[3]! + margin] }))
  const out = await readPdf({
    bytes,
    path,
    max_pages: Number.MAX_SAFE_INTEGER,
    page_timeout_ms: 30_000,
    worker_memory_mb: 256,
    render: { regions: wanted, dpi },
  })
  if (out.failure || !out.rendered) throw new TychoraError(out.failure?.code ?? 'E_INTERNAL', `${path}: ${out.failure?.message ?? 'the page was not drawn'}`)
  const { png, width, height, parts } = out.rendered
  const pages = parts.map((part, i) => ({ page: part.page, region: wanted[i]!.box, top: part.top, width: part.width, height: part.height }))
  return {
    png: Buffer.from(png.buffer, png.byteOffset, png.byteLength),
    path,
    page: pages[0]!.page,
    region: pages[0]!.region,
    pages,
    dpi,
    width,
    height,
  }
}

/** A revision's retained original, when it is a PDF. */
async function originalPdf(read: ReadArtifact, sha256: string, path: string): Promise<Buffer> {
  let bytes: Buffer
  try {
    bytes = await read(sha256)
  } catch (error) {
    if (error instanceof TychoraError && error.code === 'E_NOT_FOUND') throw new TychoraError('E_NOT_FOUND', `${path}: its original bytes are no longer retained (erased or purged); nothing to draw`)
    throw error
  }
  if (bytes.subarray(0, 5).toString('latin1') !== '%PDF-') throw new TychoraError('E_UNSUPPORTED_FORMAT', `${path}: only PDF pages are drawn (an image file is its own picture: artifact ${sha256})`)
  return bytes
}

/** A whole PDF page drawn, for a view that lays every unit's box over it. */
export interface DrawnPage {
  png: Buffer
  page: number
  dpi: number
  /** Pixels. */
  width: number
  height: number
  /**
   * PDF points to pixels, `[a, b, c, d, e, f]`: a point `[x, y]` of a unit's box is drawn at
   * `[a·x + c·y + e, b·x + d·y + f]` (the page's rotation and the origin of its box included).
   */
  transform: number[]
}

/** Page `page` of a revision's PDF (its sha256 and path), whole: the renderer clips any region to the page. */
export async function renderWholePage(read: ReadArtifact, revision: { sha256: string; path: string }, page: number, dpi: number): Promise<DrawnPage> {
  if (!Number.isInteger(dpi) || dpi < 36 || dpi > 300) throw new TychoraError('E_INVALID_ARGUMENT', 'dpi must be an integer from 36 to 300')
  if (!Number.isInteger(page) || page < 1) throw new TychoraError('E_INVALID_ARGUMENT', 'page must be a positive integer')
  const bytes = await originalPdf(read, revision.sha256, revision.path)
  const everything = [-1e6, -1e6, 1e6, 1e6]
  const out = await readPdf({
    bytes,
    path: revision.path,
    max_pages: Number.MAX_SAFE_INTEGER,
    page_timeout_ms: 30_000,
    worker_memory_mb: 256,
    render: { regions: [{ page, box: everything }], dpi },
  })
  if (out.failure || !out.rendered) throw new TychoraError(out.failure?.code ?? 'E_INTERNAL', `${revision.path}: ${out.failure?.message ?? 'the page was not drawn'}`)
  const { png, width, height, parts } = out.rendered
  return { png: Buffer.from(png.buffer, png.byteOffset, png.byteLength), page, dpi, width, height, transform: parts[0]!.transform }
}

/** Picture types a browser draws without running anything (SVG, which can hold script, is left out). */
const DRAWABLE = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/bmp'])

/**
 * The bytes of picture `ordinal` of an extraction, for a view that shows it: only a raster type a
 * browser draws inert, only an asset the extraction lists, and only while its bytes are retained.
 */
export async function pictureBytes(
  read: ReadArtifact,
  extraction: { path: string; document?: { assets: Array<{ ordinal: number; sha256: string; media_type: string }> } | undefined },
  ordinal: number,
): Promise<{ bytes: Buffer; media_type: string }> {
  const asset = extraction.document?.assets.find((a) => a.ordinal === ordinal)
  if (!asset) throw new TychoraError('E_NOT_FOUND', `${extraction.path} has no picture ${ordinal}`)
  if (!DRAWABLE.has(asset.media_type)) throw new TychoraError('E_UNSUPPORTED_FORMAT', `${extraction.path}: picture ${ordinal} is ${asset.media_type}, which is not shown (only raster pictures are)`)
  if (!/^[0-9a-f]{64}$/.test(asset.sha256)) throw new TychoraError('E_CORRUPT', `picture ${ordinal} names no artifact`)
  try {
    return { bytes: await read(asset.sha256), media_type: asset.media_type }
  } catch (error) {
    if (error instanceof TychoraError && error.code === 'E_NOT_FOUND') throw new TychoraError('E_NOT_FOUND', `${extraction.path}: the bytes of picture ${ordinal} are no longer retained`)
    throw error
  }
}
