import type { ProjectInfo } from '../contracts/service.js'
import type { Workspace } from '../engine/workspace.js'
import { TychoraError } from '../errors.js'
import type { EvidenceClient, EvidenceService } from './types.js'

interface Entry {
  workspace: Workspace
  token: string
  allowAgentAdd: boolean
}

/**
 * The projects one daemon serves, by name. Each project keeps its own bearer token
 * (`runtime/token` of its workspace); a call is authorised only with the token of the project it
 * names.
 */
export class ProjectRegistry implements EvidenceService {
  readonly #entries = new Map<string, Entry>()

  register(workspace: Workspace, options: { token: string; allowAgentAdd?: boolean }): void {
    const name = workspace.name
    if (this.#entries.has(name)) throw new TychoraError('E_CONFLICT', `two workspaces are named ${name}; rename one in its workspace.toml`)
    this.#entries.set(name, { workspace, token: options.token, allowAgentAdd: options.allowAgentAdd ?? false })
  }

  async projects(): Promise<ProjectInfo[]> {
    const out: ProjectInfo[] = []
    for (const [name, e] of this.#entries) {
      const status = await e.workspace.status()
      out.push({ name, dir: e.workspace.dir, snapshot_id: status.current_snapshot?.id ?? null })
    }
    return out
  }

  project(name: string): EvidenceClient {
    return this.#entry(name).workspace
  }

  workspace(name: string): Workspace {
    return this.#entry(name).workspace
  }

  allowsAgentAdd(name: string): boolean {
    return this.#entry(name).allowAgentAdd
  }

  /** The bearer token of a project, or undefined if the daemon does not serve it. */
  tokenFor(name: string): string | undefined {
    return this.#entries.get(name)?.token
  }

  /** Names of the projects whose token equals `token` (compared in constant time by the caller). */
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
