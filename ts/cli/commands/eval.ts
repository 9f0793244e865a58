import { existsSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { basename, dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { defineCommand } from 'citty'
import { type BeirReport, evalBeir } from '../../eval/beir.js'
import { evalBeirAsCode } from '../../eval/beir-code.js'
import { type SwebenchProfile, evalSwebench } from '../../eval/swebench.js'
import type { QueryRequest } from '../../contracts/query.js'
import { TychoraError } from '../../errors.js'
import { writeOut } from '../context.js'

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
  // dist/cli/commands or ts/cli/commands → package root
  return resolve(dirname(fileURLToPath(import.meta.url)), '../../..', fallback)
}

const pct = (v: number | null | undefined) => (v === null || v === undefined ? '-' : (v * 100).toFixed(1))
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
  ]
}

const beir = defineCommand({
  meta: { name: 'beir', description: 'Evaluate a BEIR-format set (nDCG@10, Recall@100, MRR@10) through the production query path' },
  args: {
    dir: { type: 'positional', required: true, description: 'Directory with corpus.jsonl[.gz], queries.jsonl[.gz], qrels/<split>.tsv' },
    split: { type: 'string', description: 'test | dev | train', default: 'test' },
    profile: { type: 'string', description: 'documents (corpus as JSON Lines) | code (one source file per document, code profile)', default: 'documents' },
    extension: { type: 'string', description: 'With --profile code: extension of the document files (picks the language)', default: '.py' },
    'ignore-identical-ids': { type: 'boolean', description: 'Drop a retrieved document whose id equals the query id', default: false },
    out: { type: 'string', description: 'Where to write the JSON report (default ./tychora-eval-<set>-<split>.json)' },
    keep: { type: 'boolean', description: 'Keep the scratch workspace', default: false },
  },
  async run({ args }) {
    const split = parseSplit(args.split)
    if (args.profile !== 'documents' && args.profile !== 'code') throw new TychoraError('E_INVALID_ARGUMENT', '--profile must be documents or code')
    const report =
      args.profile === 'code'
        ? await evalBeirAsCode(resolve(args.dir), { split, extension: args.extension, keep: args.keep })
        : await evalBeir(resolve(args.dir), { split, ignoreIdenticalIds: args['ignore-identical-ids'], keep: args.keep })
    const out = resolve(args.out ?? `tychora-eval-${basename(resolve(args.dir))}-${split}${args.profile === 'code' ? '-code' : ''}.json`)
    await writeFile(out, `${JSON.stringify(report, null, 2)}\n`)
    writeOut([...beirLines(report), `  written to ${out}`].join('\n'))
  },
})

// Figures of record from ../shared/data/cosqa/README.md (SQLite FTS5 porter, query terms OR-ed).
const COSQA_FTS5 = { mrr_at_10: 0.329, ndcg_at_10: 0.384, recall_at_100: 0.828 }

