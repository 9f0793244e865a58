import { defineCommand } from 'citty'
import { TychoraError } from '../../errors.js'
import { visibleLines } from '../../format/terminal.js'
import { clusterSummarizer } from '../../service/providers.js'
import { workspaceArg, writeOut } from '../context.js'
import { withLocalWorkspace } from '../route.js'

const build = defineCommand({
  meta: {
    name: 'build',
    description:
      'Build derived indexes of the current snapshot. --raptor: the summary tree (window vectors clustered inside each document, then across each collection, each cluster summarised) that the summary channel searches; needs [embeddings]',
  },
  args: {
    ...workspaceArg,
    raptor: { type: 'boolean', description: 'Build the summary tree (replaces the previous one)' },
    extractive: { type: 'boolean', description: 'Summarise every cluster offline by its most central sentences, whatever [summaries] names' },
    'dry-run': { type: 'boolean', description: 'Cluster and count what would be sent to the model; write nothing, send nothing' },
    format: { type: 'string', description: 'text | json', default: 'text' },
  },
  async run({ args }) {
    if (!args.raptor) throw new TychoraError('E_INVALID_ARGUMENT', 'say what to build: --raptor (the summary tree)')
    await withLocalWorkspace(args.workspace, async (ws) => {
      const extractive = Boolean(args.extractive)
      const report = await ws.buildSummaries({ extractive, dryRun: Boolean(args['dry-run']) }, extractive ? undefined : await clusterSummarizer())
      if (args.format === 'json') return writeOut(JSON.stringify(report, null, 2))
      const by = report.summarizer === 'extractive' ? 'extractive' : `${report.summarizer} ${report.model ?? ''}`.trim()
      writeOut(
        visibleLines([
          `${report.dry_run ? 'would build' : `summary tree ${report.tree_id}`} from snapshot ${report.snapshot_id}: ${report.windows} windows of ${report.documents} documents → ${report.nodes} summaries (per level: ${report.levels.join(', ') || 'none'})${report.left_out ? `; ${report.left_out} windows left out (flagged or without a vector)` : ''}`,
          `summaries: ${by}; by the model ${report.by_model}, cached ${report.cached}, extractive ${report.extractive}; ${report.calls} calls, ${report.input_tokens} input / ${report.output_tokens} output tokens${report.dry_run ? `; would send ${report.planned_input_tokens} tokens` : ''}`,
          `took ${(report.build_ms / 1000).toFixed(2)} s (cluster ${report.cluster_ms.toFixed(0)} ms, summarise ${report.summarize_ms.toFixed(0)} ms)`,
          ...report.diagnostics.map((d) => `${d.level}[${d.code}] ${d.path}: ${d.message}`),
        ]),
      )
    })
  },
})

export default defineCommand({
  meta: { name: 'index', description: 'Derived indexes over the current snapshot: index build --raptor (the summary tree)' },
  subCommands: { build },
})
