import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { InspectSymbolRequestSchema, SymbolReportSchema } from '../../contracts/symbol.js'
import { symbolToMarkdown } from '../../format/symbol.js'
import { type ToolContext, forProject, projectArg } from '../_tool.js'

export const inspectSymbolInput = (ctx: ToolContext) => InspectSymbolRequestSchema.extend({ project: projectArg(ctx) })

export function defineInspectSymbol(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    'inspect_symbol',
    {
      title: 'Inspect a code symbol',
      description: [
        'For code projects: the definitions of a symbol (simple name like parse_args, qualified like Workspace.search, or a symbol path),',
        'each cited to file:line and commit, with the references that resolve to it and their outcome, its callers and its callees,',
        'plus the sites naming it that did not resolve (with the reason). Resolution is syntactic (scope rules and import bindings), not a compiler.',
        'Returns structuredContent = the report.',
      ].join(' '),
      inputSchema: inspectSymbolInput(ctx),
      outputSchema: SymbolReportSchema,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ project, ...request }) =>
      forProject(ctx, project, async (client) => {
        const report = await client.inspectSymbol(request)
        return { content: [{ type: 'text', text: symbolToMarkdown(report) }], structuredContent: report }
      }),
  )
}
