import { z } from 'zod'
import { AddRequestSchema } from '../../contracts/ingest.js'
import { EvidenceSchema, JobRefSchema, ListSourcesRequestSchema, SourceListSchema } from '../../contracts/service.js'
import { projectRoute } from '../route.js'

/** `GET /v1/projects/:project/sources`: the sources of a snapshot (current by default), paged. */
export const listSources = projectRoute({
  method: 'GET',
  path: '/v1/projects/:project/sources',
  operationId: 'listSources',
  summary: 'List the sources of a snapshot (default: the current one), paged',
  query: ListSourcesRequestSchema.omit({ project: true }),
  response: SourceListSchema,
  handle: ({ client, query }) => client.listSources(query),
})

/** `GET /v1/projects/:project/sources/:id`: one source (`source:<id>`) with its provenance. */
export const getSource = projectRoute({
  method: 'GET',
  path: '/v1/projects/:project/sources/:id',
  operationId: 'getSource',
  summary: 'A source by id, with its revisions (same as evidence source:<id>)',
  params: z.object({ id: z.number().int().positive().describe('Source id') }),
  response: EvidenceSchema,
  handle: ({ client, params }) => client.getEvidence(`source:${params.id}`),
})

/**
 * `POST /v1/projects/:project/sources`: queues an add/sync job on the project's single writer and
 * answers 202 at once. This is the only route that writes, and it only queues capture: nothing
 * here can change approved knowledge.
 */
export const addSource = projectRoute({
  method: 'POST',
  path: '/v1/projects/:project/sources',
  operationId: 'addSource',
  summary: "Queue a capture job (add or sync files/directories inside the workspace's roots); poll the job for its receipt",
  body: AddRequestSchema,
  response: JobRefSchema,
  status: 202,
  handle: ({ client, body }) => client.addSource(body),
})
