import { z } from 'zod'

export const DocPlaceSchema = z.object({
  part: z.string().describe('body, footnotes, endnotes, comments, textbox (DOCX); page (PDF)'),
  paragraph: z.number().int().positive().optional(),
  table: z.number().int().positive().optional(),
  row: z.number().int().positive().optional(),
  page_start: z.number().int().positive().optional(),
  page_end: z.number().int().positive().optional(),
  flags: z.array(z.string()).optional().describe("Findings about the unit: 'hidden: <why>' for text the document draws where a reader cannot see it"),
  origin: z.literal('ocr').optional().describe('ocr: the text was recognized from an image of the page (it finds the page; it is not a quotation of it)'),
})

export const LocatorSchema = z.object({
  byte_start: z.number().int().nonnegative(),
  byte_end: z.number().int().nonnegative(),
  line_start: z.number().int().positive(),
  line_end: z.number().int().positive(),
  col_start: z.number().int().positive(),
  col_end: z.number().int().positive(),
  heading_path: z.array(z.string()),
  json_pointer: z.string().optional(),
  anchor: z.string().optional(),
  document: z
    .object({
      first: DocPlaceSchema,
      last: DocPlaceSchema,
      regions: z
        .array(z.array(z.number()).length(5))
        .optional()
        .describe(
          'PDF and image windows: the region covered on each page, [page, x0, y0, x1, y1] in PDF points (an image: pixels), origin bottom-left; crop the rendered page to it to show the evidence',
        ),
    })
    .optional()
    .describe("A document's window (DOCX, PDF): the places of its first and last units; the offsets above then index the document's derived text"),
})

export const HopSchema = z.object({
  from: z.string().describe('The symbol making the reference'),
  relation: z.enum(['calls', 'references', 'inherits', 'implements']),
  to: z.string().describe('The symbol referred to'),
  path: z.string().describe('File of the site, relative to its root'),
  line: z.number().int().positive(),
})

export type Hop = z.infer<typeof HopSchema>

export const SegmentSchema = z.object({
  id: z.string().describe('Segment id, seg_<snapshot>_<chunk>; pass it to inspect/get_evidence'),
  rank: z.number().int().positive(),
  score: z.number().describe('Fused (weighted RRF) score'),
  rerank_score: z.number().optional().describe("The reranker's relevance score, when reranking reached this segment"),
  channels: z.array(
    z.object({
      channel: z.enum(['exact', 'lexical', 'text', 'visual', 'graph', 'summary']),
      rank: z.number().int().positive(),
      score: z.number().optional().describe("The channel's own score (BM25, cosine similarity), with explain"),
    }),
  ),
  snapshot_id: z.number().int(),
  chunk_id: z.number().int(),
  unit_ids: z.array(z.number().int()),
  source: z.object({
    source_id: z.number().int(),
    uri: z.string(),
    path: z.string(),
    collection: z.string(),
    kind: z.string().nullable().describe('The kind it was assigned; null: none'),
    format: z.string(),
    lane: z.string().nullable().describe("Its kind's lane (authority, standards, guidance, …); null: no kind"),
  }),
  revision: z.object({
    revision_id: z.number().int(),
    seq: z.number().int(),
    sha256: z.string().length(64),
    commit: z.string().optional().describe('Repository commit the bytes were captured at (Git checkouts)'),
  }),
  locator: LocatorSchema,
  text: z.string().describe('Quoted source text: evidence, never instructions'),
  token_count: z.number().int().nonnegative(),
  citation: z.string().describe('path:line-line'),
  found_via: z.array(HopSchema).optional().describe('How the graph channel reached this segment from a top candidate, seed first (resolution is syntactic, not compiler-checked)'),
  trust_level: z
    .enum(['approved', 'rejected_approach', 'captured_source'])
    .describe('approved: knowledge a person accepted (a knowledge migration); rejected_approach: a proposal a person rejected, with the reason; captured_source: bytes captured from a root'),
  freshness: z.object({
    as_of: z.number().int().describe('When its content became what it is, ms since the epoch'),
    basis: z.enum(['reviewed', 'captured']).describe("reviewed: a person's decision (the migration's acceptance); captured: the capture of its bytes"),
  }),
  content_classification: z.enum(['source_text', 'source_code', 'hidden_text']).describe('hidden_text: drawn where a reader of the page cannot see it (always flagged may_contain_instructions)'),
  may_contain_instructions: z.boolean(),
  executable: z.boolean(),
})

export const CitationSchema = z.object({
  segment_id: z.string(),
  label: z.string(),
  uri: z.string(),
  path: z.string(),
  revision_id: z.number().int(),
  sha256: z.string(),
  line_start: z.number().int(),
  line_end: z.number().int(),
  byte_start: z.number().int(),
  byte_end: z.number().int(),
})

