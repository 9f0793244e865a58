import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'
import { ProjectSchema } from '../contracts/service.js'
import { type ErrorCode, TychoraError, toTychoraError } from '../errors.js'
import type { EvidenceClient, EvidenceService } from '../contracts/client.js'

/** What every tool is given: the projects served and the caller's authorisation. */
export interface ToolContext {
  service: EvidenceService
  /** Whether this caller may use the named project (HTTP: the bearer token is that project's). */
  authorize: (project: string) => boolean
  /** The names this caller may use, as the tools' schemas list them (empty when not known without I/O). */
  projects: string[]
  /**
   * The project a tool uses when the call names none: set only where the server serves one
   * workspace by construction (`tychora mcp` over stdio). A daemon serves many agents many
   * projects, so there every call names its own (no implicit project).
   */
  defaultProject?: string
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

/**
 * The `project` argument of every tool on this server, documented for agents: its JSON Schema
 * lists the names the caller may use as an `enum`. Over stdio it defaults to the one workspace
 * served; on a daemon it is required, and leaving it out is an `E_INVALID_ARGUMENT` that names the
 * served projects. A name outside the list is still parsed, so the call answers with what is
 * wrong with it (`E_NOT_FOUND` for a project not served, `E_UNAUTHORIZED` for another's).
 */
export function projectArg(ctx: ToolContext): z.ZodType<string, string | undefined> {
  const names = ctx.projects.length > 0 ? ` (${ctx.projects.join(', ')})` : ''
  if (ctx.defaultProject !== undefined) {
    return ProjectSchema.default(ctx.defaultProject).meta({
      ...(ctx.projects.length > 0 ? { enum: ctx.projects } : {}),
      description: `Project (workspace) name; default ${ctx.defaultProject}, the workspace this server serves`,
    })
  }
  const missing = `project is required: name one of the projects this server serves you${names || '; list_projects lists them'}`
  return z
    .string({ error: (issue) => (issue.input === undefined ? missing : undefined) })
    .pipe(ProjectSchema)
    .meta({
      ...(ctx.projects.length > 0 ? { enum: ctx.projects } : {}),
      description: `Project (workspace) name${names ? `, one of${names}` : ''}; list_projects returns the names this server serves`,
    })
}

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
    if (ctx.projects.length > 0 && !ctx.projects.includes(project)) {
      throw new TychoraError('E_NOT_FOUND', `project not served here: ${project}; this server serves you ${ctx.projects.join(', ')}`)
    }
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
