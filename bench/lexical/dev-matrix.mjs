#!/usr/bin/env node
// Every dev set of every shape agents send, in one run, with the figures kept in
// bench/results/dev-matrix.{json,md} so a change's note shows before/after on all of them — and
// a guard: `--check` fails (exit 1) when a figure drops past its noise against the committed file.
//
//   node bench/lexical/dev-matrix.mjs [--only a,b] [--lexical-toml 'k = v; …'] [--check] [--write]
//                                     [--mirrors /work/.mirror] [--peers]
//
// Sets (those whose data is not on this machine are skipped and listed):
//   short text    SciFact train (shared/data), nDCG@10
//   paragraphs    paragraph-dev (bench/lexical/paragraph-dev.mjs), nfcorpus-page and cisi dev
//                 (bench/lexical/long-sets.mjs), nDCG@10
//   unspaced      jsquad-ja, cmrc2018-zh, iapp-wiki-qa-th dev (long-sets.mjs), nDCG@10
//   code          CoSQA dev through the code profile, MRR@10
//   issue texts   the visible SWE-bench Lite subset (shared/data, a TEST set: reported and guarded,
//                 never tuned on) and the issue-text dev set (`node bench/code/swe-issue-set.mjs
//                 --subset 60`) when built, file Acc@5 / Acc@10 and function Acc@10 (needs the
//                 repositories' mirrors)
// --peers adds SQLite FTS5 (porter; trigram for the unspaced sets) beside each text set.
//
// Noise: the figures are deterministic (the same build gives the same numbers), so what a change
// can move by chance is one query's worth: a drop larger than max(0.005, 1/queries) fails.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { fts5 } from './fts5.mjs'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const shared = resolve(root, '../shared/data')
const cache = join(homedir(), '.cache', 'tychora')
const args = process.argv.slice(2)
const opt = (name, fallback) => (args.includes(name) && args[args.indexOf(name) + 1] !== undefined ? args[args.indexOf(name) + 1] : fallback)
const only = opt('--only', '').split(',').filter(Boolean)
const mirrors = opt('--mirrors', '/work/.mirror')
const lexicalToml = opt('--lexical-toml', '')
const CHECK = args.includes('--check')
const WRITE = args.includes('--write') || !CHECK
const PEERS = args.includes('--peers')
const resultsPath = join(root, 'bench/results/dev-matrix.json')

const { evalBeir, evalBeirAsCode } = await import('../../dist/index.js')

/** `k = v; …` → the lexical overrides evalBeir takes. */
function lexicalOverrides(text) {
  const out = {}
  for (const part of text
    .split(/[;\n]/)
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [k, v] = part.split('=').map((s) => s.trim())
    out[k] = JSON.parse(v)
  }
  return out
}
const lexical = lexicalOverrides(lexicalToml)

const beir = (dir, split, tokenize) => ({
  kind: 'beir',
  dir,
  split,
  tokenize,
  run: async () => {
    const r = await evalBeir(dir, { split, lexical })
    return {
      queries: r.queries,
      ndcg_at_10: r.ndcg_at_10,
      recall_at_100: r.recall_at_100,
      p50_ms: r.query_latency_ms.p50,
      p99_ms: r.query_latency_ms.p99,
    }
  },
})

function swe(data) {
  return {
    kind: 'swe',
    dir: data,
    run: async () => {
      const out = join(tmpdir(), `tychora-dev-matrix-${process.pid}.json`)
      const argv = [join(root, 'bench/dist/eval/main.js'), '--repos', mirrors, '--data', data, '--profile', 'code', '--out', out]
      if (lexicalToml) argv.push('--lexical-toml', lexicalToml)
      execFileSync(process.execPath, argv, { stdio: ['ignore', 'ignore', 'inherit'] })
      const report = JSON.parse(readFileSync(out, 'utf8'))
      rmSync(out, { force: true })
      const m = [report.profiles].flat().find((p) => p.profile === 'code') ?? report.profiles.code
      return {
        queries: m.instances ?? m.queries ?? report.instances,
        file_acc_at_5: m.file_acc_at_5,
        file_acc_at_10: m.file_acc_at_10,
        function_acc_at_10: m.function_acc_at_10,
      }
    },
  }
}

const devSets = join(cache, 'dev-sets')
const SETS = {
  'scifact-train': { shape: 'short text', ...beir(join(shared, 'scifact'), 'train', 'porter unicode61') },
  'paragraph-dev': { shape: 'paragraphs', ...beir(join(cache, 'paragraph-dev'), 'dev', 'porter unicode61') },
  'nfcorpus-page': { shape: 'paragraphs', ...beir(join(devSets, 'nfcorpus-page'), 'dev', 'porter unicode61') },
  cisi: { shape: 'paragraphs', ...beir(join(devSets, 'cisi'), 'dev', 'porter unicode61') },
  'jsquad-ja': { shape: 'unspaced', ...beir(join(devSets, 'jsquad-ja'), 'dev', 'trigram') },
  'cmrc2018-zh': { shape: 'unspaced', ...beir(join(devSets, 'cmrc2018-zh'), 'dev', 'trigram') },
  'iapp-wiki-qa-th': { shape: 'unspaced', ...beir(join(devSets, 'iapp-wiki-qa-th'), 'dev', 'trigram') },
  'cosqa-dev': {
    shape: 'code',
    kind: 'code',
    dir: join(shared, 'cosqa'),
    run: async () => {
      const r = await evalBeirAsCode(join(shared, 'cosqa'), { split: 'dev', lexical })
      return { queries: r.queries, mrr_at_10: r.mrr_at_10, ndcg_at_10: r.ndcg_at_10 }
    },
  },
  'swe-visible (test)': { shape: 'issue texts', ...swe(join(shared, 'swebench-lite')) },
  // The seeded 60-instance subset (all 10 repositories) of the 208-issue set: the whole set takes
  // about 40 minutes on 2 cores, the subset 12.
  'swe-issues-dev (60)': { shape: 'issue texts', ...swe(join(cache, 'swe-issues', 'subset-60')) },
}

