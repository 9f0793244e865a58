import { SnapshotListSchema } from '../../contracts/service.js'
import { projectRoute } from '../route.js'

/** `GET /v1/projects/:project/snapshots`: published snapshots, the current one flagged. */
export const listSnapshots = projectRoute({
  method: 'GET',
  path: '/v1/projects/:project/snapshots',
  operationId: 'listSnapshots',
  summary: 'List published snapshots (pin one with snapshot_id for a stable view)',
  response: SnapshotListSchema,
  handle: ({ client }) => client.listSnapshots(),
})
