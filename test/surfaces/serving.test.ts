import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runtimePath } from '../../ts/contracts/runtime.js'
import { Workspace } from '../../ts/engine/workspace.js'
import { ERROR_CODES } from '../../ts/errors.js'
import { CLI, cli, nativeMissing, scratch } from '../native/_setup.js'
import { projectOf, startDaemon, tokenOf } from './_daemon.js'

/** What the workspace serves the CLI while another process owns it (issue 32, items 10, 11 and 16). */

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 30_000): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const v = await fn()
    if (ok(v) || Date.now() > end) return v
    await new Promise((r) => setTimeout(r, 100))
  }
}

const topPath = (out: string) => (JSON.parse(out) as { segments: Array<{ source: { path: string } }> }).segments[0]?.source.path

/** `tychora watch` as a user runs it, until `stop`; resolves once it reports that it watches. */
function startWatch(args: string[]): Promise<{ child: ChildProcess; stderr: () => string; stop(): Promise<number | null> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'watch', ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stderr = ''
    const timer = setTimeout(() => reject(new Error(`watch did not start:\n${stderr}`)), 60_000)
    child.stdout?.resume()
    child.stderr?.on('data', (d: Buffer) => {
      stderr += d
      if (stderr.includes('watching ')) {
        clearTimeout(timer)
        resolve({
          child,
          stderr: () => stderr,
          stop: () =>
            new Promise((done) => {
              if (child.exitCode !== null || child.signalCode !== null) return done(child.exitCode)
              child.once('exit', (code) => done(code))
              child.kill('SIGINT')
            }),
        })
      }
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`watch exited with ${code}:\n${stderr}`))
    })
  })
}

