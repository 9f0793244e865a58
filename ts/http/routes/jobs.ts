import { z } from 'zod'
import { CancelJobRequestSchema, JobStatusSchema } from '../../contracts/service.js'
import { projectRoute } from '../route.js'

/** `GET /v1/projects/:project/jobs/:id`: a job's status, steps, progress and receipt. */
export const jobStatus = projectRoute({
  method: 'GET',
  path: '/v1/projects/:project/jobs/:id',
  operationId: 'jobStatus',
  summary: 'Status of a job (queued, running, succeeded, partial, failed, interrupted, cancelled) with its receipt',
  params: z.object({ id: z.number().int().positive().describe('Job id, as returned by addSource') }),
  response: JobStatusSchema,
  handle: ({ client, params }) => client.jobStatus(params.id),
})

/** `POST /v1/projects/:project/jobs/:job_id/cancel`: the owner takes a queued job off the queue. */
export const cancelJob = projectRoute({
  method: 'POST',
  path: '/v1/projects/:project/jobs/:job_id/cancel',
  operationId: 'cancelJob',
  summary: 'Cancel a queued job before it runs (what `tychora manage cancel` does); it never runs',
  description: [
    'The job becomes `cancelled`: `finished_at` is when, `error` is "cancelled by the owner" followed by ": reason" when one is given.',
    'A running job is 409 E_CONFLICT (a job stops only at its safe points), and so is one that has ended or was cancelled already; an unknown job is 404 E_NOT_FOUND.',
  ].join(' '),
  ownerOnly: true,
  errors: ['E_CONFLICT'],
  params: z.object({ job_id: z.number().int().positive().describe('Job id, as returned by addSource') }),
  body: CancelJobRequestSchema,
  response: JobStatusSchema,
  handle: ({ registry, project, params, body }) => registry.admin(project).cancelJob(params.job_id, body.reason),
})
