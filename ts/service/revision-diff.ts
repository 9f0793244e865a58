import type { DiffLine } from '../contracts/knowledge.js'
import type { Evidence } from '../contracts/evidence.js'
import { TychoraError } from '../errors.js'
import { lineDiff } from './review.js'

/** Two revisions of a source compared by their extracted text, line by line. */
export interface RevisionDiff {
  from: { revision_id: number; seq: number; extraction_id: number | null }
  to: { revision_id: number; seq: number; extraction_id: number | null }
  /** Lines added and removed (unchanged lines are counted, not listed, past this many of context). */
  added: number
  removed: number
  lines: DiffLine[]
}

/** What a diff needs of a workspace. */
export interface EvidenceReader {
  getEvidence(id: string): Promise<Evidence>
}

/** Unchanged lines kept around each change; longer unchanged runs are folded into one `…` line. */
const CONTEXT = 3

/**
 * Revision `from` against revision `to` (both of one source) as their extractions' unit texts
 * read in order, one unit a paragraph: what a reader of the two versions would see change. A
 * revision whose text is gone (erased) or never extracted compares as empty.
 */
export async function revisionDiff(ws: EvidenceReader, from: number, to: number): Promise<RevisionDiff> {
  const [a, b] = await Promise.all([revision(ws, from), revision(ws, to)])
  if (a.source_id !== b.source_id) throw new TychoraError('E_INVALID_ARGUMENT', `revision ${from} and revision ${to} belong to different sources`)
  const [textA, textB] = await Promise.all([text(ws, a), text(ws, b)])
  const all = lineDiff(textA, textB)
  return {
    from: { revision_id: a.id, seq: a.seq, extraction_id: a.extractions.at(-1)?.id ?? null },
    to: { revision_id: b.id, seq: b.seq, extraction_id: b.extractions.at(-1)?.id ?? null },
    added: all.filter((l) => l.op === '+').length,
    removed: all.filter((l) => l.op === '-').length,
    lines: fold(all),
  }
}

type Revision = Extract<Evidence, { type: 'revision' }>

async function revision(ws: EvidenceReader, id: number): Promise<Revision> {
  const found = await ws.getEvidence(`revision:${id}`)
  if (found.type !== 'revision') throw new TychoraError('E_NOT_FOUND', `no revision ${id}`)
  return found
}

/** The text of the revision's newest extraction (a parser change re-extracts; the older one is stale). */
async function text(ws: EvidenceReader, r: Revision): Promise<string> {
  const extraction = r.extractions.at(-1)
  if (!extraction) return ''
  const found = await ws.getEvidence(`extraction:${extraction.id}`)
  if (found.type !== 'extraction') return ''
  const joined = found.units
    .filter((u) => u.unit_type !== 'section')
    .map((u) => u.text)
    .join('\n\n')
  if (joined.length > MAX_TEXT) throw new TychoraError('E_LIMIT_EXCEEDED', `revision ${r.id} has ${joined.length} characters of text; revisions over ${MAX_TEXT} are not compared here`)
  return joined
}

/** Revisions with more text than this are not compared (the diff runs on the daemon's event loop). */
const MAX_TEXT = 4_000_000

/** Keeps `CONTEXT` unchanged lines around each change and folds the rest into one `…` line per run (its text counts them). */
function fold(lines: DiffLine[]): DiffLine[] {
  const near = lines.map((l, i) => l.op !== ' ' || lines.slice(Math.max(0, i - CONTEXT), i + CONTEXT + 1).some((x) => x.op !== ' '))
  const out: DiffLine[] = []
  let skipped = 0
  lines.forEach((line, i) => {
    if (near[i]) {
      if (skipped > 0) out.push({ op: '…', text: `${skipped} unchanged lines` })
      skipped = 0
      out.push(line)
    } else skipped++
  })
  if (skipped > 0) out.push({ op: '…', text: `${skipped} unchanged lines` })
  return out
}
