import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { JobStatusRequestSchema, JobStatusSchema } from '../../contracts/service.js'
import { type ToolContext, forProject, jsonText, projectArg } from '../_tool.js'

export const jobStatusInput = (ctx: ToolContext) => JobStatusRequestSchema.extend({ project: projectArg(ctx) })

export function defineJobStatus(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    'job_status',
    {
      title: 'Capture job status',
      description: [
        'Status of a capture job, by the job_id add_source returned: queued, running, succeeded, partial, failed, interrupted or cancelled (by the owner, before it ran),',
        'with progress {phase, done, total} while it runs and, once done, its receipt: files added/changed/unchanged/removed/failed,',
        'per-file diagnostics, and the snapshot it published (search it with snapshot_id). Returns structuredContent = the job.',
      ].join(' '),
      inputSchema: jobStatusInput(ctx),
      outputSchema: JobStatusSchema,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ project, job_id }) =>
      forProject(ctx, project, async (client) => {
        const job = await client.jobStatus(job_id)
        return { content: jsonText(job), structuredContent: job }
      }),
  )
}
