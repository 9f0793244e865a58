import { isLocalModel, VoyageAIClient, VoyageAIError, VoyageAITimeoutError } from 'voyageai'
import type {
  ContextualizedEmbedRequest,
  ContextualizedEmbedResult,
  EmbedRequest,
  EmbedResult,
  ModelProvider,
  MultimodalEmbedRequest,
  ProviderCall,
  RerankRequest,
  RerankResult,
} from '../contracts/provider.js'
import { TychoraError } from '../errors.js'

/**
 * Voyage AI (embeddings, contextualized chunk embeddings, reranking) through the `voyageai` SDK.
 *
 * Retries are ours, not the SDK's (it is called with `maxRetries: 0`). The SDK does honour
 * Retry-After (seconds or HTTP date, capped at 60 s), but it retries only on a status: a timeout or
 * a dropped connection fails at once; it reports nothing per attempt, while traces and receipts
 * need every request (`onCall`); and its timer stops when the headers arrive, so a body that
 * stalls afterwards is never timed out. Here each attempt runs under one AbortSignal that covers
 * the body too.
 *
 * The key never leaves this module except in the Authorization header. SDK errors are not kept as
 * a `cause`: their message embeds the server's body and fetch's own errors can quote header values,
 * so every failure is rebuilt as a one-line `TychoraError` from the status and a scrubbed detail.
 */

export interface VoyageProviderOptions {
  /** Defaults to `process.env.VOYAGE_API_KEY`. */
  apiKey?: string
  /** API root including the version, e.g. `http://127.0.0.1:1234/v1` (default https://api.voyageai.com/v1). */
  baseUrl?: string
  /** Per request, body included (default 60 s). */
  timeoutMs?: number
  /** Retries per batch after the first attempt, on 408, 429, 5xx, timeouts and dropped connections (default 4). */
  maxRetries?: number
  /** First backoff when the provider gives no Retry-After; doubles per retry, with jitter (default 1 s). */
  backoffMs?: number
  /** Called once per HTTP request, retries included. Must not throw. */
  onCall?: (call: ProviderCall) => void
}

/**
 * Per-request limits from Voyage's API reference (docs.voyageai.com/reference/embeddings-api,
 * /contextualized-embeddings-api and /reranker-api). They are facts about the provider's models,
 * not configuration: which model to use is the pack's choice. A model not listed gets the smallest
 * published budget.
 */
const EMBED_MAX_INPUTS = 1000
const EMBED_TOKEN_BUDGET: Readonly<Record<string, number>> = {
  'voyage-4-lite': 1_000_000,
  'voyage-3.5-lite': 1_000_000,
  'voyage-4': 320_000,
  'voyage-3.5': 320_000,
  'voyage-2': 320_000,
  'voyage-4-large': 120_000,
  'voyage-3-large': 120_000,
  'voyage-code-3': 120_000,
  'voyage-finance-2': 120_000,
  'voyage-law-2': 120_000,
}
const EMBED_DEFAULT_BUDGET = 120_000
const CONTEXT_MAX_DOCUMENTS = 1000
const CONTEXT_MAX_CHUNKS = 16_000
const CONTEXT_TOKEN_BUDGET = 120_000
/** Multimodal: at most 1,000 inputs per request; pictures are sent as base64 data URLs, so a request is also kept under 16 MiB of them. */
const MULTIMODAL_MAX_INPUTS = 1000
const MULTIMODAL_MAX_BYTES = 16 * 1024 * 1024
const MULTIMODAL_MEDIA_TYPES = new Set(['image/png', 'image/jpeg', 'image/webp', 'image/gif'])
const RERANK_MAX_DOCUMENTS = 1000
/** Rerank tokens are counted as query tokens × documents + the documents' tokens. */
const RERANK_TOKEN_BUDGET: Readonly<Record<string, number>> = {
  'rerank-2.5': 600_000,
  'rerank-2.5-lite': 600_000,
  'rerank-2': 600_000,
  'rerank-2-lite': 600_000,
  'rerank-1': 300_000,
  'rerank-lite-1': 300_000,
}
const RERANK_DEFAULT_BUDGET = 300_000

/** Longest wait we accept: a longer Retry-After means the quota is spent, and the job should fail cleanly now. */
const MAX_WAIT_MS = 60_000
const MAX_BACKOFF_MS = 30_000

