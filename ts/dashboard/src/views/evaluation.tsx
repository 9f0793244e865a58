import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import uPlot from 'uplot'
import 'uplot/dist/uPlot.min.css'
import { type EvalRecord, type EvalRecordList, api } from '../api.js'
import { Failure, Name, useLoad, when } from '../util.js'

type Brief = EvalRecordList['records'][number]
type Query = EvalRecord['per_query'][number]

/** Metrics that are quality (higher is better); timings and counts are listed, not plotted first. */
const PREFERRED = ['ndcg@10', 'accuracy@1', 'mrr@10', 'recall@100', 'recall@10', 'forbidden@10']

/**
 * Every `tychora eval … --record` report the workspace keeps: one metric of one set plotted over
 * time, the runs in a table, and a run's queries with what was expected and what came back.
 */
export function Evaluation({ project }: { project: string }) {
  const { value, error } = useLoad(() => api.evals(project), [project])
  const records = value?.records ?? []
  const sets = [...new Set(records.map((r) => `${r.kind}:${r.set}`))]
  const [set, setSet] = useState<string>()
  const current = set ?? sets[0]
  const ofSet = records.filter((r) => `${r.kind}:${r.set}` === current).sort((a, b) => a.created_at - b.created_at)
  const metrics = [...new Set(ofSet.flatMap((r) => Object.keys(r.metrics)))].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))
  const [metric, setMetric] = useState<string>()
  const shown = metric && metrics.includes(metric) ? metric : metrics[0]
  const [open, setOpen] = useState<string>()
  return (
    <div>
      <h1>Evaluation</h1>
      <Failure error={error} />
      {value && records.length === 0 && <p>No evaluation is recorded in this workspace yet: run `tychora eval … --record -w {'<workspace>'}`.</p>}
      {value?.skipped.map((s) => (
        <p key={s.file} class="warning">
          evals/<Name>{s.file}</Name>: {s.reason}
        </p>
      ))}
      {records.length > 0 && (
        <form class="inline" aria-label="What to plot" onSubmit={(e) => e.preventDefault()}>
          <label>
            Set
            <select value={current} onChange={(e) => setSet((e.target as HTMLSelectElement).value)}>
              {sets.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          </label>
          <label>
            Metric
            <select value={shown} onChange={(e) => setMetric((e.target as HTMLSelectElement).value)}>
              {metrics.map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
            </select>
          </label>
        </form>
      )}
      {shown && ofSet.length > 0 && <Chart records={ofSet} metric={shown} />}
      {ofSet.length > 0 && (
        <table class="evals">
          <caption>Runs of {current}, newest first</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">{shown}</th>
              <th scope="col">Commit</th>
              <th scope="col">Version</th>
              <th scope="col">Settings</th>
            </tr>
          </thead>
          <tbody>
            {[...ofSet].reverse().map((r) => (
              <tr key={r.id} aria-selected={open === r.id}>
                <td>
                  <button type="button" class="link" onClick={() => setOpen(r.id)}>
                    {when(r.created_at)}
                  </button>
                </td>
                <td>{shown && r.metrics[shown] !== undefined ? (r.metrics[shown] as number).toFixed(4) : '—'}</td>
                <td>
                  <code>{r.git_commit?.slice(0, 10) ?? '—'}</code>
                </td>
                <td>{r.engine_version}</td>
                <td>
                  <code>{JSON.stringify(r.settings)}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {open && <Run project={project} id={open} />}
    </div>
  )
}

const rank = (metric: string) => {
  const at = PREFERRED.indexOf(metric)
  return at === -1 ? PREFERRED.length : at
}

/** The metric over time (uPlot, drawn on a canvas: its text is in the table beside it). */
function Chart({ records, metric }: { records: Brief[]; metric: string }) {
  const box = useRef<HTMLDivElement>(null)
  useEffect(() => {
    const el = box.current
    if (!el) return
    const xs = records.map((r) => r.created_at / 1000)
    const ys = records.map((r) => r.metrics[metric] ?? null)
    const plot = new uPlot(
      {
        width: Math.min(900, el.clientWidth || 900),
        height: 260,
        scales: { x: { time: true } },
        series: [{}, { label: metric, stroke: '#0550ae', width: 2, points: { show: true, size: 6 } }],
        axes: [{}, { label: metric }],
      },
      [xs, ys],
      el,
    )
    return () => plot.destroy()
  }, [records, metric])
  return <figure class="chart" ref={box} aria-label={`${metric} over time`} />
}

function Run({ project, id }: { project: string; id: string }) {
  const { value, error } = useLoad(() => api.evalRecord(project, id), [project, id])
  const [only, setOnly] = useState<'all' | 'misses'>('misses')
  const queries = useMemo(() => (value?.per_query ?? []).filter((q) => only === 'all' || missed(q)), [value, only])
  return (
    <section aria-label={`Run ${id}`}>
      <h2>
        Run <code>{id}</code>
      </h2>
      <Failure error={error} />
      {value && (
        <>
          <p>
            {value.kind} · {value.set}
            {value.split ? ` (${value.split})` : ''} · {value.per_query.length} queries{value.per_query_truncated ? ' (truncated)' : ''}
          </p>
          <dl class="receipt">
            {Object.entries(value.metrics).map(([k, v]) => (
              <div key={k} class="metric">
                <dt>{k}</dt>
                <dd>{Number.isInteger(v) ? v : v.toFixed(4)}</dd>
              </div>
            ))}
          </dl>
          <label class="check">
            <input type="checkbox" checked={only === 'misses'} onChange={() => setOnly(only === 'misses' ? 'all' : 'misses')} /> only queries whose first result is not expected
          </label>
          <table class="queries">
            <thead>
              <tr>
                <th scope="col">Query</th>
                <th scope="col">Metrics</th>
                <th scope="col">Expected</th>
                <th scope="col">Returned (rank, channels)</th>
              </tr>
            </thead>
            <tbody>
              {queries.slice(0, 200).map((q) => (
                <tr key={q.id}>
                  <td>
                    <code>{q.id}</code> {q.query}
                  </td>
                  <td>
                    {Object.entries(q.metrics)
                      .map(([k, v]) => `${k} ${v.toFixed(3)}`)
                      .join(' · ')}
                  </td>
                  <td>
                    {q.expected.map((e, i) => (
                      <div key={i}>{'doc' in e ? e.doc : `${e.path}:${e.lines[0]}-${e.lines[1]}`}</div>
                    ))}
                  </td>
                  <td>
                    <ol>
                      {q.returned.map((r) => (
                        <li key={r.rank} class={(r.relevance ?? 0) > 0 ? 'hit' : undefined}>
                          {'doc' in r ? r.doc : <Name>{r.citation}</Name>}
                          {r.channels?.length ? <span class="muted"> ({r.channels.map((c) => `${c.channel} #${c.rank}`).join(', ')})</span> : null}
                        </li>
                      ))}
                    </ol>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {queries.length > 200 && <p class="muted">The first 200 of {queries.length} shown.</p>}
        </>
      )}
    </section>
  )
}

/** Its first result is not one it expected. */
const missed = (q: Query) => !((q.returned[0]?.relevance ?? 0) > 0)
