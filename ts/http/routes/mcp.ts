import type { HTTPMethod } from 'h3'
import { z } from 'zod'
import { limitedRequest, tooLarge } from '../body.js'
import { requestToken } from '../guards.js'
import type { Route } from '../route.js'

/** The MCP Streamable HTTP handler (ts/mcp); it receives the bearer token the guard accepted. */
export type McpHandler = (request: Request, auth: { token: string }) => Promise<Response>

const METHODS: HTTPMethod[] = ['GET', 'POST', 'DELETE']

/**
 * `GET|POST|DELETE /mcp`: the MCP server over Streamable HTTP, behind the same Host, Origin and
 * token checks as every route, with the same body limit. The token must open at least one
 * project; the MCP handler scopes each tool call to the projects that token opens.
 */
export function mcpRoutes(handler: McpHandler): Route[] {
  return METHODS.map((method) => ({
    method,
    path: '/mcp',
    operationId: `mcp${method[0]}${method.slice(1).toLowerCase()}`,
    summary: 'MCP over Streamable HTTP (JSON-RPC); see the Model Context Protocol specification',
    auth: 'token' as const,
    response: z.unknown().describe('JSON-RPC response or event stream'),
    async run(event, deps) {
      const token = requestToken(event)
      const { request, overflowed } = limitedRequest(event, deps.maxBodyBytes)
      const response = await handler(request, { token }).catch((error: unknown) => {
        throw overflowed() ? tooLarge(deps.maxBodyBytes) : error
      })
      // The handler may have turned the overflow into its own JSON-RPC error: answer 413 instead.
      if (overflowed()) {
        await response.body?.cancel().catch(() => undefined)
        throw tooLarge(deps.maxBodyBytes)
      }
      return response
    },
  }))
}
