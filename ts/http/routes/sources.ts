import { isAbsolute } from 'node:path'
import { z } from 'zod'
import { AddRequestSchema } from '../../contracts/ingest.js'
import { TychoraError } from '../../errors.js'
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
 * here can change approved knowledge. What it may capture depends on the token: the owner's may
 * name any directory (registered as a new root when `capture.auto_add_roots` is on); the agents'
 * works only where `[agents] allow_add_source = true`, and only inside existing roots.
 */
export const addSource = projectRoute({
  method: 'POST',
  path: '/v1/projects/:project/sources',
  operationId: 'addSource',
  summary: 'Queue a capture job (add or sync files/directories); poll the job for its receipt',
  description: [
    'Paths must be absolute (400 E_INVALID_ARGUMENT otherwise): they are read on the machine running the daemon, whose working directory means nothing to the caller.',
    "With the owner's token (`runtime/token`) a path outside the workspace's capture roots becomes a new root when `capture.auto_add_roots` is true (the default), and is refused otherwise.",
    "With the agents' token (`runtime/agent-token`) the route answers 403 E_FORBIDDEN unless the workspace sets `[agents] allow_add_source = true`, and then accepts only paths inside roots that already exist (403 E_FORBIDDEN for any other): an agent credential never widens what the workspace reads.",
  ].join(' '),
  body: AddRequestSchema,
  response: JobRefSchema,
  status: 202,
  handle: ({ client, body }) => {
    const relative = body.paths.filter((p) => !isAbsolute(p))
    if (relative.length > 0) throw new TychoraError('E_INVALID_ARGUMENT', `paths must be absolute: ${relative.join(', ')}`)
    return client.addSource(body)
  },
})
