import { useState } from 'preact/hooks'
import { api } from '../api.js'
import { Failure, Name, useLoad, when } from '../util.js'

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
      {open && <Evidence project={project} id={open} onOpen={setOpen} />}
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
function Evidence({ project, id, onOpen }: { project: string; id: string; onOpen: (id: string) => void }) {
  const { value, error } = useLoad(() => api.evidence(project, id), [project, id])
  const type = id.split(':')[0] ?? ''
  const pdf = value && (type === 'unit' || type === 'chunk') && JSON.stringify(value).includes('"page_start"')
  return (
    <aside class="evidence" aria-label={`Evidence ${id}`}>
      <h2>{id}</h2>
      <Failure error={error} />
      {pdf && <img class="page" src={api.renderUrl(project, id)} alt={`The page region of ${id}`} />}
      {value && <Tree value={value as Json} onOpen={onOpen} />}
    </aside>
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
