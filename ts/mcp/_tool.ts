import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { ProjectSchema } from '../contracts/service.js'
import { type ErrorCode, TychoraError, toTychoraError } from '../errors.js'
import type { EvidenceClient, EvidenceService } from '../contracts/client.js'

/** What every tool is given: the projects served and the caller's authorisation. */
export interface ToolContext {
  service: EvidenceService
  /** Whether this caller may use the named project (HTTP: the bearer token is that project's). */
  authorize: (project: string) => boolean
}

/**
 * Names of the projects a service serves, where it can list them without I/O (`ProjectRegistry`
 * can; `EvidenceService` itself only has the async `projects()`). Empty when it cannot.
 */
export function servedNames(service: EvidenceService): string[] {
  const names = (service as Partial<{ names: () => string[] }>).names
  return typeof names === 'function' ? names.call(service) : []
}

/** `_meta` key of a tool error's `{code, message}`. */
export const ERROR_META = 'tychora/error'

/** The `project` field of every tool, documented for agents. */
export const ProjectArg = ProjectSchema.describe('Project (workspace) name; list_projects returns the names this server serves')

/**
 * A failed call as a tool result (not a protocol error): `isError`, a text line
 * `error[E_CODE]: message` an agent can read and act on, and `{code, message}` in `_meta`.
 *
 * The code is not in `structuredContent`: SDK 1.x clients (1.32.2 included) validate an error
 * result's `structuredContent` against the tool's `outputSchema` and throw, so the agent would lose
 * the message (modelcontextprotocol/typescript-sdk#1943, #2748). v2 clients skip that check.
 */
export function toolError(error: unknown): CallToolResult {
  const e = toTychoraError(error)
  let message = e.message
  if (e.code === 'E_INTERNAL') {
    // Details of a bug stay in the server log (stderr; stdout may belong to the protocol).
    process.stderr.write(`tychora mcp: internal error: ${e.message}\n${e.cause instanceof Error && e.cause.stack ? `${e.cause.stack}\n` : ''}`)
    message = 'internal error; the server log has the details'
  }
  return {
    isError: true,
    content: [{ type: 'text', text: `error[${e.code}]: ${message}` }],
    _meta: { [ERROR_META]: { code: e.code, message } },
  }
}

/**
 * Runs a tool body against one project: the caller must be authorised for it and the server must
 * serve it; any failure becomes a coded tool error.
 */
export async function forProject(ctx: ToolContext, project: string, body: (client: EvidenceClient) => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    if (!ctx.authorize(project)) throw new TychoraError('E_UNAUTHORIZED', `this token does not grant access to project ${project}`)
    return await body(ctx.service.project(project))
  } catch (error) {
    return toolError(error)
  }
}

/**
 * The SDK answers arguments that fail the input schema, and unknown tools, with a plain-text tool
 * error that carries no code. Route those through `toolError` so every tool error has one shape.
 * `createToolError` is private to the SDK; if it goes away the SDK's own text remains, and the
 * invalid-arguments test in test/surfaces/mcp.test.ts says so.
 */
export function codeSdkToolErrors(server: McpServer): void {
  const target = server as unknown as { createToolError?: (message: string) => CallToolResult }
  if (typeof target.createToolError !== 'function') return
  target.createToolError = (raw: string) => {
    const message = raw.replace(/^MCP error -?\d+: /, '')
    const code: ErrorCode = /Input validation error/.test(message) ? 'E_INVALID_ARGUMENT' : /^Tool \S+ (not found|disabled)/.test(message) ? 'E_NOT_FOUND' : 'E_INTERNAL'
    return toolError(new TychoraError(code, message))
  }
}

/** Text content for results whose rendering is their JSON (small objects). */
export function jsonText(value: unknown): CallToolResult['content'] {
  return [{ type: 'text', text: JSON.stringify(value, null, 2) }]
}
