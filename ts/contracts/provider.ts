import { z } from 'zod'

/**
 * Paid model providers (embeddings, reranking) as the rest of the code sees them. Provider calls
 * are TypeScript's job; the Rust core owns the vectors. The implementations live in ts/providers/.
 */

/**
 * One HTTP request to a provider, for query traces and job receipts. It never holds the key or
 * the texts: only counts, the model and the outcome.
 */
export const ProviderCallSchema = z.object({
  provider: z.string().describe('Provider name, e.g. voyage'),
  operation: z.enum(['embed', 'contextualized_embed', 'multimodal_embed', 'rerank']),
  model: z.string(),
  inputs: z.number().int().nonnegative().describe('Texts sent in this request (chunks for contextualized, documents for rerank)'),
  tokens: z.number().int().nonnegative().describe('Tokens the provider reported using; 0 when the request failed'),
  ms: z.number().nonnegative().describe('Wall time of this request'),
  status: z.union([z.number().int(), z.enum(['timeout', 'network'])]).describe('HTTP status, or timeout / network when no status came back'),
  attempt: z.number().int().positive().describe('1 for the first try of a batch, 2 for its first retry, …'),
})

export type ProviderCall = z.infer<typeof ProviderCallSchema>

export type InputType = 'query' | 'document'

export interface EmbedRequest {
  model: string
  inputs: readonly string[]
  inputType: InputType
  /** Ask for this many dimensions (models with Matryoshka outputs); every vector is checked against it. */
  outputDimension?: number
}

export interface EmbedResult {
  /** One vector per input, in input order. */
  vectors: Float32Array[]
  dimension: number
  /** Tokens the provider reported, summed over batches. */
  tokens: number
  /** HTTP requests sent, retries included. */
  calls: number
}

export interface ContextualizedEmbedRequest {
  model: string
  /** Each document's windows, in document order; a document's windows are embedded together. */
  documents: readonly (readonly string[])[]
  inputType: InputType
  outputDimension?: number
}

export interface ContextualizedEmbedResult {
  /** Per document, one vector per window, both in input order. */
  vectors: Float32Array[][]
  dimension: number
  tokens: number
  calls: number
}

/** One piece of a multimodal input: text, or a picture's bytes. */
export type MultimodalPiece = { text: string } | { image: Uint8Array; mediaType: string }

export interface MultimodalEmbedRequest {
  model: string
  /** Each input is a sequence of pieces embedded together (a picture; a query's text). */
  inputs: readonly (readonly MultimodalPiece[])[]
  inputType: InputType
}

export interface RerankRequest {
  model: string
  query: string
  documents: readonly string[]
  /** Keep only the best K; the others score -Infinity. */
  topK?: number
}

export interface RerankResult {
  /** One score per input document, in input order; documents not returned score -Infinity. */
  scores: number[]
  tokens: number
  calls: number
}

export interface DescribeImageRequest {
  model: string
  /** `image/png`, `image/jpeg`, `image/gif` or `image/webp`. */
  mediaType: string
  image: Uint8Array
  /** The instructions, sent as text after the image. */
  prompt: string
  maxTokens: number
}

export interface ImageDescription {
  text: string
  /** The model that answered, as the provider reports it. */
  model: string
  stopReason: string | null
  inputTokens: number
  outputTokens: number
  /** HTTP requests sent, retries included. */
  calls: number
}

/**
 * A vision model that describes one picture. A refusal, an empty answer and every failure once
 * retries are spent are `TychoraError`s (`E_PROVIDER`); nothing is returned that could be stored
 * as a description when the model did not give one.
 */
export interface ImageDescriber {
  readonly name: string
  describe(request: DescribeImageRequest): Promise<ImageDescription>
}

/** Clusters of the summary tree to summarise, each its children's texts in order. */
export interface SummarizeRequest {
  model: string
  maxTokens: number
  clusters: Array<{ level: number; texts: string[] }>
}

