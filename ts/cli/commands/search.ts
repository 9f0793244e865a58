import { defineCommand } from 'citty'
import { type QueryRequest, QueryRequestSchema } from '../../contracts/query.js'
import { validate } from '../../contracts/validate.js'
import { TychoraError } from '../../errors.js'
import { FORMATS, type Format, render } from '../../format/render.js'
import { deferWarnings, repeatedFlag, takeWorkspaceWarnings, workspaceArg, writeOut } from '../context.js'
import { withLocalWorkspace, withTarget } from '../route.js'
import { visibleLines } from '../../format/terminal.js'
import { chunkOf, replayRun } from '../../service/replay.js'

function int(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined
  const n = Number(value)
  if (!Number.isInteger(n)) throw new TychoraError('E_INVALID_ARGUMENT', `--${name} must be an integer, got ${value}`)
  return n
}

export default defineCommand({
  meta: { name: 'search', description: 'Search the corpus and print cited evidence; a query that starts with - goes after --: search -- "-foo bar"' },
  args: {
    ...workspaceArg,
    query: { type: 'positional', required: false, variadic: true, description: 'Query text: every remaining word (after -- when it starts with -)' },
    replay: {
      type: 'string',
      description: 'Re-run a recorded query run (its request, on the snapshot it read, or the one --snapshot names: an id, or `current`) and diff the results against the recorded ones',
    },
    collection: { type: 'string', description: 'Only this collection (comma-separated for several)' },
    kind: { type: 'string', description: 'Only this kind (comma-separated for several)' },
    mode: {
      type: 'string',
      description: 'A mode the pack defines: compliance | implementation (lanes drawn on, lanes required, what a decision must do)',
    },
    facet: {
      type: 'string',
      description:
        "A facet condition every source must satisfy, quoted (a bare > or < is a shell redirection): --facet 'level>=2', 'jurisdiction=EU', 'decided=2024-01-01..2024-12-31'; also !=, <=, >, <; repeat for several",
    },
    'max-sensitivity': {
      type: 'string',
      description: "Only sources labelled at or below this sensitivity level (public, internal, confidential by default; never above the workspace's ceiling)",
    },
    limit: { type: 'string', description: 'Most segments to return (default 10)' },
    'budget-tokens': { type: 'string', description: 'Token budget of the rendered output (default 4000)' },
    'max-per-source': { type: 'string', description: 'Segments per source, 0 = unlimited (default 3)' },
    snapshot: { type: 'string', description: 'Pin a snapshot id (`current`: the current one; with --replay, replay on it)' },
    channels: {
      type: 'string',
      description:
        "Channels to run, comma-separated: exact, lexical, text, visual, graph, summary (default: the profile's, with visual when [visual] is set; summary, the summary tree's channel for broad questions, when named or [summaries] channel = true)",
    },
    explain: {
      type: 'boolean',
      description: "Per segment, each channel's rank and own score, the fused and rerank scores; the query path's stages",
      default: false,
    },
    rerank: { type: 'boolean', description: 'Rerank the top candidates when [rerank] is configured (--no-rerank to skip)', default: true },
    graph: {
      type: 'boolean',
      description: 'Add the graph channel (code): symbols the top candidates call or inherit from, with the path that reached them',
      default: false,
    },
    format: { type: 'string', description: 'json | md | agent', default: 'md' },
  },
  async run({ args, rawArgs }) {
    const facets = repeatedFlag(rawArgs, 'facet')
    if (!FORMATS.includes(args.format as Format)) throw new TychoraError('E_INVALID_ARGUMENT', `--format must be one of ${FORMATS.join(', ')}`)
    // A warning about the workspace (a knowledge state behind its migrations) goes into the result.
    deferWarnings.on = true
    const snapshot = args.snapshot === 'current' ? 'current' : int(args.snapshot, 'snapshot')
    if (args.replay !== undefined) return replay(args.workspace, String(args.replay), args.format === 'json', snapshot)
    if (args.query === undefined) throw new TychoraError('E_INVALID_ARGUMENT', 'usage: tychora search QUERY... (or --replay RUN_ID)')
    const query = [String(args.query), ...args._.slice(1).map(String)].join(' ')
    // The library's own check, so a refused query reads the same here as through the API.
    const request: QueryRequest = validate(
      QueryRequestSchema,
      Object.fromEntries(
        Object.entries({
          query,
          collections: args.collection?.split(','),
          kinds: args.kind?.split(','),
          facets: facets.length > 0 ? facets : undefined,
          mode: args.mode,
          max_sensitivity: args['max-sensitivity'],
          limit: int(args.limit, 'limit'),
          budget_tokens: int(args['budget-tokens'], 'budget-tokens'),
          max_per_source: int(args['max-per-source'], 'max-per-source'),
          snapshot_id: snapshot === 'current' ? undefined : snapshot,
          channels: args.channels?.split(','),
          graph: args.graph ? true : undefined,
          explain: args.explain ? true : undefined,
          rerank: args.rerank === false ? false : undefined,
        }).filter(([, v]) => v !== undefined),
      ),
    )
    await withTarget(args.workspace, async ({ client }) => {
      const result = await client.search(request)
      writeOut(render({ ...result, warnings: [...takeWorkspaceWarnings(), ...result.warnings] }, args.format as Format))
    })
  },
})

/**
 * `search --replay RUN_ID`: the recorded request run again (`replayRun`) — on the snapshot it
 * read, on the one `--snapshot N` names, or on the current one (`--snapshot current`) — and its
 * results diffed against the recorded ones.
 */
async function replay(flag: string | undefined, runId: string, json: boolean, snapshot: number | 'current' | undefined): Promise<void> {
  await withLocalWorkspace(flag, async (ws) => {
    const replayed = await replayRun(ws, runId, snapshot)
    const { before_citations: citations, after_citations: cites, ...rest } = replayed
    const diff = { ...rest, warnings: [...takeWorkspaceWarnings(), ...replayed.warnings] }
    if (json) return writeOut(JSON.stringify(diff, null, 2))
    const { before, after, recorded_snapshot_id: recorded } = diff
    const was = before.map(chunkOf)
    const on = diff.snapshot_id === recorded ? `snapshot ${diff.snapshot_id}` : `snapshot ${diff.snapshot_id ?? 'none'} (recorded on ${recorded ?? 'a purged snapshot'})`
    const lines = [`replayed ${runId} on ${on} as ${diff.replay_run_id}: ${diff.same ? `the same ${after.length} results in the same order` : 'results differ'}`]
    if (!diff.same) {
      const cited = (id: string) => cites[after.indexOf(id)]
      for (const id of diff.added) lines.push(`  + ${id}${cited(id) ? `  ${cited(id)}` : ''}`)
      for (const id of diff.removed) lines.push(`  - ${id}${citations[before.indexOf(id)] ? `  ${citations[before.indexOf(id)]}` : ''}`)
      for (const id of diff.moved) lines.push(`  ~ ${id} (rank ${was.indexOf(chunkOf(id)) + 1} -> ${after.indexOf(id) + 1})`)
    }
    for (const w of diff.warnings) lines.push(`warning: ${w}`)
    // Citations are file names: each stays on its line.
    writeOut(visibleLines(lines))
  })
}
