import { QueryRequestSchema } from '../../contracts/query.js'
import { QueryResultSchema } from '../../contracts/result.js'
import { CallContextSchema } from '../../contracts/service.js'
import { validate } from '../body.js'
import { projectRoute } from '../route.js'

export const AGENT_HEADER = 'x-tychora-agent'
export const TASK_HEADER = 'x-tychora-task'

/** `POST /v1/projects/:project/search`: cited evidence for a query (recorded in query_runs). */
export const search = projectRoute({
  method: 'POST',
  path: '/v1/projects/:project/search',
  operationId: 'search',
  summary: 'Search a project: exact + lexical channels, fused; segments with citations and byte-exact locators',
  body: QueryRequestSchema,
  headers: {
    'X-Tychora-Agent': 'Calling agent; recorded with the query unless the body sets agent_id',
    'X-Tychora-Task': 'Calling task; recorded with the query unless the body sets task_id',
  },
  response: QueryResultSchema,
  async handle({ event, client, body }) {
    const headers = validate(
      CallContextSchema,
      { agent_id: event.req.headers.get(AGENT_HEADER) ?? undefined, task_id: event.req.headers.get(TASK_HEADER) ?? undefined },
      'X-Tychora-Agent/X-Tychora-Task header',
    )
    const request = { ...body }
    if (request.agent_id === undefined && headers.agent_id !== undefined) request.agent_id = headers.agent_id
    if (request.task_id === undefined && headers.task_id !== undefined) request.task_id = headers.task_id
    return client.search(request)
  },
})
