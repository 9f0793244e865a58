import { packageRoot, packageVersion } from '../../package-root.js'
import { existsSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { basename, resolve } from 'node:path'
import { defineCommand } from 'citty'
import { type BeirOptions, type BeirReport, evalBeir } from '../../eval/beir.js'
import { evalBeirAsCode } from '../../eval/beir-code.js'
import { type EvalRecordInput, assertRecordWorkspace, recordEval } from '../../eval/records.js'
import { TychoraError } from '../../errors.js'
import { resolveWorkspace, workspaceArg, writeOut } from '../context.js'
import { oneLine, visible } from '../../format/terminal.js'

type Split = 'test' | 'dev' | 'train'

function parseSplit(split: string): Split {
  if (split !== 'test' && split !== 'dev' && split !== 'train') throw new TychoraError('E_INVALID_ARGUMENT', '--split must be test, dev or train')
  return split
}

/** A shared data set: as given from the working directory, else next to the package's checkout. */
function dataDir(given: string | undefined, fallback: string): string {
  if (given) return resolve(given)
  const fromCwd = resolve(fallback)
  if (existsSync(fromCwd)) return fromCwd
  // Next to the package's checkout (the shared data sits beside the repository).
  return resolve(packageRoot() ?? '.', fallback)
}

/** `--record` and the workspace that keeps the records (`--workspace`, else the usual resolution). */
const recordArgs = {
  record: {
    type: 'boolean',
    description: "Keep the run's record (metrics, settings, commit, each query's results) in the workspace's evals/ folder",
    default: false,
  },
  ...workspaceArg,
} as const

/**
 * The workspace a `--record` run writes into, resolved before the evaluation starts so a run with
 * nowhere to be kept fails at once; null without `--record`.
 */
async function recordTarget(args: { record?: boolean; workspace?: string }): Promise<string | null> {
  if (!args.record) return null
  let dir: string
  try {
    dir = await resolveWorkspace(args.workspace)
  } catch (error) {
    if (error instanceof TychoraError && error.code === 'E_NOT_FOUND')
      throw new TychoraError('E_INVALID_ARGUMENT', `--record needs a workspace to keep the record in: pass --workspace DIR or set TYCHORA_WORKSPACE (${error.message})`)
    throw error
  }
  try {
    assertRecordWorkspace(dir)
  } catch (error) {
    throw new TychoraError('E_INVALID_ARGUMENT', `--record: ${(error as Error).message}`)
  }
  return dir
}

/** What a command knows of its run: the record's input, less the checkout (this package's). */
type RunToRecord = EvalRecordInput extends infer T ? (T extends unknown ? Omit<T, 'checkout'> : never) : never

/** Writes the run's record into the workspace and names the file on stderr. */
async function keepRecord(workspace: string | null, input: RunToRecord): Promise<void> {
  if (!workspace) return
  const { path } = await recordEval(workspace, { ...input, checkout: { root: packageRoot(), version: packageVersion() } })
  process.stderr.write(`recorded ${oneLine(path)}\n`)
}

/** A report as `--out` and `--format json` have always written it: without the per-query details a record keeps. */
function withoutPerQuery<T extends { per_query?: unknown }>(report: T): Omit<T, 'per_query'> {
  const { per_query: _, ...rest } = report
  return rest
}

const num = (v: number | null | undefined, digits = 3) => (v === null || v === undefined ? '-' : v.toFixed(digits))

/** Rows of label + columns, left-aligned label, right-aligned values. */
function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ')
  return [line(header), ...rows.map(line)].join('\n')
}

function beirLines(report: BeirReport): string[] {
  return [
    `${basename(report.dataset)} ${report.split}: ${report.queries} queries over ${report.documents} documents`,
    `  nDCG@10    ${report.ndcg_at_10.toFixed(4)}`,
    `  Recall@100 ${report.recall_at_100.toFixed(4)}`,
    `  MRR@10     ${report.mrr_at_10.toFixed(4)}`,
    `  Recall@10  ${report.recall_at_10.toFixed(4)}`,
    `  ingest ${report.ingest_seconds.toFixed(2)} s · query p50 ${report.query_latency_ms.p50.toFixed(2)} ms, p99 ${report.query_latency_ms.p99.toFixed(2)} ms`,
    ...(report.embedding
      ? [
          `  embedded ${report.embedding.embedded} of ${report.embedding.inputs} inputs (${report.embedding.tokens_embedded} tokens, ${(report.embedding.embed_ms / 1000).toFixed(1)} s); ${report.embedding.workspace_cached + report.embedding.user_cached} cached`,
        ]
      : []),
    ...(report.channels ? [`  channels ${report.channels.join(', ')}`] : []),
  ]
}

