// `inspect --render`: the page region a piece of PDF evidence covers, drawn to PNG so a person can
// look at what the citation points to. The region comes from the evidence itself (a unit's boxes,
// a window's regions), the bytes from the retained original: nothing is re-extracted.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Evidence } from '../contracts/evidence.js'
import { TychoraError } from '../errors.js'
import { readPdf } from '../extract/pdf.js'

/** A drawn region of a page. */
export interface RenderedRegion {
  png: Buffer
  /** The file, relative to its root. */
  path: string
  page: number
  /** `[x0, y0, x1, y1]` in PDF points, origin bottom-left: the evidence's box plus the margin. */
  region: number[]
  dpi: number
  width: number
  height: number
}

export interface RenderOptions {
  /** Resolution (72–600, default 144). */
  dpi?: number
  /** Points of page kept around the region (default 12). */
  margin?: number
}

/** The first page's region of a unit or window, `[page, x0, y0, x1, y1]`. */
function firstRegion(evidence: Evidence): { boxes: number[][]; sha256: string; path: string } {
  if (evidence.type === 'unit') return { boxes: evidence.document?.boxes ?? [], sha256: evidence.sha256, path: evidence.path }
  if (evidence.type === 'chunk') return { boxes: evidence.regions, sha256: evidence.sha256, path: evidence.path }
  throw new TychoraError('E_INVALID_ARGUMENT', `--render takes a unit, chunk or segment id, not a ${evidence.type}`)
}

export async function renderEvidence(workspaceDir: string, evidence: Evidence, options: RenderOptions = {}): Promise<RenderedRegion> {
  const dpi = options.dpi ?? 144
  if (!Number.isInteger(dpi) || dpi < 72 || dpi > 600) throw new TychoraError('E_INVALID_ARGUMENT', '--dpi must be an integer from 72 to 600')
  const margin = options.margin ?? 12
  const { boxes, sha256, path } = firstRegion(evidence)
  const first = boxes[0]
  if (!first) throw new TychoraError('E_UNSUPPORTED_FORMAT', `${path}: this evidence has no region on a page to draw (only PDF evidence has one)`)
  let bytes: Buffer
  try {
    bytes = await readFile(join(workspaceDir, 'artifacts/sha256', sha256.slice(0, 2), sha256))
  } catch {
    throw new TychoraError('E_NOT_FOUND', `${path}: its original bytes are no longer retained (erased or purged); nothing to draw`)
  }
  if (bytes.subarray(0, 5).toString('latin1') !== '%PDF-') throw new TychoraError('E_UNSUPPORTED_FORMAT', `${path}: only PDF pages are drawn (an image file is its own picture: artifact ${sha256})`)
  const [page, x0, y0, x1, y1] = first as [number, number, number, number, number]
  const region = [x0 - margin, y0 - margin, x1 + margin, y1 + margin]
  const out = await readPdf({ bytes, path, max_pages: Number.MAX_SAFE_INTEGER, page_timeout_ms: 30_000, worker_memory_mb: 256, render: { page, box: region, dpi } })
  if (out.failure || !out.rendered) throw new TychoraError(out.failure?.code ?? 'E_INTERNAL', `${path}: ${out.failure?.message ?? 'the page was not drawn'}`)
  const { png, width, height } = out.rendered
  return { png: Buffer.from(png.buffer, png.byteOffset, png.byteLength), path, page, region, dpi, width, height }
}
