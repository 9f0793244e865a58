import type { Scope } from '../contracts/runtime.js'
import type { ProjectInfo } from '../contracts/service.js'
import type { Workspace } from '../engine/workspace.js'
import type { Tokens } from '../engine/tokens.js'
import { TychoraError } from '../errors.js'
import { agentClient } from './agent-client.js'
import { tokenEquals } from './token.js'
import type { EvidenceClient, EvidenceService } from '../contracts/client.js'

interface Entry {
  workspace: Workspace
  tokens: Tokens
  allowAgentAdd: boolean
  agent: EvidenceClient
}

/**
 * The projects one daemon serves, by name. Each project has two bearer tokens (`runtime/token`
 * for its owner, `runtime/agent-token` for agents); a call is authorised only with a token of the
 * project it names, and gets the capabilities of that token's scope.
 */
export class ProjectRegistry implements EvidenceService {
  readonly #entries = new Map<string, Entry>()

  register(workspace: Workspace, options: { tokens: Tokens; allowAgentAdd?: boolean }): void {
    const name = workspace.name
    if (this.#entries.has(name)) throw new TychoraError('E_CONFLICT', `two workspaces are named ${name}; rename one in its workspace.toml`)
    if (options.tokens.owner === options.tokens.agent) throw new TychoraError('E_INVALID_ARGUMENT', `project ${name}: the owner and agent tokens must differ`)
    const allowAgentAdd = options.allowAgentAdd ?? false
    this.#entries.set(name, { workspace, tokens: options.tokens, allowAgentAdd, agent: agentClient(workspace, allowAgentAdd) })
  }

  async projects(): Promise<ProjectInfo[]> {
    const out: ProjectInfo[] = []
    for (const [name, e] of this.#entries) {
      const status = await e.workspace.status()
      out.push({ name, dir: e.workspace.dir, snapshot_id: status.current_snapshot?.id ?? null })
    }
    return out
  }

  /**
   * The named project with the capabilities of `scope`: the workspace itself for its owner, the
   * agent-scoped client otherwise. Agent surfaces (MCP) use the default.
   */
  project(name: string, scope: Scope = 'agent'): EvidenceClient {
    const entry = this.#entry(name)
    return scope === 'owner' ? entry.workspace : entry.agent
  }

  workspace(name: string): Workspace {
    return this.#entry(name).workspace
  }

  allowsAgentAdd(name: string): boolean {
    return this.#entry(name).allowAgentAdd
  }

  /**
   * The scope `token` holds on project `name`, or undefined (unknown project or foreign token).
   * Both tokens are always compared, in constant time.
   */
  scopeFor(name: string, token: string): Scope | undefined {
    const entry = this.#entries.get(name)
    if (!entry) return undefined
    const owner = tokenEquals(token, entry.tokens.owner)
    const agent = tokenEquals(token, entry.tokens.agent)
    return owner ? 'owner' : agent ? 'agent' : undefined
  }

  names(): string[] {
    return [...this.#entries.keys()]
  }

  workspaces(): Workspace[] {
    return [...this.#entries.values()].map((e) => e.workspace)
  }

  #entry(name: string): Entry {
    const entry = this.#entries.get(name)
    if (!entry) throw new TychoraError('E_NOT_FOUND', `project not served here: ${name}`)
    return entry
  }
}
