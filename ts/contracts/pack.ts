import { z } from 'zod'

import { FormatSchema } from './query.js'

/** The lanes formatted evidence is grouped by, in their default order. */
export const LaneSchema = z.enum(['authority', 'standards', 'guidance', 'feedback', 'evidence', 'examples', 'maintenance'])

const Name = z.string().regex(/^[a-z][a-z0-9_-]*$/)

/** A section of a pack: unknown fields refused, every field optional (resolution completes it). */
const section = <T extends z.ZodRawShape>(shape: T) => z.strictObject(shape).partial().optional()

/** A typed filter field a kind declares. */
const FacetSchema = z
  .object({
    type: z.enum(['string', 'enum', 'number', 'date', 'boolean']),
    values: z.array(z.string()).min(1).optional().describe('The allowed values of an enum facet'),
    description: z.string().optional(),
  })
  .strict()

/** Where a record's fields are in a row: column names or JSON keys, first match wins. */
const RecordRuleSchema = z
  .object({
    key: z.array(z.string().min(1)).min(1).describe("Columns (or JSON keys) holding the record's key, its `id`"),
    key_prefix: z.string().optional().describe('Put before a key that lacks it (`1.2.3` in a chapter table is `V1.2.3`)'),
    key_pattern: z.string().describe('A key must match this linear-time regex (after the prefix); other rows are not records'),
    key_parts: z.record(z.string(), z.number().int().min(1)).optional().describe("Fields that are the key's first N dot-separated parts (`chapter: 1` of `V1.2.3` is `V1`)"),
    fields: z
      .record(z.string(), z.array(z.string().min(1)).min(1))
      .optional()
      .describe('Other fields of the record: field name → the columns it may be under'),
  })
  .strict()

/** A query mode: what a use of the evidence selects, in which order, and requires. */
const ModeDefinitionSchema = z
  .object({
    description: z.string(),
    lanes: z.array(LaneSchema).min(1).describe('The lanes it draws on, in the order output groups them; sources of other lanes (and with no kind) are not eligible'),
    required_lanes: z.array(LaneSchema).optional().describe('Lanes an answer must hold evidence from; a missing one is a coverage gap'),
    decision_requirements: z.array(z.string()).optional().describe('What a decision made from the answer must do, returned with it'),
  })
  .strict()

/** A relation type between evidence objects named by key (`RFC 3986`, `V1.2.3`, `ADR-7`). */
const RelationDefinitionSchema = z
  .object({
    description: z.string(),
    from: z.array(Name).min(1).describe('Kinds its subject may be'),
    to: z.array(Name).min(1).describe('Kinds its object may be'),
    direction: z.enum(['directed', 'symmetric']).describe('symmetric: A→B also states B→A'),
    cardinality: z
      .enum(['one_to_one', 'one_to_many', 'many_to_one', 'many_to_many'])
      .describe('one_to_many: a subject relates to many objects, an object to one subject (a decision is superseded by at most one)'),
    creation: z
      .array(z.enum(['parsed', 'declared', 'proposed']))
      .min(1)
      .describe('How assertions of it may come about'),
    inverse: z.string().optional().describe('Its name read from the object (obsoleted_by)'),
    requires_support: z.boolean().optional().describe('An assertion must cite the evidence that supports it (default true)'),
  })
  .strict()

/** A kind: what a source is and how its evidence is to be read, versioned. */
export const KindDefinitionSchema = z
  .object({
    version: z.number().int().positive().describe('Bumped whenever the definition changes meaning'),
    description: z.string(),
    role: z.string().describe('How evidence of this kind is to be interpreted'),
    lane: LaneSchema.describe('The lane its evidence is grouped in by default'),
    normalisation: z
      .object({ strategy: z.string().describe('An algorithm the engine has: format (the format’s own parser), legal, rfc') })
      .strict()
      .describe('How its text is normalised into units'),
    formats: z.array(FormatSchema).optional().describe('The formats a source of this kind is expected in'),
    identifiers: z.array(z.string()).optional().describe('Names of identifier patterns that cite it'),
    facets: z.record(Name, FacetSchema).optional().describe('Typed filter fields its records and sources carry'),
    schemas: z.record(Name, z.record(z.string(), z.unknown())).optional().describe('JSON Schemas (draft 2020-12) of the structured records it holds, by record type'),
    records: z.record(Name, RecordRuleSchema).optional().describe('How records of each type (with a schema in `schemas`) are read from table rows, CSV rows and JSON objects'),
  })
  .strict()