const present = (s) => (s.kind === 'swe' ? existsSync(join(s.dir, 'instances.jsonl')) : existsSync(join(s.dir, 'qrels')))
if (Object.values(SETS).some((s) => s.kind === 'swe' && present(s))) {
  execFileSync('npx', ['tsc', '-p', join(root, 'bench/tsconfig.json')], { cwd: root, stdio: 'inherit' })
}

const baseline = existsSync(resultsPath) ? JSON.parse(readFileSync(resultsPath, 'utf8')) : { sets: {} }
const results = {}
const skipped = []
for (const [name, set] of Object.entries(SETS)) {
  if (only.length > 0 && !only.includes(name)) continue
  if (!present(set)) {
    skipped.push(name)
    continue
  }
  const started = performance.now()
  const figures = await set.run()
  if (PEERS && set.kind === 'beir') figures.fts5 = (await fts5(set.dir, set.split, set.tokenize)).ndcg_at_10
  else if (baseline.sets[name]?.fts5 !== undefined) figures.fts5 = baseline.sets[name].fts5
  figures.seconds = Math.round((performance.now() - started) / 1000)
  results[name] = { shape: set.shape, ...figures }
  console.error(`${name}: ${JSON.stringify(results[name])}`)
}

const GUARDED = ['ndcg_at_10', 'mrr_at_10', 'file_acc_at_5', 'file_acc_at_10', 'function_acc_at_10']
const drops = []
for (const [name, now] of Object.entries(results)) {
  const before = baseline.sets[name]
  if (!before) continue
  const noise = Math.max(0.005, 1 / Math.max(1, now.queries ?? 1))
  for (const key of GUARDED) {
    if (typeof before[key] === 'number' && typeof now[key] === 'number' && before[key] - now[key] > noise) {
      drops.push(`${name} ${key}: ${before[key].toFixed(4)} → ${now[key].toFixed(4)} (noise ${noise.toFixed(4)})`)
    }
  }
}

const f = (x, d = 4) => (typeof x === 'number' ? x.toFixed(d) : '–')
const rows = Object.entries({ ...baseline.sets, ...results }).map(([name, r]) => {
  // The figure a row shows: the three SWE figures, MRR@10 for code search, nDCG@10 for text.
  const shown = (x) =>
    x.file_acc_at_5 !== undefined ? `${f(x.file_acc_at_5 * 100, 1)} / ${f(x.file_acc_at_10 * 100, 1)} / ${f(x.function_acc_at_10 * 100, 1)}` : f(x.shape === 'code' ? x.mrr_at_10 : x.ndcg_at_10)
  const metric = r.file_acc_at_5 !== undefined ? 'file Acc@5 / Acc@10 / function Acc@10' : r.shape === 'code' ? 'MRR@10' : 'nDCG@10'
  const before = baseline.sets[name]
  const was = before && results[name] ? shown(before) : ''
  return `| ${name} | ${r.shape} | ${r.queries ?? ''} | ${metric} | ${shown(r)} | ${was} | ${f(r.fts5)} | ${r.p50_ms !== undefined ? `${f(r.p50_ms, 1)} / ${f(r.p99_ms, 1)}` : ''} |`
})
const md = [
  '# Dev sets of every shape, lexical channel as shipped',
  '',
  `${new Date().toISOString().slice(0, 10)}; \`node bench/lexical/dev-matrix.mjs${lexicalToml ? ` --lexical-toml '${lexicalToml}'` : ''}\`; release build. Documents profile for text, code profile for CoSQA and the SWE sets. FTS5: porter unicode61 (trigram for Japanese, Chinese and Thai), the query's distinct terms OR-ed, bm25. "before" is the figure this file held before the run.`,
  '',
  '| set | shape | queries | metric | now | before | FTS5 | p50 / p99 ms |',
  '|---|---|---:|---|---:|---:|---:|---:|',
  ...rows,
  ...(skipped.length > 0 ? ['', `Not on this machine (skipped): ${skipped.join(', ')}.`] : []),
]
if (WRITE && !lexicalToml) {
  mkdirSync(dirname(resultsPath), { recursive: true })
  writeFileSync(resultsPath, `${JSON.stringify({ date: new Date().toISOString().slice(0, 10), sets: { ...baseline.sets, ...results } }, null, 2)}\n`)
  writeFileSync(join(root, 'bench/results/dev-matrix.md'), `${md.join('\n')}\n`)
}
console.log(md.join('\n'))
if (drops.length > 0) {
  console.error(`\nDropped past noise:\n  ${drops.join('\n  ')}`)
  if (CHECK) process.exit(1)
}
