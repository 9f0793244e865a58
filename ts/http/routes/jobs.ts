import { z } from 'zod'
import { JobStatusSchema } from '../../contracts/service.js'
import { projectRoute } from '../route.js'

/** `GET /v1/projects/:project/jobs/:id`: a job's status, steps, progress and receipt. */
export const jobStatus = projectRoute({
  method: 'GET',
  path: '/v1/projects/:project/jobs/:id',
  operationId: 'jobStatus',
  summary: 'Status of a job (queued, running, succeeded, partial, failed, interrupted) with its receipt',
  params: z.object({ id: z.number().int().positive().describe('Job id, as returned by addSource') }),
  response: JobStatusSchema,
  handle: ({ client, params }) => client.jobStatus(params.id),
})
