import { useState } from 'preact/hooks'
import { type SymbolReport, api } from '../api.js'
import { Failure, Name, describe } from '../util.js'

type Relation = SymbolReport['unresolved'][number]

/** A code symbol's definitions with their references, callers and callees (the reference graph). */
export function Symbols({ project }: { project: string }) {
  const [name, setName] = useState('')
  const [report, setReport] = useState<SymbolReport>()
  const [error, setError] = useState<string>()
  const look = async (symbol: string) => {
    if (!symbol.trim()) return
    setName(symbol)
    setError(undefined)
    try {
      setReport(await api.symbol(project, symbol.trim()))
    } catch (e) {
      setError(describe(e))
    }
  }
  return (
    <div>
      <h1>Code symbols</h1>
      <form
        class="inline"
        aria-label="Look up a symbol"
        onSubmit={(e) => {
          e.preventDefault()
          look(name)
        }}
      >
        <label>
          Symbol <input name="symbol" value={name} placeholder="parse_args, Workspace.search, pkg.mod.Class.method" onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </label>
        <button type="submit">Look up</button>
      </form>
      <Failure error={error} />
      {report && (
        <>
          <p>
            {report.definitions.length} definitions of <code>{report.name}</code> in snapshot {report.snapshot_id ?? 'none'} (resolution: {report.resolution})
          </p>
          {report.definitions.map((d) => (
            <article class="definition" key={d.unit_id} aria-label={`Definition ${d.symbol}`}>
              <h2>
                <code>{d.symbol}</code> <span class="muted">{d.unit_type}</span>
              </h2>
              <p>
                <Name>{d.site.citation}</Name>
                {d.site.commit ? <span class="muted"> @ {d.site.commit.slice(0, 12)}</span> : null}
              </p>
              <pre class="text">{d.signature}</pre>
              <Relations title="Callers" total={d.callers_total} list={d.callers} onOpen={look} />
              <Relations title="Callees" total={d.callees_total} list={d.callees} onOpen={look} />
              <Relations title="References" total={d.references_total} list={d.references} onOpen={look} />
            </article>
          ))}
          <Relations title="Unresolved sites naming it" total={report.unresolved_total} list={report.unresolved} onOpen={look} />
        </>
      )}
    </div>
  )
}

function Relations({ title, total, list, onOpen }: { title: string; total: number; list: Relation[]; onOpen: (symbol: string) => void }) {
  if (total === 0) return null
  return (
    <section aria-label={title}>
      <h3>
        {title} ({list.length < total ? `${list.length} of ${total}` : total})
      </h3>
      <table>
        <thead>
          <tr>
            <th scope="col">Symbol</th>
            <th scope="col">Kind</th>
            <th scope="col">As written</th>
            <th scope="col">Outcome</th>
            <th scope="col">Site</th>
          </tr>
        </thead>
        <tbody>
          {list.map((r, i) => (
            <tr key={i}>
              <td>
                {r.symbol ? (
                  <button type="button" class="link" onClick={() => onOpen(r.symbol as string)}>
                    {r.symbol}
                  </button>
                ) : (
                  '—'
                )}
              </td>
              <td>{r.kind}</td>
              <td>
                <code>{r.text}</code>
              </td>
              <td>
                {r.outcome}
                {r.reason ? ` (${r.reason})` : ''}
                {r.candidates?.length ? `: ${r.candidates.join(', ')}` : ''}
              </td>
              <td>
                <Name>{r.site.citation}</Name>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  )
}
