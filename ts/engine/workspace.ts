import { existsSync, readFileSync } from 'node:fs'
import type { z } from 'zod'
import { basename, dirname, join } from 'node:path'
import type { AddPlan, AddRequest, Progress, RebuildReport, Receipt, Requester } from '../contracts/ingest.js'
import type { ClusterSummarizer, ImageDescriber, ProviderNeeds, TextProviders } from '../contracts/provider.js'
import type { DescribeReport, DescriptionEntry } from '../contracts/description.js'
import { runtimePath } from '../contracts/runtime.js'
import { type QueryRequest, QueryRequestSchema } from '../contracts/query.js'
import type { QueryResult } from '../contracts/result.js'
import type { InspectSymbolRequest, SymbolReport } from '../contracts/symbol.js'
import type { Evidence, JobRef, JobStatus, ListSourcesRequest, SnapshotList, SourceList } from '../contracts/service.js'
import type { JobList, RunList } from '../contracts/evidence.js'
import type { InitReport, Status, VerifyReport } from '../contracts/workspace.js'
import type { BackupReport, CompactReport, Finding, PurgeReport, RelabelReport, RunRecord, SummaryReport, WithdrawReport } from '../contracts/operations.js'
import type { ListRecordsRequest, RecordDetail, RecordList } from '../contracts/records.js'
import type { DeclareRelationRequest, ListRelationsRequest, RelationAssertion } from '../contracts/relations.js'
import type { AdminClient, EvidenceClient } from '../contracts/client.js'
import type { CitedEvidence, Proposal, ProposalList, ProposeRequest } from '../contracts/knowledge.js'
import { PROJECT_FILE, type ProjectPaths, projectPaths } from '../knowledge/paths.js'
import { ensureValid } from '../contracts/validate.js'
import { type JobEvent, JobRunner } from './job-runner.js'
export type { JobEvent } from './job-runner.js'
import type { PdfCall, Stamp, SummarizeCall } from '../native/index.cjs'
import type { DrawnPage, RenderOptions, RenderedRegion } from './render.js'
import type { FileContext } from './file-context.js'
import { TychoraError } from '../errors.js'
import { callNative, callNativeSync } from './call-native.js'
import { type NativeWorkspace, native } from './native.js'
import { VALIDATE_OUTPUT, checked, parseJson } from './parse.js'

/**
 * The PDF reader (pdf.js in worker threads) loads with the first PDF a job reads, not with every
 * workspace: a search never needs it.
 */
const readPdf = async (call: PdfCall) => (await import('../extract/pdf.js')).readPdf(call)

/**
 * Contract modules other than search's request load on first use: evaluating every zod schema
 * when the module loads cost a CLI `search` about 30 ms of its 170 (issue 11). Results are checked
 * only where `VALIDATE_OUTPUT` is on, so search's result schema loads only there; a dynamic
 * import of a module already loaded is one microtask.
 */
const contracts = {
  result: () => import('../contracts/result.js'),
  ingest: () => import('../contracts/ingest.js'),
  description: () => import('../contracts/description.js'),
  symbol: () => import('../contracts/symbol.js'),
  service: () => import('../contracts/service.js'),
  evidence: () => import('../contracts/evidence.js'),
  workspace: () => import('../contracts/workspace.js'),
  operations: () => import('../contracts/operations.js'),
  records: () => import('../contracts/records.js'),
  relations: () => import('../contracts/relations.js'),
}
const resultSchema = async () => (await contracts.result()).QueryResultSchema

type Contracts = typeof contracts
type ContractModule<M extends keyof Contracts> = Awaited<ReturnType<Contracts[M]>>
type SchemaName<M extends keyof Contracts> = { [K in keyof ContractModule<M>]: ContractModule<M>[K] extends z.ZodType ? K : never }[keyof ContractModule<M>]
type SchemaOf<M extends keyof Contracts, S extends SchemaName<M>> = ContractModule<M>[S] extends z.ZodType ? ContractModule<M>[S] : never

/**
 * One native call and its answer, checked against its contract `module.schema` where checking is
 * on (`checked`); the contract module is loaded only then.
 */
async function answer<M extends keyof Contracts, S extends SchemaName<M>>(module: M, schema: S, call: () => Promise<z.output<SchemaOf<M, S>>>): Promise<z.output<SchemaOf<M, S>>> {
  const value = await callNative(call)
  if (!VALIDATE_OUTPUT) return value
  const loaded = (await contracts[module]()) as unknown as Record<S, SchemaOf<M, S>>
  return checked(loaded[schema], value)
}

