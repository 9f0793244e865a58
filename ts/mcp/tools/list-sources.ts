import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { ListSourcesRequestSchema, type SourceList, SourceListSchema } from '../../contracts/service.js'
import { visibleLines } from '../../format/terminal.js'
import { type ToolContext, forProject, projectArg } from '../_tool.js'

export const listSourcesInput = (ctx: ToolContext) => ListSourcesRequestSchema.extend({ project: projectArg(ctx) })

function renderSources(list: SourceList, offset: number): string {
  const head = `snapshot ${list.snapshot_id ?? '–'} · ${list.total} sources${list.sources.length < list.total ? ` · showing ${offset + 1}-${offset + list.sources.length}` : ''}`
  const lines = list.sources.map(
    (s) =>
      `source:${s.id} ${s.path} — ${s.kind ? `${s.kind} (${s.format})` : s.format}, collection ${s.collection}, revision:${s.revision_id} (rev ${s.seq}, sha256 ${s.sha256.slice(0, 12)}), ${s.size} bytes`,
  )
  // Paths are strangers' file names: one line each, whatever they hold.
  return visibleLines([head, ...lines])
}

export function defineListSources(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    'list_sources',
    {
      title: 'List sources',
      description: [
        'List the sources (captured files) in a snapshot of a project, default the current one:',
        'each with id, path, uri, collection, kind (null: none assigned), format and its revision in that snapshot (revision_id, seq, sha256, size).',
        'Returns structuredContent = {snapshot_id, total, sources[]}; page with limit (default 100) and offset.',
        'Pass source:ID or revision:ID to get_evidence for details.',
      ].join(' '),
      inputSchema: listSourcesInput(ctx),
      outputSchema: SourceListSchema,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ project, ...options }) =>
      forProject(ctx, project, async (client) => {
        const list = await client.listSources(options)
        return { content: [{ type: 'text', text: renderSources(list, options.offset ?? 0) }], structuredContent: list }
      }),
  )
}