/**
 * A configuration pack (packs/<name>/pack.json): data only. Every section is optional in a file:
 * resolution fills it from engine defaults, then the pack's dependencies, then the pack itself,
 * then workspace.toml, then what a request may override. The published JSON Schema
 * (packs/pack.schema.json, generated from this) is what the core validates pack files against.
 */
export const PackSchema = z
  .object({
    $schema: z.string().optional(),
    name: z.string().regex(/^[a-z][a-z0-9-]*$/),
    version: z.number().int().positive(),
    description: z.string(),
    depends: z.array(z.string()).optional().describe('Packs resolved before this one, in order'),
    formats: z.array(FormatSchema).optional().describe('Formats detected from file names (others only when forced)'),
    kinds: z.record(Name, KindDefinitionSchema).optional().describe('Kind definitions by name; a later pack replaces a kind of the same name'),
    lanes: z.array(LaneSchema).optional().describe('Lane order in formatted output'),
    modes: z
      .record(Name, ModeDefinitionSchema)
      .optional()
      .describe('Query modes (search --mode NAME): the lanes a use of the evidence draws on, those it must find evidence in, and what a decision made from it must do'),
    relations: z.record(Name, RelationDefinitionSchema).optional().describe('Relation types by name; declaring one manufactures no assertion (parsing, a declaration or a proposal makes them)'),
    request_overrides: z
      .array(z.enum(['output.limit', 'output.budget_tokens', 'output.max_per_source', 'rerank']))
      .optional()
      .describe('Settings a single request may override'),
    chunking: section({
      target_tokens: z.number().int().min(32).describe('Chunk window target size in cl100k_base tokens'),
      soft_ceiling_tokens: z.number().int().min(32).describe('A window may grow to this size to absorb a small remainder'),
    }),
    lexical: section({
      language: z.enum(['english', 'french', 'german', 'spanish']),
      stemmer: z.boolean().describe('Snowball stemming of index and query terms'),
      stopwords: z.boolean().describe("Drop the language's stop words from index and queries (documents pack: on, measured on paragraph-length dev sets; code pack: off, they are keywords there)"),
      capsule_boost: z.number().min(0).describe('Weight of the context capsule (title, heading path) in BM25'),
      split_identifiers: z.boolean().optional().describe('Also index camelCase / letter-digit parts of identifiers (code)'),
      idf: z.enum(['lucene', 'probabilistic']).optional().describe('Query term weighting: lucene (every term adds something) or probabilistic (a term in half the documents or more adds nothing)'),
      max_query_terms: z.number().int().positive().optional().describe('A longer query keeps only this many terms, the rarest first (default: every term, up to 1024)'),
    }),
    identifiers: section({
      patterns: z
        .array(
          z.strictObject({
            name: Name,
            regex: z.string().describe('A Rust regex (linear time: no look-around or back-references)'),
            // biome-ignore lint/suspicious/noTemplateCurlyInString: the description shows a canonical form's `${group}` syntax, not a JS template
            canonical: z.string().optional().describe('How a match is written, from named groups: `RFC ${rfc} §${section}`'),
          }),
        )
        .describe('Explicit identifiers registered for the exact channel'),
    }),
    fusion: section({
      k: z.number().positive(),
      weights: section({
        exact: z.number().nonnegative(),
        lexical: z.number().nonnegative(),
        graph: z.number().nonnegative().optional().describe('Weight of the graph channel (code packs; default 0.35)'),
        text: z.number().nonnegative().optional().describe('Weight of the text (dense) channel (default 1)'),
        visual: z.number().nonnegative().optional().describe('Weight of the visual channel (default 0.7)'),
        summary: z.number().nonnegative().optional().describe('Weight of the summary channel: the windows a matching node of the summary tree brings (default 1)'),
      }),
      test_weight: z.number().min(0).max(1).optional().describe('Multiplies the fused score of windows from test files (code kinds); 1 (default) keeps them level'),
    }),
    graph: section({
      depth: z.number().int().min(0).max(4).describe('Hops followed from each seed symbol'),
      fanout: z.number().int().min(1).max(50).describe('Relations followed per symbol and direction'),
      seeds: z.number().int().min(1).max(100).describe('Top fused candidates expanded from'),
      max_nodes: z.number().int().min(1).max(1000).describe('Symbols reached at most per query'),
      relations: z
        .array(z.enum(['calls', 'references', 'inherits', 'implements']))
        .optional()
        .describe('Relation kinds followed (default: calls, inherits, implements; plain name references were noise on the code dev set)'),
      callers: z.boolean().optional().describe('Also follow relations backwards, to callers and subclasses (default false: callers are mostly tests)'),
    }).describe('Bounded expansion of the code graph channel'),
    text: section({
      representation: z.enum(['window', 'window+capsule']).describe('What is embedded: the window, or its capsule (title, headings, signature) then the window'),
      depth: z.number().int().min(1).max(1000).describe('Candidates the text channel ranks per query (at least three per requested segment)'),
      models: z.record(z.string(), z.string()).describe('Model per network provider (voyage, voyage_contextual); the local model is a directory'),
      rerank_model: z.string().optional().describe('Reranking model ([rerank] provider)'),
      rerank_depth: z.number().int().min(1).max(1000).describe('Fused candidates the reranker reorders'),
    }).describe('The text channel, used when a workspace enables [embeddings]'),
    prices: section({
      as_of: z.string().describe("The day the prices were read from the provider's price page"),
      source: z.string().describe('Where they were read'),
      usd_per_million_tokens: z.record(z.string(), z.number().nonnegative()),
    }).describe('Dated provider prices for the dry run’s cost estimate'),
    output: section({
      budget_tokens: z.number().int().positive(),
      max_per_source: z.number().int().nonnegative(),
      limit: z.number().int().positive(),
    }),
  })
  .strict()