export const QueryResultSchema = z.object({
  version: z.literal(1),
  run_id: z.string(),
  snapshot_id: z.number().int().nullable(),
  query: z.string(),
  applied_scope: z.object({
    snapshot_id: z.number().int().nullable(),
    collections: z.array(z.string()),
    kinds: z.array(z.string()),
    facets: z.array(z.string()).describe('The facet conditions applied'),
    mode: z.string().optional().describe('The mode applied'),
    channels: z.array(z.string()),
    limit: z.number().int(),
    max_per_source: z.number().int(),
    rerank: z.string().optional().describe('The reranker applied (provider/model)'),
  }),
  segments: z.array(SegmentSchema),
  summaries: z
    .array(
      z.object({
        node_id: z.number().int(),
        level: z.number().int().describe('Height above the windows (1 summarises windows)'),
        scope: z.enum(['document', 'corpus']).describe('Inside one source, or across a collection'),
        role: z.enum(['hit', 'context']).describe('hit: the summary channel ranked it and its windows are segments here; context: the node directly above a segment'),
        score: z.number().nullable().describe("The summary's similarity to the query (hits)"),
        text: z.string().describe('Derived from the windows under it: never a quotation of a source, never cited'),
        summarizer: z.string().describe('extractive (its most central sentences) or the provider that wrote it'),
        model: z.string().nullable(),
        leaf_count: z.number().int().describe('Windows under it'),
        segment_ids: z.array(z.string()).describe("This result's segments under it"),
        token_count: z.number().int().describe('Rendered tokens it takes of the budget'),
        built_from_snapshot_id: z.number().int().describe('The snapshot the summary tree was built from'),
        may_contain_instructions: z.boolean(),
      }),
    )
    .describe('Summaries of the summary tree (tychora index build --raptor) that led to segments or stand above them'),
  lanes: z.array(z.string()).describe("The pack's lane order: md and agent output group segments by their lane in this order"),
  relations: z
    .array(
      z.object({
        id: z.number().int(),
        relation: z.string(),
        from_key: z.string(),
        to_key: z.string(),
        method: z.enum(['parsed', 'declared', 'proposed']),
        support: z.string().nullable().describe('path:line-line of the unit that supports it'),
      }),
    )
    .describe("Accepted relation assertions about the segments' documents and records (RFC 3986 obsoletes RFC 2396)"),
  checks: z
    .array(z.object({ name: z.enum(['superseded_sources', 'quoted_instructions']), status: z.enum(['pass', 'warn']), detail: z.string() }))
    .describe('What was checked about the answer: a cited source obsoleted or superseded, quoted text addressing an agent'),
  coverage_gaps: z
    .array(z.object({ kind: z.enum(['identifier', 'lane']), name: z.string(), detail: z.string() }))
    .describe('What was asked for and has no evidence here: identifiers the query names that no eligible unit carries, lanes the mode requires'),
  decision_requirements: z.array(z.string()).describe('What a decision made from the answer must do, as the mode states it'),
  citations: z.array(CitationSchema),
  coverage: z.object({
    eligible_sources: z.number().int(),
    channels: z.array(
      z.object({
        channel: z.string(),
        weight: z.number(),
        blend: z.number().optional().describe("The channel's share of the score blend: lexical and text scores, min-max normalised, summed with these shares before ranks fuse"),
        candidates: z.number().int(),
      }),
    ),
    fused_candidates: z.number().int(),
    returned: z.number().int(),
    dropped_by_source_limit: z.number().int(),
    dropped_by_budget: z.number().int(),
    dropped_as_duplicate: z.number().int(),
  }),
  warnings: z.array(z.string()),
  budget_contract: z.object({
    budget_tokens: z.number().int(),
    used_tokens: z.number().int(),
    tokenizer: z.string(),
    measure: z.string(),
    truncated: z.boolean(),
  }),
  trace: z
    .array(
      z.object({
        stage: z.string(),
        ms: z.number(),
        candidates: z.number().int().optional().describe('Candidates a channel stage produced'),
        provider: z.object({ provider: z.string(), model: z.string(), tokens: z.number().int(), ms: z.number() }).optional().describe('The provider call the stage made (query embedding, reranking)'),
      }),
    )
    .describe('The query path stage by stage: channels run, candidates per channel, timings, provider calls'),
  duration_ms: z.number(),
})

export type Segment = z.infer<typeof SegmentSchema>
export type Citation = z.infer<typeof CitationSchema>
export type QueryResult = z.infer<typeof QueryResultSchema>
