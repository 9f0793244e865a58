import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { JobListSchema, RunListSchema } from '../../ts/contracts/evidence.js'
import { Workspace } from '../../ts/engine/workspace.js'
import { nativeMissing, scratch } from './_setup.js'

describe.skipIf(nativeMissing)('library: the newest-first listings of jobs and runs', () => {
  it('pages jobs (each as jobStatus shows it) and recorded runs by their cursors; a bad limit is E_INVALID_ARGUMENT', async () => {
    const { docs, ws: dir } = await scratch()
    await Workspace.init(dir)
    const ws = await Workspace.open(dir)
    try {
      const jobIds: number[] = []
      for (let i = 0; i < 3; i++) {
        await writeFile(join(docs, `log-${i}.md`), `# Log ${i}\n\nEntry ${i} of the keeper's log.\n`)
        jobIds.push((await ws.add({ paths: [docs] })).job_id)
      }

      const first = await ws.listJobs({ limit: 2 })
      expect(JobListSchema.safeParse(first).success).toBe(true)
      expect(first.jobs.map((j) => j.id)).toEqual([jobIds[2], jobIds[1]])
      expect(first.next_before).toBe(jobIds[1])
      expect(first.jobs[0]).toEqual(await ws.jobStatus(jobIds[2]!))
      expect(first.jobs[0]!.receipt?.job_id).toBe(jobIds[2])
      const second = await ws.listJobs({ limit: 2, before: first.next_before! })
      expect(second.jobs.map((j) => j.id)).toEqual([jobIds[0]])
      expect(second.next_before).toBeNull()
      expect((await ws.listJobs()).jobs).toHaveLength(3)

      const queries = ['conditional request revalidates stale response', 'symbolic links root', "keeper's log entry"]
      const runs: Array<{ id: string; returned: number }> = []
      for (const query of queries) {
        const result = await ws.search({ query, agent_id: 'dashboard' })
        runs.push({ id: result.run_id, returned: result.segments.length })
        // Distinct milliseconds: the listing orders by the time each run was logged.
        await new Promise((resolve) => setTimeout(resolve, 3))
      }
      const page = await ws.listRuns({ limit: 2 })
      expect(RunListSchema.safeParse(page).success).toBe(true)
      expect(page.runs.map((r) => [r.id, r.query, r.results])).toEqual([
        [runs[2]!.id, queries[2], runs[2]!.returned],
        [runs[1]!.id, queries[1], runs[1]!.returned],
      ])
      expect(page.runs[0]!.agent_id).toBe('dashboard')
      expect(page.runs[0]!.task_id).toBeNull()
      expect(page.next_before).toBe(runs[1]!.id)
      const rest = await ws.listRuns({ limit: 2, before: page.next_before! })
      expect(rest.runs.map((r) => r.query)).toEqual([queries[0]])
      expect(rest.next_before).toBeNull()

      await expect(ws.listJobs({ limit: 0 })).rejects.toMatchObject({ code: 'E_INVALID_ARGUMENT' })
      await expect(ws.listRuns({ limit: 501 })).rejects.toMatchObject({ code: 'E_INVALID_ARGUMENT' })
      await expect(ws.listRuns({ before: 'qr_00000000000000000000' })).rejects.toMatchObject({ code: 'E_NOT_FOUND' })
    } finally {
      ws.close()
    }
  })
})
