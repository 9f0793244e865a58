import { request } from 'node:http'
import type { z } from 'zod'
import type { AdminClient } from '../contracts/client.js'
import { type BackupReport, BackupReportSchema } from '../contracts/operations.js'
import { type JobStatus, JobStatusSchema } from '../contracts/service.js'
import { type Status, StatusSchema, type VerifyReport, VerifyReportSchema } from '../contracts/workspace.js'
import { TychoraError } from '../errors.js'
import { toError } from './http-client.js'

/**
 * A project's administration on a running daemon (status, verify, backup, cancel), with the owner's
 * token (`runtime/token`; the agents' token is refused with E_FORBIDDEN). A verify or backup takes
 * as long as the workspace is large, so the call waits for the answer with no deadline of its own
 * (fetch gives up on a response that has not started within 300 s); a daemon that goes away
 * mid-call is E_IO.
 *
 * @example
 * const admin = connectAdmin('http://127.0.0.1:7419', { token: ownerToken, project: 'docs' })
 * const report = await admin.backup('/backups/docs-2025-06-01')
 */
export function connectAdmin(baseUrl: string, options: { token: string; project: string }): AdminClient {
  const base = baseUrl.replace(/\/+$/, '')
  const projectPath = `/v1/projects/${encodeURIComponent(options.project)}`

  function call<S extends z.ZodType>(schema: S, method: 'GET' | 'POST', path: string, body?: unknown): Promise<z.output<S>> {
    const payload = body === undefined ? undefined : JSON.stringify(body)
    const headers: Record<string, string> = { authorization: `Bearer ${options.token}`, accept: 'application/json' }
    if (payload !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) })
    return new Promise((resolve, reject) => {
      const unreachable = (error: Error) => reject(new TychoraError('E_IO', `cannot reach the daemon at ${base}: ${error.message}`, { cause: error }))
      const req = request(`${base}${path}`, { method, headers }, (response) => {
        const chunks: Buffer[] = []
        response.on('data', (chunk: Buffer) => chunks.push(chunk))
        response.on('error', unreachable)
        response.on('end', () => {
          let parsed: unknown
          try {
            parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'))
          } catch {
            parsed = undefined
          }
          const status = response.statusCode ?? 0
          if (status < 200 || status > 299) return reject(toError(status, parsed))
          const result = schema.safeParse(parsed)
          if (!result.success) return reject(new TychoraError('E_INTERNAL', `response of ${method} ${path} does not match its contract: ${result.error.message}`))
          resolve(result.data)
        })
      })
      req.on('error', unreachable)
      req.end(payload)
    })
  }

  return {
    status: (): Promise<Status> => call(StatusSchema, 'GET', `${projectPath}/status`),
    verify: (): Promise<VerifyReport> => call(VerifyReportSchema, 'POST', `${projectPath}/verify`),
    backup: (dest: string): Promise<BackupReport> => call(BackupReportSchema, 'POST', `${projectPath}/backup`, { dest }),
    cancelJob: (jobId: number, reason?: string): Promise<JobStatus> =>
      call(JobStatusSchema, 'POST', `${projectPath}/jobs/${encodeURIComponent(String(jobId))}/cancel`, reason === undefined ? {} : { reason }),
  }
}