/**
 * Tokens a text will cost, estimated: Voyage's tokenizers are not available offline (the SDK's
 * `tokenize()` downloads them from Hugging Face Hub through an optional peer dependency), so batches
 * are sized by ceil(UTF-8 bytes / 3). For ASCII that is chars / 3, above the 4 to 5 characters per
 * token of English and code; counting bytes keeps CJK text (about a token per character, three bytes
 * each) from being underestimated. The provider's reported usage is what the result carries.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(Buffer.byteLength(text, 'utf8') / 3)
}

/** Consecutive [start, end) ranges, each within every limit (an item over a limit alone gets a range of its own). */
function plan(count: number, limits: ReadonlyArray<{ max: number; cost: (i: number) => number }>): Array<[number, number]> {
  const ranges: Array<[number, number]> = []
  let start = 0
  let used = limits.map(() => 0)
  for (let i = 0; i < count; i++) {
    const costs = limits.map((l) => l.cost(i))
    if (i > start && limits.some((l, k) => (used[k] as number) + (costs[k] as number) > l.max)) {
      ranges.push([start, i])
      start = i
      used = limits.map(() => 0)
    }
    used = used.map((u, k) => u + (costs[k] as number))
  }
  if (count > start) ranges.push([start, count])
  return ranges
}

/** A provider answer that cannot be used; becomes `E_PROVIDER` with the batch's context. */
class Malformed extends Error {}

type Outcome = { ok: true; body: unknown } | { ok: false; status: ProviderCall['status']; retryable: boolean; retryAfterMs?: number; what: string }

type RequestOptions = NonNullable<Parameters<VoyageAIClient['embed']>[1]>

/** What the attempt's fetch saw of the response. */
interface Seen {
  status?: number
  headers?: Headers
}

interface Batch {
  operation: ProviderCall['operation']
  model: string
  inputs: number
  index: number
  of: number
}

const LABEL: Record<ProviderCall['operation'], string> = {
  embed: 'embeddings',
  contextualized_embed: 'contextualized embeddings',
  multimodal_embed: 'multimodal embeddings',
  rerank: 'rerank',
}