/** One cluster's answer: a summary, or why there is none (a refusal, an empty answer). */
export interface ClusterSummary {
  text?: string
  declined?: string
  /** The model that answered, as the provider reports it. */
  model: string
  inputTokens: number
  outputTokens: number
}

/**
 * A model that summarises clusters of the summary tree. A cluster it declines is an answer with
 * `declined` (the core keeps the extractive summary and says so); a failed call once retries are
 * spent is a `TychoraError` (`E_PROVIDER`), and the build writes nothing.
 */
export interface ClusterSummarizer {
  readonly name: string
  /** sha256 of the instructions and settings every cluster is sent with (the cache key's part). */
  readonly promptFingerprint: string
  summarize(request: SummarizeRequest): Promise<{ answers: ClusterSummary[]; calls: number }>
}

/** A remote model provider. Every whole-call failure is a `TychoraError` (`E_PROVIDER` once retries are spent). */
export interface ModelProvider {
  readonly name: string
  embed(request: EmbedRequest): Promise<EmbedResult>
  embedContextualized(request: ContextualizedEmbedRequest): Promise<ContextualizedEmbedResult>
  embedMultimodal(request: MultimodalEmbedRequest): Promise<EmbedResult>
  rerank(request: RerankRequest): Promise<RerankResult>
}

/**
 * The family a text-channel embedder produces (the core records vectors per family and never mixes
 * two): provider, model, dimension, what text is embedded, normalisation, the index's quantisation,
 * and the metric.
 */
export interface FamilySpec {
  provider: string
  model: string
  dimension: number
  representation: 'window' | 'window+capsule' | 'contextual'
  normalization: 'l2' | 'none'
  quantization: 'f32' | 'f16' | 'i8'
  metric: 'cos' | 'ip' | 'l2'
  /** Tokens one input may have before the provider truncates it. */
  max_input_tokens: number
}

/** An embedder the engine calls for the text channel (documents at publication, queries at search). */
export interface TextEmbedder {
  readonly spec: FamilySpec
  /** Why it cannot be called from here (no API key), known before any call: a dry run says so. */
  readonly unavailable?: string
  embed(texts: string[], inputType: InputType): Promise<{ vectors: Float32Array[]; tokens: number[]; receipt: Record<string, unknown> }>
  /** Contextualised embeddings (representation `contextual`): each document's windows embedded together, one vector per window. */
  embedDocuments?(documents: string[][], inputType: InputType): Promise<{ vectors: Float32Array[][]; tokens: number[][]; receipt: Record<string, unknown> }>
}

/** A reranker the engine calls on the top fused candidates. */
export interface TextReranker {
  /** `provider/model`, reported in results. */
  readonly name: string
  rerank(query: string, documents: string[]): Promise<{ scores: number[]; tokens: number; receipt: Record<string, unknown> }>
}

/**
 * The visual channel's embedder (a multimodal model): pictures as documents at publication, a
 * query's text at search, into one space. Its family is its own (`provider`, `model`, `dimension`).
 */
export interface VisualEmbedder {
  readonly spec: { provider: string; model: string; dimension: number }
  /** Why it cannot be called from here (no API key), known before any call: a dry run says so. */
  readonly unavailable?: string
  embedPictures(pictures: Array<{ bytes: Uint8Array; mediaType: string }>): Promise<{ vectors: Float32Array[]; tokens: number[]; receipt: Record<string, unknown> }>
  embedQuery(text: string): Promise<{ vectors: Float32Array[]; tokens: number[]; receipt: Record<string, unknown> }>
}

/** Network providers handed to a workspace when its configuration names them. */
export interface TextProviders {
  embedder?: TextEmbedder
  reranker?: TextReranker
  visual?: VisualEmbedder
}

/** What a workspace's configuration asks of network providers (from workspace.toml and its pack). */
export interface ProviderNeeds {
  embeddings?: { provider: string; model: string; dimension?: number; representation: string; quantization: string }
  rerank?: { provider: string; model: string }
  visual?: { provider: string; model: string; dimension?: number }
}
