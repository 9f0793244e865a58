#!/usr/bin/env node
// Local embedding throughput: the engine's embedder (candle, all-MiniLM-L6-v2, both cores, windows
// truncated to the model's 256 tokens) on the first 600 SciFact abstracts (title + text), run in
// the `tychora-bench` binary so the figure is the embedder's alone; medians of several runs.
// Writes bench/results/embedding-throughput.{json,md}.
//
//   node bench/vector/throughput.mjs [--runs 3]
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, homedir, tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gunzipSync } from 'node:zlib'
import { benchBinary } from '../code/tychora-bench.mjs'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const TEXTS = 600

/** Runs the measurement; returns the result, or null when the model is not fetched. */
export function runEmbedThroughput({ runs = 3 } = {}) {
  const model = join(homedir(), '.cache', 'tychora', 'models', 'all-MiniLM-L6-v2')
  if (!existsSync(join(model, 'config.json'))) {
    console.error('# embedding throughput skipped: run `node scripts/fetch-model.mjs` first')
    return null
  }
  const texts = gunzipSync(readFileSync(resolve(root, '../shared/data/scifact/corpus.jsonl.gz')))
    .toString('utf8')
    .split('\n')
    .filter(Boolean)
    .slice(0, TEXTS)
    .map((l) => JSON.parse(l))
    .map((d) => `${d.title}\n${d.text}`)
  const scratch = mkdtempSync(join(tmpdir(), 'tychora-embed-'))
  const file = join(scratch, 'texts.json')
  writeFileSync(file, JSON.stringify(texts))
  const samples = []
  for (let i = 0; i < runs; i++) {
    const r = JSON.parse(execFileSync(benchBinary(), ['embed', model, file, 'truncate'], { maxBuffer: 1 << 30, encoding: 'utf8' }))
    // `tokens` holds each text's count (after truncation).
    const tokens = r.tokens.reduce((a, b) => a + b, 0)
    samples.push({ tokens, ms: r.ms, tokens_per_s: tokens / (r.ms / 1000), texts_per_s: texts.length / (r.ms / 1000) })
    console.error(JSON.stringify(samples.at(-1)))
  }
  rmSync(scratch, { recursive: true, force: true })
  const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]
  const result = {
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version },
    corpus: `first ${TEXTS} SciFact abstracts (title + text), truncated to 256 tokens`,
    texts: texts.length,
    tokens: samples[0].tokens,
    runs: samples,
    tokens_per_s: median(samples.map((s) => s.tokens_per_s)),
    texts_per_s: median(samples.map((s) => s.texts_per_s)),
  }
  mkdirSync(join(root, 'bench/results'), { recursive: true })
  writeFileSync(join(root, 'bench/results/embedding-throughput.json'), `${JSON.stringify(result, null, 2)}\n`)
  const md = [
    `# Local embedding throughput (${result.date.slice(0, 10)})`,
    '',
    `${result.machine.cpus} cores (${result.machine.model}); all-MiniLM-L6-v2 through the engine's embedder (candle, F32, length-sorted batches of ≤ 4,096 tokens, one batch per core); ${result.corpus}: ${result.tokens} tokens.`,
    '',
    `Median of ${runs} runs: **${result.tokens_per_s.toFixed(0)} tokens/s, ${result.texts_per_s.toFixed(1)} windows/s** (runs: ${samples.map((s) => s.tokens_per_s.toFixed(0)).join(', ')} tokens/s).`,
  ]
  writeFileSync(join(root, 'bench/results/embedding-throughput.md'), `${md.join('\n')}\n`)
  return result
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2)
  const r = runEmbedThroughput({ runs: Number(args.includes('--runs') ? args[args.indexOf('--runs') + 1] : 3) })
  if (r) console.log(JSON.stringify({ tokens_per_s: r.tokens_per_s, texts_per_s: r.texts_per_s }))
}
