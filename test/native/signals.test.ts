import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { AddPlanSchema } from '../../ts/contracts/ingest.js'
import { WithdrawReportSchema } from '../../ts/contracts/operations.js'
import { QueryResultSchema } from '../../ts/contracts/result.js'
import { cli, nativeMissing, scratch } from './_setup.js'

/**
 * Issue 32 item 18: signals that were silent or only on stderr are in the output itself — replay
 * honours --snapshot (and replays on the current snapshot with a diff), a knowledge state answering
 * behind its tampered migrations says so in JSON, a dry run names a provider without a key, a
 * failed first add is not mistaken for an empty workspace, and human output prints ISO 8601 times.
 */

interface ReplayDiff {
  snapshot_id: number | null
  recorded_snapshot_id: number | null
  same: boolean
  before: string[]
  after: string[]
  added: string[]
  removed: string[]
}

const ISO_UTC = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z/
/** A time in ms since the epoch (13 digits this century). */
const UNIX_MS = /\b1\d{12}\b/

describe.skipIf(nativeMissing)('signals in the output', () => {
  it('search --replay honours --snapshot, and replays on the current snapshot with a diff by evidence', async () => {
    const { docs, ws } = await scratch()
    expect((await cli(['init', ws])).code).toBe(0)
    expect((await cli(['add', '-w', ws, docs])).code).toBe(0)
    const search = async (...words: string[]) => QueryResultSchema.parse(JSON.parse((await cli(['search', '-w', ws, ...words, '--format', 'json'])).stdout))
    const caching = await search('ETag validator', '--limit', '3')
    const glossary = await search('TERM-REVISION', '--limit', '1')
    expect(caching.snapshot_id).toBe(1)
    // The caching notes change; the glossary does not.
    await writeFile(join(docs, 'http-caching.md'), '# Validators\n\nAn ETag validator is an opaque tag a server sends; a client sends it back in If-None-Match.\n')
    expect((await cli(['add', '-w', ws, docs])).code).toBe(0)
    const replay = async (run: string, ...flags: string[]) => {
      const out = await cli(['search', '--replay', run, ...flags, '-w', ws, '--format', 'json'])
      expect(out.code, out.stderr).toBe(0)
      return JSON.parse(out.stdout) as ReplayDiff
    }
    const recorded = await replay(caching.run_id)
    expect(recorded).toMatchObject({ snapshot_id: 1, same: true })
    const pinned = await replay(caching.run_id, '--snapshot', '2')
    expect(pinned).toMatchObject({ snapshot_id: 2, recorded_snapshot_id: 1, same: false })
    expect(pinned.after.every((id) => id.startsWith('seg_2_'))).toBe(true)
    expect(pinned.added.length).toBeGreaterThan(0)
    expect(pinned.removed.length).toBeGreaterThan(0)
    const current = await replay(caching.run_id, '--snapshot', 'current')
    expect(current).toMatchObject({ snapshot_id: 2, recorded_snapshot_id: 1 })
    expect(current.after).toEqual(pinned.after)
    // Unchanged evidence is the same result on another snapshot, though its segment id names that snapshot.
    const unchanged = await replay(glossary.run_id, '--snapshot', 'current')
    expect(unchanged).toMatchObject({ snapshot_id: 2, same: true, added: [], removed: [] })
    expect(unchanged.after).not.toEqual(unchanged.before)
    const text = await cli(['search', '--replay', caching.run_id, '--snapshot', 'current', '-w', ws])
    expect(text.code).toBe(0)
    expect(text.stdout).toMatch(/^\s+\+ seg_2_/m)
  })

  it('a knowledge state answering behind tampered migrations says so in the JSON warnings', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tychora-signals-'))
    try {
      expect((await cli(['knowledge', 'init'], { cwd: dir })).code).toBe(0)
      const proposed = await cli(
        [
          'knowledge',
          'propose',
          'create',
          'release-freeze',
          '--title',
          'Release freeze',
          '--kind',
          'decision',
          '--body',
          'No releases during the December freeze window.',
          '--rationale',
          'Holidays',
          '--agent',
          'claude',
          '--format',
          'json',
        ],
        { cwd: dir },
      )
      expect(proposed.code, proposed.stderr).toBe(0)
      expect((await cli(['review', 'accept', JSON.parse(proposed.stdout).id as string, '--reviewer', 'ana'], { cwd: dir })).code).toBe(0)
      expect((await cli(['migrate', 'apply'], { cwd: dir })).code).toBe(0)
      const clean = QueryResultSchema.parse(JSON.parse((await cli(['search', 'December freeze window', '--format', 'json'], { cwd: dir })).stdout))
      await appendFile(join(dir, '.tychora/migrations/0001-create-release-freeze.json'), ' ')
      const behind = await cli(['search', 'December freeze window', '--format', 'json'], { cwd: dir })
      expect(behind.code, behind.stderr).toBe(0)
      const result = QueryResultSchema.parse(JSON.parse(behind.stdout))
      expect(result.segments.length).toBeGreaterThan(0)
      expect(result.warnings).toHaveLength(clean.warnings.length + 1)
      const md = await cli(['search', 'December freeze window'], { cwd: dir })
      const added = result.warnings.find((w) => !clean.warnings.includes(w))!
      expect(md.stdout).toContain(`> warning: ${added.slice(0, 20)}`)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('a dry run names a provider without a key, and a failed first add is not an empty workspace', async () => {
    const { dir, docs, ws } = await scratch()
    // No key anywhere: not in the environment, not in a user config.
    const env = { VOYAGE_API_KEY: '', XDG_CONFIG_HOME: join(dir, 'config') }
    expect((await cli(['init', ws, '--embeddings', 'voyage'], { env })).code).toBe(0)
    const plan = await cli(['add', '-w', ws, docs, '--dry-run', '--format', 'json'], { env })
    expect(plan.code, plan.stderr).toBe(0)
    const parsed = AddPlanSchema.parse(JSON.parse(plan.stdout))
    expect(parsed.embedding?.provider).toBe('voyage')
    expect(parsed.warnings).toHaveLength(1)
    const planText = await cli(['add', '-w', ws, docs, '--dry-run'], { env })
    expect(planText.stdout).toMatch(/^\s+warning: /m)

    const failed = await cli(['add', '-w', ws, docs], { env })
    expect(failed.code).not.toBe(0)
    const job = JSON.parse((await cli(['inspect', 'job:1', '-w', ws], { env })).stdout) as { status: string }
    expect(job.status).toBe('failed')
    const status = JSON.parse((await cli(['manage', 'status', '-w', ws, '--format', 'json'], { env })).stdout) as {
      current_snapshot: unknown
      counts: Record<string, number>
    }
    expect(status.current_snapshot).toBeNull()
    const search = await cli(['search', '-w', ws, 'ETag', '--format', 'json'], { env })
    expect(search.code, search.stderr).toBe(0)
    const result = QueryResultSchema.parse(JSON.parse(search.stdout))
    expect(result.snapshot_id).toBeNull()
    // It names the job that did not publish, and how many sources wait for one.
    expect(result.warnings).toHaveLength(1)
    expect(result.warnings[0]).toMatch(/\bjob 1\b/)
    expect(result.warnings[0]).toMatch(/\b3 source/)
  })

  it('human output prints times as ISO 8601 UTC; JSON keeps milliseconds', async () => {
    const { docs, ws } = await scratch()
    expect((await cli(['init', ws])).code).toBe(0)
    expect((await cli(['add', '-w', ws, docs])).code).toBe(0)
    const withdrawn = await cli(['manage', 'withdraw', 'glossary.json', '--reason', 'outdated', '-w', ws, '--format', 'json'])
    expect(withdrawn.code).toBe(0)
    WithdrawReportSchema.parse(JSON.parse(withdrawn.stdout))
    const erased = await cli(['manage', 'delete-original', 'field-notes.txt', '--reason', 'legal request', '-w', ws, '--format', 'json'])
    expect(Number.isInteger(WithdrawReportSchema.parse(JSON.parse(erased.stdout)).erased[0]!.deleted_at)).toBe(true)
    // The next sync skips both, saying since when.
    const sync = await cli(['add', '-w', ws, docs])
    expect(sync.code).toBe(0)
    const skipped = sync.stdout.split('\n').filter((l) => /glossary\.json|field-notes\.txt/.test(l) && / E_FORBIDDEN /.test(l))
    expect(skipped.length).toBeGreaterThan(0)
    for (const line of skipped) {
      expect(line).toMatch(ISO_UTC)
      expect(line).not.toMatch(UNIX_MS)
    }
  })
})
