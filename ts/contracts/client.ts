import type { AddRequest } from './ingest.js'
import type { BackupReport } from './operations.js'
import type { Status, VerifyReport } from './workspace.js'
import type { Proposal, ProposalList, ProposeRequest } from './knowledge.js'
import type { QueryRequest } from './query.js'
import type { QueryResult } from './result.js'
import type { InspectSymbolRequest, SymbolReport } from './symbol.js'
import type { Evidence, JobRef, JobStatus, ListSourcesRequest, ProjectInfo, SnapshotList, SourceList } from './service.js'

/**
 * One project's evidence, the same interface in-process (`openWorkspace`) and over HTTP
 * (`connect`). Every surface (CLI, HTTP, MCP) is written against it, so they cannot drift apart.
 */
export interface EvidenceClient {
  search(request: QueryRequest): Promise<QueryResult>
  /** A segment (`seg_S_C`), `source:N`, `revision:N`, `unit:N` or `chunk:N` with its provenance. */
  getEvidence(id: string): Promise<Evidence>
  listSources(options?: Omit<ListSourcesRequest, 'project'>): Promise<SourceList>
  /** Queues an add/sync job; it runs on the project's single writer. */
  addSource(request: AddRequest): Promise<JobRef>
  jobStatus(jobId: number): Promise<JobStatus>
  listSnapshots(): Promise<SnapshotList>
  /** A code symbol's definitions, with the references, callers and callees of each (code workspaces). */
  inspectSymbol(request: InspectSymbolRequest): Promise<SymbolReport>
  /**
   * Proposes a change to the project's approved knowledge (a knowledge project's state only):
   * writes a proposal folder for a person to review; approved knowledge does not change.
   */
  proposeChange(request: ProposeRequest): Promise<Proposal>
  /** Pending proposals, so an agent sees what is already proposed. */
  listProposals(): Promise<ProposalList>
}

/**
 * The administration of one project that needs no exclusive lock, the same in-process (an open
 * `Workspace`) and through a daemon (`connectAdmin`, the owner's token only): what `manage
 * status`, `verify`, `backup` and `cancel` do, so they work while the workspace serves.
 */
export interface AdminClient {
  status(): Promise<Status>
  /** Re-hashes every artifact and checks snapshots against their indexes (jobs wait meanwhile). */
  verify(): Promise<VerifyReport>
  /** Writes a verified copy to `dest` (an absolute path on the machine that owns the workspace). */
  backup(dest: string): Promise<BackupReport>
  /**
   * Cancels a queued job before it runs (`cancelled`, `error` says why); E_CONFLICT for a running
   * job (a job stops only at its safe points) or one that has ended, E_NOT_FOUND for an unknown one.
   */
  cancelJob(jobId: number, reason?: string): Promise<JobStatus>
}

/** Many projects behind one daemon. There is no implicit current project. */
export interface EvidenceService {
  projects(): Promise<ProjectInfo[]>
  /**
   * The named project as an agent may use it (adds only inside existing roots, and only where the
   * workspace allows agents to add); `E_NOT_FOUND` if the daemon does not serve it.
   */
  project(name: string): EvidenceClient
  /** Whether agents may add sources to this project (workspace config; off by default). */
  allowsAgentAdd(name: string): boolean
}
