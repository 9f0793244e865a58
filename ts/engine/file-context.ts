// The lines around a cited chunk, read from the text its locator indexes (the retained original of
// a text or code file; a document's derived text), for a view that shows the citation in its file.
import type { Evidence } from '../contracts/evidence.js'
import { TychoraError } from '../errors.js'
import type { ReadArtifact } from './artifact-reader.js'

/** A cited range and the lines around it. */
export interface FileContext {
  path: string
  /** The line number of `lines[0]`. */
  first_line: number
  lines: string[]
  /** The cited lines, inclusive. */
  cited: [number, number]
  /** Whether the text is the document's derived text (PDF, DOCX) rather than the file's bytes. */
  derived: boolean
}

/** Files larger than this are not read for context (the view shows the cited lines alone). */
const MAX_BYTES = 16 * 1024 * 1024
/** Lines shown each side of the citation, at most. */
export const MAX_RADIUS = 60

type Chunk = Extract<Evidence, { type: 'chunk' }>
type Extraction = Extract<Evidence, { type: 'extraction' }>

/** `radius` lines each side of the chunk's cited lines, from the artifact its locator indexes. */
export async function fileContext(read: ReadArtifact, chunk: Chunk, extraction: Extraction, radius: number): Promise<FileContext> {
  if (!Number.isInteger(radius) || radius < 0 || radius > MAX_RADIUS) throw new TychoraError('E_INVALID_ARGUMENT', `radius must be an integer from 0 to ${MAX_RADIUS}`)
  const derived = extraction.document?.derived_sha256
  const sha256 = derived ?? chunk.sha256
  if (!/^[0-9a-f]{64}$/.test(sha256)) throw new TychoraError('E_CORRUPT', `${chunk.path}: its text names no artifact`)
  let bytes: Buffer
  try {
    bytes = await read(sha256)
  } catch (error) {
    if (error instanceof TychoraError && error.code === 'E_NOT_FOUND') throw new TychoraError('E_NOT_FOUND', `${chunk.path}: its text is no longer retained (erased or purged)`)
    throw error
  }
  if (bytes.length > MAX_BYTES) throw new TychoraError('E_LIMIT_EXCEEDED', `${chunk.path}: ${bytes.length} bytes; texts over ${MAX_BYTES} are not read for context`)
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes)
  const all = text.split(/\r?\n/)
  const { line_start: start, line_end: end } = chunk.locator
  const first = Math.max(1, start - radius)
  const last = Math.min(all.length, end + radius)
  return { path: chunk.path, first_line: first, lines: all.slice(first - 1, last), cited: [start, end], derived: derived !== undefined }
}
