import type { ProjectInfo } from '../contracts/service.js'
import { TychoraError } from '../errors.js'
import type { EvidenceClient, EvidenceService } from '../contracts/client.js'

/**
 * One project served by a running daemon, seen through the HTTP client: lets `tychora mcp` proxy
 * to the daemon that owns the workspace instead of fighting it for the lock.
 */
export class RemoteProjectService implements EvidenceService {
  readonly #client: EvidenceClient & { projects(): Promise<ProjectInfo[]> }
  readonly #name: string

  constructor(client: EvidenceClient & { projects(): Promise<ProjectInfo[]> }, name: string) {
    this.#client = client
    this.#name = name
  }

  projects(): Promise<ProjectInfo[]> {
    return this.#client.projects()
  }

  project(name: string): EvidenceClient {
    if (name !== this.#name) throw new TychoraError('E_NOT_FOUND', `project not served here: ${name}`)
    return this.#client
  }

  /** A stdio proxy never offers add_source; agents that may add sources use the daemon's /mcp. */
  allowsAgentAdd(): boolean {
    return false
  }
}