export function createVoyageProvider(options: VoyageProviderOptions = {}): ModelProvider {
  const key = options.apiKey ?? process.env.VOYAGE_API_KEY
  if (key === undefined || key === '') {
    throw new TychoraError('E_INVALID_ARGUMENT', 'VOYAGE_API_KEY is not set: set it in the environment or the user config to use Voyage')
  }
  // fetch quotes an invalid header value in its error, which would put the key in a message.
  if (!/^[\x21-\x7e]+$/.test(key)) {
    throw new TychoraError('E_INVALID_ARGUMENT', 'VOYAGE_API_KEY is malformed: a key is printable ASCII without spaces or line breaks')
  }
  const timeoutMs = options.timeoutMs ?? 60_000
  const maxRetries = options.maxRetries ?? 4
  const backoffMs = options.backoffMs ?? 1000
  const baseUrl = options.baseUrl ?? 'https://api.voyageai.com/v1'

  /**
   * A client for one attempt, whose fetch notes the response's status and headers: the SDK drops
   * the status when an error body does not parse (a proxy's 502 page labelled JSON reads as a failed
   * fetch) and never reports a success's. A client is only its options, so one per attempt is cheap.
   */
  const clientFor = (seen: Seen) =>
    new VoyageAIClient({
      apiKey: key,
      baseUrl,
      maxRetries: 0,
      timeoutInSeconds: timeoutMs / 1000,
      fetch: (async (input: string | URL | Request, init?: RequestInit) => {
        const response = await fetch(input, init)
        seen.status = response.status
        seen.headers = response.headers
        return response
      }) as typeof fetch,
    })

  /** One line, no key: every message a caller sees goes through here. */
  const scrub = (text: string) => text.split(key).join('[redacted]').replace(/\s+/g, ' ').trim()

  const fail = (batch: Batch, what: string, details: { status?: number; retryable: boolean }) =>
    new TychoraError('E_PROVIDER', scrub(`voyage ${LABEL[batch.operation]} failed (model ${batch.model}, batch ${batch.index}/${batch.of}): ${what}`), {
      details: { provider: 'voyage', ...(details.status !== undefined ? { status: details.status } : {}), retryable: details.retryable },
    })

  const classify = (error: unknown, timedOut: boolean, seen: Seen): Outcome => {
    if (timedOut || error instanceof VoyageAITimeoutError) return { ok: false, status: 'timeout', retryable: true, what: `timed out after ${timeoutMs} ms` }
    const reported = error instanceof VoyageAIError ? error.statusCode : undefined
    const status = reported ?? seen.status
    if (status === undefined) {
      // The SDK reports a failed fetch (refused, reset, DNS) as a VoyageAIError without a status.
      return error instanceof VoyageAIError
        ? { ok: false, status: 'network', retryable: true, what: 'no HTTP answer (connection failed)' }
        : { ok: false, status: 'network', retryable: false, what: 'the request could not be sent' }
    }
    // A 2xx the SDK threw on: it could not read the answer.
    if (status < 300) return { ok: false, status, retryable: false, what: 'malformed answer: an unreadable body' }
    const retryAfterMs = retryAfter(seen.headers)
    return {
      ok: false,
      status,
      retryable: status === 408 || status === 429 || status >= 500,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      what: `HTTP ${status}${reported !== undefined ? detail((error as VoyageAIError).body) : ''}`,
    }
  }

  /**
   * Sends one batch with retries. `check` turns the body into the value and the reported tokens,
   * or throws `Malformed`; a malformed answer is not retried (its tokens were already billed).
   */
  async function send<T>(
    batch: Batch,
    counter: { calls: number },
    call: (client: VoyageAIClient, options: RequestOptions) => Promise<unknown>,
    check: (body: unknown) => { value: T; tokens: number },
  ): Promise<{ value: T; tokens: number }> {
    for (let attempt = 1; ; attempt++) {
      const started = performance.now()
      const controller = new AbortController()
      const timer = setTimeout(() => controller.abort(), timeoutMs)
      const seen: Seen = {}
      let outcome: Outcome
      try {
        outcome = { ok: true, body: await call(clientFor(seen), { maxRetries: 0, abortSignal: controller.signal }) }
      } catch (error) {
        outcome = classify(error, controller.signal.aborted, seen)
      } finally {
        clearTimeout(timer)
      }
      counter.calls++
      const record = (status: ProviderCall['status'], tokens: number) =>
        options.onCall?.({
          provider: 'voyage',
          operation: batch.operation,
          model: batch.model,
          inputs: batch.inputs,
          tokens,
          ms: performance.now() - started,
          status,
          attempt,
        })
      if (outcome.ok) {
        let checked: { value: T; tokens: number }
        try {
          checked = check(outcome.body)
        } catch (error) {
          record(seen.status ?? 200, 0)
          if (error instanceof Malformed) throw fail(batch, `malformed answer: ${error.message}`, { status: seen.status ?? 200, retryable: false })
          throw error
        }
        record(seen.status ?? 200, checked.tokens)
        return checked
      }
      record(outcome.status, 0)
      const status = typeof outcome.status === 'number' ? outcome.status : undefined
      const tries = attempt === 1 ? '' : ` after ${attempt} attempts`
      if (!outcome.retryable || attempt > maxRetries) throw fail(batch, outcome.what + tries, { status, retryable: outcome.retryable })
      const wait = outcome.retryAfterMs ?? Math.min(MAX_BACKOFF_MS, backoffMs * 2 ** (attempt - 1)) * (0.5 + Math.random() / 2)
      if (wait > MAX_WAIT_MS) {
        throw fail(batch, `${outcome.what}, asked to retry after ${Math.ceil(wait / 1000)} s (more than the ${MAX_WAIT_MS / 1000} s this client waits)${tries}`, {
          status,
          retryable: true,
        })
      }
      // A little jitter on top of Retry-After too, so parallel clients do not return in step.
      await sleep(outcome.retryAfterMs !== undefined ? wait + Math.random() * Math.min(250, wait / 10) : wait)
    }
  }

  return {
    name: 'voyage',

    async embed(request: EmbedRequest): Promise<EmbedResult> {
      checkModel(request.model, 'embeddings')
      checkTexts(request.inputs, 'inputs')
      checkDimension(request.outputDimension)
      const budget = EMBED_TOKEN_BUDGET[request.model] ?? EMBED_DEFAULT_BUDGET
      const ranges = plan(request.inputs.length, [
        { max: EMBED_MAX_INPUTS, cost: () => 1 },
        { max: budget, cost: (i) => estimateTokens(request.inputs[i] as string) },
      ])
      const counter = { calls: 0 }
      const vectors: Float32Array[] = []
      const dims = new Dimensions(request.outputDimension)
      let tokens = 0
      for (const [n, [start, end]] of ranges.entries()) {
        const input = request.inputs.slice(start, end)
        const batch: Batch = { operation: 'embed', model: request.model, inputs: input.length, index: n + 1, of: ranges.length }
        const answer = await send(
          batch,
          counter,
          (client, opts) => client.embed({ input, model: request.model, inputType: request.inputType, outputDimension: request.outputDimension }, opts),
          (body) => {
            const items = listOf(body, input.length, input.length, 'embeddings')
            return { value: items.map((item, i) => dims.check(vector(item, `embedding ${i}`), `embedding ${i}`)), tokens: usage(body) }
          },
        )
        vectors.push(...answer.value)
        tokens += answer.tokens
      }
      return { vectors, dimension: dims.value ?? request.outputDimension ?? 0, tokens, calls: counter.calls }
    },

    async embedContextualized(request: ContextualizedEmbedRequest): Promise<ContextualizedEmbedResult> {
      checkModel(request.model, 'contextualized embeddings')
      checkDimension(request.outputDimension)
      request.documents.forEach((doc, d) => {
        if (!Array.isArray(doc) || doc.length === 0) throw new TychoraError('E_INVALID_ARGUMENT', `documents[${d}] has no windows`)
        checkTexts(doc, `documents[${d}]`)
      })
      const docTokens = request.documents.map((doc) => doc.reduce((sum, text) => sum + estimateTokens(text), 0))
      const ranges = plan(request.documents.length, [
        { max: CONTEXT_MAX_DOCUMENTS, cost: () => 1 },
        { max: CONTEXT_MAX_CHUNKS, cost: (d) => (request.documents[d] as readonly string[]).length },
        { max: CONTEXT_TOKEN_BUDGET, cost: (d) => docTokens[d] as number },
      ])
      const counter = { calls: 0 }
      const vectors: Float32Array[][] = []
      const dims = new Dimensions(request.outputDimension)
      let tokens = 0
      for (const [n, [start, end]] of ranges.entries()) {
        const inputs = request.documents.slice(start, end).map((doc) => [...doc])
        const chunks = inputs.reduce((sum, doc) => sum + doc.length, 0)
        const batch: Batch = { operation: 'contextualized_embed', model: request.model, inputs: chunks, index: n + 1, of: ranges.length }
        const answer = await send(
          batch,
          counter,
          // The SDK's extended client wraps the answer; `rawResponse` is the parsed body with its indices.
          async (client, opts) => (await client.contextualizedEmbed({ inputs, model: request.model, inputType: request.inputType, outputDimension: request.outputDimension }, opts)).rawResponse,
          (body) => {
            const docs = listOf(body, inputs.length, inputs.length, 'documents')
            const value = docs.map((doc, d) => {
              const windows = inputs[d] as string[]
              const items = listOf(doc, windows.length, windows.length, `embeddings in document ${d}`)
              return items.map((item, w) => dims.check(vector(item, `document ${d} embedding ${w}`), `document ${d} embedding ${w}`))
            })
            return { value, tokens: usage(body) }
          },
        )
        vectors.push(...answer.value)
        tokens += answer.tokens
      }
      return { vectors, dimension: dims.value ?? request.outputDimension ?? 0, tokens, calls: counter.calls }
    },

    async embedMultimodal(request: MultimodalEmbedRequest): Promise<EmbedResult> {
      checkModel(request.model, 'multimodal embeddings')
      const inputs = request.inputs.map((pieces, i) => {
        if (!Array.isArray(pieces) || pieces.length === 0) throw new TychoraError('E_INVALID_ARGUMENT', `inputs[${i}] has no pieces`)
        return pieces.map((piece, p) => {
          if ('text' in piece) {
            if (typeof piece.text !== 'string' || piece.text === '') throw new TychoraError('E_INVALID_ARGUMENT', `inputs[${i}][${p}] is empty text; Voyage refuses empty texts`)
            return { type: 'text', text: piece.text }
          }
          if (!MULTIMODAL_MEDIA_TYPES.has(piece.mediaType)) {
            throw new TychoraError('E_INVALID_ARGUMENT', `inputs[${i}][${p}] is ${JSON.stringify(piece.mediaType)}; Voyage reads image/png, image/jpeg, image/webp and image/gif`)
          }
          return { type: 'image_base64', imageBase64: `data:${piece.mediaType};base64,${Buffer.from(piece.image).toString('base64')}` }
        })
      })
      const size = (i: number) => (inputs[i] as Array<{ text?: string; imageBase64?: string }>).reduce((s, piece) => s + (piece.imageBase64?.length ?? piece.text?.length ?? 0), 0)
      const ranges = plan(inputs.length, [
        { max: MULTIMODAL_MAX_INPUTS, cost: () => 1 },
        { max: MULTIMODAL_MAX_BYTES, cost: size },
      ])
      const counter = { calls: 0 }
      const vectors: Float32Array[] = []
      const dims = new Dimensions(undefined)
      let tokens = 0
      for (const [n, [start, end]] of ranges.entries()) {
        const batchInputs = inputs.slice(start, end).map((content) => ({ content }))
        const batch: Batch = { operation: 'multimodal_embed', model: request.model, inputs: batchInputs.length, index: n + 1, of: ranges.length }
        const answer = await send(
          batch,
          counter,
          (client, opts) => client.multimodalEmbed({ inputs: batchInputs, model: request.model, inputType: request.inputType }, opts),
          (body) => {
            const items = listOf(body, batchInputs.length, batchInputs.length, 'embeddings')
            return { value: items.map((item, i) => dims.check(vector(item, `embedding ${i}`), `embedding ${i}`)), tokens: usage(body) }
          },
        )
        vectors.push(...answer.value)
        tokens += answer.tokens
      }
      return { vectors, dimension: dims.value ?? 0, tokens, calls: counter.calls }
    },

    async rerank(request: RerankRequest): Promise<RerankResult> {
      checkModel(request.model, 'rerank')
      checkTexts([request.query], 'query')
      checkTexts(request.documents, 'documents')
      const topK = request.topK
      if (topK !== undefined && !(Number.isInteger(topK) && topK > 0)) throw new TychoraError('E_INVALID_ARGUMENT', `topK must be a positive integer, got ${topK}`)
      const queryTokens = estimateTokens(request.query)
      const ranges = plan(request.documents.length, [
        { max: RERANK_MAX_DOCUMENTS, cost: () => 1 },
        {
          max: RERANK_TOKEN_BUDGET[request.model] ?? RERANK_DEFAULT_BUDGET,
          cost: (i) => queryTokens + estimateTokens(request.documents[i] as string),
        },
      ])
      const counter = { calls: 0 }
      const scores: number[] = request.documents.map(() => Number.NEGATIVE_INFINITY)
      let tokens = 0
      for (const [n, [start, end]] of ranges.entries()) {
        const documents = request.documents.slice(start, end)
        // Scores are per (query, document) pair, so batches compare; the global top K lies within
        // each batch's top K.
        const k = topK === undefined ? undefined : Math.min(topK, documents.length)
        const batch: Batch = { operation: 'rerank', model: request.model, inputs: documents.length, index: n + 1, of: ranges.length }
        const answer = await send(
          batch,
          counter,
          (client, opts) => client.rerank({ query: request.query, documents: [...documents], model: request.model, topK: k }, opts),
          (body) => {
            const items = listOf(body, k ?? documents.length, documents.length, 'results')
            const value: Array<[number, number]> = []
            items.forEach((item, slot) => {
              const score = field(item, 'relevanceScore')
              if (typeof score !== 'number' || !Number.isFinite(score)) throw new Malformed(`result ${slot} has no finite relevance score`)
              value.push([start + (field(item, 'index') as number), score])
            })
            return { value, tokens: usage(body) }
          },
        )
        for (const [i, score] of answer.value) scores[i] = score
        tokens += answer.tokens
      }
      if (topK !== undefined && topK < scores.length) {
        const keep = new Set(
          scores
            .map((score, i) => [score, i] as const)
            .sort((a, b) => b[0] - a[0] || a[1] - b[1])
            .slice(0, topK)
            .map(([, i]) => i),
        )
        scores.forEach((_, i) => {
          if (!keep.has(i)) scores[i] = Number.NEGATIVE_INFINITY
        })
      }
      return { scores, tokens, calls: counter.calls }
    },
  }
}

