import { afterEach, describe, expect, it, vi } from 'vitest'
import type { Receipt } from '../../ts/contracts/ingest.js'
import { JobRunner } from '../../ts/engine/job-runner.js'

describe('the job runner', () => {
  afterEach(() => vi.restoreAllMocks())

  it('says in one escaped line what it survives, and goes on with the queue', async () => {
    const lines: string[] = []
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk))
      return true
    })
    const ran: number[] = []
    const runner = new JobRunner(async (id) => {
      ran.push(id)
      if (id === 1) throw new Error('cannot read \u001b[31mred.md\nsecond line')
      return {} as Receipt
    })
    // The queue as the database holds it: a job leaves it once it ran (failed or not).
    const queue = [1, 2]
    runner.source(async () => queue.filter((id) => !ran.includes(id)))
    runner.maintain(async () => {
      throw new Error('compaction: disk full')
    })
    runner.kick()
    await runner.idle()
    expect(ran).toEqual([1, 2])
    expect(lines).toContain('tychora: job 1 failed: cannot read \\x1b[31mred.md\\x0asecond line\n')
    expect(lines).toContain('tychora: maintenance after the queue drained failed: compaction: disk full\n')
    expect(lines.every((l) => l.endsWith('\n') && !l.slice(0, -1).includes('\n'))).toBe(true)
  })

  it('reads the queue again after each job: one cancelled while another ran is never taken', async () => {
    const queue = new Set([1, 2, 3])
    const ran: number[] = []
    const runner = new JobRunner(async (id) => {
      ran.push(id)
      queue.delete(id)
      if (id === 1) queue.delete(2) // the owner cancels job 2 while job 1 runs
      return {} as Receipt
    })
    runner.source(async () => [...queue])
    const events: string[] = []
    runner.watch((e) => events.push(`${e.phase} ${e.job_id}`))
    runner.kick()
    await runner.idle()
    expect(ran).toEqual([1, 3])
    expect(events).toEqual(['started 1', 'finished 1', 'started 3', 'finished 3'])
  })

  it('says so when the queue cannot be read, and stops draining', async () => {
    const lines: string[] = []
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk))
      return true
    })
    const runner = new JobRunner(async () => ({}) as Receipt)
    runner.source(async () => {
      throw new Error('database is locked')
    })
    runner.kick()
    await runner.idle()
    expect(lines).toEqual(['tychora: reading the job queue failed: database is locked\n'])
  })
})
