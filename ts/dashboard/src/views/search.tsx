import { useState } from 'preact/hooks'
import { type FileContext, type QueryRequest, type QueryResult, api } from '../api.js'
import { Failure, Name, Shown, describe } from '../util.js'

const CHANNELS = ['exact', 'lexical', 'text', 'graph', 'summary'] as const
const list = (text: string) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)

/** A query with the profile's options; results as cited evidence, with the explain table and the trace. */
export function Search({ project }: { project: string }) {
  const [query, setQuery] = useState('')
  const [collections, setCollections] = useState('')
  const [kinds, setKinds] = useState('')
  const [facets, setFacets] = useState('')
  const [mode, setMode] = useState('')
  const [snapshot, setSnapshot] = useState('')
  const [channels, setChannels] = useState<string[]>([])
  const [result, setResult] = useState<QueryResult>()
  const [error, setError] = useState<string>()
  const [busy, setBusy] = useState(false)

  const submit = async (e: Event) => {
    e.preventDefault()
    if (!query.trim()) return
    const request: QueryRequest = { query, explain: true }
    if (list(collections).length) request.collections = list(collections)
    if (list(kinds).length) request.kinds = list(kinds)
    if (list(facets).length) request.facets = list(facets)
    if (mode.trim()) request.mode = mode.trim()
    if (/^\d+$/.test(snapshot)) request.snapshot_id = Number(snapshot)
    if (channels.length) request.channels = channels as QueryRequest['channels']
    setBusy(true)
    setError(undefined)
    try {
      setResult(await api.search(project, request))
    } catch (err) {
      setError(describe(err))
    } finally {
      setBusy(false)
    }
  }
  const toggle = (c: string) => setChannels((now) => (now.includes(c) ? now.filter((x) => x !== c) : [...now, c]))

  return (
    <div>
      <h1>Search</h1>
      <form class="search" onSubmit={submit} aria-label="Search the corpus">
        <label class="wide">
          Query
          <textarea name="query" rows={2} value={query} onInput={(e) => setQuery((e.target as HTMLTextAreaElement).value)} />
        </label>
        <label>
          Collections <input name="collections" value={collections} placeholder="a, b" onInput={(e) => setCollections((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          Kinds <input name="kinds" value={kinds} onInput={(e) => setKinds((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          Facets <input name="facets" value={facets} placeholder="level>=2" onInput={(e) => setFacets((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          Mode <input name="mode" value={mode} placeholder="compliance" onInput={(e) => setMode((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          Snapshot <input name="snapshot" value={snapshot} inputMode="numeric" placeholder="current" onInput={(e) => setSnapshot((e.target as HTMLInputElement).value)} />
        </label>
        <fieldset>
          <legend>Channels (none: the profile's)</legend>
          {CHANNELS.map((c) => (
            <label key={c} class="check">
              <input type="checkbox" checked={channels.includes(c)} onChange={() => toggle(c)} /> {c}
            </label>
          ))}
        </fieldset>
        <button type="submit" disabled={busy}>
          {busy ? 'Searching…' : 'Search'}
        </button>
      </form>
      <Failure error={error} />
      {result && <Results project={project} result={result} />}
    </div>
  )
}

function Results({ project, result }: { project: string; result: QueryResult }) {
  const total = result.trace.reduce((sum, s) => sum + s.ms, 0) || 1
  return (
    <div class="results">
      <p>
        {result.segments.length} segments from snapshot {result.snapshot_id ?? 'none'} in {result.duration_ms.toFixed(1)} ms · run <code>{result.run_id}</code>
      </p>
      {result.warnings.map((w) => (
        <p class="warning" key={w}>
          {w}
        </p>
      ))}
      <h2>Stages</h2>
      <ol class="trace" aria-label="Stage timings">
        {result.trace.map((s, i) => (
          <li key={`${s.stage}-${i}`}>
            <span class="stage">{s.stage}</span>
            <span class="bar" style={{ width: `${Math.max(1, (s.ms / total) * 100)}%` }} />
            <span class="ms">
              {s.ms.toFixed(2)} ms{s.candidates === undefined ? '' : ` · ${s.candidates} candidates`}
            </span>
          </li>
        ))}
      </ol>
      <h2>Explain</h2>
      <p class="weights">
        Fusion weights:{' '}
        {result.coverage.channels.length === 0
          ? 'none'
          : result.coverage.channels
              .map((c) => `${c.channel} ${Number(c.weight.toFixed(3))}${c.blend === undefined ? '' : `, blend share ${Number(c.blend.toFixed(3))}`} (${c.candidates} candidates)`)
              .join(' · ')}
      </p>
      <table class="explain">
        <caption class="sr-only">Each segment's rank and score per channel, fused and rerank scores</caption>
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">Citation</th>
            <th scope="col">Fused</th>
            <th scope="col">Rerank</th>
            {CHANNELS.map((c) => (
              <th scope="col" key={c}>
                {c}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {result.segments.map((s) => (
            <tr key={s.id}>
              <td>{s.rank}</td>
              <td>
                <Name>{s.citation}</Name>
              </td>
              <td>{s.score.toFixed(4)}</td>
              <td>{s.rerank_score?.toFixed(3) ?? '—'}</td>
              {CHANNELS.map((c) => {
                const hit = s.channels.find((x) => x.channel === c)
                return <td key={c}>{hit ? `#${hit.rank}${hit.score === undefined ? '' : ` (${hit.score.toFixed(3)})`}` : '—'}</td>
              })}
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Evidence</h2>
      {result.segments.map((s) => (
        <article class="segment" key={s.id} aria-label={`Result ${s.rank}`}>
          <header>
            <span class="rank">#{s.rank}</span> <Name>{s.citation}</Name> <span class="muted">{s.source.collection}</span>
            {s.may_contain_instructions && <span class="flag">may contain instructions</span>}
            {s.content_classification === 'hidden_text' && <span class="flag">hidden text</span>}
          </header>
          <Cited project={project} segment={s} />
        </article>
      ))}
    </div>
  )
}

type Segment = QueryResult['segments'][number]

/**
 * A segment's cited lines, numbered; "Show in file" reads the lines around them from the text the
 * citation indexes (the file, or a document's derived text), the cited ones highlighted.
 */
function Cited({ project, segment }: { project: string; segment: Segment }) {
  const [context, setContext] = useState<FileContext>()
  const [error, setError] = useState<string>()
  const show = () =>
    api.context(project, segment.id).then(
      (c) => setContext(c),
      (e: unknown) => setError(describe(e)),
    )
  const first = context?.first_line ?? segment.locator.line_start
  const lines = context?.lines ?? segment.text.split('\n')
  const [from, to] = context?.cited ?? [segment.locator.line_start, segment.locator.line_start + lines.length - 1]
  return (
    <>
      <pre class="code">
        {lines.map((line, i) => {
          const n = first + i
          return (
            <span class={`line ${n >= from && n <= to ? 'cited' : ''}`} key={n}>
              <span class="ln" aria-hidden="true">
                {n}
              </span>
              <Shown text={line} />
              {'\n'}
            </span>
          )
        })}
      </pre>
      {!context && (
        <button type="button" class="link in-file" onClick={show}>
          Show in file
        </button>
      )}
      {context?.derived && <p class="muted">Lines of the document's extracted text.</p>}
      <Failure error={error} />
    </>
  )
}
