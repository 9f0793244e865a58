import { readFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import type { ClusterSummarizer, FamilySpec, ImageDescriber, ModelProvider, ProviderCall, ProviderNeeds, TextEmbedder, TextProviders, TextReranker, VisualEmbedder } from '../contracts/provider.js'
import { Workspace } from '../engine/workspace.js'
import { TychoraError } from '../errors.js'

/**
 * The Voyage module (and with it the `voyageai` SDK, about 70 ms to import) is loaded on the first
 * provider call, not at start: a CLI run against a workspace without Voyage never pays for it.
 */
type VoyageModule = typeof import('../providers/voyage.js')
let voyageModule: Promise<VoyageModule> | undefined
const loadVoyage = (): Promise<VoyageModule> => {
  voyageModule ??= import('../providers/voyage.js')
  return voyageModule
}

/**
 * The composition of network providers: a workspace whose `workspace.toml` names Voyage (for
 * `[embeddings]` or `[rerank]`) is opened with them; any other workspace is opened as it is and
 * never touches the network.
 *
 * The key comes from `VOYAGE_API_KEY`, else from the user's config
 * (`$XDG_CONFIG_HOME/tychora/config.json` or `~/.config/tychora/config.json`:
 * `{ "voyage": { "api_key": "…", "base_url": "…" } }`). It is never written to the workspace.
 */

interface UserConfig {
  voyage?: { api_key?: string; base_url?: string }
  anthropic?: { api_key?: string; base_url?: string }
}

/** Where the user config lives (keys are read from it, never written to a workspace). */
function userConfigPath(): string {
  return join(process.env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), 'tychora', 'config.json')
}

/** The user's provider config; a missing or unreadable file is an empty one. */
function userConfig(): UserConfig {
  try {
    return JSON.parse(readFileSync(userConfigPath(), 'utf8')) as UserConfig
  } catch {
    return {}
  }
}

/** Dimensions of Voyage's embedding models when no `dimension` is configured (docs.voyageai.com/docs/embeddings). */
const VOYAGE_DIMENSIONS: Readonly<Record<string, number>> = {
  'voyage-3.5': 1024,
  'voyage-3.5-lite': 1024,
  'voyage-3-large': 1024,
  'voyage-code-3': 1024,
  'voyage-context-3': 1024,
  'voyage-4': 1024,
  'voyage-4-lite': 1024,
  'voyage-4-large': 1024,
  'voyage-finance-2': 1024,
  'voyage-law-2': 1024,
}

/** Voyage's context length for its current embedding models (32K tokens). */
const VOYAGE_MAX_INPUT_TOKENS = 32_000

/** Splits a request's reported token total over its inputs in proportion to their estimates. */
function spread(total: number, texts: readonly string[], estimateTokens: (text: string) => number): number[] {
  const estimates = texts.map(estimateTokens)
  const sum = estimates.reduce((a, b) => a + b, 0) || 1
  const out = estimates.map((e) => Math.floor((e * total) / sum))
  let rest = total - out.reduce((a, b) => a + b, 0)
  for (let i = 0; rest > 0 && i < out.length; i++, rest--) out[i] = (out[i] as number) + 1
  return out
}

/**
 * Why Voyage cannot be called from here — no key, or one fetch would refuse — or `undefined`.
 * The provider itself finds out at its first call; a dry run needs to know before.
 */
function voyageKeyProblem(): string | undefined {
  const key = process.env.VOYAGE_API_KEY ?? userConfig().voyage?.api_key
  if (key === undefined || key === '') return `no Voyage API key: set VOYAGE_API_KEY, or voyage.api_key in ${userConfigPath()}`
  if (!/^[\x21-\x7e]+$/.test(key)) return 'the Voyage API key is malformed: a key is printable ASCII without spaces or line breaks'
  return undefined
}

/**
 * The Voyage provider, created on first use: a workspace that names Voyage still opens without a
 * key (status, verify, lexical search); the first embedding or rerank call says the key is missing.
 */
function voyage(onCall?: (call: ProviderCall) => void): ModelProvider {
  let real: ModelProvider | undefined
  const get = async () => {
    if (!real) {
      const { createVoyageProvider } = await loadVoyage()
      const config = userConfig().voyage ?? {}
      const apiKey = process.env.VOYAGE_API_KEY ?? config.api_key
      const baseUrl = process.env.TYCHORA_VOYAGE_BASE_URL ?? config.base_url
      real ??= createVoyageProvider({ ...(apiKey ? { apiKey } : {}), ...(baseUrl ? { baseUrl } : {}), ...(onCall ? { onCall } : {}) })
    }
    return real
  }
  return {
    name: 'voyage',
    embed: async (request) => (await get()).embed(request),
    embedContextualized: async (request) => (await get()).embedContextualized(request),
    embedMultimodal: async (request) => (await get()).embedMultimodal(request),
    rerank: async (request) => (await get()).rerank(request),
  }
}