const cosqa = defineCommand({
  meta: { name: 'cosqa', description: 'CoSQA code search side by side: documents profile (lexical baseline) vs code profile, against the README FTS5 figures' },
  args: {
    data: { type: 'string', description: 'CoSQA in BEIR format (default ../shared/data/cosqa)' },
    split: { type: 'string', description: 'test | dev | train', default: 'dev' },
    out: { type: 'string', description: 'Where to write the JSON report (default ./tychora-eval-cosqa-code.json)' },
  },
  async run({ args }) {
    const split = parseSplit(args.split)
    const dir = dataDir(args.data, '../shared/data/cosqa')
    const baseline = await evalBeir(dir, { split })
    const code = await evalBeirAsCode(dir, { split })
    const out = resolve(args.out ?? 'tychora-eval-cosqa-code.json')
    await writeFile(out, `${JSON.stringify({ dataset: dir, split, baseline: { profile: 'documents', ...baseline }, code, reference_fts5: COSQA_FTS5 }, null, 2)}\n`)
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

const swebench = defineCommand({
  meta: { name: 'swebench', description: 'SWE-bench Lite file/function localization from the issue text: lexical baseline vs code profile' },
  args: {
    data: { type: 'string', description: 'Directory with instances.jsonl and gold.jsonl (default ../shared/data/swebench-lite)' },
    repos: { type: 'string', description: 'Directory of full-history git dirs named <owner>+<name>/repo', required: true },
    profile: { type: 'string', description: 'code | baseline | both', default: 'both' },
    cache: { type: 'string', description: 'Checkouts at base_commit (default ~/.cache/tychora/swebench)' },
    limit: { type: 'string', description: 'Segments per query', default: '100' },
    out: { type: 'string', description: 'Where to write the JSON report (default ./tychora-eval-swebench-lite.json)' },
    'graph-toml': {
      type: 'string',
      description: "Body of a [graph] table for the code profile's workspaces, lines separated by newlines, '\\n' or ';' (e.g. 'depth = 1; callers = false')",
    },
    channels: { type: 'string', description: 'Channels for the code profile, comma-separated (e.g. exact,lexical); default the profile\'s own' },
  },
  async run({ args }) {
    const graphToml = args['graph-toml']
      ?.split(/\\n|\n|;/)
      .map((l) => l.trim())
      .filter(Boolean)
      .join('\n')
    const codeChannels = args.channels
      ?.split(',')
      .map((c) => c.trim())
      .filter(Boolean)
    for (const c of codeChannels ?? []) if (!['exact', 'lexical', 'graph'].includes(c)) throw new TychoraError('E_INVALID_ARGUMENT', `--channels: unknown channel ${c}`)
    const profiles: SwebenchProfile[] = args.profile === 'both' ? ['baseline', 'code'] : args.profile === 'code' || args.profile === 'baseline' ? [args.profile] : []
    if (profiles.length === 0) throw new TychoraError('E_INVALID_ARGUMENT', '--profile must be code, baseline or both')
    const limit = Number(args.limit)
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new TychoraError('E_INVALID_ARGUMENT', '--limit must be an integer in 1..1000')
    const report = await evalSwebench({
      data: dataDir(args.data, '../shared/data/swebench-lite'),
      repos: resolve(args.repos),
      profiles,
      limit,
      ...(graphToml ? { graphToml } : {}),
      ...(codeChannels && codeChannels.length > 0 ? { codeChannels: codeChannels as NonNullable<QueryRequest['channels']> } : {}),
      ...(args.cache ? { cache: resolve(args.cache) } : {}),
      onInstance: (line) => process.stderr.write(`${line}\n`),
    })
    const out = resolve(args.out ?? 'tychora-eval-swebench-lite.json')
    await writeFile(out, `${JSON.stringify(report, null, 2)}\n`)
    const ref = report.reference_fts5
    const cols = profiles.map((p) => report.profiles[p])
    const row = (label: string, fmt: (v: number | null | undefined) => string, pick: (s: NonNullable<(typeof cols)[number]>) => number | null, refValue?: number) => [
      label,
      fmt(refValue),
      ...cols.map((s) => (s ? fmt(pick(s)) : '-')),
    ]
    const repos = Object.keys(cols[0]?.per_repo ?? {})
    writeOut(
      [
        `SWE-bench Lite subset: ${report.instances} instances; ${report.limit} segments per query; ${report.truncated_queries.length} problem statement(s) cut to ${report.query_max_chars} chars (${report.truncated_queries.join(', ') || 'none'})`,
        ...cols.map((s) => (s ? `  ${s.profile}: ${s.setup} (ran: ${s.channels.join(', ')})` : '')),
        table(
          ['', 'FTS5 (README)', ...profiles],
          [
            row('file Acc@1', pct, (s) => s.file_acc_at_1, ref.file_acc_at_1),
            row('file Acc@5', pct, (s) => s.file_acc_at_5, ref.file_acc_at_5),
            row('file Acc@10', pct, (s) => s.file_acc_at_10, ref.file_acc_at_10),
            row('file Recall@5', pct, (s) => s.file_recall_at_5),
            row('file MRR', num, (s) => s.file_mrr, ref.file_mrr),
            row('function Acc@10', pct, (s) => s.function_acc_at_10, ref.function_acc_at_10),
            row('function Acc@10 (by lines)', pct, (s) => s.function_acc_at_10_by_lines),
            ...repos.map((repo) => row(`file Acc@5 ${repo}`, pct, (s) => s.per_repo[repo]?.file_acc_at_5 ?? null)),
            ...repos.map((repo) => row(`function Acc@10 ${repo}`, pct, (s) => s.per_repo[repo]?.function_acc_at_10 ?? null)),
            row('ingest s (total)', (v) => num(v, 1), (s) => s.ingest_seconds.total),
            row('query ms (p50)', (v) => num(v, 1), (s) => s.query_latency_ms.p50),
            row('query ms (max)', (v) => num(v, 1), (s) => s.query_latency_ms.max),
          ],
        ),
        `written to ${out}`,
      ].join('\n'),
    )
  },
})

export default defineCommand({
  meta: { name: 'eval', description: 'Retrieval evaluation' },
  subCommands: { beir, cosqa, swebench },
})
