import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { z } from 'zod'
import { type Proposal, ProposalListSchema, ProposalSchema, ProposeRequestSchema } from '../../contracts/knowledge.js'
import { oneLine } from '../../format/terminal.js'
import { type ToolContext, forProject, projectArg } from '../_tool.js'

export const proposeChangeInput = (ctx: ToolContext) => ProposeRequestSchema.extend({ project: projectArg(ctx) })

const summary = (p: Proposal) =>
  oneLine(
    `${p.id}: ${p.change.op} ${p.change.item}${p.proposed_by.agent ? ` (by ${p.proposed_by.agent}${p.proposed_by.task ? `, task ${p.proposed_by.task}` : ''})` : ''} — ${p.evidence.length} cited segment(s), created ${p.created_at}`,
  )

/**
 * `propose_change`: the one knowledge tool that writes, and it writes only a proposal. Approved
 * knowledge changes when a person accepts it (`tychora review accept`), Git merges the migration,
 * and `tychora migrate apply` runs.
 */
export function defineProposeChange(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    'propose_change',
    {
      title: 'Propose a knowledge change',
      description: [
        "Propose a change to a knowledge project's approved knowledge: create an item (title, kind, Markdown body, optional sensitivity), edit one, supersede one by another, or change its sensitivity.",
        'Give the rationale and the segment ids (from search_evidence) of the evidence that supports it; each must exist in the current state.',
        'This writes a proposal for a person to review; nothing approved changes. Search first: results with trust_level "rejected_approach" are proposals a person already rejected, with the reason.',
        'Returns structuredContent = the proposal (id, change, cited evidence as it stands now, proposed_by).',
      ].join(' '),
      inputSchema: proposeChangeInput(ctx),
      outputSchema: ProposalSchema,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    async ({ project, ...request }) =>
      forProject(ctx, project, async (client) => {
        const proposal = await client.proposeChange(request)
        return {
          content: [{ type: 'text', text: `proposed ${summary(proposal)}; a person reviews it with \`tychora review\`` }],
          structuredContent: proposal,
        }
      }),
  )
}

export const listProposalsInput = (ctx: ToolContext) => z.object({ project: projectArg(ctx) }).strict()

export function defineListProposals(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    'list_proposals',
    {
      title: 'List pending proposals',
      description: 'The proposals awaiting review in a knowledge project, so you do not propose the same change twice. Returns structuredContent = {proposals[], unreadable[]}.',
      inputSchema: listProposalsInput(ctx),
      outputSchema: ProposalListSchema,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ project }) =>
      forProject(ctx, project, async (client) => {
        const list = await client.listProposals()
        const lines = list.proposals.map(summary)
        return { content: [{ type: 'text', text: lines.length > 0 ? lines.join('\n') : 'no pending proposals' }], structuredContent: list }
      }),
  )
}
