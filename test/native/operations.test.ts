import { spawn } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { lockOwner, Workspace } from '../../ts/engine/workspace.js'
import { CLI, type CliResult, cli, nativeMissing, scratch } from './_setup.js'

/** The evidence part of a JSON search result: what must be identical after a restore. */
function evidence(stdout: string) {
  const r = JSON.parse(stdout) as {
    snapshot_id: number
    segments: Array<{ id: string; text: string; citation: string; score: number; locator: unknown }>
  }
  return JSON.stringify({ snapshot: r.snapshot_id, segments: r.segments.map((s) => [s.id, s.text, s.citation, s.score, s.locator]) })
}

describe.skipIf(nativeMissing)('operations (CLI)', () => {
  it('a workspace folder is found from inside it; a one-file add derives the index and the CLI compacts after the receipt', async () => {
    const { docs, ws } = await scratch()
    await cli(['init', ws])
    const added = await cli(['add', docs], { cwd: ws })
    expect(added.stderr).toBe('')
    expect(added.code).toBe(0)
    for (let i = 0; i < 9; i++) {
      await writeFile(join(docs, `note-${i}.md`), `# Note ${i}\n\nTide gauge reading ${i} at the harbour.\n`)
      expect((await cli(['add', join(docs, `note-${i}.md`)], { cwd: ws })).code).toBe(0)
    }
    const status = JSON.parse((await cli(['manage', 'status', '--format', 'json'], { cwd: ws })).stdout)
    expect(status.current_snapshot.sources).toBe(12)
    // The CLI compacted after its adds: small segments were merged, and nothing is left to merge.
    const compact = JSON.parse((await cli(['manage', 'compact', '--format', 'json'], { cwd: ws })).stdout)
    expect(compact.to_generation).toBeNull()
    expect(compact.segments_before).toBeLessThan(10)
    expect(status.bytes.tables.map((t: { table: string }) => t.table)).toContain('chunks')
    const found = JSON.parse((await cli(['search', 'tide gauge harbour', '--format', 'json', '--limit', '20'], { cwd: ws })).stdout)
    expect(found.segments.length).toBe(9)
    expect((await cli(['manage', 'verify'], { cwd: ws })).code).toBe(0)
  })

  it('backup while serving, restore, and the same answers byte for byte; a damaged or partial backup is refused', async () => {
    const { dir, docs, ws } = await scratch()
    await cli(['init', ws])
    await cli(['add', '-w', ws, docs])
    await writeFile(join(docs, 'http-caching.md'), '# Caching\n\nA conditional request revalidates a stored response with ETag.\n')
    await cli(['add', '-w', ws, docs])
    const dest = join(dir, 'backup')
    const made = await cli(['manage', 'backup', dest, '-w', ws, '--format', 'json'])
    expect(made.code).toBe(0)
    expect(JSON.parse(made.stdout).generations).toBeGreaterThanOrEqual(2)
    const restored = join(dir, 'restored')
    const back = await cli(['manage', 'restore', dest, restored])
    expect(back.code).toBe(0)
    expect(existsSync(join(restored, 'runtime/token'))).toBe(true)
    for (const q of ['conditional request revalidates', 'glossary', 'field notes']) {
      const a = await cli(['search', '-w', ws, q, '--format', 'json'])
      const b = await cli(['search', '-w', restored, q, '--format', 'json'])
      expect(evidence(b.stdout)).toBe(evidence(a.stdout))
    }
    // The older snapshot came along: a pinned query answers from it in the restored copy too.
    const pinnedA = await cli(['search', '-w', ws, 'conditional request', '--snapshot', '1', '--format', 'json'])
    const pinnedB = await cli(['search', '-w', restored, 'conditional request', '--snapshot', '1', '--format', 'json'])
    expect(evidence(pinnedB.stdout)).toBe(evidence(pinnedA.stdout))
    expect((await cli(['manage', 'verify', '-w', restored])).code).toBe(0)
    // A flipped byte in the copy: nothing becomes a workspace.
    const shard = readdirSync(join(dest, 'artifacts/sha256'))[0] as string
    const victim = join(dest, 'artifacts/sha256', shard, readdirSync(join(dest, 'artifacts/sha256', shard))[0] as string)
    await writeFile(victim, 'tampered')
    const refused = await cli(['manage', 'restore', dest, join(dir, 'restored-2')])
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toMatch(/E_CHECKSUM_MISMATCH/)
    expect(existsSync(join(dir, 'restored-2'))).toBe(false)
  })

  it('a backup that runs out of space fails cleanly and leaves nothing restore accepts', async () => {
    const { dir, docs, ws } = await scratch()
    await cli(['init', ws])
    await mkdir(join(docs, 'bulk'))
    for (let i = 0; i < 40; i++) await writeFile(join(docs, 'bulk', `doc-${i}.md`), `# Doc ${i}\n\n${`Filler sentence number ${i}. `.repeat(400)}\n`)
    await cli(['add', '-w', ws, docs])
    const dest = join(dir, 'full')
    // A file-size limit stands in for a full disk: writes past 256 KiB fail with EFBIG (the signal is ignored).
    const full = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn('sh', ['-c', `trap '' XFSZ; ulimit -f 512; exec "${process.execPath}" "${CLI}" manage backup "${dest}" -w "${ws}"`])
      let stderr = ''
      child.stderr.on('data', (d) => (stderr += d))
      child.on('close', (code) => resolve({ code, stderr }))
    })
    expect(full.code).not.toBe(0)
    expect(full.stderr).toMatch(/E_IO/)
    expect(existsSync(dest)).toBe(false)
    expect(readdirSync(dir).filter((n) => n.includes('partial'))).toEqual([])
    expect((await cli(['manage', 'restore', dest, join(dir, 'r')])).code).not.toBe(0)
  })

  it('withdraw keeps pinned history; delete-original takes the text out of every snapshot, says so in inspect, status and verify', async () => {
    const { docs, ws } = await scratch()
    await cli(['init', ws])
    await cli(['add', '-w', ws, docs])
    const withdrawn = await cli(['manage', 'withdraw', 'glossary.json', '--reason', 'outdated terms', '-w', ws, '--format', 'json'])
    expect(withdrawn.code).toBe(0)
    expect(JSON.parse(withdrawn.stdout).receipt.removed).toEqual(['glossary.json'])
    // The withdrawal's job reads back with what it named (it stores a selector, not paths).
    const job = await cli(['inspect', `job:${JSON.parse(withdrawn.stdout).receipt.job_id}`, '-w', ws, '--format', 'json'])
    expect(job.code).toBe(0)
    expect(JSON.parse(job.stdout)).toMatchObject({ kind: 'withdraw', request: { paths: [], selector: 'glossary.json', reason: 'outdated terms', requester: 'owner' } })
    const sync = JSON.parse((await cli(['add', '-w', ws, docs, '--format', 'json'])).stdout)
    expect(sync.diagnostics.some((d: { path: string; message: string }) => d.path === 'glossary.json' && d.message.includes('outdated terms'))).toBe(true)
    const erased = await cli(['manage', 'delete-original', 'field-notes.txt', '--reason', 'legal request 17', '-w', ws, '--format', 'json'])
    expect(erased.code).toBe(0)
    const report = JSON.parse(erased.stdout)
    expect(report.erased.length).toBe(1)
    expect(report.erased[0].reason).toBe('legal request 17')
    const verify = await cli(['manage', 'verify', '-w', ws, '--format', 'json'])
    expect(JSON.parse(verify.stdout).problems).toEqual([])
    // An erasure for a legal request leaves no snapshot answering with the text, pinned ones included.
    expect(report.erased_from_snapshots).toBeGreaterThanOrEqual(2)
    for (const snapshot of ['1', '2']) {
      const pinned = JSON.parse((await cli(['search', '-w', ws, 'field notes', '--snapshot', snapshot, '--format', 'json'])).stdout)
      expect(pinned.segments.some((s: { source: { path: string } }) => s.source.path === 'field-notes.txt')).toBe(false)
      expect(pinned.segments.length).toBeGreaterThan(0)
    }
    const revision = JSON.parse((await cli(['inspect', `revision:${report.erased[0].revision_id}`, '-w', ws])).stdout)
    expect(revision.tombstones).toEqual([expect.objectContaining({ kind: 'erasure', reason: 'legal request 17' })])
    const status = JSON.parse((await cli(['manage', 'status', '-w', ws, '--format', 'json'])).stdout)
    expect(status.counts).toMatchObject({ erased_revisions: 1, erasures_pending: 0 })
    expect(JSON.parse(verify.stdout).erasures_checked).toBe(1)
    const now = JSON.parse((await cli(['search', '-w', ws, 'field notes', '--format', 'json'])).stdout)
    expect(now.segments.some((s: { source: { path: string } }) => s.source.path === 'field-notes.txt')).toBe(false)
  })

  it('the CLI applies retention at the end of every add: syncs past [snapshots] retain keep that many', async () => {
    const { docs, ws } = await scratch()
    await cli(['init', ws])
    for (let i = 0; i < 8; i++) {
      await writeFile(join(docs, 'field-notes.txt'), `Field notes, day ${i}.\n`)
      expect((await cli(['add', '-w', ws, docs])).code).toBe(0)
    }
    const status = JSON.parse((await cli(['manage', 'status', '-w', ws, '--format', 'json'])).stdout)
    expect(status.counts.snapshots).toBe(5)
    expect(status.current_snapshot.id).toBe(8)
    expect(JSON.parse((await cli(['manage', 'verify', '-w', ws, '--format', 'json'])).stdout).problems).toEqual([])
  })

  it('inspect run shows the recorded trace and search --replay re-runs it on its snapshot', async () => {
    const { docs, ws } = await scratch()
    await cli(['init', ws])
    await cli(['add', '-w', ws, docs])
    const first = JSON.parse((await cli(['search', '-w', ws, 'conditional request revalidates', '--format', 'json'])).stdout)
    const run = JSON.parse((await cli(['inspect', 'run', first.run_id, '-w', ws])).stdout)
    expect(run.snapshot_id).toBe(first.snapshot_id)
    expect(run.summary.segments).toEqual(first.segments.map((s: { id: string }) => s.id))
    expect(run.summary.trace.map((t: { stage: string }) => t.stage)).toContain('lexical')
    // A later snapshot changes nothing for the replay: it is pinned to the run's snapshot.
    await writeFile(join(docs, 'http-caching.md'), '# Other\n\nNothing about requests any more.\n')
    await cli(['add', '-w', ws, docs])
    const replay = JSON.parse((await cli(['search', '--replay', first.run_id, '-w', ws, '--format', 'json'])).stdout)
    expect(replay.same).toBe(true)
    expect(replay.snapshot_id).toBe(first.snapshot_id)
    const text = await cli(['search', '--replay', first.run_id, '-w', ws])
    expect(text.stdout).toMatch(/the same \d+ results in the same order/)
    expect((await cli(['inspect', 'run', 'qr_missing', '-w', ws])).code).toBe(3)
  })
})

