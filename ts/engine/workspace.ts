import { type AddRequest, AddRequestSchema, type Progress, ProgressSchema, type Receipt, ReceiptSchema } from '../contracts/ingest.js'
import { type QueryRequest, QueryRequestSchema } from '../contracts/query.js'
import { type QueryResult, QueryResultSchema } from '../contracts/result.js'
import { type InitReport, InitReportSchema, type Status, StatusSchema, type VerifyReport, VerifyReportSchema } from '../contracts/workspace.js'
import { TychoraError } from '../errors.js'
import { callNative, callNativeSync } from './call-native.js'
import { type NativeWorkspace, native } from './native.js'
import { parseHot, parseWith } from './parse.js'

export interface AddOptions {
  /** Called with progress events; errors thrown by it are swallowed so they cannot kill the job. */
  onProgress?: (progress: Progress) => void
}

/**
 * An open workspace. Every method validates its input with the zod contract, runs the work in
 * Rust off the event loop, and returns contract-typed results.
 *
 * @example
 * const ws = await openWorkspace('./my-ws')
 * const result = await ws.search({ query: 'snapshot publication', limit: 5 })
 * for (const s of result.segments) console.log(s.citation, s.text)
 * ws.close()
 */
export class Workspace {
  readonly #native: NativeWorkspace

  private constructor(handle: NativeWorkspace) {
    this.#native = handle
  }

  /** Opens the workspace in `dir`, taking its lock. Fails with `E_LOCKED` if another process owns it. */
  static async open(dir: string): Promise<Workspace> {
    return new Workspace(await callNative(() => native().openWorkspace(dir)))
  }

  /** Creates a workspace in `dir` (workspace.toml, corpus.sqlite3, artifacts/, indexes/, runtime/). */
  static async init(dir: string): Promise<InitReport> {
    return parseWith(InitReportSchema, await callNative(() => native().initWorkspace(dir)))
  }

  /** Applies pending schema migrations; returns the versions applied. */
  static async migrate(dir: string): Promise<number[]> {
    return JSON.parse(await callNative(() => native().migrateWorkspace(dir))) as number[]
  }

  get dir(): string {
    return callNativeSync(() => this.#native.dir)
  }

  async search(request: QueryRequest, options: { signal?: AbortSignal } = {}): Promise<QueryResult> {
    const input = validate(QueryRequestSchema, request)
    return parseHot(QueryResultSchema, await callNative(() => this.#native.search(JSON.stringify(input), options.signal)))
  }

  /** Runs many queries in one native crossing (evaluation, benchmarks). */
  async searchBatch(requests: QueryRequest[], options: { signal?: AbortSignal } = {}): Promise<QueryResult[]> {
    const inputs = requests.map((r) => validate(QueryRequestSchema, r))
    const json = await callNative(() => this.#native.searchBatch(JSON.stringify(inputs), options.signal))
    return (JSON.parse(json) as unknown[]).map((r) => parseHot(QueryResultSchema, r))
  }

  async add(request: AddRequest, options: AddOptions = {}): Promise<Receipt> {
    const input = validate(AddRequestSchema, request)
    const onProgress = options.onProgress
    const progress = onProgress
      ? (event: string) => {
          try {
            onProgress(ProgressSchema.parse(JSON.parse(event)))
          } catch {
            // A throwing progress callback must not take the process down (lancedb's lesson).
          }
        }
      : undefined
    return parseWith(ReceiptSchema, await callNative(() => this.#native.add(JSON.stringify(input), progress)))
  }

  /** An object with its provenance: `source:N`, `revision:N`, `unit:N`, `chunk:N`, `snapshot:N`, `job:N` or a segment id. */
  async inspect(id: string): Promise<Record<string, unknown>> {
    return JSON.parse(await callNative(() => this.#native.inspect(id))) as Record<string, unknown>
  }

  async status(): Promise<Status> {
    return parseWith(StatusSchema, await callNative(() => this.#native.status()))
  }

  async verify(): Promise<VerifyReport> {
    return parseWith(VerifyReportSchema, await callNative(() => this.#native.verify()))
  }

  /** Releases the handle; the lock goes once in-flight calls finish. Idempotent. */
  close(): void {
    callNativeSync(() => this.#native.close())
  }
}

function validate<T>(schema: { safeParse(v: unknown): { success: true; data: T } | { success: false; error: { issues: Array<{ path: PropertyKey[]; message: string }> } } }, value: unknown): T {
  const parsed = schema.safeParse(value)
  if (parsed.success) return parsed.data
  const issues = parsed.error.issues.map((i) => `${i.path.map(String).join('.') || '(root)'}: ${i.message}`).join('; ')
  throw new TychoraError('E_INVALID_ARGUMENT', issues)
}

export async function openWorkspace(dir: string): Promise<Workspace> {
  return Workspace.open(dir)
}

export async function initWorkspace(dir: string): Promise<InitReport> {
  return Workspace.init(dir)
}
