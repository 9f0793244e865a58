import { z } from 'zod'
import { KindSchema } from './query.js'

/** A configuration pack (packs/<name>/pack.json): data only, validated here and embedded in the core. */
export const PackSchema = z
  .object({
    name: z.string().regex(/^[a-z][a-z0-9-]*$/),
    version: z.number().int().positive(),
    description: z.string(),
    kinds: z.array(KindSchema).min(1),
    chunking: z.object({
      target_tokens: z.number().int().min(32).describe('Chunk window target size in cl100k_base tokens'),
      soft_ceiling_tokens: z.number().int().min(32).describe('A window may grow to this size to absorb a small remainder'),
    }),
    lexical: z.object({
      language: z.enum(['english', 'french', 'german', 'spanish']),
      stemmer: z.boolean().describe('Snowball stemming of index and query terms'),
      stopwords: z.boolean().describe('Drop stop words (measured: keeping them scores better on SciFact train)'),
      capsule_boost: z.number().min(0).describe('Weight of the context capsule (title, heading path) in BM25'),
      split_identifiers: z.boolean().optional().describe('Also index camelCase / letter-digit parts of identifiers (code)'),
      idf: z
        .enum(['lucene', 'probabilistic'])
        .optional()
        .describe("Query term weighting: lucene (every term adds something) or probabilistic (a term in half the documents or more adds nothing)"),
      max_query_terms: z.number().int().positive().optional().describe('A longer query keeps only this many terms, the rarest first'),
    }),
    identifiers: z.object({
      patterns: z
        .array(z.object({ name: z.string(), regex: z.string(), canonical: z.string().optional().describe('How a match is written, from named groups: `RFC ${rfc} §${section}`') }))
        .describe('Explicit identifiers registered for the exact channel'),
    }),
    fusion: z.object({
      k: z.number().positive(),
      weights: z.object({
        exact: z.number().nonnegative(),
        lexical: z.number().nonnegative(),
        graph: z.number().nonnegative().optional().describe('Weight of the graph channel (code packs; default 0.35)'),
        text: z.number().nonnegative().optional().describe('Weight of the text (dense) channel (default 1)'),
      }),
      test_weight: z
        .number()
        .min(0)
        .max(1)
        .optional()
        .describe('Multiplies the fused score of windows from test files (code kinds); 1 (default) keeps them level'),
    }),
    graph: z
      .object({
        depth: z.number().int().min(0).max(4).describe('Hops followed from each seed symbol'),
        fanout: z.number().int().min(1).max(50).describe('Relations followed per symbol and direction'),
        seeds: z.number().int().min(1).max(100).describe('Top fused candidates expanded from'),
        max_nodes: z.number().int().min(1).max(1000).describe('Symbols reached at most per query'),
        relations: z
          .array(z.enum(['calls', 'references', 'inherits', 'implements']))
          .optional()
          .describe('Relation kinds followed (default: all four)'),
        callers: z.boolean().optional().describe('Also follow relations backwards, to callers and subclasses (default true)'),
      })
      .optional()
      .describe('Bounded expansion of the code graph channel'),
    text: z
      .object({
        representation: z.enum(['window', 'window+capsule']).describe('What is embedded: the window, or its capsule (title, headings, signature) then the window'),
        depth: z.number().int().min(1).max(1000).describe('Candidates the text channel ranks per query (at least three per requested segment)'),
        models: z.record(z.string(), z.string()).describe('Model per network provider (voyage, voyage_contextual); the local model is a directory'),
        rerank_model: z.string().optional().describe('Reranking model ([rerank] provider)'),
        rerank_depth: z.number().int().min(1).max(1000).describe('Fused candidates the reranker reorders'),
      })
      .optional()
      .describe('The text channel, used when a workspace enables [embeddings]'),
    prices: z
      .object({
        as_of: z.string().describe("The day the prices were read from the provider's price page"),
        source: z.string().describe('Where they were read'),
        usd_per_million_tokens: z.record(z.string(), z.number().nonnegative()),
      })
      .optional()
      .describe('Dated provider prices for the dry run’s cost estimate'),
    output: z.object({
      budget_tokens: z.number().int().positive(),
      max_per_source: z.number().int().nonnegative(),
      limit: z.number().int().positive(),
    }),
  })
  .strict()
  .refine((p) => p.chunking.soft_ceiling_tokens >= p.chunking.target_tokens, 'soft_ceiling_tokens must be ≥ target_tokens')

export type Pack = z.infer<typeof PackSchema>
