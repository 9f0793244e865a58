import { spawn } from 'node:child_process'
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { connect } from '../../ts/client/http-client.js'
import { runtimePath } from '../../ts/contracts/runtime.js'
import { Workspace } from '../../ts/engine/workspace.js'
import { ERROR_CODES } from '../../ts/errors.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { CLI, cli, nativeMissing, scratch } from '../native/_setup.js'
import { projectOf, startDaemon, tokenOf } from './_daemon.js'

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 30_000): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const v = await fn()
    if (ok(v) || Date.now() > end) return v
    await new Promise((r) => setTimeout(r, 50))
  }
}

describe.skipIf(nativeMissing)('daemon', () => {
  it('serves several projects; the CLI routes through it; a second owner is refused by pid and port; SIGTERM drains', async () => {
    const a = await scratch()
    const b = await scratch()
    for (const s of [a, b]) {
      expect((await cli(['init', s.ws])).code).toBe(0)
      expect((await cli(['add', '-w', s.ws, s.docs])).code).toBe(0)
    }
    expect(statSync(runtimePath(a.ws, 'ownerToken')).mode & 0o777).toBe(0o600)
    // Two workspaces named "ws": rename one so the project names differ.
    await writeFile(join(b.ws, 'workspace.toml'), readFileSync(join(b.ws, 'workspace.toml'), 'utf8').replace(/^name = .*$/m, 'name = "second"'))
    const daemon = await startDaemon([a.ws, b.ws])
    try {
      const info = JSON.parse(readFileSync(runtimePath(a.ws, 'daemon'), 'utf8'))
      expect(info.pid).toBe(daemon.child.pid)
      const first = connect(daemon.url, { token: tokenOf(a.ws), project: projectOf(a.ws) })
      const second = connect(daemon.url, { token: tokenOf(b.ws), project: 'second' })
      expect((await first.search({ query: 'ETag validator' })).segments[0]?.source.path).toBe('http-caching.md')
      expect((await second.listSources()).total).toBe(3)

      // The CLI does not fight the daemon for the lock: it goes through it.
      const search = await cli(['search', '-w', a.ws, 'freshness lifetime', '--format', 'json'])
      expect(search.code).toBe(0)
      expect(JSON.parse(search.stdout).segments[0].source.path).toBe('http-caching.md')
      await writeFile(join(a.docs, 'new.md'), '# New\n\nA zebra crossing note.\n')
      const add = await cli(['add', '-w', a.ws, a.docs])
      expect(add.code).toBe(0)
      expect(add.stdout).toMatch(/1 added/)
      expect((await first.search({ query: 'zebra crossing' })).segments[0]?.source.path).toBe('new.md')

      // `tychora mcp` over stdio proxies to the daemon that owns the workspace.
      const mcp = new Client({ name: 'proxy-test', version: '1.0.0' })
      await mcp.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', '--workspace', a.ws], stderr: 'pipe' }))
      const viaMcp = await mcp.callTool({ name: 'search_evidence', arguments: { project: projectOf(a.ws), query: 'zebra crossing' } })
      expect((viaMcp.structuredContent as { segments: Array<{ source: { path: string } }> }).segments[0]?.source.path).toBe('new.md')
      await mcp.close()

      // A second daemon on the same workspace is refused, naming the owner's pid and port.
      const port = new URL(daemon.url).port
      const rival = await cli(['serve', '--port', '0', '--workspace', a.ws])
      expect(rival.code).toBe(ERROR_CODES.E_LOCKED.exit)
      expect(rival.stderr).toContain(`pid ${daemon.child.pid}`)
      expect(rival.stderr).toContain(`port ${port}`)
      // A library writer is refused too, naming the daemon's pid and port.
      const writer = await Workspace.open(a.ws).catch((e: unknown) => e as { code: string; message: string })
      expect(writer).toMatchObject({ code: 'E_LOCKED' })
      expect((writer as { message: string }).message).toContain(`pid ${daemon.child.pid}`)
      expect((writer as { message: string }).message).toContain(`port ${port}`)
      // Administration that needs the lock says who holds it; verify reads through the daemon.
      const compact = await cli(['manage', 'compact', '-w', a.ws])
      expect(compact.code).toBe(ERROR_CODES.E_LOCKED.exit)
      expect(compact.stderr).toContain(`pid ${daemon.child.pid}`)
      expect((await cli(['manage', 'verify', '-w', a.ws])).stdout).toMatch(/^ok/)
    } finally {
      expect(await daemon.stop()).toBe(0)
    }
    expect(existsSync(runtimePath(a.ws, 'daemon'))).toBe(false)
    // After shutdown the CLI works in-process again.
    expect((await cli(['manage', 'verify', '-w', a.ws])).stdout).toMatch(/^ok/)
  })

  it('kill -9 during a job: the workspace reopens, the previous snapshot serves, the job is interrupted, queued jobs resume', async () => {
    const { docs, ws } = await scratch()
    await cli(['init', ws])
    await cli(['add', '-w', ws, docs])
    const project = projectOf(ws)
    const token = tokenOf(ws)
    // The first job pauses after preparing (a test failpoint) so the kill lands mid-job.
    const daemon = await startDaemon([ws], { TYCHORA_FAILPOINT: 'after-prepare:sleep' })
    const client = connect(daemon.url, { token, project })
    await writeFile(join(docs, 'http-caching.md'), '# Replaced\n\nEntirely different words.\n')
    const running = await client.addSource({ paths: [docs] })
    await until(
      () => client.jobStatus(running.job_id),
      (s) => s.status === 'running',
    )
    await writeFile(join(docs, 'later.md'), '# Later\n\nQueued behind the running job.\n')
    const queued = await client.addSource({ paths: [docs] })
    expect((await client.jobStatus(queued.job_id)).status).toBe('queued')
    daemon.child.kill('SIGKILL')
    await new Promise((r) => daemon.child.once('exit', r))

    // The workspace opens; the previous snapshot is intact and serves the old text.
    const opened = await Workspace.open(ws)
    try {
      expect((await opened.status()).current_snapshot?.id).toBe(1)
      expect((await opened.search({ query: 'conditional request revalidates' })).segments[0]?.source.path).toBe('http-caching.md')
      expect((await opened.jobStatus(running.job_id)).status).toBe('interrupted')
      expect((await opened.jobStatus(queued.job_id)).status).toBe('queued')
      expect((await opened.verify()).problems).toEqual([])
    } finally {
      opened.close()
    }

    const restarted = await startDaemon([ws])
    try {
      const again = connect(restarted.url, { token, project })
      expect((await again.jobStatus(running.job_id)).status).toBe('interrupted')
      // The queued job survived the crash and resumed by itself.
      const resumed = await until(
        () => again.jobStatus(queued.job_id),
        (s) => s.receipt !== null,
      )
      expect(resumed.status).toBe('succeeded')
      expect((await again.search({ query: 'queued behind the running job' })).segments[0]?.source.path).toBe('later.md')
      // Re-running the interrupted job's request completes.
      const rerun = await again.addSource({ paths: [docs] })
      const done = await until(
        () => again.jobStatus(rerun.job_id),
        (s) => s.receipt !== null,
      )
      expect(done.status).toBe('succeeded')
    } finally {
      await restarted.stop()
    }
    const ws2 = await Workspace.open(ws)
    try {
      expect((await ws2.verify()).problems).toEqual([])
    } finally {
      ws2.close()
    }
  })

  it('a daemon.json left by kill -9 never blocks the CLI, even when its pid now belongs to another process', async () => {
    const { docs, ws } = await scratch()
    await cli(['init', ws])
    await cli(['add', '-w', ws, docs])
    const daemon = await startDaemon([ws])
    daemon.child.kill('SIGKILL')
    await new Promise((r) => daemon.child.once('exit', r))
    const file = runtimePath(ws, 'daemon')
    expect(existsSync(file)).toBe(true)
    // The pid is reused by an unrelated, live process.
    const stranger = spawn('sleep', ['60'], { stdio: 'ignore' })
    try {
      const info = JSON.parse(readFileSync(file, 'utf8'))
      await writeFile(file, JSON.stringify({ ...info, pid: stranger.pid }))
      const search = await cli(['search', '-w', ws, 'ETag validator', '--format', 'json'])
      expect(search.code, search.stderr).toBe(0)
      expect(JSON.parse(search.stdout).segments[0].source.path).toBe('http-caching.md')
      expect(existsSync(file)).toBe(false) // judged stale by the free lock, and removed
      await writeFile(file, JSON.stringify({ ...info, pid: stranger.pid }))
      expect((await cli(['add', '-w', ws, docs])).code).toBe(0)
      await writeFile(file, JSON.stringify({ ...info, pid: stranger.pid }))
      const verify = await cli(['manage', 'verify', '-w', ws])
      expect(verify.code, verify.stderr).toBe(0)
      expect(verify.stdout).not.toContain(String(stranger.pid))
      // A new daemon starts on the same workspace and the CLI routes through it.
      const next = await startDaemon([ws])
      try {
        const routed = await cli(['search', '-w', ws, 'ETag validator', '--format', 'json'])
        expect(routed.code).toBe(0)
        expect(JSON.parse(readFileSync(file, 'utf8')).pid).toBe(next.child.pid)
      } finally {
        await next.stop()
      }
    } finally {
      stranger.kill()
    }
  })

  it('a held lock whose holder does not answer the handshake is reported as locked by the real holder, not as an unreachable daemon', async () => {
    const { docs, ws } = await scratch()
    await cli(['init', ws])
    await cli(['add', '-w', ws, docs])
    const daemon = await startDaemon([ws])
    const info = JSON.parse(readFileSync(runtimePath(ws, 'daemon'), 'utf8'))
    daemon.child.kill('SIGKILL')
    await new Promise((r) => daemon.child.once('exit', r))
    // This test process now owns the workspace (a library writer), with the dead daemon's file left.
    const holder = await Workspace.open(ws)
    try {
      await writeFile(runtimePath(ws, 'daemon'), JSON.stringify(info))
      const search = await cli(['search', '-w', ws, 'ETag', '--format', 'json'])
      expect(search.code).toBe(ERROR_CODES.E_LOCKED.exit)
      expect(JSON.parse(search.stderr).code).toBe('E_LOCKED')
      expect(search.stderr).toContain(`pid ${process.pid}`)
      expect(search.stderr).not.toContain('served by the daemon')
    } finally {
      holder.close()
    }
  })

  it("serve --watch keeps each root in sync through the daemon's own queue: one job per batch, in the root's collection; SIGTERM leaves no watcher", async () => {
    const { dir, docs, ws } = await scratch()
    const notes = join(dir, 'notes')
    await mkdir(notes)
    await writeFile(join(notes, 'tides.md'), '# Tides\n\nA tide gauge reading at the harbour.\n')
    await cli(['init', ws])
    expect((await cli(['add', '-w', ws, docs])).code).toBe(0)
    expect((await cli(['add', '-w', ws, '--collection', 'notes', notes])).code).toBe(0)
    // Written while nothing watched: the sync each collection gets at start catches it up.
    await writeFile(join(docs, 'offline.md'), '# Offline\n\nA lighthouse keeper kept this log.\n')
    const daemon = await startDaemon([ws], {}, ['--watch', '--debounce-ms', '100'])
    const project = projectOf(ws)
    const client = connect(daemon.url, { token: tokenOf(ws), project })
    const [realDocs, realNotes] = [realpathSync(docs), realpathSync(notes)]
    try {
      await until(
        async () => daemon.output(),
        (out) => out.includes(`watch ${project}: ${realNotes} (collection notes)`),
      )
      expect(daemon.output()).toContain(`watch ${project}: ${realDocs} (collection default)`)
      const caughtUp = await until(
        () => client.search({ query: 'lighthouse keeper' }),
        (r) => r.segments[0]?.source.path === 'offline.md',
      )
      expect(caughtUp.segments[0]?.source.path).toBe('offline.md')
      // Jobs 1 and 2 were the CLI's adds, 3 and 4 the catch-up syncs: let both end first.
      const ended = (s: { finished_at: number | null }) => s.finished_at !== null
      expect(
        (
          await until(
            () => Promise.all([3, 4].map((id) => client.jobStatus(id))),
            (jobs) => jobs.every(ended),
          )
        ).every(ended),
      ).toBe(true)

      // A new file is searchable within a generous deadline, through exactly one job.
      await writeFile(join(docs, 'zebra.md'), '# Zebra\n\nA zebra crossing note.\n')
      const found = await until(
        () => client.search({ query: 'zebra crossing' }),
        (r) => r.segments[0]?.source.path === 'zebra.md',
      )
      expect(found.segments[0]?.source.path).toBe('zebra.md')
      const snapshot = await client.getEvidence(`snapshot:${found.snapshot_id}`)
      const job = await client.jobStatus(snapshot.type === 'snapshot' ? (snapshot.job_id ?? 0) : 0)
      expect(job.id).toBe(5)
      expect(job.request.paths).toEqual([join(realDocs, 'zebra.md')])
      expect(job.receipt?.added).toEqual(['zebra.md'])
      await expect(client.jobStatus(6)).rejects.toMatchObject({ code: 'E_NOT_FOUND' })

      // A change under the other root is added to its own collection, not duplicated into the default one.
      await writeFile(join(notes, 'tides.md'), '# Tides\n\nA tide gauge reading at the harbour, and the spring swell.\n')
      const swell = await until(
        () => client.search({ query: 'spring swell' }),
        (r) => r.segments[0]?.source.path === 'tides.md',
      )
      expect(swell.segments[0]?.source.collection).toBe('notes')
      expect((await client.jobStatus(6)).request.collection).toBe('notes')
      expect((await client.listSources({ collection: 'notes' })).total).toBe(1)

      // A deletion syncs the folder, which records the removal.
      await rm(join(docs, 'zebra.md'))
      const gone = await until(
        () => client.search({ query: 'zebra crossing' }),
        (r) => !r.segments.some((s) => s.source.path === 'zebra.md'),
      )
      expect(gone.segments.some((s) => s.source.path === 'zebra.md')).toBe(false)
    } finally {
      // A subscription still open would keep the process alive: exiting at all means every watcher stopped.
      const code = await Promise.race([daemon.stop(), new Promise((r) => setTimeout(() => r('still running'), 30_000))])
      expect(code).toBe(0)
    }
    expect(existsSync(runtimePath(ws, 'daemon'))).toBe(false)
    expect((await cli(['manage', 'verify', '-w', ws])).stdout).toMatch(/^ok/)
  })
})
