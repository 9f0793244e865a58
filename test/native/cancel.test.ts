import { readFileSync } from 'node:fs'
import { runCommand } from 'citty'
import { describe, expect, it } from 'vitest'
import manage from '../../ts/cli/commands/manage.js'
import { connectAdmin } from '../../ts/client/admin-client.js'
import { JobStatusSchema } from '../../ts/contracts/evidence.js'
import { runtimePath } from '../../ts/contracts/runtime.js'
import { Daemon } from '../../ts/daemon/daemon.js'
import type { JobEvent } from '../../ts/engine/job-runner.js'
import { Workspace } from '../../ts/engine/workspace.js'
import { nativeMissing, scratch } from './_setup.js'

describe.skipIf(nativeMissing)('cancelling a queued job', () => {
  it('Workspace.cancelJob: the job never runs; only a queued job is cancelled', async () => {
    const { docs, ws: dir } = await scratch()
    await Workspace.init(dir)
    const ws = await Workspace.open(dir)
    try {
      // Queued without running: enqueueAdd does not start the runner.
      const first = await ws.enqueueAdd({ paths: [docs] })
      const second = await ws.enqueueAdd({ paths: [docs] })
      const events: JobEvent[] = []
      const unwatch = ws.watchJobs((e) => events.push(e))

      const cancelled = await ws.cancelJob(first, 'wrong folder')
      expect(JobStatusSchema.parse(cancelled)).toEqual(cancelled)
      expect(cancelled).toMatchObject({ id: first, status: 'cancelled', error: 'cancelled by the owner: wrong folder', receipt: null, steps: [] })
      expect(cancelled.finished_at).toBeGreaterThanOrEqual(cancelled.created_at)
      expect(events).toEqual([{ job_id: first, phase: 'finished' }])
      unwatch()
      expect(await ws.queuedJobs()).toEqual([second])
      expect(await ws.inspect(`job:${first}`)).toEqual(await ws.jobStatus(first))

      // Again, unknown, too long a reason, and a job that has ended: refused, each with its code.
      await expect(ws.cancelJob(first)).rejects.toMatchObject({ code: 'E_CONFLICT', message: expect.stringContaining('is cancelled') })
      await expect(ws.cancelJob(9999)).rejects.toMatchObject({ code: 'E_NOT_FOUND' })
      await expect(ws.cancelJob(second, 'x'.repeat(501))).rejects.toMatchObject({ code: 'E_INVALID_ARGUMENT' })
      expect((await ws.jobStatus(second)).status).toBe('queued')

      // The runner drains the queue: the cancelled job is not in it.
      ws.resumeQueuedJobs()
      await ws.idle()
      expect((await ws.jobStatus(second)).status).toBe('succeeded')
      expect(await ws.jobStatus(first)).toEqual(cancelled)
      await expect(ws.cancelJob(second)).rejects.toMatchObject({ code: 'E_CONFLICT', message: expect.stringContaining('is succeeded') })
      expect((await ws.listJobs()).jobs.map((j) => [j.id, j.status])).toEqual([
        [second, 'succeeded'],
        [first, 'cancelled'],
      ])
      await expect(ws.runJob(first)).rejects.toMatchObject({ code: 'E_CONFLICT' })
    } finally {
      ws.close()
    }
  })

  // The CLI's command object runs here from the sources (dist/ is not rebuilt by this suite):
  // `manage cancel` finds the daemon that owns the workspace and goes through its owner-only route.
  it('through a daemon: POST …/jobs/:job_id/cancel (owner only) and `manage cancel`', async () => {
    const { docs, ws: dir } = await scratch()
    await Workspace.init(dir)
    const daemon = await Daemon.start({ workspaces: [dir], port: 0 })
    try {
      const [project] = daemon.registry.names() as [string]
      const served = daemon.registry.workspace(project)
      // The start's resume of the queue reads it asynchronously: let it finish before enqueueing, or
      // it may take the job this test means to cancel.
      await served.idle()
      const token = (name: 'ownerToken' | 'agentToken') => readFileSync(runtimePath(dir, name), 'utf8').trim()

      const viaHttp = await served.enqueueAdd({ paths: [docs] })
      await expect(connectAdmin(daemon.url, { token: token('agentToken'), project }).cancelJob(viaHttp)).rejects.toMatchObject({ code: 'E_FORBIDDEN' })
      const owner = connectAdmin(daemon.url, { token: token('ownerToken'), project })
      expect(await owner.cancelJob(viaHttp, 'not this one')).toMatchObject({ id: viaHttp, status: 'cancelled', error: 'cancelled by the owner: not this one' })
      await expect(owner.cancelJob(viaHttp)).rejects.toMatchObject({ code: 'E_CONFLICT' })
      await expect(owner.cancelJob(9999)).rejects.toMatchObject({ code: 'E_NOT_FOUND' })
      await expect(owner.cancelJob(viaHttp, 'x'.repeat(501))).rejects.toMatchObject({ code: 'E_INVALID_ARGUMENT' })

      const viaCli = await served.enqueueAdd({ paths: [docs] })
      await runCommand(manage, { rawArgs: ['cancel', `job:${viaCli}`, '--reason', 'from the CLI', '-w', dir] })
      expect(await served.jobStatus(viaCli)).toMatchObject({ status: 'cancelled', error: 'cancelled by the owner: from the CLI' })
      await expect(runCommand(manage, { rawArgs: ['cancel', String(viaCli), '-w', dir] })).rejects.toMatchObject({ code: 'E_CONFLICT' })
      await expect(runCommand(manage, { rawArgs: ['cancel', 'job:x', '-w', dir] })).rejects.toMatchObject({ code: 'E_INVALID_ARGUMENT' })
      expect(await served.queuedJobs()).toEqual([])
    } finally {
      await daemon.stop()
    }
  })
})