function checkModel(model: string, operation: string): void {
  if (typeof model !== 'string' || model === '') throw new TychoraError('E_INVALID_ARGUMENT', `a Voyage ${operation} model name is required`)
  // The SDK runs these models itself with Transformers.js, fetching weights from Hugging Face Hub;
  // Tychora runs local models in its core and never downloads them implicitly.
  if (isLocalModel(model)) throw new TychoraError('E_INVALID_ARGUMENT', `${model} is a local model; configure it as a local provider, not voyage`)
}

function checkTexts(texts: readonly string[], name: string): void {
  texts.forEach((text, i) => {
    if (typeof text !== 'string' || text === '') throw new TychoraError('E_INVALID_ARGUMENT', `${name}[${i}] is empty; Voyage refuses empty texts`)
  })
}

function checkDimension(dimension: number | undefined): void {
  if (dimension !== undefined && !(Number.isInteger(dimension) && dimension > 0)) {
    throw new TychoraError('E_INVALID_ARGUMENT', `outputDimension must be a positive integer, got ${dimension}`)
  }
}

/** The answer's vectors share one length across batches, and it is `outputDimension` when one was asked. */
class Dimensions {
  value: number | undefined
  constructor(private readonly wanted: number | undefined) {
    this.value = wanted
  }
  check(v: Float32Array, where: string): Float32Array {
    if (this.value === undefined) this.value = v.length
    if (v.length !== this.value) {
      throw new Malformed(
        this.wanted !== undefined ? `${where} has ${v.length} dimensions, not the ${this.wanted} asked for` : `${where} has ${v.length} dimensions where earlier vectors have ${this.value}`,
      )
    }
    return v
  }
}

