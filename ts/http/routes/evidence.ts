import { z } from 'zod'
import { EvidenceIdSchema, EvidenceSchema } from '../../contracts/service.js'
import { projectRoute } from '../route.js'

/** `GET /v1/projects/:project/evidence/:id`: a segment, source, revision, unit or chunk with its provenance. */
export const getEvidence = projectRoute({
  method: 'GET',
  path: '/v1/projects/:project/evidence/:id',
  operationId: 'getEvidence',
  summary: 'Evidence by id (seg_S_C, source:N, revision:N, extraction:N, unit:N, chunk:N) with its provenance',
  params: z.object({ id: EvidenceIdSchema }),
  response: EvidenceSchema,
  handle: ({ client, params }) => client.getEvidence(params.id),
})