export interface AddOptions {
  /** Called with progress events; errors thrown by it are swallowed so they cannot kill the job. */
  onProgress?: (progress: Progress) => void
}

export interface RequestOptions {
  /**
   * Who asks (default `owner`: whoever holds this handle holds the workspace lock). `agent`
   * captures only inside existing roots, by absolute path; surfaces that serve agents pass it.
   */
  requester?: Requester
}

/**
 * An open workspace. Every method validates its input with the zod contract (unless the surface
 * that received it already did), runs the work in Rust off the event loop, and returns
 * contract-typed results.
 *
 * @example
 * const ws = await openWorkspace('./my-ws')
 * const result = await ws.search({ query: 'snapshot publication', limit: 5 })
 * for (const s of result.segments) console.log(s.citation, s.text)
 * ws.close()
 */
export class Workspace implements EvidenceClient, AdminClient {
  readonly #native: NativeWorkspace
  readonly #jobs: JobRunner
  /** Why a configured provider cannot be called from here (no API key): plans say so up front. */
  readonly #unavailable: string[]

  private constructor(handle: NativeWorkspace, unavailable: string[] = []) {
    this.#native = handle
    this.#unavailable = unavailable
    this.#jobs = new JobRunner((id, onProgress) => this.runJob(id, onProgress ? { onProgress } : {}))
    this.#jobs.source(() => this.queuedJobs())
    // Merging index segments is never on an add's critical path: it runs once the queue is empty.
    // (Retention runs in the engine at the end of every job that publishes, whoever ran it.)
    this.#jobs.maintain(() => this.compact())
  }

  /**
   * Opens the workspace in `dir`, taking its lock. Fails with `E_LOCKED` if another process owns it.
   * `providers` are the network providers its configuration names (see `Workspace.providerNeeds`);
   * the engine calls them from its worker threads.
   */
  static async open(dir: string, options: { providers?: TextProviders } = {}): Promise<Workspace> {
    try {
      // PDFs are read by pdf.js in worker threads (ts/extract), started on the first PDF.
      const hooks = { ...(options.providers ? toHooks(options.providers) : {}), read_pdf: readPdf }
      const providers = options.providers
      const unavailable = [providers?.embedder?.unavailable, providers?.visual?.unavailable].filter((u): u is string => u !== undefined)
      return new Workspace(await callNative(() => native().openWorkspace(dir, hooks)), unavailable)
    } catch (error) {
      if (error instanceof TychoraError && error.code === 'E_LOCKED') {
        const owner = daemonOwner(dir)
        if (owner)
          throw new TychoraError('E_LOCKED', `${error.message} — it is served by the daemon on port ${owner.port} (${owner.url}); use connect() or stop it`, {
            cause: error,
          })
      }
      throw error
    }
  }

  /**
   * Creates a workspace in `dir` (workspace.toml, corpus.sqlite3, artifacts/, indexes/, runtime/)
   * and its bearer tokens for the daemon (`runtime/token` for the owner, `runtime/agent-token`
   * for agents; mode 0600).
   */
  static async init(dir: string, options: { profile?: 'documents' | 'code' | 'verified'; embeddings?: 'local' | 'voyage' } = {}): Promise<InitReport> {
    const report = await answer('workspace', 'InitReportSchema', () => native().initWorkspace(dir, options.profile, options.embeddings))
    await (await import('./tokens.js')).ensureTokens(report.dir)
    return report
  }

  /** The network providers the workspace in `dir` configures, resolved against its pack (none for the local model). */
  static providerNeeds(dir: string): ProviderNeeds {
    const needs = callNativeSync(() => native().providerNeeds(dir))
    return {
      ...(needs.embeddings ? { embeddings: { ...needs.embeddings, dimension: needs.embeddings.dimension ?? undefined } } : {}),
      ...(needs.rerank ? { rerank: needs.rerank } : {}),
      ...(needs.visual ? { visual: { ...needs.visual, dimension: needs.visual.dimension ?? undefined } } : {}),
    }
  }

  /** Applies pending schema migrations; returns the versions applied. */
  /**
   * Attaches the workspace in `dir` to a service several daemons share: its canonical rows in the
   * PostgreSQL database `store`, its artifacts in the bucket `artifacts` (`s3://bucket/prefix`,
   * at `endpoint` when not AWS), its lexical generations on the OpenSearch cluster `search`
   * (`opensearch://host:port[,host:port…]`). Credentials come from the environment only
   * (`PGPASSWORD`, `AWS_*`, `TYCHORA_OPENSEARCH_USER`/`_PASSWORD`). Resolves to whether workspace.toml changed; a folder that names another store, or
   * holds evidence of its own, is refused (`E_INVALID_ARGUMENT`).
   */
  static async attachService(dir: string, settings: { store?: string; artifacts?: string; endpoint?: string; search?: string }): Promise<boolean> {
    return callNative(() => native().attachService(dir, settings.store, settings.artifacts, settings.endpoint, settings.search))
  }

