import { useEffect, useState } from 'preact/hooks'
import { type JobStatus, api, streamEvents } from '../api.js'
import { Failure, Name, describe, useLoad, when } from '../util.js'

/** Jobs live from the daemon's job queue (server-sent events), each with its receipt; start a sync. */
export function Jobs({ project }: { project: string }) {
  const { value, error, reload } = useLoad(() => api.jobs(project), [project])
  const [jobs, setJobs] = useState<JobStatus[]>([])
  const [live, setLive] = useState<Record<number, string>>({})
  // Older pages, by the cursor the last page gave (null once none is left).
  const [older, setOlder] = useState<number | null | undefined>()
  const next = older === undefined ? value?.next_before : older
  const more = () =>
    next &&
    api.jobs(project, next).then(
      (page) => {
        setJobs((now) => merge(now, page.jobs))
        setOlder(page.next_before)
      },
      (e: unknown) => setMessage(describe(e)),
    )
  const [path, setPath] = useState('')
  const [message, setMessage] = useState<string>()
  // The list as read, merged with what the stream said since: a job's newer status wins.
  useEffect(() => {
    if (value) setJobs((now) => merge(value.jobs, now))
  }, [value])
  const [streamError, setStreamError] = useState<string>()
  useEffect(() => {
    const stop = new AbortController()
    streamEvents(
      api.eventsUrl(project),
      (event, data) => {
        if (event === 'job') {
          const { status } = data as { status: JobStatus }
          setJobs((now) => merge(now, [status]))
        } else if (event === 'progress') {
          const { job_id, progress } = data as { job_id: number; progress: { phase: string; done: number; total: number } }
          setLive((now) => ({ ...now, [job_id]: `${progress.phase} ${progress.done}/${progress.total}` }))
        }
      },
      stop.signal,
    ).catch((e: unknown) => {
      if (!stop.signal.aborted) setStreamError(`live updates stopped: ${describe(e)}`)
    })
    return () => stop.abort()
  }, [project])

  const sync = async (e: Event) => {
    e.preventDefault()
    if (!path.trim()) return
    try {
      const job = await api.sync(project, [path.trim()])
      setMessage(`queued job ${job.job_id}`)
    } catch (err) {
      setMessage(describe(err))
    }
  }

  return (
    <div>
      <h1>Ingestion</h1>
      <form class="inline" onSubmit={sync} aria-label="Sync a root">
        <label>
          Root or file to sync <input name="path" value={path} placeholder="/path/to/docs" onInput={(e) => setPath((e.target as HTMLInputElement).value)} />
        </label>
        <button type="submit">Sync</button>
        {message && <output>{message}</output>}
      </form>
      <Failure error={error ?? streamError} />
      <button type="button" onClick={reload}>
        Refresh
      </button>
      <ul class="jobs">
        {jobs.map((job) => (
          <li key={job.id}>
            <Job project={project} job={job} progress={live[job.id]} />
          </li>
        ))}
      </ul>
      {next ? (
        <button type="button" onClick={more}>
          Older jobs
        </button>
      ) : null}
    </div>
  )
}

function Job({ project, job, progress }: { project: string; job: JobStatus; progress: string | undefined }) {
  const receipt = job.receipt
  const diagnostics = receipt?.diagnostics ?? []
  const byCode = new Map<string, typeof diagnostics>()
  for (const d of diagnostics) byCode.set(d.code, [...(byCode.get(d.code) ?? []), d])
  const running = progress ?? (job.progress ? `${job.progress.phase} ${job.progress.done}/${job.progress.total}` : undefined)
  return (
    <details open={job.status === 'running' || job.status === 'queued'} class="job">
      <summary>
        <span class={`status ${job.status}`}>{job.status}</span> job {job.id} · {job.kind} · {when(job.created_at)}
        {job.status === 'running' && running ? ` · ${running}` : ''}
      </summary>
      {job.status === 'queued' && <CancelJob project={project} job={job} />}
      {job.error && <p class={job.status === 'cancelled' ? 'muted' : 'error'}>{job.error}</p>}
      {receipt && (
        <dl class="receipt">
          <dt>Files</dt>
          <dd>
            {receipt.files.scanned} scanned · {receipt.files.added} added · {receipt.files.changed} changed · {receipt.files.removed} removed · {receipt.files.unchanged} unchanged ·{' '}
            {receipt.files.skipped} skipped · {receipt.files.failed} failed
          </dd>
          <dt>Snapshot</dt>
          <dd>
            {receipt.snapshot_id ?? 'none'} {receipt.published ? '(published)' : '(not published)'} · {receipt.units} units · {receipt.chunks} chunks · {receipt.duration_ms.toFixed(0)} ms
          </dd>
          {receipt.embedding && (
            <>
              <dt>Embedding</dt>
              <dd>
                {receipt.embedding.embedded} embedded of {receipt.embedding.inputs} · {receipt.embedding.tokens_embedded} tokens · {receipt.embedding.calls} calls
              </dd>
            </>
          )}
        </dl>
      )}
      {receipt && <Paths title="Added" paths={receipt.added} />}
      {receipt && <Paths title="Changed" paths={receipt.changed} />}
      {receipt && <Paths title="Removed" paths={receipt.removed} />}
      {[...byCode].map(([code, list]) => (
        <details key={code} class="diagnostics">
          <summary>
            {code} ({list.length})
          </summary>
          <ul>
            {list.map((d, i) => (
              <li key={i}>
                <span class={`level ${d.level}`}>{d.level}</span> <Name>{d.path}</Name> {d.message}
              </li>
            ))}
          </ul>
        </details>
      ))}
      {receipt && receipt.excluded.length > 0 && (
        <table class="exclusions">
          <caption>Left out by rule</caption>
          <thead>
            <tr>
              <th scope="col">Rule</th>
              <th scope="col">Entries</th>
              <th scope="col">First</th>
            </tr>
          </thead>
          <tbody>
            {receipt.excluded.map((x) => (
              <tr key={x.rule}>
                <td>
                  <Name>{x.rule}</Name>
                </td>
                <td>{x.count}</td>
                <td>
                  <Name>{x.example}</Name>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </details>
  )
}

function Paths({ title, paths }: { title: string; paths: string[] }) {
  if (paths.length === 0) return null
  return (
    <details>
      <summary>
        {title} ({paths.length})
      </summary>
      <ul class="paths">
        {paths.map((p) => (
          <li key={p}>
            <Name>{p}</Name>
          </li>
        ))}
      </ul>
    </details>
  )
}

/** Cancels a job that has not started (a running one stops only at its safe points, so it cannot be). */
function CancelJob({ project, job }: { project: string; job: JobStatus }) {
  const [error, setError] = useState<string>()
  return (
    <p>
      <button
        type="button"
        onClick={() =>
          api.cancel(project, job.id).then(
            () => setError(undefined),
            (e: unknown) => setError(describe(e)),
          )
        }
      >
        Cancel job {job.id}
      </button>
      {error && <span class="error"> {error}</span>}
    </p>
  )
}

/** Jobs by id, newest first; where both lists hold a job, the later status wins (a finished job never goes back to running). */
function merge(a: JobStatus[], b: JobStatus[]): JobStatus[] {
  const rank = (j: JobStatus) => (j.status === 'queued' ? 0 : j.status === 'running' ? 1 : 2)
  const byId = new Map<number, JobStatus>()
  for (const job of [...a, ...b]) {
    const had = byId.get(job.id)
    if (!had || rank(job) >= rank(had)) byId.set(job.id, job)
  }
  return [...byId.values()].sort((x, y) => y.id - x.id)
}