const beir = defineCommand({
  meta: { name: 'beir', description: 'Evaluate a BEIR-format set (nDCG@10, Recall@100, MRR@10) through the production query path' },
  args: {
    dir: { type: 'positional', required: true, description: 'Directory with corpus.jsonl[.gz], queries.jsonl[.gz], qrels/<split>.tsv' },
    split: { type: 'string', description: 'test | dev | train', default: 'test' },
    profile: {
      type: 'string',
      description: 'documents (corpus as JSON Lines) | code (one source file per document, code profile)',
      default: 'documents',
    },
    extension: { type: 'string', description: 'With --profile code: extension of the document files (picks the language)', default: '.py' },
    'ignore-identical-ids': { type: 'boolean', description: 'Drop a retrieved document whose id equals the query id', default: false },
    embeddings: { type: 'string', description: 'local: turn on the text (dense) channel with the local model (either profile)' },
    'model-dir': { type: 'string', description: 'With --embeddings local: the model directory (default: the fetched all-MiniLM-L6-v2)' },
    channels: { type: 'string', description: 'Channels per query, comma-separated: exact, lexical, text, graph (default: the profile’s)' },
    out: { type: 'string', description: 'Where to write the JSON report (default ./tychora-eval-<set>-<split>.json)' },
    keep: { type: 'boolean', description: 'Keep the scratch workspace', default: false },
    store: {
      type: 'string',
      description: 'The scratch workspace’s rows in this PostgreSQL database (postgres://user@host:port/db; password from PGPASSWORD), documents profile',
    },
    search: {
      type: 'string',
      description: 'The scratch workspace’s lexical indexes on this OpenSearch cluster (opensearch://host:port), under a prefix deleted afterwards',
    },
    ...recordArgs,
  },
  async run({ args }) {
    const split = parseSplit(args.split)
    if (args.store !== undefined && args.profile !== 'documents') throw new TychoraError('E_INVALID_ARGUMENT', '--store is available with --profile documents')
    if (args.profile !== 'documents' && args.profile !== 'code') throw new TychoraError('E_INVALID_ARGUMENT', '--profile must be documents or code')
    if (args.embeddings !== undefined && args.embeddings !== 'local') throw new TychoraError('E_INVALID_ARGUMENT', '--embeddings must be local (evaluations run offline)')
    const channels = args.channels?.split(',') as BeirOptions['channels']
    const workspace = await recordTarget(args)
    const perQuery = workspace !== null
    const report =
      args.profile === 'code'
        ? await evalBeirAsCode(resolve(args.dir), {
            split,
            extension: args.extension,
            keep: args.keep,
            perQuery,
            ...(args.embeddings ? { embeddings: args['model-dir'] ? { model_dir: resolve(args['model-dir']) } : {} } : {}),
            ...(args.search ? { search: args.search } : {}),
          })
        : await evalBeir(resolve(args.dir), {
            split,
            ignoreIdenticalIds: args['ignore-identical-ids'],
            keep: args.keep,
            perQuery,
            ...(args.embeddings ? { embeddings: args['model-dir'] ? { model_dir: resolve(args['model-dir']) } : {} } : {}),
            ...(channels ? { channels } : {}),
            ...(args.store ? { store: args.store } : {}),
            ...(args.search ? { search: args.search } : {}),
          })
    const out = resolve(args.out ?? `tychora-eval-${basename(resolve(args.dir))}-${split}${args.profile === 'code' ? '-code' : ''}.json`)
    await writeFile(out, `${JSON.stringify(withoutPerQuery(report), null, 2)}\n`)
    await keepRecord(workspace, {
      kind: 'beir',
      report,
      settings: {
        dataset: resolve(args.dir),
        split,
        profile: args.profile,
        ...(args.profile === 'code' ? { extension: args.extension } : { ignore_identical_ids: args['ignore-identical-ids'] }),
        ...(args.embeddings ? { embeddings: { provider: args.embeddings, ...(args['model-dir'] ? { model_dir: resolve(args['model-dir']) } : {}) } } : {}),
        ...(channels ? { channels } : {}),
      },
    })
    writeOut([...beirLines(report), `  written to ${out}`].join('\n'))
  },
})

// Figures of record from ../shared/data/cosqa/README.md (SQLite FTS5 porter, query terms OR-ed).
const COSQA_FTS5 = { mrr_at_10: 0.329, ndcg_at_10: 0.384, recall_at_100: 0.828 }