function embedderFor(need: NonNullable<ProviderNeeds['embeddings']>, provider: ModelProvider): TextEmbedder {
  if (need.provider !== 'voyage') throw new TychoraError('E_INVALID_ARGUMENT', `[embeddings] provider ${JSON.stringify(need.provider)} is not one this package can call; expected local or voyage`)
  const dimension = need.dimension ?? VOYAGE_DIMENSIONS[need.model]
  if (!dimension) throw new TychoraError('E_INVALID_ARGUMENT', `[embeddings] model ${JSON.stringify(need.model)} has no known dimension: set dimension in [embeddings]`)
  const spec: FamilySpec = {
    provider: 'voyage',
    model: need.model,
    dimension,
    representation: need.representation as FamilySpec['representation'],
    // Voyage returns unit-length vectors.
    normalization: 'l2',
    quantization: need.quantization as FamilySpec['quantization'],
    metric: 'cos',
    max_input_tokens: VOYAGE_MAX_INPUT_TOKENS,
  }
  const dimensionOption = need.dimension ? { outputDimension: need.dimension } : {}
  const receipt = (inputType: string, inputs: number, result: { tokens: number; calls: number }, started: number) => ({
    provider: 'voyage',
    model: need.model,
    input_type: inputType,
    inputs,
    tokens: result.tokens,
    calls: result.calls,
    ms: performance.now() - started,
  })
  if (need.representation === 'contextual') {
    // voyage-context-3: a document's windows are embedded together; a query is a document of one.
    return {
      spec,
      async embed(texts, inputType) {
        const started = performance.now()
        const result = await provider.embedContextualized({ model: need.model, documents: texts.map((t) => [t]), inputType, ...dimensionOption })
        return {
          vectors: result.vectors.map((d) => d[0] as Float32Array),
          tokens: spread(result.tokens, texts, (await loadVoyage()).estimateTokens),
          receipt: receipt(inputType, texts.length, result, started),
        }
      },
      async embedDocuments(documents, inputType) {
        const started = performance.now()
        const result = await provider.embedContextualized({ model: need.model, documents, inputType, ...dimensionOption })
        const windows = documents.flat()
        const tokens = spread(result.tokens, windows, (await loadVoyage()).estimateTokens)
        let at = 0
        return {
          vectors: result.vectors,
          tokens: documents.map((d) => {
            const slice = tokens.slice(at, at + d.length)
            at += d.length
            return slice
          }),
          receipt: receipt(inputType, windows.length, result, started),
        }
      },
    }
  }
  return {
    spec,
    async embed(texts, inputType) {
      const started = performance.now()
      const result = await provider.embed({ model: need.model, inputs: texts, inputType, ...dimensionOption })
      return {
        vectors: result.vectors,
        tokens: spread(result.tokens, texts, (await loadVoyage()).estimateTokens),
        receipt: receipt(inputType, texts.length, result, started),
      }
    },
  }
}

function rerankerFor(need: NonNullable<ProviderNeeds['rerank']>, provider: ModelProvider): TextReranker {
  if (need.provider !== 'voyage') throw new TychoraError('E_INVALID_ARGUMENT', `[rerank] provider ${JSON.stringify(need.provider)} is not one this package can call; expected voyage`)
  return {
    name: `voyage/${need.model}`,
    async rerank(query, documents) {
      const started = performance.now()
      const result = await provider.rerank({ model: need.model, query, documents })
      return {
        scores: result.scores,
        tokens: result.tokens,
        receipt: { provider: 'voyage', model: need.model, calls: result.calls, ms: performance.now() - started },
      }
    },
  }
}

/** Dimensions of Voyage's multimodal models (docs.voyageai.com/docs/multimodal-embeddings). */
const VOYAGE_MULTIMODAL_DIMENSIONS: Readonly<Record<string, number>> = {
  'voyage-multimodal-3': 1024,
  'voyage-multimodal-3.5': 1024,
}

/**
 * The visual channel's embedder: pictures as documents, queries as text, one space. The provider
 * reports tokens per request; they are spread evenly over its inputs.
 */