function field(value: unknown, name: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[name] : undefined
}

/**
 * The `data` list of `container` (the body, or a document of a contextualized answer): `count` items
 * with distinct integer indices below `range`, placed by index (by rank, for a rerank top K).
 */
function listOf(container: unknown, count: number, range: number, noun: string): unknown[] {
  const data = field(container, 'data')
  if (!Array.isArray(data)) {
    // The SDK passes a 2xx body it could not parse on as the data: `{ ok: false, error: { reason: 'non-json' } }`.
    throw new Malformed(field(field(container, 'error'), 'reason') === 'non-json' ? 'the body is not JSON' : `no ${noun} list`)
  }
  if (data.length < count) throw new Malformed(`${data.length} ${noun} for ${count} inputs (partial batch)`)
  if (data.length > count) throw new Malformed(`${data.length} ${noun} for ${count} inputs`)
  const seen = new Set<number>()
  const placed: unknown[] = new Array(count)
  data.forEach((item, slot) => {
    const i = field(item, 'index')
    if (typeof i !== 'number' || !Number.isInteger(i) || i < 0 || i >= range) throw new Malformed(`${noun} item ${slot} has a missing or out-of-range index`)
    if (seen.has(i)) throw new Malformed(`index ${i} appears twice`)
    seen.add(i)
    placed[count === range ? i : slot] = item
  })
  return placed
}