describe.skipIf(nativeMissing)('crash safety of operations', () => {
  for (const point of [
    'after-lexical-generation',
    'after-compact-generation',
    'after-tombstones',
    'after-release-snapshots',
    'backup-after-artifacts',
    'backup-before-rename',
    'restore-before-rename',
  ]) {
    it(`an abort at ${point} leaves the last published snapshot answering and verify clean`, async () => {
      const { dir, docs, ws } = await scratch()
      await cli(['init', ws])
      await mkdir(join(docs, 'more'))
      for (let i = 0; i < 12; i++) await writeFile(join(docs, 'more', `m-${i}.md`), `# More ${i}\n\nSeaweed sample ${i}.\n`)
      await cli(['add', '-w', ws, docs])
      const env = { TYCHORA_FAILPOINT: point }
      let crashed: CliResult
      if (point === 'after-lexical-generation') {
        await writeFile(join(docs, 'new.md'), '# New\n\nA kelp forest survey.\n')
        crashed = await cli(['add', '-w', ws, join(docs, 'new.md')], { env })
      } else if (point === 'after-compact-generation') {
        // Adds without the CLI's compaction (which would crash here): the library's add.
        const handle = await Workspace.open(ws)
        for (let i = 0; i < 8; i++) {
          await writeFile(join(docs, `n-${i}.md`), `# N ${i}\n\nKelp ${i}.\n`)
          await handle.add({ paths: [join(docs, `n-${i}.md`)] })
        }
        handle.close()
        // The lock goes once the handle's last native call has returned.
        for (let i = 0; i < 100 && lockOwner(ws) !== undefined; i++) await new Promise((r) => setTimeout(r, 20))
        crashed = await cli(['manage', 'compact', '-w', ws], { env })
      } else if (point === 'after-tombstones') {
        crashed = await cli(['manage', 'delete-original', 'glossary.json', '--reason', 'r', '-w', ws], { env })
      } else if (point === 'after-release-snapshots') {
        // History kept long, then the policy tightened: the purge dies between releasing the
        // snapshots and removing what they held.
        const config = join(ws, 'workspace.toml')
        await writeFile(config, (await readFile(config, 'utf8')).replace('retain = 5', 'retain = 50'))
        for (let i = 0; i < 6; i++) {
          await writeFile(join(docs, 'more', 'm-0.md'), `# More 0\n\nSeaweed sample, take ${i}.\n`)
          await cli(['add', '-w', ws, join(docs, 'more', 'm-0.md')])
        }
        await writeFile(config, (await readFile(config, 'utf8')).replace('retain = 50', 'retain = 2'))
        crashed = await cli(['manage', 'purge', '-w', ws], { env })
      } else if (point === 'restore-before-rename') {
        expect((await cli(['manage', 'backup', join(dir, 'good'), '-w', ws])).code).toBe(0)
        crashed = await cli(['manage', 'restore', join(dir, 'good'), join(dir, 'restored')], { env })
      } else {
        crashed = await cli(['manage', 'backup', join(dir, 'b'), '-w', ws], { env })
      }
      expect(crashed.signal).toBe('SIGABRT')
      const handle = await Workspace.open(ws)
      try {
        const result = await handle.search({ query: 'conditional request revalidates' })
        expect(result.segments[0]?.source.path).toBe('http-caching.md')
        const report = await handle.verify()
        if (point === 'after-tombstones') {
          // The tombstone committed, the file not yet removed and the text still in the snapshots:
          // verify says so, and a rerun finishes it.
          expect(report.problems.length).toBeGreaterThan(0)
          expect(new Set(report.problems.map((p) => p.code))).toEqual(new Set(['E_CONFLICT']))
        } else {
          expect(report.problems).toEqual([])
        }
      } finally {
        handle.close()
      }
      if (point === 'after-tombstones') {
        expect((await cli(['manage', 'delete-original', 'glossary.json', '--reason', 'r', '-w', ws])).code).toBe(0)
        expect(JSON.parse((await cli(['manage', 'verify', '-w', ws, '--format', 'json'])).stdout).problems).toEqual([])
      }
      if (point === 'after-release-snapshots') {
        // The next purge resumes from what the killed one recorded, and leaves nothing pending.
        const resumed = JSON.parse((await cli(['manage', 'purge', '-w', ws, '--format', 'json'])).stdout)
        expect(resumed.snapshots).toBe(0)
        expect(resumed.extractions).toBeGreaterThan(0)
        const again = JSON.parse((await cli(['manage', 'purge', '-w', ws, '--format', 'json'])).stdout)
        expect(again.extractions).toBe(0)
        expect(JSON.parse((await cli(['manage', 'verify', '-w', ws, '--format', 'json'])).stdout).problems).toEqual([])
      }
      if (point === 'restore-before-rename') {
        // Nothing became a workspace; a second restore completes.
        expect(existsSync(join(dir, 'restored'))).toBe(false)
        expect((await cli(['manage', 'restore', join(dir, 'good'), join(dir, 'restored')])).code).toBe(0)
        expect((await cli(['manage', 'verify', '-w', join(dir, 'restored')])).code).toBe(0)
      }
      if (point.startsWith('backup')) {
        expect(existsSync(join(dir, 'b'))).toBe(false)
        expect((await cli(['manage', 'restore', join(dir, 'b'), join(dir, 'r')])).code).not.toBe(0)
      }
    })
  }
})