describe.skipIf(nativeMissing)('a served workspace', () => {
  it('manage status, verify and backup run through the daemon while serve runs; the HTTP routes take only the owner token', async () => {
    const { dir, docs, ws } = await scratch()
    expect((await cli(['init', ws])).code).toBe(0)
    expect((await cli(['add', '-w', ws, docs])).code).toBe(0)
    const daemon = await startDaemon([ws])
    const dest = join(dir, 'backup')
    try {
      const status = await cli(['manage', 'status', '-w', ws, '--format', 'json'])
      expect(status.code, status.stderr).toBe(0)
      expect(JSON.parse(status.stdout).current_snapshot.id).toBe(1)
      const verify = await cli(['manage', 'verify', '-w', ws, '--format', 'json'])
      expect(verify.code, verify.stderr).toBe(0)
      expect(JSON.parse(verify.stdout)).toMatchObject({ ok: true, problems: [] })
      // A relative DEST is this shell's, whatever the daemon's working directory.
      const backup = await cli(['manage', 'backup', 'backup', '-w', ws, '--format', 'json'], { cwd: dir })
      expect(backup.code, backup.stderr).toBe(0)
      expect(JSON.parse(backup.stdout)).toMatchObject({ dir: dest, current_snapshot_id: 1 })
      expect(existsSync(join(dest, 'manifest.json'))).toBe(true)

      // Owner-only: the agents' token is refused on every administration route and writes nothing.
      const project = encodeURIComponent(projectOf(ws))
      const agent = readFileSync(runtimePath(ws, 'agentToken'), 'utf8').trim()
      const call = (method: string, path: string, token: string, body?: unknown) =>
        fetch(`${daemon.url}/v1/projects/${project}/${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
          ...(body ? { body: JSON.stringify(body) } : {}),
        })
      const agentDest = join(dir, 'agent-copy')
      for (const [method, path, body] of [
        ['GET', 'status'],
        ['POST', 'verify'],
        ['POST', 'backup', { dest: agentDest }],
      ] as const) {
        const refused = await call(method, path, agent, body)
        expect(refused.status).toBe(403)
        expect(((await refused.json()) as { code: string }).code).toBe('E_FORBIDDEN')
      }
      expect(existsSync(agentDest)).toBe(false)
      const relative = await call('POST', 'backup', tokenOf(ws), { dest: 'relative/copy' })
      expect(relative.status).toBe(400)
      expect(((await relative.json()) as { code: string }).code).toBe('E_INVALID_ARGUMENT')
      const again = await cli(['manage', 'backup', dest, '-w', ws, '--format', 'json'])
      expect(again.code).toBe(ERROR_CODES.E_CONFLICT.exit)
      expect(JSON.parse(again.stderr).code).toBe('E_CONFLICT')
    } finally {
      expect(await daemon.stop()).toBe(0)
    }
    // The copy the daemon wrote is a workspace that answers.
    const restored = join(dir, 'restored')
    expect((await cli(['manage', 'restore', dest, restored])).code).toBe(0)
    const search = await cli(['search', '-w', restored, 'ETag validator', '--format', 'json'])
    expect(search.code, search.stderr).toBe(0)
    expect(topPath(search.stdout)).toBe('http-caching.md')
  })

  it('a standalone watch serves the workspace: search, add and status go through it; Ctrl-C drains and releases it', async () => {
    const { dir, docs, ws } = await scratch()
    expect((await cli(['init', ws])).code).toBe(0)
    const watch = await startWatch(['-w', ws, docs, '--debounce-ms', '100'])
    try {
      const search = await cli(['search', '-w', ws, 'ETag validator', '--format', 'json'])
      expect(search.code, search.stderr).toBe(0)
      expect(topPath(search.stdout)).toBe('http-caching.md')
      expect(JSON.parse(readFileSync(runtimePath(ws, 'daemon'), 'utf8')).pid).toBe(watch.child.pid)
      // A change the watcher syncs is searchable through the same daemon.
      await writeFile(join(docs, 'zebra.md'), '# Zebra\n\nA zebra crossing note.\n')
      const found = await until(
        () => cli(['search', '-w', ws, 'zebra crossing', '--format', 'json']),
        (r) => r.code === 0 && topPath(r.stdout) === 'zebra.md',
      )
      expect(topPath(found.stdout)).toBe('zebra.md')
      // Another command's add is a job on the same single writer.
      const notes = join(dir, 'notes')
      await mkdir(notes)
      await writeFile(join(notes, 'tides.md'), '# Tides\n\nA tide gauge reading at the harbour.\n')
      const add = await cli(['add', '-w', ws, '--collection', 'notes', notes])
      expect(add.code, add.stderr).toBe(0)
      const status = await cli(['manage', 'status', '-w', ws, '--format', 'json'])
      expect(status.code, status.stderr).toBe(0)
      expect(JSON.parse(status.stdout).collections).toContainEqual({ name: 'notes', active_sources: 1 })
    } finally {
      expect(await watch.stop()).toBe(0)
    }
    expect(existsSync(runtimePath(ws, 'daemon'))).toBe(false)
    const verify = await cli(['manage', 'verify', '-w', ws, '--format', 'json'])
    expect(verify.code, verify.stderr).toBe(0)
    expect(JSON.parse(verify.stdout).ok).toBe(true)
  })

  it('a daemon.json deleted under a running serve comes back: commands still reach the daemon and doctor finds it', async () => {
    const { docs, ws } = await scratch()
    await cli(['init', ws])
    await cli(['add', '-w', ws, docs])
    const daemon = await startDaemon([ws])
    const file = runtimePath(ws, 'daemon')
    try {
      await rm(file)
      const search = await cli(['search', '-w', ws, 'ETag validator', '--format', 'json'])
      expect(search.code, search.stderr).toBe(0)
      expect(topPath(search.stdout)).toBe('http-caching.md')
      expect(JSON.parse(readFileSync(file, 'utf8')).pid).toBe(daemon.child.pid)
      // Overwritten with something that is not this daemon's: put back too.
      await writeFile(file, '{}')
      await rm(file)
      const doctor = await cli(['manage', 'doctor', '-w', ws, '--format', 'json'])
      expect(doctor.code, doctor.stdout).toBe(0)
      const findings = JSON.parse(doctor.stdout) as Array<{ check: string; status: string }>
      expect(findings.filter((f) => f.status === 'fail')).toEqual([])
      expect(findings.find((f) => f.check === 'lock')?.status).toBe('ok')
      await writeFile(file, '{"pid": 1}')
      const add = await cli(['add', '-w', ws, docs])
      expect(add.code, add.stderr).toBe(0)
      expect(JSON.parse(readFileSync(file, 'utf8')).pid).toBe(daemon.child.pid)
    } finally {
      expect(await daemon.stop()).toBe(0)
    }
    // Removed on a clean stop, and not put back by anything left running.
    await new Promise((r) => setTimeout(r, 1200))
    expect(readdirSync(dirname(file)).filter((f) => f.startsWith(basename(file)))).toEqual([])
  })

  it('a lock held by a process that is no daemon: doctor fails with one finding naming its pid, and commands fail E_LOCKED naming it', async () => {
    const { docs, ws } = await scratch()
    await cli(['init', ws])
    await cli(['add', '-w', ws, docs])
    const holder = await Workspace.open(ws)
    try {
      const doctor = await cli(['manage', 'doctor', '-w', ws, '--format', 'json'])
      expect(doctor.code).toBe(8)
      const findings = JSON.parse(doctor.stdout) as Array<{ check: string; status: string; detail: string; fix: string }>
      expect(findings).toHaveLength(1)
      expect(findings[0]).toMatchObject({ check: 'lock', status: 'fail' })
      expect(findings[0]?.detail).toContain(`pid ${process.pid}`)
      expect(findings[0]?.fix).toContain(`kill ${process.pid}`)
      for (const args of [
        ['search', 'ETag'],
        ['manage', 'status'],
        ['manage', 'verify'],
      ]) {
        const locked = await cli([...args, '-w', ws, '--format', 'json'])
        expect(locked.code).toBe(ERROR_CODES.E_LOCKED.exit)
        expect(JSON.parse(locked.stderr).code).toBe('E_LOCKED')
        expect(locked.stderr).toContain(`pid ${process.pid}`)
      }
    } finally {
      holder.close()
    }
  })
})
