import { spawn } from 'node:child_process'
import { appendFile, mkdir, readdir, writeFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { Workspace } from '../../ts/engine/workspace.js'
import { Database } from '../support/sqlite.js'
import { CLI, cli, nativeMissing, scratch } from './_setup.js'

/** A job's status as another process reads it, while the job runs. */
function jobStatusOf(ws: string, id: number): string | undefined {
  const db = new Database(join(ws, 'corpus.sqlite3'), { readonly: true, fileMustExist: true })
  try {
    return (db.prepare('SELECT status FROM jobs WHERE id = ?').get(id) as { status: string } | undefined)?.status
  } finally {
    db.close()
  }
}

async function checkIntact(ws: string, snapshotBefore: number) {
  const handle = await Workspace.open(ws)
  try {
    const status = await handle.status()
    expect(status.current_snapshot?.id).toBe(snapshotBefore)
    const result = await handle.search({ query: 'conditional request revalidates' })
    expect(result.snapshot_id).toBe(snapshotBefore)
    expect(result.segments[0]?.source.path).toBe('http-caching.md')
    const report = await handle.verify()
    expect(report.problems).toEqual([])
    const job = await handle.jobStatus(status.counts.jobs)
    expect(job.status).toBe('interrupted')
  } finally {
    handle.close()
  }
}

describe.skipIf(nativeMissing)('crash safety of add', () => {
  for (const point of ['after-prepare', 'after-commit', 'after-index', 'before-switch-commit']) {
    it(`an abort ${point} leaves the previous snapshot published and intact`, async () => {
      const { docs, ws } = await scratch()
      await cli(['init', ws])
      expect((await cli(['add', '-w', ws, docs])).code).toBe(0)
      await writeFile(join(docs, 'http-caching.md'), '# Replaced\n\nEntirely different words.\n')
      await writeFile(join(docs, 'new.md'), '# New\n\nA new file.\n')
      const crashed = await cli(['add', '-w', ws, docs], { env: { TYCHORA_FAILPOINT: point } })
      expect(crashed.signal).toBe('SIGABRT')
      await checkIntact(ws, 1)
      // Re-running the job completes and publishes.
      const rerun = await cli(['add', '-w', ws, docs])
      expect(rerun.code).toBe(0)
      expect(rerun.stdout).toMatch(/published snapshot 2/)
    })
  }

  it('SIGKILL inside an ingest job never exposes a half-published state', async () => {
    const { docs, ws } = await scratch()
    await cli(['init', ws])
    expect((await cli(['add', '-w', ws, docs])).code).toBe(0)
    const bulk = join(docs, 'bulk')
    await mkdir(bulk)
    for (let i = 0; i < 400; i++) {
      await writeFile(join(bulk, `doc-${i}.md`), `# Doc ${i}\n\n${'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(40)}\n`)
    }
    const child = spawn(process.execPath, [CLI, 'add', '-w', ws, docs])
    // Kill inside the job, however fast or slow the machine: once its row says it runs (403 files
    // take far longer than the 5 ms between looks).
    const deadline = Date.now() + 60_000
    while (jobStatusOf(ws, 2) !== 'running' && child.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5))
    child.kill('SIGKILL')
    const signal = await new Promise((r) => child.on('close', (_code, signal) => r(signal)))
    expect(signal).toBe('SIGKILL')
    const handle = await Workspace.open(ws)
    try {
      const status = await handle.status()
      // The kill landed mid-job: the job is interrupted and snapshot 1 still answers, whole.
      expect((await handle.jobStatus(2)).status).toBe('interrupted')
      expect(status.current_snapshot?.id).toBe(1)
      expect(status.current_snapshot?.sources).toBe(3)
      expect((await handle.verify()).problems).toEqual([])
      const result = await handle.search({ query: 'conditional request revalidates' })
      expect(result.segments[0]?.source.path).toBe('http-caching.md')
    } finally {
      handle.close()
    }
  })

  it('an abort after a vector layer is written leaves the previous snapshot answering from its own vectors', async () => {
    const model = process.env.TYCHORA_TEST_MODEL ?? join(homedir(), '.cache', 'tychora', 'models', 'all-MiniLM-L6-v2')
    const { dir, docs, ws } = await scratch()
    expect((await cli(['init', ws, '--embeddings', 'local'])).code).toBe(0)
    await appendFile(join(ws, 'workspace.toml'), `model_dir = ${JSON.stringify(model)}\ncache_dir = ${JSON.stringify(join(dir, 'cache'))}\n`)
    expect((await cli(['add', '-w', ws, docs])).code).toBe(0)
    const before = await readdir(join(ws, 'indexes', 'text'))
    await writeFile(join(docs, 'cello.md'), '# Strings\n\nA cello is tuned in fifths, lower than a viola.\n')
    // The layer over the first vector file is written, then the job aborts before publishing.
    const crashed = await cli(['add', '-w', ws, docs], { env: { TYCHORA_FAILPOINT: 'after-index' } })
    expect(crashed.signal).toBe('SIGABRT')
    expect((await readdir(join(ws, 'indexes', 'text'))).length).toBe(before.length + 1)
    const text = async (handle: Workspace) => (await handle.search({ query: 'stringed instrument tuning', channels: ['text'] })).segments.map((s) => s.source.path)
    const handle = await Workspace.open(ws)
    try {
      expect((await handle.status()).current_snapshot?.id).toBe(1)
      expect((await handle.verify()).problems).toEqual([])
      expect(await text(handle)).not.toContain('cello.md')
    } finally {
      handle.close()
    }
    const rerun = await cli(['add', '-w', ws, docs])
    expect(rerun.code).toBe(0)
    const after = await Workspace.open(ws)
    try {
      expect((await after.status()).current_snapshot?.id).toBe(2)
      expect((await after.verify()).problems).toEqual([])
      expect((await text(after))[0]).toBe('cello.md')
    } finally {
      after.close()
    }
  })
})
