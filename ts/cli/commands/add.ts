import { defineCommand } from 'citty'
import { resolve } from 'node:path'
import type { AddPlan, Progress, Receipt } from '../../contracts/ingest.js'
import { FormatSchema, KindSchema } from '../../contracts/query.js'
import { EXIT_PARTIAL, TychoraError } from '../../errors.js'
import { visibleLines } from '../../format/terminal.js'
import { assignments, exitState, repeatedFlag, workspaceArg, writeOut } from '../context.js'
import { withTarget } from '../route.js'
import { createProgress } from '../progress.js'

/** Exit code of a job that captured nothing. */
export const EXIT_FAILED_JOB = 11

function size(bytes: number): string {
  return bytes >= 1e6 ? `${(bytes / 1e6).toFixed(2)} MB` : `${(bytes / 1e3).toFixed(1)} kB`
}

function summary(r: Receipt): string {
  const f = r.files
  const lines = [
    `job ${r.job_id} ${r.status}: ${f.added} added, ${f.changed} changed, ${f.unchanged} unchanged, ${f.removed} removed, ${f.skipped} skipped, ${f.failed} failed`,
    `  ${size(r.bytes_read)} read · ${r.units} new units · ${r.chunks} new chunks · ${r.duration_ms.toFixed(0)} ms`,
    r.published ? `  published snapshot ${r.snapshot_id} (previous ${r.previous_snapshot_id ?? 'none'})` : `  snapshot ${r.snapshot_id ?? 'none'} unchanged`,
  ]
  for (const [label, paths] of [
    ['added', r.added],
    ['changed', r.changed],
    ['removed', r.removed],
  ] as const) {
    if (paths.length > 0 && paths.length <= 20) lines.push(`  ${label}: ${paths.join(', ')}`)
  }
  // Once per job: what the ignore rules left out, so a user who expected `.env` or `dist/` knows why.
  if (r.embedding) {
    const e = r.embedding
    lines.push(
      `  embedded ${e.embedded} of ${e.inputs} inputs (${e.tokens_embedded} tokens, ${e.calls} calls, ${e.embed_ms.toFixed(0)} ms); ${e.workspace_cached} from this workspace, ${e.user_cached} from the user cache`,
    )
  }
  if (r.excluded.length > 0) lines.push(`  excluded: ${r.excluded.map((e) => `${e.count} by ${e.rule} (e.g. ${e.example})`).join('; ')}`)
  for (const d of r.diagnostics) lines.push(`  ${d.level.padEnd(7)} ${d.code} ${d.path}${d.locator ? `:${d.locator}` : ''} — ${d.message}`)
  // File names and messages come from the files: their control characters must not reach the
  // terminal, nor a newline in a name print a receipt line of its own.
  return visibleLines(lines)
}

function planSummary(p: AddPlan): string {
  const f = p.files
  const lines = [
    `dry run (nothing written, no provider called): ${f.added} to add, ${f.changed} changed, ${f.unchanged} unchanged, ${f.skipped} skipped, ${f.failed} failed`,
    `  ${size(p.bytes)} read · ${p.units} units · ${p.windows} windows`,
  ]
  const e = p.embedding
  if (e) {
    const cost =
      e.usd === null || e.usd === undefined
        ? `no price for ${e.model} in the pack's table (as of ${e.prices_as_of})`
        : e.provider === 'local'
          ? '$0 (local model)'
          : `≈ $${e.usd.toFixed(4)} at $${e.usd_per_million_tokens} per million tokens (prices as of ${e.prices_as_of})`
    lines.push(`  embed with ${e.provider}/${e.model}: ${e.new_inputs} new inputs, ${e.new_tokens} tokens; ${e.cached} already embedded (${e.cached_tokens} tokens, free)`, `  estimated cost: ${cost}`)
    if (e.max_embed_tokens_per_job != null || e.max_embed_tokens_per_month != null) {
      lines.push(`  caps: per job ${e.max_embed_tokens_per_job ?? '–'}, per month ${e.max_embed_tokens_per_month ?? '–'} (${e.month_tokens} used this month)`)
    }
    if (e.over_budget) lines.push('  the real run would stop before embedding anything: E_BUDGET_EXCEEDED')
  } else {
    lines.push('  no text channel ([embeddings] not configured): nothing to embed')
  }
  for (const w of p.warnings) lines.push(`  warning: ${w}`)
  if (p.excluded.length > 0) lines.push(`  excluded: ${p.excluded.map((x) => `${x.count} by ${x.rule} (e.g. ${x.example})`).join('; ')}`)
  for (const d of p.diagnostics) lines.push(`  ${d.level.padEnd(7)} ${d.code} ${d.path}${d.locator ? `:${d.locator}` : ''} — ${d.message}`)
  return visibleLines(lines)
}