export type Pack = z.infer<typeof PackSchema>

/** A pack file and what checking and resolving it found (`tychora packs list|validate`). */
export const PackEntrySchema = z.object({
  name: z.string(),
  version: z.number().int().nullable(),
  description: z.string().nullable(),
  origin: z.string().describe('built-in:packs/NAME/pack.json, or the file’s path'),
  depends: z.array(z.string()),
  kinds: z.array(z.string()).describe('Kinds it defines itself'),
  problems: z.array(z.string()).describe('Each names file, line and field; empty when the pack resolves'),
  warnings: z.array(z.string()),
})
export type PackEntry = z.infer<typeof PackEntrySchema>

/** A pack file as written (`tychora packs show`). */
export const PackSourceSchema = z.object({ name: z.string(), origin: z.string(), text: z.string() })

/** The configuration a profile runs with and where each value came from (`tychora packs resolved`). */
export const ResolvedPackSchema = z.object({
  profile: z.string(),
  pack: z.string(),
  chain: z.array(z.string()).describe('Packs applied, dependencies first'),
  values: z.array(z.object({ path: z.string().describe('JSON pointer'), value: z.unknown(), origin: z.string() })),
  warnings: z.array(z.string()),
  fingerprints: z
    .object({ acquisition: z.string(), extraction: z.string(), indexing: z.string(), eligibility: z.string(), query: z.string(), output: z.string() })
    .describe('One fingerprint per stage a setting can affect; a change touches its own stage only'),
})
export type ResolvedPack = z.infer<typeof ResolvedPackSchema>
