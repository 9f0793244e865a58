import { useState } from 'preact/hooks'
import { type ReplayDiff, api } from '../api.js'
import { Failure, Name, Panel, describe, useLoad, when } from '../util.js'

/** Every recorded run with its request, scope, snapshot, results and trace; replay with the diff. */
export function History({ project }: { project: string }) {
  const [before, setBefore] = useState<string>()
  const [open, setOpen] = useState<string>()
  const { value, error } = useLoad(() => api.runs(project, before), [project, before])
  return (
    <div class="split">
      <div>
        <h1>Retrieval history</h1>
        <Failure error={error} />
        <table class="runs">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Query</th>
              <th scope="col">Results</th>
              <th scope="col">Snapshot</th>
              <th scope="col">ms</th>
            </tr>
          </thead>
          <tbody>
            {value?.runs.map((r) => (
              <tr key={r.id} aria-selected={open === r.id}>
                <td>{when(r.created_at)}</td>
                <td>
                  <button type="button" class="link" onClick={() => setOpen(r.id)}>
                    {r.query.length > 120 ? `${r.query.slice(0, 120)}…` : r.query}
                  </button>
                </td>
                <td>{r.results}</td>
                <td>{r.snapshot_id ?? 'purged'}</td>
                <td>{r.duration_ms.toFixed(1)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <div class="pager">
          <button type="button" disabled={before === undefined} onClick={() => setBefore(undefined)}>
            Newest
          </button>
          <button type="button" disabled={!value?.next_before} onClick={() => setBefore(value?.next_before ?? undefined)}>
            Older
          </button>
        </div>
      </div>
      {open && <Run project={project} id={open} onClose={() => setOpen(undefined)} />}
    </div>
  )
}

function Run({ project, id, onClose }: { project: string; id: string; onClose: () => void }) {
  const { value, error } = useLoad(() => api.run(project, id), [project, id])
  const [diff, setDiff] = useState<ReplayDiff>()
  const [replayError, setReplayError] = useState<string>()
  const replay = async (on: 'recorded' | 'current') => {
    setReplayError(undefined)
    try {
      setDiff(await api.replay(project, id, on))
    } catch (e) {
      setReplayError(describe(e))
    }
  }
  return (
    <Panel label={`Run ${id}`} title={id} onClose={onClose}>
      <Failure error={error} />
      {value && (
        <>
          <p>
            {when(value.created_at)} · snapshot {value.snapshot_id ?? 'purged'} · {value.duration_ms.toFixed(1)} ms · {value.summary.returned} results
          </p>
          <div class="actions">
            <button type="button" onClick={() => replay('recorded')} disabled={value.snapshot_id === null}>
              Replay on its snapshot
            </button>
            <button type="button" onClick={() => replay('current')}>
              Replay on the current snapshot
            </button>
          </div>
          <Failure error={replayError} />
          {diff && <Diff diff={diff} />}
          <h3>Request</h3>
          <pre class="text">{JSON.stringify(Object.fromEntries(Object.entries(value.request).filter(([, v]) => v !== null && !(Array.isArray(v) && v.length === 0))), null, 2)}</pre>
          <h3>Results</h3>
          <ol>
            {value.summary.segments.map((s, i) => (
              <li key={s}>
                <code>{s}</code> <Name>{value.summary.citations?.[i] ?? ''}</Name>
              </li>
            ))}
          </ol>
          <h3>Trace</h3>
          <ul>
            {(value.summary.trace ?? []).map((t, i) => (
              <li key={i}>
                {t.stage}: {t.ms.toFixed(2)} ms{t.candidates === undefined ? '' : ` · ${t.candidates} candidates`}
              </li>
            ))}
          </ul>
        </>
      )}
    </Panel>
  )
}

function Diff({ diff }: { diff: ReplayDiff }) {
  return (
    <section class="diff" aria-label="Replay diff">
      <h3>
        Replayed on snapshot {diff.snapshot_id ?? 'none'} as <code>{diff.replay_run_id}</code>
      </h3>
      <p class={diff.same ? 'same' : 'changed'}>{diff.same ? `The same ${diff.after.length} results in the same order` : 'Results differ'}</p>
      <ul>
        {diff.added.map((id) => (
          <li key={`+${id}`} class="added">
            + <code>{id}</code> <Name>{diff.after_citations[diff.after.indexOf(id)] ?? ''}</Name>
          </li>
        ))}
        {diff.removed.map((id) => (
          <li key={`-${id}`} class="removed">
            − <code>{id}</code> <Name>{diff.before_citations[diff.before.indexOf(id)] ?? ''}</Name>
          </li>
        ))}
        {diff.moved.map((id) => (
          <li key={`~${id}`} class="moved">
            ~ <code>{id}</code> now rank {diff.after.indexOf(id) + 1}
          </li>
        ))}
      </ul>
    </section>
  )
}