export default defineCommand({
  meta: { name: 'add', description: 'Capture files and directories (a directory added again is synced)' },
  args: {
    ...workspaceArg,
    paths: { type: 'positional', required: true, variadic: true, description: 'Files or directories' },
    collection: { type: 'string', description: 'Target collection (default "default")' },
    kind: {
      type: 'string',
      description:
        'What the files are: a kind the pack defines (law, regulation, decision, standard, guidance, manual, template, procedure, feedback, evidence, example, rationale, research_note, code_file, architecture_decision, rfc; `tychora packs show core`). Its normalisation may choose how they are read (law, regulation: articles, paragraphs and points). rfcNNNN.txt is an rfc and code is code_file without asking',
    },
    facet: {
      type: 'string',
      description: "A facet value every file gets, NAME=VALUE, typed by the kind (`--kind standard --facet 'level=2'`); repeat for several",
    },
    sensitivity: {
      type: 'string',
      description:
        "Label every file with this sensitivity level ([sensitivity] levels: public, internal, confidential, secret by default); above the workspace's ceiling nothing is captured. Default: a new file gets [sensitivity] default, a known one keeps its label",
    },
    'file-format': {
      type: 'string',
      description: 'Parse every file as: markdown | text | json | jsonl | csv | code_file | docx | pdf | image | legal | rfc (default: from its name)',
    },
    'dry-run': {
      type: 'boolean',
      description: 'Print what would be captured and embedded (tokens new vs cached, estimated cost) and write nothing',
      default: false,
    },
    format: { type: 'string', description: 'text | json', default: 'text' },
  },
  async run({ args, rawArgs }) {
    const facets = assignments(repeatedFlag(rawArgs, 'facet'), 'facet')
    const paths = args._.length > 0 ? args._.map(String) : [String(args.paths)]
    const kind = args.kind === undefined ? undefined : KindSchema.safeParse(args.kind)
    if (kind && !kind.success) throw new TychoraError('E_INVALID_ARGUMENT', `not a kind name: ${JSON.stringify(args.kind)}; \`tychora packs show core\` lists the built-in kinds`)
    const fileFormat = args['file-format'] === undefined ? undefined : FormatSchema.safeParse(args['file-format'])
    if (fileFormat && !fileFormat.success) throw new TychoraError('E_INVALID_ARGUMENT', `unknown file format ${JSON.stringify(args['file-format'])}; expected ${FormatSchema.options.join(', ')}`)
    const request = {
      paths: paths.map((p) => resolve(p)),
      ...(args.collection ? { collection: args.collection } : {}),
      ...(kind?.success ? { kind: kind.data } : {}),
      ...(fileFormat?.success ? { format: fileFormat.data } : {}),
      ...(Object.keys(facets).length > 0 ? { facets } : {}),
      ...(args.sensitivity === undefined ? {} : { sensitivity: String(args.sensitivity) }),
    }
    if (args['dry-run']) {
      const plan = await withTarget(args.workspace, async (target) => {
        if (target.mode !== 'local') throw new TychoraError('E_LOCKED', `the workspace is served by the daemon (${target.daemon.url}); --dry-run reads it directly: stop the daemon first`)
        return target.workspace.planAdd(request)
      })
      writeOut(args.format === 'json' ? JSON.stringify(plan, null, 2) : planSummary(plan))
      return
    }
    const progress = createProgress()
    const { receipt, printed } = await withTarget(args.workspace, async (target) => {
      if (target.mode === 'local') {
        const receipt = await target.workspace.add(request, { onProgress: (p) => progress.update(p) })
        progress.done()
        writeOut(args.format === 'json' ? JSON.stringify(receipt, null, 2) : summary(receipt))
        // After the receipt is out: merge the segments one-file adds leave (a daemon does this when its queue empties).
        await target.workspace.compact().catch(() => undefined)
        return { receipt, printed: true }
      }
      // Through the daemon: the job is queued on its single writer; follow it to the end.
      const job = await target.client.addSource(request)
      for (;;) {
        const status = await target.client.jobStatus(job.job_id)
        if (status.progress) progress.update(status.progress as Progress)
        if (status.receipt) return { receipt: status.receipt, printed: false }
        if (status.status === 'cancelled') throw new TychoraError('E_CONFLICT', `job ${job.job_id} ${status.error ?? 'cancelled'} before it ran`)
        if (status.status === 'failed' || status.status === 'interrupted') {
          throw new TychoraError('E_INTERNAL', `job ${job.job_id} ${status.status}: ${status.error ?? 'no receipt'}`)
        }
        await new Promise((r) => setTimeout(r, 50))
      }
    })
    if (!printed) {
      progress.done()
      writeOut(args.format === 'json' ? JSON.stringify(receipt, null, 2) : summary(receipt))
    }
    exitState.code = receipt.status === 'partial' ? EXIT_PARTIAL : receipt.status === 'failed' ? EXIT_FAILED_JOB : 0
  },
})
