import { useState } from 'preact/hooks'
import { api, type Finding } from '../api.js'
import { describe, Failure, Section, useLoad, when } from '../util.js'

const size = (n: number) => (n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} B`)

/**
 * Status with the size breakdown, doctor's findings with their fixes (on request: doctor re-hashes
 * every original, seconds on a large corpus), snapshots (retention).
 */
export function Operations({ project }: { project: string }) {
  const status = useLoad(() => api.status(project), [project])
  const sizes = useLoad(() => api.sizes(project), [project])
  const snapshots = useLoad(() => api.snapshots(project), [project])
  const s = status.value
  return (
    <div>
      <h1>Operations</h1>
      <Failure error={status.error ?? sizes.error ?? snapshots.error} />
      {s && (
        <Section title="Status">
          <dl class="receipt">
            <dt>Profile</dt>
            <dd>
              {s.profile} · schema {s.schema_version} · engine {s.engine_version}
            </dd>
            <dt>Counts</dt>
            <dd>
              {Object.entries(s.counts)
                .map(([k, v]) => `${v} ${k}`)
                .join(' · ')}
            </dd>
            <dt>On disk</dt>
            <dd>
              corpus {size(s.bytes.corpus)} · artifacts {size(s.bytes.artifacts)} · indexes {size(s.bytes.indexes)} (lexical {size(s.bytes.lexical)}, vectors {size(s.bytes.vectors)})
            </dd>
          </dl>
        </Section>
      )}
      {sizes.value && (
        <Section title="corpus.sqlite3 by table">
          <p class="muted">measured {when(sizes.value.measured_at)} (again after each job, and at most once a minute)</p>
          <table>
            <thead>
              <tr>
                <th scope="col">Table</th>
                <th scope="col">Size</th>
              </tr>
            </thead>
            <tbody>
              {sizes.value.tables.map((t) => (
                <tr key={t.table}>
                  <td>{t.table}</td>
                  <td>{size(t.bytes)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </Section>
      )}
      <Doctor project={project} />
      {snapshots.value && (
        <Section title="Snapshots (retention keeps these)">
          <table>
            <thead>
              <tr>
                <th scope="col">Id</th>
                <th scope="col">Job</th>
                <th scope="col">Sources</th>
                <th scope="col">Chunks</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {snapshots.value.snapshots.map((x) => (
                <tr key={x.id}>
                  <td>
                    {x.id}
                    {x.current ? ' (current)' : ''}
                  </td>
                  <td>{x.job_id ?? '—'}</td>
                  <td>{x.sources}</td>
                  <td>{x.chunks}</td>
                  <td>{when(x.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </Section>
      )}
    </div>
  )
}

/** Doctor's findings, run when asked: it re-hashes every original. */
function Doctor({ project }: { project: string }) {
  const [findings, setFindings] = useState<Finding[]>()
  const [error, setError] = useState<string>()
  const [running, setRunning] = useState(false)
  const run = () => {
    setRunning(true)
    setError(undefined)
    api
      .doctor(project)
      .then(
        (r) => setFindings(r.findings),
        (e: unknown) => setError(describe(e)),
      )
      .finally(() => setRunning(false))
  }
  return (
    <Section title="Doctor">
      <p>
        <button type="button" onClick={run} disabled={running}>
          {running ? 'Checking…' : findings ? 'Run doctor again' : 'Run doctor'}
        </button>{' '}
        <span class="muted">re-hashes every original and checks every snapshot against its index</span>
      </p>
      <Failure error={error} />
      {findings && (
        <table class="doctor">
          <thead>
            <tr>
              <th scope="col">Check</th>
              <th scope="col">Status</th>
              <th scope="col">Detail</th>
              <th scope="col">Fix</th>
            </tr>
          </thead>
          <tbody>
            {findings.map((f) => (
              <tr key={f.check}>
                <td>{f.check}</td>
                <td>
                  <span class={`status ${f.status}`}>{f.status}</span>
                </td>
                <td>{f.detail}</td>
                <td>{f.fix}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Section>
  )
}
