import { writeFile } from 'node:fs/promises'
import { basename, resolve } from 'node:path'
import { defineCommand } from 'citty'
import { evalBeir } from '../../eval/beir.js'
import { TychoraError } from '../../errors.js'
import { writeOut } from '../context.js'

const beir = defineCommand({
  meta: { name: 'beir', description: 'Evaluate a BEIR-format set (nDCG@10, Recall@100, MRR@10) through the production query path' },
  args: {
    dir: { type: 'positional', required: true, description: 'Directory with corpus.jsonl[.gz], queries.jsonl[.gz], qrels/<split>.tsv' },
    split: { type: 'string', description: 'test | dev | train', default: 'test' },
    'ignore-identical-ids': { type: 'boolean', description: 'Drop a retrieved document whose id equals the query id', default: false },
    out: { type: 'string', description: 'Where to write the JSON report (default ./tychora-eval-<set>-<split>.json)' },
    keep: { type: 'boolean', description: 'Keep the scratch workspace', default: false },
  },
  async run({ args }) {
    const split = args.split
    if (split !== 'test' && split !== 'dev' && split !== 'train') throw new TychoraError('E_INVALID_ARGUMENT', '--split must be test, dev or train')
    const report = await evalBeir(resolve(args.dir), { split, ignoreIdenticalIds: args['ignore-identical-ids'], keep: args.keep })
    const out = resolve(args.out ?? `tychora-eval-${basename(resolve(args.dir))}-${split}.json`)
    await writeFile(out, `${JSON.stringify(report, null, 2)}\n`)
    writeOut(
      [
        `${basename(report.dataset)} ${report.split}: ${report.queries} queries over ${report.documents} documents`,
        `  nDCG@10    ${report.ndcg_at_10.toFixed(4)}`,
        `  Recall@100 ${report.recall_at_100.toFixed(4)}`,
        `  MRR@10     ${report.mrr_at_10.toFixed(4)}`,
        `  Recall@10  ${report.recall_at_10.toFixed(4)}`,
        `  ingest ${report.ingest_seconds.toFixed(2)} s · query p50 ${report.query_latency_ms.p50.toFixed(2)} ms, p99 ${report.query_latency_ms.p99.toFixed(2)} ms`,
        `  written to ${out}`,
      ].join('\n'),
    )
  },
})

export default defineCommand({
  meta: { name: 'eval', description: 'Retrieval evaluation' },
  subCommands: { beir },
})
