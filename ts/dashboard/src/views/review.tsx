import { useState } from 'preact/hooks'
import { type Migration, type PendingReview, api } from '../api.js'
import { Failure, Name, Shown, describe, useLoad } from '../util.js'

/** A knowledge project's pending proposals with their diff, evidence and checks; a person accepts or rejects. */
export function Review(_: { project: string }) {
  const { value, error, reload } = useLoad(() => api.reviews(), [])
  const [done, setDone] = useState<Migration[]>([])
  return (
    <div>
      <h1>Knowledge review</h1>
      <Failure error={error} />
      {value && !value.enabled && <p>This daemon serves no knowledge project: run `tychora serve` inside one to review its proposals here.</p>}
      {done.map((m) => (
        <p key={m.id} class="decided" role="status">
          {m.decision}: migrations/{m.id}.json — commit it, then run `tychora migrate apply`
        </p>
      ))}
      {value?.enabled && value.reviews.length === 0 && <p>No proposal waits for review.</p>}
      {value?.unreadable.map((name) => (
        <p key={name} class="warning">
          proposals/<Name>{name}</Name> is not a valid proposal (left as it is)
        </p>
      ))}
      {value?.reviews.map((r) => (
        <Proposal
          key={r.proposal.id}
          review={r}
          onDecided={(m) => {
            setDone((now) => [m, ...now])
            reload()
          }}
        />
      ))}
    </div>
  )
}

function Proposal({ review, onDecided }: { review: PendingReview; onDecided: (m: Migration) => void }) {
  const { proposal, diff, checks } = review
  const [reason, setReason] = useState('')
  const [allowStale, setAllowStale] = useState(false)
  const [error, setError] = useState<string>()
  const [pending, setPending] = useState(false)
  const change = proposal.change
  const decide = async (decision: 'accept' | 'reject') => {
    setError(undefined)
    setPending(true)
    try {
      onDecided((await api.decide(proposal.id, decision, reason, allowStale)).migration)
    } catch (e) {
      setError(describe(e))
    } finally {
      setPending(false)
    }
  }
  const reasonId = `reason-${proposal.id}`
  return (
    <article class="proposal" aria-label={`Proposal ${proposal.id}`}>
      <h2>
        {change.op} <Name>{change.item}</Name>
        {'title' in change && change.title ? (
          <>
            {' '}
            — <Name>{change.title}</Name>
          </>
        ) : null}
      </h2>
      <p class="muted">
        <code>{proposal.id}</code> · {proposal.created_at} · by <Name>{proposal.proposed_by.agent ?? 'unknown agent'}</Name>
        {proposal.proposed_by.task ? (
          <>
            {' '}
            / <Name>{proposal.proposed_by.task}</Name>
          </>
        ) : null}
      </p>
      <h3>Rationale</h3>
      <pre class="text">
        <Shown text={proposal.rationale} />
      </pre>
      <h3>Checks</h3>
      <ul class="checks">
        {checks.map((c) => (
          <li key={c.check}>
            <span class={`status ${c.ok ? 'ok' : 'fail'}`}>{c.ok ? 'ok' : 'fails'}</span> {c.check}: {c.detail}
          </li>
        ))}
      </ul>
      <h3>Change</h3>
      <pre class="code diff-lines">
        {diff.map((line, i) => (
          <span key={i} class={`line ${line.op === '+' ? 'add' : line.op === '-' ? 'del' : ''}`}>
            <span class="ln" aria-hidden="true">
              {line.op}
            </span>
            <Shown text={line.text} />
            {'\n'}
          </span>
        ))}
      </pre>
      <h3>Evidence ({proposal.evidence.length})</h3>
      <ul>
        {proposal.evidence.map((e) => (
          <li key={e.segment_id}>
            <code>{e.segment_id}</code> <Name>{e.citation}</Name> {review.stale_evidence.includes(e.segment_id) && <span class="flag">no longer in the current state</span>}
            <pre class="text">
              <Shown text={e.quote} />
            </pre>
          </li>
        ))}
      </ul>
      <div class="decide">
        <label for={reasonId}>Reason (required to reject)</label>
        <textarea id={reasonId} rows={2} value={reason} onInput={(e) => setReason((e.target as HTMLTextAreaElement).value)} />
        {review.stale_evidence.length > 0 && (
          <label class="check">
            <input type="checkbox" checked={allowStale} onChange={() => setAllowStale(!allowStale)} /> accept although cited evidence changed
          </label>
        )}
        <div class="actions">
          <button type="button" class="accept" onClick={() => decide('accept')} disabled={pending}>
            Accept
          </button>
          <button type="button" class="reject" onClick={() => decide('reject')} disabled={pending || !reason.trim()}>
            Reject
          </button>
        </div>
        <Failure error={error} />
      </div>
    </article>
  )
}
