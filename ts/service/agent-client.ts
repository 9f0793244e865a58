import { isAbsolute } from 'node:path'
import type { AddRequest } from '../contracts/ingest.js'
import type { Workspace } from '../engine/workspace.js'
import { TychoraError } from '../errors.js'
import type { EvidenceClient } from '../contracts/client.js'

/**
 * One project as an agent may use it: every read of the workspace, and adds only when the
 * workspace allows agents to add (`[agents] allow_add_source`), only by absolute path, and only
 * inside the roots the owner set (the engine refuses the rest with `E_FORBIDDEN`, and judges a
 * queued agent job again when it runs). It is the only client the agent-facing surfaces (MCP, the
 * agent token over HTTP) ever get, so no agent credential can widen what the workspace reads.
 */
export function agentClient(workspace: Workspace, allowAdd: boolean): EvidenceClient {
  return {
    search: (request) => workspace.search(request),
    getEvidence: (id) => workspace.getEvidence(id),
    listSources: (options) => workspace.listSources(options),
    jobStatus: (jobId) => workspace.jobStatus(jobId),
    listSnapshots: () => workspace.listSnapshots(),
    inspectSymbol: (request) => workspace.inspectSymbol(request),
    // Proposing is what agents do with knowledge: it writes a proposal, never approved state.
    proposeChange: (request) => workspace.proposeChange(request),
    listProposals: () => workspace.listProposals(),
    async addSource(request: AddRequest) {
      if (!allowAdd) {
        throw new TychoraError('E_FORBIDDEN', `project ${workspace.name} does not let agents add sources ([agents] allow_add_source = false in its workspace.toml)`)
      }
      const relative = request.paths.filter((p) => !isAbsolute(p))
      if (relative.length > 0) throw new TychoraError('E_INVALID_ARGUMENT', `paths must be absolute: ${relative.join(', ')}`)
      return workspace.addSource(request, { requester: 'agent' })
    },
  }
}
