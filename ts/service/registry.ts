import type { Scope } from '../contracts/runtime.js'
import type { ProjectInfo } from '../contracts/service.js'
import type { Workspace } from '../engine/workspace.js'
import type { Tokens } from '../engine/tokens.js'
import { TychoraError } from '../errors.js'
import { agentClient } from './agent-client.js'
import { tokenEquals } from './token.js'
import type { AdminClient, EvidenceClient, EvidenceService } from '../contracts/client.js'

interface Entry {
  workspace: Workspace
  tokens: Tokens
  allowAgentAdd: boolean
  agent: EvidenceClient
}

/** A name that stands for whichever project `current` resolves to when a call arrives. */
interface Alias {
  tokens: Tokens
  /** The name of the project the alias stands for now (registered before it resolves). */
  current: () => Promise<string>
}

/**
 * The projects one daemon serves, by name. Each project has two bearer tokens (`runtime/token`
 * for its owner, `runtime/agent-token` for agents); a call is authorised only with a token of the
 * project it names, and gets the capabilities of that token's scope.
 */
export class ProjectRegistry implements EvidenceService {
  readonly #entries = new Map<string, Entry>()
  readonly #aliases = new Map<string, Alias>()

  register(workspace: Workspace, options: { tokens: Tokens; allowAgentAdd?: boolean }): void {
    const name = workspace.name
    if (this.#entries.has(name) || this.#aliases.has(name)) throw new TychoraError('E_CONFLICT', `two workspaces are named ${name}; rename one in its workspace.toml`)
    if (options.tokens.owner === options.tokens.agent) throw new TychoraError('E_INVALID_ARGUMENT', `project ${name}: the owner and agent tokens must differ`)
    const allowAgentAdd = options.allowAgentAdd ?? false
    this.#entries.set(name, { workspace, tokens: options.tokens, allowAgentAdd, agent: agentClient(workspace, allowAgentAdd) })
  }

  /**
   * A name that resolves, call by call, to the project `current` names (which it registers
   * first): a knowledge project's `knowledge`, which follows the state the checked-out branch
   * builds, including states built after the daemon started. It has tokens of its own.
   */
  registerAlias(name: string, options: { tokens: Tokens; current: () => Promise<string> }): void {
    if (this.#entries.has(name) || this.#aliases.has(name)) throw new TychoraError('E_CONFLICT', `two projects are named ${name}`)
    if (options.tokens.owner === options.tokens.agent) throw new TychoraError('E_INVALID_ARGUMENT', `project ${name}: the owner and agent tokens must differ`)
    this.#aliases.set(name, { tokens: options.tokens, current: options.current })
  }

  async projects(): Promise<ProjectInfo[]> {
    const out: ProjectInfo[] = []
    for (const [name, e] of this.#entries) {
      const status = await e.workspace.status({ tables: false })
      out.push({ name, dir: e.workspace.dir, snapshot_id: status.current_snapshot?.id ?? null })
    }
    for (const [name, alias] of this.#aliases) {
      const target = this.#entry(await alias.current())
      const status = await target.workspace.status({ tables: false })
      out.push({ name, dir: target.workspace.dir, snapshot_id: status.current_snapshot?.id ?? null })
    }
    return out
  }

  /**
   * The named project with the capabilities of `scope`: the workspace itself for its owner, the
   * agent-scoped client otherwise. Agent surfaces (MCP) use the default. An alias's client
   * resolves its project on every call, so each call answers from the project it stands for then.
   */
  project(name: string, scope: Scope = 'agent'): EvidenceClient {
    const alias = this.#aliases.get(name)
    if (alias) return this.#aliasClient(alias, scope)
    const entry = this.#entry(name)
    return scope === 'owner' ? entry.workspace : entry.agent
  }

  #aliasClient(alias: Alias, scope: Scope): EvidenceClient {
    const now = async () => this.project(await alias.current(), scope)
    return {
      search: async (request) => (await now()).search(request),
      getEvidence: async (id) => (await now()).getEvidence(id),
      listSources: async (options) => (await now()).listSources(options),
      addSource: async (request) => (await now()).addSource(request),
      jobStatus: async (jobId) => (await now()).jobStatus(jobId),
      listSnapshots: async () => (await now()).listSnapshots(),
      inspectSymbol: async (request) => (await now()).inspectSymbol(request),
      proposeChange: async (request) => (await now()).proposeChange(request),
      listProposals: async () => (await now()).listProposals(),
    }
  }

  /**
   * The named project's administration (status, verify, backup, cancel), for its owner only: the caller
   * has authorised the owner's token. An alias resolves on every call, like its client.
   */
  admin(name: string): AdminClient {
    const alias = this.#aliases.get(name)
    const now = async (): Promise<AdminClient> => (alias ? this.#entry(await alias.current()).workspace : this.#entry(name).workspace)
    if (!alias) this.#entry(name) // an unknown project fails now, not on the first call
    return {
      status: async () => (await now()).status(),
      verify: async () => (await now()).verify(),
      backup: async (dest) => (await now()).backup(dest),
      cancelJob: async (jobId, reason) => (await now()).cancelJob(jobId, reason),
    }
  }

  workspace(name: string): Workspace {
    return this.#entry(name).workspace
  }

  /** The workspace `name` stands for now (an alias resolves to its current project), for its owner. */
  async ownerWorkspace(name: string): Promise<Workspace> {
    const alias = this.#aliases.get(name)
    return this.#entry(alias ? await alias.current() : name).workspace
  }

  allowsAgentAdd(name: string): boolean {
    // An alias stands for knowledge states, which no agent adds to.
    return this.#aliases.has(name) ? false : this.#entry(name).allowAgentAdd
  }

  /**
   * The scope `token` holds on project `name`, or undefined (unknown project or foreign token).
   * Both tokens are always compared, in constant time.
   */
  scopeFor(name: string, token: string): Scope | undefined {
    const tokens = this.#entries.get(name)?.tokens ?? this.#aliases.get(name)?.tokens
    if (!tokens) return undefined
    const owner = tokenEquals(token, tokens.owner)
    const agent = tokenEquals(token, tokens.agent)
    return owner ? 'owner' : agent ? 'agent' : undefined
  }

  names(): string[] {
    return [...this.#entries.keys(), ...this.#aliases.keys()]
  }

  /** The names that stand for another project (see `registerAlias`). */
  aliases(): string[] {
    return [...this.#aliases.keys()]
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