function vector(item: unknown, where: string): Float32Array {
  const raw = field(item, 'embedding')
  if (!Array.isArray(raw) || raw.length === 0) throw new Malformed(`${where} has no vector`)
  const v = new Float32Array(raw.length)
  for (let i = 0; i < raw.length; i++) {
    const x: unknown = raw[i]
    if (typeof x !== 'number') throw new Malformed(`${where} holds a non-number`)
    v[i] = x
    // Checked after narrowing to f32: a finite double beyond ±3.4e38 becomes Infinity.
    if (!Number.isFinite(v[i])) throw new Malformed(`${where} holds a non-finite number`)
  }
  return v
}

function usage(body: unknown): number {
  const tokens = field(field(body, 'usage'), 'totalTokens')
  if (typeof tokens !== 'number' || !Number.isInteger(tokens) || tokens < 0) throw new Malformed('no token usage')
  return tokens
}

/** Retry-After as milliseconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
function retryAfter(headers: { get(name: string): string | null } | undefined): number | undefined {
  const value = headers?.get('retry-after')?.trim()
  if (!value) return undefined
  if (/^\d+(?:\.\d+)?$/.test(value)) return Number(value) * 1000
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now())
}

/** The server's own explanation, if short and textual: `detail` in Voyage's error bodies. */
function detail(body: unknown): string {
  const text = typeof body === 'string' ? body : field(body, 'detail')
  return typeof text === 'string' && text.trim() !== '' ? `: ${text.slice(0, 200)}` : ''
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