function visualFor(need: NonNullable<ProviderNeeds['visual']>, provider: ModelProvider): VisualEmbedder {
  if (need.provider !== 'voyage') throw new TychoraError('E_INVALID_ARGUMENT', `[visual] provider ${JSON.stringify(need.provider)} is not one this package can call; expected voyage`)
  const dimension = need.dimension ?? VOYAGE_MULTIMODAL_DIMENSIONS[need.model]
  if (!dimension) throw new TychoraError('E_INVALID_ARGUMENT', `[visual] model ${JSON.stringify(need.model)} has no known dimension: set dimension in [visual]`)
  const run = async (inputs: Parameters<ModelProvider['embedMultimodal']>[0]['inputs'], inputType: 'query' | 'document') => {
    const started = performance.now()
    const result = await provider.embedMultimodal({ model: need.model, inputs, inputType })
    const even = Math.floor(result.tokens / Math.max(1, inputs.length))
    return {
      vectors: result.vectors,
      tokens: inputs.map((_, i) => (i === 0 ? result.tokens - even * (inputs.length - 1) : even)),
      receipt: {
        provider: 'voyage',
        model: need.model,
        input_type: inputType,
        inputs: inputs.length,
        tokens: result.tokens,
        calls: result.calls,
        ms: performance.now() - started,
      },
    }
  }
  return {
    spec: { provider: 'voyage', model: need.model, dimension },
    embedPictures: (pictures) =>
      run(
        pictures.map((p) => [{ image: p.bytes, mediaType: p.mediaType }]),
        'document',
      ),
    embedQuery: (text) => run([[{ text }]], 'query'),
  }
}

/** The network providers the workspace in `dir` configures, or `undefined` when it needs none. */
export function providersFor(dir: string, options: { onCall?: (call: ProviderCall) => void } = {}): TextProviders | undefined {
  const needs = Workspace.providerNeeds(dir)
  if (!needs.embeddings && !needs.rerank && !needs.visual) return undefined
  const provider = voyage(options.onCall)
  const problem = voyageKeyProblem()
  const unavailable = <T extends object>(channel: T, section: string): T => (problem === undefined ? channel : { ...channel, unavailable: `[${section}] provider voyage: ${problem}` })
  return {
    ...(needs.embeddings ? { embedder: unavailable(embedderFor(needs.embeddings, provider), 'embeddings') } : {}),
    ...(needs.rerank ? { reranker: rerankerFor(needs.rerank, provider) } : {}),
    ...(needs.visual ? { visual: unavailable(visualFor(needs.visual, provider), 'visual') } : {}),
  }
}

/**
 * The image describer `[descriptions] provider = "anthropic"` names, created on first use (the SDK
 * is loaded then too): a refused picture never needs a key. The key comes from
 * `ANTHROPIC_API_KEY`, else the user config's `anthropic.api_key`; the base URL from
 * `TYCHORA_ANTHROPIC_BASE_URL` or `anthropic.base_url`. Neither is ever written to the workspace.
 */
export function imageDescriber(): ImageDescriber {
  let real: ImageDescriber | undefined
  return {
    name: 'anthropic',
    async describe(request) {
      if (!real) {
        const { createAnthropicDescriber } = await import('../providers/anthropic.js')
        const config = userConfig().anthropic ?? {}
        const apiKey = process.env.ANTHROPIC_API_KEY ?? config.api_key
        const baseUrl = process.env.TYCHORA_ANTHROPIC_BASE_URL ?? config.base_url
        real = createAnthropicDescriber({ ...(apiKey ? { apiKey } : {}), ...(baseUrl ? { baseUrl } : {}) })
      }
      return real.describe(request)
    },
  }
}

/**
 * The summary tree's model summariser: Anthropic's SDK, loaded only when a build uses it; the key
 * from `ANTHROPIC_API_KEY` or the user config (never written to the workspace).
 */
export async function clusterSummarizer(): Promise<ClusterSummarizer> {
  const { createAnthropicSummarizer, SUMMARY_PROMPT_FINGERPRINT } = await import('../providers/anthropic.js')
  // The key is looked for on the first call: a build whose clusters are all summarised offline
  // (no collection permitted, or every summary cached) needs none.
  let real: ClusterSummarizer | undefined
  return {
    name: 'anthropic',
    promptFingerprint: SUMMARY_PROMPT_FINGERPRINT,
    async summarize(request) {
      if (!real) {
        const config = userConfig().anthropic ?? {}
        const apiKey = process.env.ANTHROPIC_API_KEY ?? config.api_key
        const baseUrl = process.env.TYCHORA_ANTHROPIC_BASE_URL ?? config.base_url
        real = createAnthropicSummarizer({ ...(apiKey ? { apiKey } : {}), ...(baseUrl ? { baseUrl } : {}) })
      }
      return real.summarize(request)
    },
  }
}

/** Opens a workspace with the providers its configuration names. */
export async function openConfigured(dir: string): Promise<Workspace> {
  return Workspace.open(dir, { providers: providersFor(dir) })
}