const cosqa = defineCommand({
  meta: {
    name: 'cosqa',
    description: 'CoSQA code search side by side: documents profile (lexical baseline) vs code profile, against the README FTS5 figures',
  },
  args: {
    data: { type: 'string', description: 'CoSQA in BEIR format (default ../shared/data/cosqa)' },
    split: { type: 'string', description: 'test | dev | train', default: 'dev' },
    out: { type: 'string', description: 'Where to write the JSON report (default ./tychora-eval-cosqa-code.json)' },
    ...recordArgs,
  },
  async run({ args }) {
    const split = parseSplit(args.split)
    const dir = dataDir(args.data, '../shared/data/cosqa')
    const workspace = await recordTarget(args)
    const baseline = await evalBeir(dir, { split })
    const code = await evalBeirAsCode(dir, { split, perQuery: workspace !== null })
    const out = resolve(args.out ?? 'tychora-eval-cosqa-code.json')
    await writeFile(out, `${JSON.stringify({ dataset: dir, split, baseline: { profile: 'documents', ...baseline }, code: withoutPerQuery(code), reference_fts5: COSQA_FTS5 }, null, 2)}\n`)
    await keepRecord(workspace, { kind: 'cosqa', report: { baseline, code }, settings: { dataset: dir, split, profiles: ['documents', 'code'] } })
    const row = (label: string, key: 'mrr_at_10' | 'recall_at_10' | 'ndcg_at_10' | 'recall_at_100', ref?: number) => [label, num(ref), num(baseline[key]), num(code[key])]
    writeOut(
      [
        `CoSQA ${split}: ${code.queries} queries over ${code.documents} functions (code profile channels: ${code.channels.join(', ')})`,
        table(
          ['', 'FTS5 (README)', 'baseline', 'code'],
          [
            row('MRR@10', 'mrr_at_10', COSQA_FTS5.mrr_at_10),
            row('Recall@10', 'recall_at_10'),
            row('nDCG@10', 'ndcg_at_10', COSQA_FTS5.ndcg_at_10),
            row('Recall@100', 'recall_at_100', COSQA_FTS5.recall_at_100),
            ['ingest s', '-', baseline.ingest_seconds.toFixed(2), code.ingest_seconds.toFixed(2)],
            ['query p50 ms', '-', baseline.query_latency_ms.p50.toFixed(2), code.query_latency_ms.p50.toFixed(2)],
          ],
        ),
        `written to ${out}`,
      ].join('\n'),
    )
  },
})

const evidence = defineCommand({
  meta: {
    name: 'evidence',
    description: 'An evidence set (corpus + questions with expected and forbidden evidence by file and lines): accuracy@1, nDCG@10 and forbidden@10, per question type',
  },
  args: {
    set: { type: 'positional', required: false, description: 'The set file (default: test/eval/structure.questions.json of the checkout)' },
    data: { type: 'string', description: 'The corpus directory (default: the set’s `data`, relative to the set file)' },
    out: { type: 'string', description: 'Also write the JSON report here' },
    format: { type: 'string', description: 'text | json', default: 'text' },
    ...recordArgs,
  },
  async run({ args }) {
    const { evalEvidence } = await import('../../eval/evidence.js')
    const set = resolve(args.set ? String(args.set) : resolve(packageRoot() ?? '.', 'test/eval/structure.questions.json'))
    const workspace = await recordTarget(args)
    const full = await evalEvidence(set, { ...(args.data ? { data: resolve(args.data) } : {}), perQuery: workspace !== null })
    const report = withoutPerQuery(full)
    if (args.out) await writeFile(resolve(args.out), `${JSON.stringify(report, null, 2)}\n`)
    await keepRecord(workspace, { kind: 'evidence', report: full, setFile: set, settings: { set, ...(args.data ? { data: resolve(args.data) } : {}) } })
    if (args.format === 'json') return writeOut(JSON.stringify(report, null, 2))
    const row = (label: string, s: { questions: number; accuracy_at_1: number; ndcg_at_10: number; forbidden_at_10: number }) => [
      label,
      String(s.questions),
      num(s.accuracy_at_1),
      num(s.ndcg_at_10),
      num(s.forbidden_at_10),
    ]
    writeOut(
      visible(
        [
          `${report.set}: ${report.questions} questions over ${report.corpus_files} files (ingest ${report.ingest_seconds.toFixed(2)} s, query p50 ${report.query_latency_ms.p50.toFixed(2)} ms)`,
          table(['', 'questions', 'accuracy@1', 'nDCG@10', 'forbidden@10'], [row('all', report), ...Object.entries(report.by_type).map(([t, s]) => row(t, s))]),
          ...(report.misses.length > 0 ? ['misses at rank 1:', ...report.misses.map((m) => `  ${m.id}  ${JSON.stringify(m.query)} → ${m.top ?? 'nothing'}`)] : []),
        ].join('\n'),
      ),
    )
  },
})

export default defineCommand({
  meta: { name: 'eval', description: 'Retrieval evaluation' },
  subCommands: { beir, cosqa, evidence },
})
