import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { AddSourceRequestSchema, JobRefSchema } from '../../contracts/service.js'
import { type ToolContext, forProject, jsonText, projectArg } from '../_tool.js'

// Labels are the owner's to set (the core refuses an agent's), so the tool does not offer one.
export const addSourceInput = (ctx: ToolContext) => AddSourceRequestSchema.omit({ sensitivity: true }).extend({ project: projectArg(ctx) })

/**
 * The one tool that writes, and all it can do is queue a capture job: sources come in as quoted
 * material on the project's single writer. Nothing here edits or approves knowledge.
 */
export function defineAddSource(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    'add_source',
    {
      title: 'Add or sync sources',
      description: [
        'Queue a capture job that adds files or directories to a project (Markdown, text, JSON, JSONL); a directory added again is synced',
        "(new, changed and removed files). Paths must be absolute, on the machine running this server, and inside the project's",
        'existing capture roots (E_FORBIDDEN otherwise: agents cannot add roots).',
        'Returns structuredContent = {project, job_id, status: "queued"} at once; poll job_status with job_id until it is done.',
        'New evidence becomes searchable when the job publishes a snapshot. Only projects whose workspace.toml sets',
        '[agents] allow_add_source = true accept this (E_FORBIDDEN otherwise).',
      ].join(' '),
      inputSchema: addSourceInput(ctx),
      outputSchema: JobRefSchema,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async ({ project, ...request }) =>
      forProject(ctx, project, async (client) => {
        // The agent-scoped client refuses projects that do not allow it, relative paths, and
        // paths outside the existing roots.
        const job = await client.addSource(request)
        return { content: jsonText(job), structuredContent: job }
      }),
  )
}
