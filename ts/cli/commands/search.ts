import { defineCommand } from 'citty'
import { type QueryRequest, QueryRequestSchema } from '../../contracts/query.js'
import { validate } from '../../contracts/validate.js'
import { TychoraError } from '../../errors.js'
import { FORMATS, type Format, render } from '../../format/render.js'
import { repeatedFlag, workspaceArg, writeOut } from '../context.js'
import { withLocalWorkspace, withTarget } from '../route.js'
import { visible } from '../../format/terminal.js'

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
    replay: { type: 'string', description: 'Re-run a recorded query run (its request, pinned to its snapshot) and diff the results against the recorded ones' },
    collection: { type: 'string', description: 'Only this collection (comma-separated for several)' },
    kind: { type: 'string', description: 'Only this kind (comma-separated for several)' },
    mode: { type: 'string', description: 'A mode the pack defines: compliance | implementation (lanes drawn on, lanes required, what a decision must do)' },
    facet: { type: 'string', description: 'A facet condition every source must satisfy: level>=2, jurisdiction=EU, decided=2024-01-01..2024-12-31; repeat for several' },
    'max-sensitivity': { type: 'string', description: "Only sources labelled at or below this sensitivity level (public, internal, confidential by default; never above the workspace's ceiling)" },
    limit: { type: 'string', description: 'Most segments to return (default 10)' },
    'budget-tokens': { type: 'string', description: 'Token budget of the rendered output (default 4000)' },
    'max-per-source': { type: 'string', description: 'Segments per source, 0 = unlimited (default 3)' },
    snapshot: { type: 'string', description: 'Pin a snapshot id' },
    channels: { type: 'string', description: "Channels to run, comma-separated: exact, lexical, text, visual, graph, summary (default: the profile's, with visual when [visual] is set; summary, the summary tree's channel for broad questions, when named or [summaries] channel = true)" },
    explain: { type: 'boolean', description: "Per segment, each channel's rank and own score, the fused and rerank scores; the query path's stages", default: false },
    rerank: { type: 'boolean', description: 'Rerank the top candidates when [rerank] is configured (--no-rerank to skip)', default: true },
    graph: { type: 'boolean', description: "Add the graph channel (code): symbols the top candidates call or inherit from, with the path that reached them", default: false },
    format: { type: 'string', description: 'json | md | agent', default: 'md' },
  },
  async run({ args, rawArgs }) {
    const facets = repeatedFlag(rawArgs, 'facet')
    if (!FORMATS.includes(args.format as Format)) throw new TychoraError('E_INVALID_ARGUMENT', `--format must be one of ${FORMATS.join(', ')}`)
    if (args.replay !== undefined) return replay(args.workspace, String(args.replay), args.format === 'json')
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
          snapshot_id: int(args.snapshot, 'snapshot'),
          channels: args.channels?.split(','),
          graph: args.graph ? true : undefined,
          explain: args.explain ? true : undefined,
          rerank: args.rerank === false ? false : undefined,
        }).filter(([, v]) => v !== undefined),
      ),
    )
    await withTarget(args.workspace, async ({ client }) => writeOut(render(await client.search(request), args.format as Format)))
  },
})

/**
 * `search --replay RUN_ID`: the recorded request, pinned to the snapshot it read, run again; the
 * results are diffed against the recorded ones (segment ids, in order).
 */
async function replay(flag: string | undefined, runId: string, json: boolean): Promise<void> {
  await withLocalWorkspace(flag, async (ws) => {
    const run = await ws.inspectRun(runId)
    if (run.snapshot_id === null) throw new TychoraError('E_NOT_FOUND', `run ${runId} read a snapshot that retention has purged; it cannot be replayed`)
    const recorded = Object.fromEntries(Object.entries(run.request).filter(([, v]) => v !== null))
    const request = validate(QueryRequestSchema, { ...recorded, snapshot_id: run.snapshot_id })
    const result = await ws.search(request)
    const before = run.summary.segments
    const after = result.segments.map((s) => s.id)
    const diff = {
      run_id: runId,
      replay_run_id: result.run_id,
      snapshot_id: run.snapshot_id,
      same: before.length === after.length && before.every((id, i) => after[i] === id),
      before,
      after,
      added: after.filter((id) => !before.includes(id)),
      removed: before.filter((id) => !after.includes(id)),
      moved: after.filter((id, i) => before.includes(id) && before[i] !== id),
    }
    if (json) return writeOut(JSON.stringify(diff, null, 2))
    const lines = [`replayed ${runId} on snapshot ${diff.snapshot_id} as ${diff.replay_run_id}: ${diff.same ? `the same ${after.length} results in the same order` : 'results differ'}`]
    if (!diff.same) {
      for (const id of diff.added) lines.push(`  + ${id}`)
      for (const id of diff.removed) lines.push(`  - ${id}`)
      for (const id of diff.moved) lines.push(`  ~ ${id} (rank ${before.indexOf(id) + 1} -> ${after.indexOf(id) + 1})`)
    }
    writeOut(visible(lines.join('\n')))
  })
}