  static async migrate(dir: string): Promise<number[]> {
    return callNative(() => native().migrateWorkspace(dir))
  }

  get dir(): string {
    return callNativeSync(() => this.#native.dir)
  }

  async search(request: QueryRequest, options: { signal?: AbortSignal } = {}): Promise<QueryResult> {
    const input = ensureValid(QueryRequestSchema, request)
    return parseJson(resultSchema, await callNative(() => this.#native.search(input, options.signal)))
  }

  /** Runs many queries in one native crossing (evaluation, benchmarks). */
  async searchBatch(requests: QueryRequest[], options: { signal?: AbortSignal } = {}): Promise<QueryResult[]> {
    const inputs = requests.map((r) => ensureValid(QueryRequestSchema, r))
    return parseJson(async () => (await resultSchema()).array(), await callNative(() => this.#native.searchBatch(inputs, options.signal)))
  }

  /**
   * Adds or syncs paths as one job. `stamp` marks the capture as curated knowledge (only
   * `migrate apply` passes one; no surface's request schema carries it, and the core refuses it
   * from an agent).
   */
  async add(request: AddRequest, options: AddOptions & RequestOptions & { stamp?: Stamp } = {}): Promise<Receipt> {
    const input = ensureValid((await contracts.ingest()).AddRequestSchema, request)
    const requester = options.requester ?? 'owner'
    const native = options.stamp ? { ...input, stamp: options.stamp } : input
    return answer('ingest', 'ReceiptSchema', () => this.#native.add(native, requester, progressCallback(options.onProgress)))
  }

  /** What `add` would capture and embed, and the embedding's estimated cost; writes nothing, calls no provider. */
  async planAdd(request: AddRequest, options: RequestOptions = {}): Promise<AddPlan> {
    const input = ensureValid((await contracts.ingest()).AddRequestSchema, request)
    const plan = await callNative(() => this.#native.planAdd(input, options.requester ?? 'owner'))
    // The engine plans without calling a provider; whether one can be called at all is known here.
    const warnings = this.#unavailable.map((why) => `${why}; the real add would fail at its first provider call`)
    return checked((await contracts.ingest()).AddPlanSchema, { ...plan, warnings })
  }

  /** Rewrites damaged vector files from the records; republishes a current snapshot whose indexes are stale. */
  async rebuild(options: AddOptions = {}): Promise<RebuildReport> {
    return answer('ingest', 'RebuildReportSchema', () => this.#native.rebuild(progressCallback(options.onProgress)))
  }

  /** An object with its provenance: `source:N`, `revision:N`, `unit:N`, `chunk:N`, `snapshot:N`, `job:N` or a segment id. */
  async inspect(id: string): Promise<Evidence> {
    return answer('service', 'EvidenceSchema', () => this.#native.inspect(id))
  }

  /** The page region a unit, chunk or segment of a PDF covers, drawn to PNG (`inspect --render`). */
  async render(id: string, options: RenderOptions = {}): Promise<RenderedRegion> {
    const { renderEvidence } = await import('./render.js')
    return renderEvidence(this.#readArtifact, await this.inspect(id), options)
  }

  /** The lines around chunk `chunkId`'s cited lines (`radius` each side), from the text its locator indexes. */
  async fileContext(chunkId: number, radius = 12): Promise<FileContext> {
    const { fileContext } = await import('./file-context.js')
    const chunk = await this.inspect(`chunk:${chunkId}`)
    if (chunk.type !== 'chunk') throw new TychoraError('E_NOT_FOUND', `no chunk ${chunkId}`)
    const extraction = await this.inspect(`extraction:${chunk.extraction_id}`)
    if (extraction.type !== 'extraction') throw new TychoraError('E_NOT_FOUND', `no extraction ${chunk.extraction_id}`)
    return fileContext(this.#readArtifact, chunk, extraction, radius)
  }

  /** Picture `ordinal` of extraction `extractionId` (a raster type only), for a view that shows it. */
  async picture(extractionId: number, ordinal: number): Promise<{ bytes: Buffer; media_type: string }> {
    const { pictureBytes } = await import('./render.js')
    const extraction = await this.inspect(`extraction:${extractionId}`)
    if (extraction.type !== 'extraction') throw new TychoraError('E_NOT_FOUND', `no extraction ${extractionId}`)
    return pictureBytes(this.#readArtifact, extraction, ordinal)
  }

  /** Page `page` of a PDF revision (`revision:N`), whole, at `dpi` (36–300). */
  async renderPage(revisionId: number, page: number, dpi = 96): Promise<DrawnPage> {
    const { renderWholePage } = await import('./render.js')
    const revision = await this.inspect(`revision:${revisionId}`)
    if (revision.type !== 'revision') throw new TychoraError('E_NOT_FOUND', `no revision ${revisionId}`)
    return renderWholePage(this.#readArtifact, revision, page, dpi)
  }

  /**
   * Has a vision model describe a visual asset (its sha256 or first 12+ hex digits), when
   * `[descriptions]` permits every collection holding it; stores the answer as an unreviewed,
   * never-cited description. Without a describer, or with `dryRun`, reports what would be sent.
   */
  async describe(selector: string, describer: ImageDescriber | undefined, options: { dryRun?: boolean } = {}): Promise<DescribeReport> {
    const { describeAsset } = await import('./describe.js')
    const report = await describeAsset(
      {
        subject: (s) => answer('description', 'DescriptionSubjectSchema', () => this.#native.descriptionSubject(s)),
        record: (d) => answer('description', 'DescriptionEntrySchema', () => this.#native.recordDescription(d)),
      },
      selector,
      describer,
      options,
    )
    return checked((await contracts.description()).DescribeReportSchema, report)
  }

  /** Records a person's review of a description: accepted, rejected or back to unreviewed. */
  async reviewDescription(id: number, status: 'accepted' | 'rejected' | 'unreviewed', note?: string): Promise<DescriptionEntry> {
    return answer('description', 'DescriptionEntrySchema', () => this.#native.reviewDescription(id, status, note))
  }

  /**
   * Counts, sizes and the current snapshot. `tables: false` skips the per-table breakdown of
   * corpus.sqlite3, which reads every page (70 ms at 84k chunks; the rest takes a few ms).
   */
  async status(options: { tables?: boolean } = {}): Promise<Status> {
    return answer('workspace', 'StatusSchema', () => this.#native.status({ tables: options.tables ?? true }))
  }

  /**
   * Merges the current snapshot's lexical generation when the merge policy finds segments to
   * merge (the small segments one-file adds leave, or deleted documents); what any snapshot
   * answers does not change. The job runner calls it when its queue is empty.
   */
  async compact(): Promise<CompactReport> {
    return answer('operations', 'CompactReportSchema', () => this.#native.compact())
  }

  /**
   * Applies the retention policy (`[snapshots]`, `[history]` in workspace.toml): purged snapshots
   * and what only they used, expired query runs, and the original bytes of revisions outside the
   * policy (each with a tombstone). `nowMs` replaces the clock (tests).
   */
  async purge(options: { nowMs?: number } = {}): Promise<PurgeReport> {
    return answer('operations', 'PurgeReportSchema', () => this.#native.purge(options.nowMs))
  }

  /**
   * Compaction, then the whole retention pass (`manage purge`): what a long-lived process runs
   * now and then. Every job that publishes already applies retention for what it pushed out.
   */
  async maintain(): Promise<{ compact: CompactReport; purge: PurgeReport }> {
    const compact = await this.compact()
    const purge = await this.purge()
    return { compact, purge }
  }

  /**
   * Builds the summary tree of the current snapshot (`index build --raptor`), replacing the
   * previous one: the window vectors clustered inside each document, then across each collection,
   * each cluster summarised (by `summarizer` for the collections `[summaries]` lets it read, by its
   * most central sentences otherwise) and the summaries embedded. A failed provider call writes
   * nothing: the tree that was answering keeps answering.
   */
  async buildSummaries(options: { extractive?: boolean; dryRun?: boolean } = {}, summarizer?: ClusterSummarizer): Promise<SummaryReport> {
    const hook = summarizer && {
      provider: summarizer.name,
      prompt_fingerprint: summarizer.promptFingerprint,
      summarize: async (call: SummarizeCall) => {
        const out = await summarizer.summarize({ model: call.model, maxTokens: call.max_tokens, clusters: call.clusters })
        return {
          answers: out.answers.map((a) => ({
            ...(a.text !== undefined ? { text: a.text } : {}),
            ...(a.declined !== undefined ? { declined: a.declined } : {}),
            model: a.model,
            input_tokens: a.inputTokens,
            output_tokens: a.outputTokens,
          })),
          calls: out.calls,
        }
      },
    }
    const report = await callNative(() => this.#native.buildSummaries({ extractive: options.extractive ?? false, dry_run: options.dryRun ?? false }, hook))
    return checked((await contracts.operations()).SummaryReportSchema, report)
  }

  /** Writes a verified backup to `dest` (must not exist, or be empty) while the workspace serves; jobs wait meanwhile. */
  async backup(dest: string): Promise<BackupReport> {
    return answer('operations', 'BackupReportSchema', () => this.#native.backup(dest))
  }

  /**
   * Verifies the backup in `src` against its manifest and makes it the workspace `dir` (with new
   * bearer tokens); nothing is written to `dir` unless every file checks out.
   */
  static async restore(src: string, dir: string, target: { store?: string; artifacts?: string; endpoint?: string } = {}): Promise<BackupReport> {
    const report = await answer('operations', 'BackupReportSchema', () => native().restoreWorkspace(src, dir, target.store, target.artifacts, target.endpoint))
    await (await import('./tokens.js')).ensureTokens(report.dir)
    return report
  }

  /** Withdraws a source (`source:N`, its URI, or its path: absolute, relative to the current directory or to its root) from new snapshots; its history stays. */
  async withdraw(selector: string, reason: string, options: AddOptions = {}): Promise<WithdrawReport> {
    return answer('operations', 'WithdrawReportSchema', () => this.#native.withdraw(selector, reason, progressCallback(options.onProgress)))
  }

  /** Erases retained original bytes (`revision:N`, or every revision of a source) and leaves tombstones. */
  async deleteOriginal(selector: string, reason: string, options: AddOptions = {}): Promise<WithdrawReport> {
    return answer('operations', 'WithdrawReportSchema', () => this.#native.deleteOriginal(selector, reason, progressCallback(options.onProgress)))
  }

  /**
   * Relabels a source's sensitivity (`source:N`, a URI or a path, as `withdraw` takes them) for every
   * snapshot at once; a level above the ceiling also erases its original bytes and publishes a
   * snapshot without it.
   */
  async relabel(selector: string, level: string, reason: string, options: AddOptions = {}): Promise<RelabelReport> {
    return answer('operations', 'RelabelReportSchema', () => this.#native.relabel(selector, level, reason, progressCallback(options.onProgress)))
  }

  /** Integrity, disk space, stale generations, orphaned originals and interrupted jobs, each with its fix. */
  async doctor(): Promise<Finding[]> {
    const { FindingSchema } = await contracts.operations()
    return (await callNative(() => this.#native.doctor())).map((f) => checked(FindingSchema, f))
  }

  /** A recorded query run: request, applied scope, snapshot, results and trace. */
  async inspectRun(runId: string): Promise<RunRecord> {
    return parseJson(async () => (await contracts.operations()).RunRecordSchema, await callNative(() => this.#native.inspectRun(runId)))
  }

  /**
   * An artifact's bytes (an original, a derived text, a picture) by sha256, from wherever the
   * workspace keeps them (its folder or its bucket), verified against the name.
   */
  async readArtifact(sha256: string): Promise<Buffer> {
    return callNative(() => this.#native.readArtifact(sha256))
  }

  readonly #readArtifact = (sha256: string) => this.readArtifact(sha256)

  /** Re-hashes every artifact and checks snapshots against their indexes, between jobs (it sees the workspace at rest). */
  async verify(): Promise<VerifyReport> {
    const schema = (await contracts.workspace()).VerifyReportSchema
    return checked(schema, await this.#jobs.exclusive(() => callNative(() => this.#native.verify())))
  }

  /** A code symbol's definitions, with the references (and their outcome), callers and callees of each. */
  async inspectSymbol(request: InspectSymbolRequest): Promise<SymbolReport> {
    const input = ensureValid((await contracts.symbol()).InspectSymbolRequestSchema, request)
    return answer('symbol', 'SymbolReportSchema', () => this.#native.inspectSymbol(input))
  }

  /** A segment (`seg_S_C`), `source:N`, `revision:N`, `unit:N`, `chunk:N`, `snapshot:N` or `job:N` with its provenance. */
  async getEvidence(id: string): Promise<Evidence> {
    return this.inspect(id)
  }

  async listSources(options: Omit<ListSourcesRequest, 'project'> = {}): Promise<SourceList> {
    return answer('service', 'SourceListSchema', () => this.#native.listSources(options))
  }

  /** Structured records (requirements, decisions…), filtered by kind, type and facet conditions. */
  async listRecords(request: ListRecordsRequest = {}): Promise<RecordList> {
    const records = await contracts.records()
    const input = ensureValid(records.ListRecordsRequestSchema, request)
    return checked(records.RecordListSchema, await callNative(() => this.#native.listRecords(input)))
  }

  /** The record `key` (of `kind`, when several kinds have one) with every unit that states it. */
  async showRecord(key: string, kind?: string): Promise<RecordDetail> {
    return answer('records', 'RecordDetailSchema', () => this.#native.showRecord(key, kind))
  }

  /** A person's decision on a record: accept (reviewed: the verified profile counts it) or reject. */
  async reviewRecord(key: string, action: 'accept' | 'reject', options: { kind?: string } = {}): Promise<RecordDetail> {
    return answer('records', 'RecordDetailSchema', () => this.#native.reviewRecord(key, options.kind, action))
  }

  /** Relation assertions touching a key, of a relation, in a status. */
  async listRelations(request: ListRelationsRequest = {}): Promise<RelationAssertion[]> {
    const relations = await contracts.relations()
    const input = ensureValid(relations.ListRelationsRequestSchema, request)
    return checked(relations.RelationAssertionSchema.array(), await callNative(() => this.#native.listRelations(input)))
  }

  /** Declares (or, with `propose`, proposes) an assertion, checked against its type. */
  async declareRelation(request: DeclareRelationRequest): Promise<RelationAssertion> {
    const relations = await contracts.relations()
    const input = ensureValid(relations.DeclareRelationRequestSchema, request)
    return checked(relations.RelationAssertionSchema, await callNative(() => this.#native.declareRelation(input)))
  }

  /** Reviews an assertion: accept, reject or comment; accept and reject decide it. */
  async reviewRelation(id: number, action: 'accept' | 'reject' | 'comment', options: { actor?: string; note?: string } = {}): Promise<RelationAssertion> {
    return answer('relations', 'RelationAssertionSchema', () => this.#native.reviewRelation(id, action, options.actor ?? 'owner', options.note))
  }

  /**
   * Proposes a change to the approved knowledge of the project whose state this workspace is
   * (`.tychora/state/<hash>`): cited segment ids must exist in this state now.
   */
  async proposeChange(request: ProposeRequest): Promise<Proposal> {
    const { propose } = await import('../knowledge/lifecycle.js')
    return propose(this.#project(), request, (id) => this.cite(id))
  }

  async listProposals(): Promise<ProposalList> {
    const { listProposals } = await import('../knowledge/lifecycle.js')
    return listProposals(this.#project())
  }

  /** A segment as a proposal cites it; `undefined` when this state's current snapshot does not hold it. */
  async cite(segmentId: string): Promise<CitedEvidence | undefined> {
    if (!/^seg_[0-9]+_[0-9]+$/.test(segmentId)) throw new TychoraError('E_INVALID_ARGUMENT', `${JSON.stringify(segmentId)} is not a segment id (seg_<snapshot>_<chunk>)`)
    let chunk: Evidence
    try {
      chunk = await this.getEvidence(segmentId)
    } catch (error) {
      if (error instanceof TychoraError && error.code === 'E_NOT_FOUND') return undefined
      throw error
    }
    if (chunk.type !== 'chunk') return undefined
    for (let offset = 0; ; offset += 1000) {
      const page = await this.listSources({ limit: 1000, offset })
      if (page.sources.some((s) => s.revision_id === chunk.revision_id)) {
        return { segment_id: segmentId, citation: chunk.citation, sha256: chunk.sha256, quote: chunk.text.slice(0, 300) }
      }
      if (offset + page.sources.length >= page.total) return undefined
    }
  }

  /** The knowledge project whose state this workspace is. */
  #project(): ProjectPaths {
    const root = dirname(dirname(this.dir))
    if (basename(dirname(this.dir)) !== 'state' || !existsSync(join(root, PROJECT_FILE))) {
      throw new TychoraError('E_NOT_FOUND', `${this.dir} is not a knowledge project's state: proposals belong to a project made with \`tychora knowledge init\``)
    }
    return projectPaths(root)
  }

  async listSnapshots(): Promise<SnapshotList> {
    return answer('service', 'SnapshotListSchema', () => this.#native.listSnapshots())
  }

  /** Records an add request as a durable queued job; it runs in the background on the single writer. */
  async addSource(request: AddRequest, options: RequestOptions = {}): Promise<JobRef> {
    const jobId = await this.enqueueAdd(request, options)
    this.#jobs.notify({ job_id: jobId, phase: 'queued' })
    this.#jobs.kick()
    return { project: this.name, job_id: jobId, status: 'queued' }
  }

  /** Queues an add job. An agent's paths outside the roots are refused now (`E_FORBIDDEN`). */
  async enqueueAdd(request: AddRequest, options: RequestOptions = {}): Promise<number> {
    const input = ensureValid((await contracts.ingest()).AddRequestSchema, request)
    return callNative(() => this.#native.enqueueAdd(input, options.requester ?? 'owner'))
  }

  /** Runs a queued job now (the job runner calls this; so does resuming after a restart). */
  async runJob(jobId: number, options: AddOptions = {}): Promise<Receipt> {
    return answer('ingest', 'ReceiptSchema', () => this.#native.runJob(jobId, progressCallback(options.onProgress)))
  }

  async queuedJobs(): Promise<number[]> {
    return callNative(() => this.#native.queuedJobs())
  }

  /** Runs every queued job (e.g. left by a previous process), in order, in the background. */
  resumeQueuedJobs(): void {
    this.#jobs.kick()
    // A store shared with other daemons: jobs queued through them, and those of a daemon that
    // died, are this one's to take too (a dead daemon's job is taken within a lease and a third).
    const lease = this.#native.jobLeaseMs
    if (lease != null) this.#jobs.poll(Math.max(200, Math.min(Math.floor(lease / 3), 5_000)))
  }

  /** Calls `listener` as jobs are queued (through this handle), start, progress and finish; returns the unsubscribe. */
  watchJobs(listener: (event: JobEvent) => void): () => void {
    return this.#jobs.watch(listener)
  }

  /** Resolves when no job is queued or running. */
  async idle(): Promise<void> {
    await this.#jobs.idle()
  }

  /** Graceful shutdown: no new job starts; resolves when the running one has finished. */
  async stopJobs(): Promise<void> {
    this.#jobs.stop()
    await this.#jobs.idle()
  }

  async jobStatus(jobId: number): Promise<JobStatus> {
    return answer('service', 'JobStatusSchema', () => this.#native.jobStatus(jobId))
  }

  /**
   * Cancels a queued job before it runs (the owner's call): it becomes `cancelled`, with
   * `finished_at` now and `error` "cancelled by the owner" (then ": reason", at most 500
   * characters); the job runner never takes it, and job watchers hear it `finished`.
   * `E_CONFLICT` for a running job (a job stops only at its safe points) or one that has ended;
   * `E_NOT_FOUND` for an unknown one.
   *
   * @example
   * const jobId = await ws.enqueueAdd({ paths: ['/data/wrong-folder'] })
   * await ws.cancelJob(jobId, 'wrong folder')
   */
  async cancelJob(jobId: number, reason?: string): Promise<JobStatus> {
    const status = await answer('service', 'JobStatusSchema', () => this.#native.cancelJob(jobId, reason ?? null))
    this.#jobs.notify({ job_id: jobId, phase: 'finished' })
    return status
  }

  /**
   * The workspace's jobs, newest first, each exactly as `jobStatus` returns it (receipt included).
   * `limit` is 1 to 500 (default 50; outside it, `E_INVALID_ARGUMENT`); `before` pages on from
   * the previous page's `next_before`.
   *
   * @example
   * const page = await ws.listJobs({ limit: 20 })
   * const older = page.next_before === null ? null : await ws.listJobs({ limit: 20, before: page.next_before })
   */
  async listJobs(options: { limit?: number; before?: number } = {}): Promise<JobList> {
    return answer('evidence', 'JobListSchema', () => this.#native.listJobs(options))
  }

  /**
   * The recorded query runs, newest first: each run's query text, result count, snapshot, time
   * and caller. `limit` is 1 to 500 (default 50; outside it, `E_INVALID_ARGUMENT`); `before` (a
   * run id: the previous page's `next_before`) pages on; an unknown one is `E_NOT_FOUND`.
   *
   * @example
   * const { runs } = await ws.listRuns({ limit: 10 })
   * const full = await ws.inspectRun(runs[0]!.id)
   */
  async listRuns(options: { limit?: number; before?: string } = {}): Promise<RunList> {
    return answer('evidence', 'RunListSchema', () => this.#native.listRuns(options))
  }

  /** Whether agents may add sources inside existing roots (`[agents] allow_add_source`, off by default). */
  get allowAgentAdd(): boolean {
    return callNativeSync(() => this.#native.allowAgentAdd)
  }

  /** The workspace's name (`name` in workspace.toml), the daemon's project name. */
  get name(): string {
    return callNativeSync(() => this.#native.name)
  }

  /** Releases the handle; the lock goes once in-flight calls finish. Idempotent. */
  close(): void {
    this.#jobs.stop()
    callNativeSync(() => this.#native.close())
  }
}

function progressCallback(onProgress: ((p: Progress) => void) | undefined): ((progress: Progress) => void) | undefined {
  if (!onProgress) return undefined
  return (progress: Progress) => {
    try {
      onProgress(progress)
    } catch {
      // A throwing progress callback must not take the process down (lancedb's lesson).
    }
  }
}

/**
 * The daemon recorded in `runtime/daemon.json` when it is the process holding the lock (to name
 * its port in lock errors); a file left by a dead daemon names nobody.
 */
function daemonOwner(dir: string): { port: number; url: string } | undefined {
  try {
    // Read synchronously, like the daemon discovery: a small runtime file, and a search's path
    // need not load node:fs/promises for it.
    const info = JSON.parse(readFileSync(runtimePath(dir, 'daemon'), 'utf8')) as { pid: number; port: number; url: string }
    return String(info.pid) === lockOwner(dir) ? info : undefined
  } catch {
    return undefined
  }
}

/**
 * The pid recorded by the process holding the workspace's lock, or `undefined` when none holds
 * it. A non-blocking probe: how a stale `runtime/daemon.json` is told from a live daemon.
 */
export function lockOwner(dir: string): string | undefined {
  return callNativeSync(() => native().workspaceLockOwner(dir)) ?? undefined
}

export async function openWorkspace(dir: string, options: { providers?: TextProviders } = {}): Promise<Workspace> {
  return Workspace.open(dir, options)
}

/**
 * The native hooks for JS providers: the engine calls them from worker threads and waits on the
 * promise. Vectors cross flattened (one number array per call), receipts as JSON.
 */
function toHooks(providers: TextProviders) {
  const { embedder, reranker, visual } = providers
  const flatten = (vectors: readonly Float32Array[]) => {
    const flat: number[] = []
    for (const v of vectors) for (const x of v) flat.push(x)
    return flat
  }
  return {
    ...(visual
      ? {
          visual_spec: visual.spec,
          embed_visual: async (call: { pictures: Buffer[]; media_types: string[]; query?: string | null }) => {
            const out = call.query != null ? await visual.embedQuery(call.query) : await visual.embedPictures(call.pictures.map((bytes, i) => ({ bytes, mediaType: call.media_types[i] as string })))
            return { vectors: flatten(out.vectors), tokens: out.tokens, receipt_json: JSON.stringify(out.receipt) }
          },
        }
      : {}),
    ...(embedder
      ? {
          embedder_spec: embedder.spec,
          embed: async (call: { texts: string[]; input_type: 'query' | 'document' }) => {
            const out = await embedder.embed(call.texts, call.input_type)
            const flat: number[] = []
            for (const v of out.vectors) for (const x of v) flat.push(x)
            return { vectors: flat, tokens: out.tokens, receipt_json: JSON.stringify(out.receipt) }
          },
          ...(embedder.embedDocuments
            ? {
                embed_documents: async (call: { documents: string[][]; input_type: 'query' | 'document' }) => {
                  const out = await embedder.embedDocuments?.(call.documents, call.input_type)
                  const flat: number[] = []
                  for (const doc of out?.vectors ?? []) for (const v of doc) for (const x of v) flat.push(x)
                  return { vectors: flat, tokens: (out?.tokens ?? []).flat(), receipt_json: JSON.stringify(out?.receipt ?? {}) }
                },
              }
            : {}),
        }
      : {}),
    ...(reranker
      ? {
          reranker_name: reranker.name,
          rerank: async (call: { query: string; documents: string[] }) => {
            const out = await reranker.rerank(call.query, call.documents)
            // -Infinity (not in the provider's top K) does not cross as a number: floor it.
            return { scores: out.scores.map((s) => (Number.isFinite(s) ? s : -1e30)), tokens: out.tokens, receipt_json: JSON.stringify(out.receipt) }
          },
        }
      : {}),
  }
}

export async function initWorkspace(dir: string, options: { profile?: 'documents' | 'code' | 'verified'; embeddings?: 'local' | 'voyage' } = {}): Promise<InitReport> {
  return Workspace.init(dir, options)
}
