import { useState } from 'preact/hooks'
import { type Evidence, type RevisionDiff, api } from '../api.js'
import { ApiImage, Failure, Name, Panel, describe, useLoad, when } from '../util.js'

const PAGE = 100

/** Sources → revisions → extractions → units, each with its locators; PDF evidence drawn from the page. */
export function Corpus({ project }: { project: string }) {
  const [offset, setOffset] = useState(0)
  const [open, setOpen] = useState<string>()
  const { value, error } = useLoad(() => api.sources(project, offset, PAGE), [project, offset])
  return (
    <div class="split">
      <div>
        <h1>Corpus</h1>
        <Failure error={error} />
        {value && (
          <>
            <p>
              {value.total} sources in snapshot {value.snapshot_id ?? 'none'} · showing {offset + 1}–{Math.min(offset + PAGE, value.total)}
            </p>
            <table class="sources">
              <thead>
                <tr>
                  <th scope="col">Path</th>
                  <th scope="col">Collection</th>
                  <th scope="col">Format</th>
                  <th scope="col">Size</th>
                  <th scope="col">Captured</th>
                </tr>
              </thead>
              <tbody>
                {value.sources.map((s) => (
                  <tr key={s.id} aria-selected={open === `source:${s.id}`}>
                    <td>
                      <button type="button" class="link" onClick={() => setOpen(`source:${s.id}`)}>
                        <Name>{s.path}</Name>
                      </button>
                    </td>
                    <td>{s.collection}</td>
                    <td>
                      {s.format}
                      {s.kind ? ` · ${s.kind}` : ''}
                    </td>
                    <td>{s.size}</td>
                    <td>{when(s.captured_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <div class="pager">
              <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
                Previous
              </button>
              <button type="button" disabled={offset + PAGE >= value.total} onClick={() => setOffset(offset + PAGE)}>
                Next
              </button>
            </div>
          </>
        )}
      </div>
      {open && <EvidencePanel project={project} id={open} onOpen={setOpen} onClose={() => setOpen(undefined)} />}
    </div>
  )
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
const LINKED = new Set(['source', 'revision', 'extraction', 'unit', 'chunk', 'snapshot', 'job'])
/** A list field's items are evidence of this kind (`revisions: [{ id, … }]`). */
const ITEMS: Record<string, string> = { revisions: 'revision', extractions: 'extraction', units: 'unit', chunks: 'chunk', sources: 'source', snapshots: 'snapshot' }

/**
 * One piece of evidence as the daemon returns it. Fields are shown as they come, every nested
 * `{ type, id }` or `*_id` of a known kind is a link to that evidence, and a unit or chunk of a PDF
 * is drawn from its page by the daemon's renderer.
 */
function EvidencePanel({ project, id, onOpen, onClose }: { project: string; id: string; onOpen: (id: string) => void; onClose: () => void }) {
  const { value, error } = useLoad(() => api.evidence(project, id), [project, id])
  const pdf = (value?.type === 'unit' && (value.document?.boxes.length ?? 0) > 0) || (value?.type === 'chunk' && value.regions.length > 0)
  return (
    <Panel label={`Evidence ${id}`} title={id} onClose={onClose}>
      <Failure error={error} />
      {pdf && <ApiImage class="page" path={api.renderUrl(project, id)} alt={`The page region of ${id}`} />}
      {value?.type === 'source' && value.revisions.length > 1 && <Revisions project={project} revisions={value.revisions} />}
      {value?.type === 'extraction' && <ExtractionView project={project} extraction={value} onOpen={onOpen} />}
      {value?.type === 'unit' && value.document && value.document.cells.length > 0 && <Cells cells={value.document.cells} />}
      {value && <Tree value={value as unknown as Json} onOpen={onOpen} />}
    </Panel>
  )
}

function Tree({ value, onOpen, name, of }: { value: Json; onOpen: (id: string) => void; name?: string; of?: string }) {
  if (value === null) return <span class="muted">—</span>
  if (Array.isArray(value)) {
    if (value.length === 0) return <span class="muted">none</span>
    return (
      <ol class="tree">
        {value.map((v, i) => (
          <li key={i}>
            <Tree value={v} onOpen={onOpen} {...(name && ITEMS[name] ? { of: ITEMS[name] } : {})} />
          </li>
        ))}
      </ol>
    )
  }
  if (typeof value === 'object') {
    const kind = typeof value.type === 'string' ? value.type : of
    return (
      <dl class="tree">
        {Object.entries(value).map(([k, v]) => {
          const linkType = k === 'id' && kind && LINKED.has(kind) ? kind : k.endsWith('_id') && LINKED.has(k.slice(0, -3)) ? k.slice(0, -3) : undefined
          return (
            <div key={k} class="field">
              <dt>{k}</dt>
              <dd>
                {linkType && typeof v === 'number' ? (
                  <button type="button" class="link" onClick={() => onOpen(`${linkType}:${v}`)}>
                    {linkType}:{v}
                  </button>
                ) : (
                  <Tree value={v} onOpen={onOpen} name={k} />
                )}
              </dd>
            </div>
          )
        })}
      </dl>
    )
  }
  if (typeof value === 'string' && (name === 'text' || value.includes('\n'))) return <pre class="text">{value}</pre>
  if (typeof value === 'string' && (name?.endsWith('path') || name === 'uri' || name === 'root')) return <Name>{value}</Name>
  if (typeof value === 'number' && name?.endsWith('_at')) return <span>{when(value)}</span>
  return <span>{String(value)}</span>
}

type Extraction = Extract<Evidence, { type: 'extraction' }>
type UnitBrief = Extraction['units'][number]
type Cell = NonNullable<Extract<Evidence, { type: 'unit' }>['document']>['cells'][number]

/** Pages drawn at this resolution: sharp enough to read, small enough to send. */
const PAGE_DPI = 110
const PAGES_SHOWN = 10

/**
 * An extraction as its document has it: a PDF's pages drawn with every unit's box laid over them
 * (click a box to open the unit; hidden text marked), or a DOCX's units grouped by part.
 */
function ExtractionView(props: { project: string; extraction: Extraction; onOpen: (id: string) => void }) {
  const assets = props.extraction.document?.assets ?? []
  return (
    <>
      <DocumentView {...props} />
      {assets.length > 0 && <Pictures project={props.project} extraction={props.extraction} onOpen={props.onOpen} />}
    </>
  )
}

function DocumentView({ project, extraction, onOpen }: { project: string; extraction: Extraction; onOpen: (id: string) => void }) {
  const format = extraction.document?.format
  if (format === 'pdf') return <PdfPages project={project} extraction={extraction} onOpen={onOpen} />
  if (format === 'docx') {
    const parts = new Map<string, UnitBrief[]>()
    for (const u of extraction.units) {
      const part = u.document?.part ?? 'body'
      parts.set(part, [...(parts.get(part) ?? []), u])
    }
    return (
      <section aria-label="Units by part">
        <h3>Units by part</h3>
        {[...parts].map(([part, units]) => (
          <details key={part} open={part === 'body'}>
            <summary>
              {part} ({units.length})
            </summary>
            <ol class="units">
              {units.map((u) => (
                <li key={u.id} class={isHidden(u) ? 'hidden-text' : undefined}>
                  <button type="button" class="link" onClick={() => onOpen(`unit:${u.id}`)}>
                    unit:{u.id}
                  </button>{' '}
                  <span class="muted">{u.unit_type}</span> {isHidden(u) && <span class="flag">hidden</span>} {u.text.length > 160 ? `${u.text.slice(0, 160)}…` : u.text}
                </li>
              ))}
            </ol>
          </details>
        ))}
      </section>
    )
  }
  return null
}

/** A PDF's pages, drawn `PAGES_SHOWN` at a time (each page is one request to the renderer). */
function PdfPages({ project, extraction, onOpen }: { project: string; extraction: Extraction; onOpen: (id: string) => void }) {
  const total = extraction.document?.pages ?? 0
  const [shown, setShown] = useState(Math.min(total, PAGES_SHOWN))
  return (
    <section aria-label="Pages">
      <h3>Pages {shown < total ? `(${shown} of ${total})` : `(${total})`}</h3>
      {Array.from({ length: shown }, (_, i) => (
        <PdfPage key={i} project={project} revision={extraction.revision_id} page={i + 1} units={extraction.units} onOpen={onOpen} />
      ))}
      {shown < total && (
        <button type="button" onClick={() => setShown(Math.min(total, shown + PAGES_SHOWN))}>
          Next {Math.min(PAGES_SHOWN, total - shown)} pages
        </button>
      )}
    </section>
  )
}

const isHidden = (u: UnitBrief) => u.unit_type === 'hidden_text' || (u.document?.flags ?? []).some((f) => f.startsWith('hidden'))

function PdfPage({ project, revision, page, units, onOpen }: { project: string; revision: number; page: number; units: UnitBrief[]; onOpen: (id: string) => void }) {
  const [sheet, setSheet] = useState<{ w: number; h: number; transform: number[] }>()
  const boxes = units.flatMap((u) => (u.document?.boxes ?? []).filter((b) => b[0] === page).map((b) => ({ unit: u, box: b })))
  return (
    <figure class="pdf-page">
      <div class="sheet">
        <ApiImage
          path={api.pageUrl(project, revision, page, PAGE_DPI)}
          alt={`Page ${page}`}
          onLoad={(img, headers) => setSheet({ w: img.naturalWidth, h: img.naturalHeight, transform: pageTransform(headers) })}
        />
        {sheet &&
          boxes.map(({ unit, box }, i) => {
            const r = onSheet(box, sheet.transform)
            return (
              <button
                key={`${unit.id}-${i}`}
                type="button"
                class={`box ${isHidden(unit) ? 'hidden-text' : ''}`}
                title={`unit:${unit.id} ${unit.unit_type}`}
                aria-label={`unit ${unit.id}, ${unit.unit_type}${isHidden(unit) ? ', hidden text' : ''}`}
                style={{
                  left: `${(r.left / sheet.w) * 100}%`,
                  top: `${(r.top / sheet.h) * 100}%`,
                  width: `${(r.width / sheet.w) * 100}%`,
                  height: `${(r.height / sheet.h) * 100}%`,
                }}
                onClick={() => onOpen(`unit:${unit.id}`)}
              />
            )
          })}
      </div>
      <figcaption>
        Page {page} · {boxes.length} unit boxes
      </figcaption>
    </figure>
  )
}

/** The page picture's PDF-points-to-pixels matrix, as the daemon sends it (`a b c d e f`). */
function pageTransform(headers: Headers): number[] {
  const numbers = (headers.get('x-tychora-page-transform') ?? '').split(' ').map(Number)
  return numbers.length === 6 && numbers.every(Number.isFinite) ? numbers : [PAGE_DPI / 72, 0, 0, -PAGE_DPI / 72, 0, 0]
}

/** A box `[page, x0, y0, x1, y1]` in PDF points as a rectangle of the picture's pixels (any rotation). */
function onSheet(box: number[], [a, b, c, d, e, f]: number[]): { left: number; top: number; width: number; height: number } {
  const [, x0 = 0, y0 = 0, x1 = 0, y1 = 0] = box
  const corners = [
    [x0, y0],
    [x1, y0],
    [x0, y1],
    [x1, y1],
  ].map(([x, y]) => [a! * x! + c! * y! + e!, b! * x! + d! * y! + f!] as const)
  const xs = corners.map((p) => p[0])
  const ys = corners.map((p) => p[1])
  const left = Math.min(...xs)
  const top = Math.min(...ys)
  return { left, top, width: Math.max(...xs) - left, height: Math.max(...ys) - top }
}

/** A table row's cells as a table (a PDF cell with its box, a DOCX cell with its span). */
function Cells({ cells }: { cells: Cell[] }) {
  return (
    <table class="cells">
      <caption>Cells</caption>
      <tbody>
        <tr>
          {cells.map((c, i) => (
            <td key={i} colSpan={c.col_span}>
              {c.text}
              {c.continues_above ? <span class="muted"> (continues above)</span> : null}
            </td>
          ))}
        </tr>
      </tbody>
    </table>
  )
}

type RevisionBrief = Extract<Evidence, { type: 'source' }>['revisions'][number]

/** A source's revisions, each comparable with the one before it (their extracted text, line by line). */
function Revisions({ project, revisions }: { project: string; revisions: RevisionBrief[] }) {
  const ordered = [...revisions].sort((a, b) => a.seq - b.seq)
  const [diff, setDiff] = useState<RevisionDiff>()
  const [error, setError] = useState<string>()
  const compare = (from: number, to: number) =>
    api.diff(project, from, to).then(
      (d) => {
        setDiff(d)
        setError(undefined)
      },
      (e: unknown) => setError(describe(e)),
    )
  return (
    <section aria-label="Revision diff">
      <h3>Revisions</h3>
      <div class="actions">
        {ordered.slice(1).map((r, i) => (
          <button key={r.id} type="button" onClick={() => compare((ordered[i] as RevisionBrief).id, r.id)}>
            Compare {(ordered[i] as RevisionBrief).seq} → {r.seq}
          </button>
        ))}
      </div>
      <Failure error={error} />
      {diff && (
        <>
          <p>
            revision {diff.from.seq} → {diff.to.seq}: {diff.added} lines added, {diff.removed} removed
          </p>
          <pre class="code diff-lines">
            {diff.lines.map((line, i) => (
              <span key={i} class={`line ${line.op === '+' ? 'add' : line.op === '-' ? 'del' : line.op === '…' ? 'fold' : ''}`}>
                <span class="ln" aria-hidden="true">
                  {line.op}
                </span>
                {line.text}
                {'\n'}
              </span>
            ))}
          </pre>
        </>
      )}
    </section>
  )
}

/** Raster types the daemon serves for drawing (others are listed, not drawn). */
const DRAWN = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/bmp'])

/** The pictures a document holds, with what vision models said of them and whether a person agreed. */
function Pictures({ project, extraction, onOpen }: { project: string; extraction: Extraction; onOpen: (id: string) => void }) {
  const [reviewed, setReviewed] = useState<Record<number, string>>({})
  const [error, setError] = useState<string>()
  const review = (id: number, status: 'accepted' | 'rejected') =>
    api.reviewDescription(project, id, status).then(
      () => setReviewed((now) => ({ ...now, [id]: status })),
      (e: unknown) => setError(describe(e)),
    )
  return (
    <section aria-label="Pictures">
      <h3>Pictures ({extraction.document?.assets.length})</h3>
      <Failure error={error} />
      {extraction.document?.assets.map((a) => (
        <figure key={a.ordinal} class="picture">
          {DRAWN.has(a.media_type) ? (
            <ApiImage class="thumb" path={api.pictureUrl(project, extraction.id, a.ordinal)} alt={a.alt_text ?? a.caption ?? `Picture ${a.ordinal}`} />
          ) : (
            <p class="muted">{a.media_type}: not drawn here</p>
          )}
          <figcaption>
            Picture {a.ordinal} · {a.media_type}
            {a.width && a.height ? ` · ${a.width}×${a.height}` : ''}
            {a.page ? ` · p.${a.page}` : ''} · {a.part}
            {a.alt_text && <div>alt: {a.alt_text}</div>}
            {a.caption && <div>caption: {a.caption}</div>}
            {a.unit_id !== null && (
              <div>
                <button type="button" class="link" onClick={() => onOpen(`unit:${a.unit_id}`)}>
                  unit:{a.unit_id}
                </button>
              </div>
            )}
            {a.descriptions.map((d) => (
              <div key={d.id} class="description">
                <span class={`status ${reviewed[d.id] ?? d.review_status}`}>{reviewed[d.id] ?? d.review_status}</span> {d.model}: {d.text}
                <span class="actions">
                  <button type="button" onClick={() => review(d.id, 'accepted')}>
                    Accept description {d.id}
                  </button>
                  <button type="button" onClick={() => review(d.id, 'rejected')}>
                    Reject description {d.id}
                  </button>
                </span>
              </div>
            ))}
          </figcaption>
        </figure>
      ))}
    </section>
  )
}
