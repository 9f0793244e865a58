import { z } from 'zod'
import { type Route, route } from '../route.js'

export const HealthSchema = z
  .object({
    status: z.literal('ok'),
    instance: z.string().optional().describe("The daemon run's random id, as recorded in runtime/daemon.json (the CLI's liveness handshake)"),
  })
  .describe('Health')

/** `GET /health`: liveness only; unauthenticated, so it says nothing about any project. */
export function health(instance?: string): Route {
  return route({
    method: 'GET',
    path: '/health',
    operationId: 'health',
    summary: 'Liveness check (no authentication; reveals nothing about content)',
    auth: 'none',
    response: HealthSchema,
    handle: async () => ({ status: 'ok' as const, ...(instance ? { instance } : {}) }),
  })
}

/** `GET /openapi.json`: the OpenAPI 3.1 document of every route, generated from the zod contracts. */
export function openapi(document: () => Record<string, unknown>): Route {
  return route({
    method: 'GET',
    path: '/openapi.json',
    operationId: 'openapi',
    summary: 'This API as an OpenAPI 3.1 document (no authentication)',
    auth: 'none',
    response: z.record(z.string(), z.unknown()).describe('OpenAPI 3.1 document'),
    handle: async () => document(),
  })
}
