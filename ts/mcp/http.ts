import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import type { ProjectRegistry } from '../service/registry.js'
import { createMcpServer } from './server.js'

function methodNotAllowed(): Response {
  const body = {
    jsonrpc: '2.0',
    error: { code: -32000, message: 'Method not allowed: this MCP endpoint is stateless; POST JSON-RPC messages' },
    id: null,
  }
  return new Response(JSON.stringify(body), { status: 405, headers: { 'content-type': 'application/json', allow: 'POST' } })
}

/**
 * MCP over Streamable HTTP, stateless: every POST gets a fresh server and transport, answered as
 * JSON. A call may use a project only if the request's bearer token is one of that project's.
 *
 * The caller (the HTTP app) has already checked Host, Origin, body size and that the token is
 * some served project's: the SDK validates Host/Origin only in its Express/Hono helpers.
 */
export function createMcpHttpHandler(registry: ProjectRegistry): (request: Request, auth: { token: string }) => Promise<Response> {
  return async (request, auth) => {
    // No sessions, so there is no server-to-client stream (GET) and nothing to delete (DELETE).
    if (request.method !== 'POST') return methodNotAllowed()
    // Either token of a project opens it; the tools act with the agent scope whichever it is (MCP is
    // the agents' surface), so even the owner's token cannot widen the roots from here.
    const server = createMcpServer(registry, { authorize: (project) => registry.scopeFor(project, auth.token) !== undefined })
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
    await server.connect(transport)
    try {
      // In JSON mode this resolves once every response of the POST is ready.
      return await transport.handleRequest(request)
    } finally {
      await server.close()
    }
  }
}
