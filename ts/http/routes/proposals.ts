import { ProposalListSchema, ProposalSchema, ProposeRequestSchema } from '../../contracts/knowledge.js'
import { projectRoute } from '../route.js'

/**
 * `POST /v1/projects/:project/proposals`: an agent proposes a change to approved knowledge. It
 * writes a proposal folder for a person to review (`tychora review`); no route changes approved
 * knowledge, which only `tychora migrate apply` writes from reviewed, checksummed migrations.
 */
export const proposeChange = projectRoute({
  method: 'POST',
  path: '/v1/projects/:project/proposals',
  operationId: 'proposeChange',
  summary: 'Propose a change to approved knowledge (a knowledge project): written for review, nothing approved changes',
  description:
    'The change (create, edit, supersede, sensitivity) with its rationale and the segment ids of its evidence, which must exist in the project’s current state (404 E_NOT_FOUND otherwise). A tenant other than the project’s is refused (403 E_FORBIDDEN).',
  body: ProposeRequestSchema,
  response: ProposalSchema,
  status: 201,
  handle: ({ client, body }) => client.proposeChange(body),
})

/** `GET /v1/projects/:project/proposals`: pending proposals. */
export const listProposals = projectRoute({
  method: 'GET',
  path: '/v1/projects/:project/proposals',
  operationId: 'listProposals',
  summary: 'List pending proposals (what is already proposed and awaiting review)',
  response: ProposalListSchema,
  handle: ({ client }) => client.listProposals(),
})
