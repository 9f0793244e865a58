import { defineCommand } from 'citty'
import { type QueryRequest, QueryRequestSchema } from '../../contracts/query.js'
import { validate } from '../../contracts/validate.js'
import { TychoraError } from '../../errors.js'
import { FORMATS, type Format, render } from '../../format/render.js'
import { workspaceArg, writeOut } from '../context.js'
import { withTarget } from '../route.js'

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
    query: { type: 'positional', required: true, variadic: true, description: 'Query text: every remaining word (after -- when it starts with -)' },
    collection: { type: 'string', description: 'Only this collection (comma-separated for several)' },
    kind: { type: 'string', description: 'Only this kind (comma-separated for several)' },
    limit: { type: 'string', description: 'Most segments to return (default 10)' },
    'budget-tokens': { type: 'string', description: 'Token budget of the rendered output (default 4000)' },
    'max-per-source': { type: 'string', description: 'Segments per source, 0 = unlimited (default 3)' },
    snapshot: { type: 'string', description: 'Pin a snapshot id' },
    channels: { type: 'string', description: "Channels to run, comma-separated: exact, lexical, text, graph (default: the profile's)" },
    explain: { type: 'boolean', description: "Per segment, each channel's rank and own score, the fused and rerank scores; the query path's stages", default: false },
    rerank: { type: 'boolean', description: 'Rerank the top candidates when [rerank] is configured (--no-rerank to skip)', default: true },
    graph: { type: 'boolean', description: "Add the graph channel (code): symbols the top candidates call or inherit from, with the path that reached them", default: false },
    format: { type: 'string', description: 'json | md | agent', default: 'md' },
  },
  async run({ args }) {
    if (!FORMATS.includes(args.format as Format)) throw new TychoraError('E_INVALID_ARGUMENT', `--format must be one of ${FORMATS.join(', ')}`)
    const query = [String(args.query), ...args._.slice(1).map(String)].join(' ')
    // The library's own check, so a refused query reads the same here as through the API.
    const request: QueryRequest = validate(
      QueryRequestSchema,
      Object.fromEntries(
        Object.entries({
          query,
          collections: args.collection?.split(','),
          kinds: args.kind?.split(','),
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
