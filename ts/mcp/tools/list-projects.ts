import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { z } from 'zod'
import { ProjectInfoSchema } from '../../contracts/service.js'
import { type ToolContext, toolError } from '../_tool.js'

export const ListProjectsOutputSchema = z.object({ projects: z.array(ProjectInfoSchema.extend({ allow_add_source: z.boolean() })) })

export function defineListProjects(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    'list_projects',
    {
      title: 'List projects',
      description: [
        'List the projects (workspaces) this server serves to you: name, directory, current snapshot_id, and whether add_source is allowed.',
        'Every other tool takes one of these names as `project`. Returns structuredContent = {projects[]}.',
      ].join(' '),
      inputSchema: z.object({}).strict(),
      outputSchema: ListProjectsOutputSchema,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async () => {
      try {
        const projects = (await ctx.service.projects()).filter((p) => ctx.authorize(p.name)).map((p) => ({ ...p, allow_add_source: ctx.service.allowsAgentAdd(p.name) }))
        const text =
          projects.length === 0 ? 'no projects' : projects.map((p) => `${p.name} — snapshot ${p.snapshot_id ?? 'none'}${p.allow_add_source ? ', add_source allowed' : ''} (${p.dir})`).join('\n')
        return { content: [{ type: 'text', text }], structuredContent: { projects } }
      } catch (error) {
        return toolError(error)
      }
    },
  )
}
