import { z } from 'zod'
import { InspectSymbolRequestSchema, SymbolReportSchema } from '../../contracts/symbol.js'
import { projectRoute } from '../route.js'

/** `GET /v1/projects/:project/symbols/:name`: a code symbol's definitions, references, callers and callees. */
export const inspectSymbol = projectRoute({
  method: 'GET',
  path: '/v1/projects/:project/symbols/:name',
  operationId: 'inspectSymbol',
  summary: "A code symbol's definitions, each with the references that resolve to it (and their outcome), its callers and its callees, cited to file:line and commit",
  params: z.object({ name: InspectSymbolRequestSchema.shape.name }),
  query: InspectSymbolRequestSchema.omit({ name: true }),
  response: SymbolReportSchema,
  handle: ({ client, params, query }) => client.inspectSymbol({ name: params.name, ...query }),
})
