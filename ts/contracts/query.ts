import { z } from 'zod'

/** How a file's bytes are parsed, apart from what the source is (its kind). */
export const FormatSchema = z.enum(['markdown', 'text', 'json', 'jsonl', 'csv', 'code_file', 'docx', 'pdf', 'image', 'legal', 'rfc']).describe('File format: how the bytes are parsed')
/** What a source is: a kind the pack defines (law, standard, decision, …); a format name stands for a source with no kind. */
export const KindSchema = z
  .string()
  .regex(/^[a-z][a-z0-9_-]{0,63}$/)
  .describe('Source kind: one the pack defines (law, regulation, standard, …), or a format name for sources assigned no kind')
/**
 * A malformed condition's one line: the forms, and the shell's part in it (`--facet level>=2`
 * unquoted reaches the CLI as `level`, the rest a redirection to a file `=2`), not the pattern.
 */
const notACondition = (issue: { input?: unknown }) =>
  `facet condition ${JSON.stringify(issue.input)} is not NAME=VALUE, NAME!=VALUE, NAME>=VALUE, NAME<=VALUE, NAME>VALUE, NAME<VALUE or NAME=LOW..HIGH (NAME in lowercase; in a shell, quote it: --facet 'level>=2')`

/** A facet condition: NAME=VALUE, NAME!=VALUE, NAME>=VALUE (also <=, >, <) or NAME=LOW..HIGH. */
export const FacetConditionSchema = z
  .string()
  .min(2, { error: notACondition, abort: true })
  .max(500)
  .regex(/^[a-z][a-z0-9_]{0,63}\s*(=|!=|>=|<=|>|<)/, { error: notACondition })
  .describe('A facet condition: NAME=VALUE, NAME!=VALUE, NAME>=VALUE, NAME<=VALUE, NAME>VALUE, NAME<VALUE or NAME=LOW..HIGH (dates and numbers)')
/** A sensitivity level: one of the workspace's `[sensitivity] levels` (public, internal, confidential, secret by default). */
export const SensitivitySchema = z.string().min(1).max(64)

export const ChannelSchema = z
  .enum(['exact', 'lexical', 'text', 'visual', 'graph', 'summary'])
  .describe(
    'Retrieval channel (text: dense vectors, needs [embeddings]; visual: pictures by a multimodal model, needs [visual]; graph: code relations expanded from the top candidates; summary: the windows under the summaries of the summary tree that match, needs a tree built by `tychora index build --raptor`)',
  )

/** A search request. Filters apply before ranking, inside every channel. */
export const QueryRequestSchema = z
  .object({
    query: z.string().min(1).max(10_000).describe('What to look for: words, a phrase, or an identifier such as "RFC 9110"'),
    collections: z.array(z.string().min(1)).optional().describe('Only these collections'),
    kinds: z.array(KindSchema).optional().describe('Only sources of these kinds (a source with no kind: by its format)'),
    facets: z
      .array(FacetConditionSchema)
      .max(32)
      .optional()
      .describe('Facet conditions, all of which a source must satisfy: "level>=2", "jurisdiction=EU", "decided=2024-01-01..2024-12-31" (facets are declared by kinds)'),
    limit: z.number().int().min(1).max(1000).optional().describe('Most segments to return (default from the pack: 10)'),
    budget_tokens: z.number().int().min(1).optional().describe('Token budget of the rendered output (cl100k_base tokens)'),
    max_per_source: z.number().int().min(0).optional().describe('Segments per source; 0 = unlimited (default 3)'),
    snapshot_id: z.number().int().positive().optional().describe('Pin a published snapshot; default is the current one'),
    channels: z.array(ChannelSchema).optional().describe("Channels to run; default is the profile's"),
    agent_id: z.string().max(200).optional().describe('Caller agent, recorded in query_runs'),
    task_id: z.string().max(200).optional().describe('Caller task, recorded in query_runs'),
    explain: z.boolean().optional().describe("Per segment, each channel's own score beside its rank, and the rerank score"),
    rerank: z.boolean().optional().describe('Rerank the top fused candidates when [rerank] is configured (default true)'),
    graph: z.boolean().optional().describe("Also run the graph channel (code): on top of the profile's or the requested channels"),
    mode: z
      .string()
      .regex(/^[a-z][a-z0-9_-]{0,63}$/)
      .optional()
      .describe(
        'A mode the pack defines: compliance (authority and standards first, examples and code left out) or implementation (code, guidance and examples first); it sets the lanes drawn on, the lanes that must hold evidence, and what a decision made from the answer must do',
      ),
    max_sensitivity: SensitivitySchema.optional().describe(
      "Only sources labelled at or below this level of the workspace's [sensitivity] levels (never above its ceiling); applied before ranking in every channel, and counts say nothing of what it hides",
    ),
  })
  .strict()

export type QueryRequest = z.infer<typeof QueryRequestSchema>
