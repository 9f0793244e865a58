import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { connect } from '../../ts/client/http-client.js'
import { cli, nativeMissing, scratch } from '../native/_setup.js'
import { projectOf, startDaemon, tokenOf } from './_daemon.js'

const SECONDS = Number(process.env.TYCHORA_LOAD_SECONDS ?? 30)
const CLIENTS = 32
const QUERIES = ['conditional request revalidates', 'freshness lifetime max-age', 'RFC 9110', 'TERM-REVISION', 'symbolic links root', 'ETag validator']

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? 0
}

describe.skipIf(nativeMissing)('load', () => {
  it(
    `${CLIENTS} concurrent clients, mixed search and add, for ${SECONDS} s: zero errors, zero lost jobs`,
    async () => {
      const { dir, docs, ws } = await scratch()
      await cli(['init', ws])
      await cli(['add', '-w', ws, docs])
      const daemon = await startDaemon([ws])
      const errors: string[] = []
      const latencies: number[] = []
      const jobs: number[] = []
      try {
        const deadline = Date.now() + SECONDS * 1000
        await Promise.all(
          Array.from({ length: CLIENTS }, async (_, c) => {
            const client = connect(daemon.url, { token: tokenOf(ws), project: projectOf(ws), agentId: `load-${c}` })
            const own = join(dir, 'incoming', `client-${c}`)
            await mkdir(own, { recursive: true })
            // Each client adds a file about every 8 s (staggered) and searches the rest of the time.
            let nextAdd = Date.now() + (c * 8000) / CLIENTS
            for (let i = 0; Date.now() < deadline; i++) {
              try {
                if (Date.now() >= nextAdd) {
                  nextAdd += 8000
                  const file = join(own, `note-${i}.md`)
                  await writeFile(file, `# Note ${c}-${i}\n\nLoad test note number ${i} from client ${c}.\n`)
                  jobs.push((await client.addSource({ paths: [file] })).job_id)
                } else {
                  const t = performance.now()
                  const r = await client.search({ query: QUERIES[(c + i) % QUERIES.length] as string, limit: 5 })
                  latencies.push(performance.now() - t)
                  if (r.segments.length === 0) errors.push(`empty result for client ${c}`)
                }
              } catch (error) {
                errors.push(String(error))
              }
            }
          }),
        )
        // Every accepted job finishes: none is lost.
        const client = connect(daemon.url, { token: tokenOf(ws), project: projectOf(ws) })
        const finalStatus = new Map<number, string>()
        const end = Date.now() + 120_000
        while (finalStatus.size < jobs.length && Date.now() < end) {
          for (const id of jobs) {
            if (finalStatus.has(id)) continue
            const s = await client.jobStatus(id)
            if (s.receipt !== null || s.status === 'failed' || s.status === 'interrupted') finalStatus.set(id, s.status)
          }
          await new Promise((r) => setTimeout(r, 100))
        }
        const searches = latencies.length
        const summary = {
          clients: CLIENTS,
          seconds: SECONDS,
          searches,
          searches_per_s: +(searches / SECONDS).toFixed(1),
          search_p50_ms: +pct(latencies, 50).toFixed(2),
          search_p99_ms: +pct(latencies, 99).toFixed(2),
          jobs: jobs.length,
          jobs_succeeded: [...finalStatus.values()].filter((s) => s === 'succeeded').length,
          errors: errors.length,
        }
        console.log(`load: ${JSON.stringify(summary)}`)
        expect(errors).toEqual([])
        expect(jobs.length).toBeGreaterThan(0)
        // A job that did not succeed fails the test with its status, not a line on the console.
        expect([...finalStatus].filter(([, s]) => s !== 'succeeded')).toEqual([])
        expect(summary.jobs_succeeded).toBe(jobs.length)
        const sources = await client.listSources({ limit: 1 })
        expect(sources.total).toBe(3 + jobs.length)
      } finally {
        await daemon.stop()
      }
    },
    SECONDS * 1000 + 240_000,
  )
})
