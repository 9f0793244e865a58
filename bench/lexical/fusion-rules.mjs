#!/usr/bin/env node
// Replays fusion rules on the channel lists bench/lexical/fusion-lists.mjs wrote (issue 33, item 3):
// for each dev set, the lexical and text channels alone and each rule's fused top 10, scored with
// the eval's own metrics. A rule is kept only if it is ≥ the best channel − 0.005 on every set.
//
//   node bench/lexical/fusion-rules.mjs [--sets a,b]
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { lines, locate } from '../../dist/eval/beir.js'
import { score } from '../../dist/eval/metrics.js'
import { FUSION_SETS } from './fusion-sets.mjs'

const dir = join(homedir(), '.cache', 'tychora', 'fusion-lists')
const args = process.argv.slice(2)
const only = (args.includes('--sets') ? args[args.indexOf('--sets') + 1] : '').split(',').filter(Boolean)
const SETS = ['scifact-train', 'paragraph-dev', 'nfcorpus-page', 'cisi', 'cosqa-dev', 'cmrc2018-zh', 'jsquad-ja', 'iapp-wiki-qa-th']

/** How far a channel's best score stands above its own top-n (scale-free: a z-score). */
function standout(list, n = 10) {
  const s = list.slice(0, n).map((x) => x[1])
  if (s.length < 2) return 0
  const mean = s.reduce((a, b) => a + b, 0) / s.length
  const sd = Math.sqrt(s.reduce((a, b) => a + (b - mean) ** 2, 0) / s.length)
  return sd > 0 ? (s[0] - mean) / sd : 0
}

function rrf(lists, weights, k = 60) {
  const fused = new Map()
  for (const [c, list] of lists.entries()) for (const [i, [doc]] of list.entries()) fused.set(doc, (fused.get(doc) ?? 0) + weights[c] / (k + i + 1))
  return [...fused].sort((a, b) => b[1] - a[1]).map(([d]) => d)
}

/** Scores normalised per list, then summed with weights. */
function normSum(lists, weights, norm) {
  const fused = new Map()
  for (const [c, list] of lists.entries()) {
    const n = norm(list.map((x) => x[1]))
    for (const [i, [doc]] of list.entries()) fused.set(doc, (fused.get(doc) ?? 0) + weights[c] * n[i])
  }
  return [...fused].sort((a, b) => b[1] - a[1]).map(([d]) => d)
}
const minmax = (s) => {
  const lo = Math.min(...s)
  const hi = Math.max(...s)
  return s.map((v) => (hi > lo ? (v - lo) / (hi - lo) : 1))
}
const zscore = (s) => {
  const mean = s.reduce((a, b) => a + b, 0) / (s.length || 1)
  const sd = Math.sqrt(s.reduce((a, b) => a + (b - mean) ** 2, 0) / (s.length || 1))
  return s.map((v) => (sd > 0 ? (v - mean) / sd : 0))
}
// Max-normalised: the best is 1, the rest keep their ratio to it (no floor from the 30th score).
const _bymax = (s) => {
  const hi = Math.max(...s)
  return s.map((v) => (hi > 0 ? v / hi : 0))
}

// Max-normalised: the best is 1, the rest keep their ratio to it (a theoretical minimum of 0, as
// cosine and BM25 scores here are ≥ 0): a flat list stays flat instead of being stretched.
const bymax = (s) => {
  const hi = Math.max(...s)
  return s.map((v) => (hi > 0 ? v / hi : 0))
}

/** The share of a text's letters in the Latin script (what the local model reads; crate::scripts). */
function latinShare(text) {
  let letters = 0
  let latin = 0
  for (const c of text) {
    if (/[\p{Script=Common}\p{Script=Inherited}]/u.test(c) || !/\p{L}|\p{M}|\p{N}/u.test(c)) continue
    letters++
    if (/\p{Script=Latin}/u.test(c)) latin++
  }
  return letters === 0 ? 1 : latin / letters
}

const RULES = {
  'rrf, text × share': (q) => rrf([q.lexical, latinShare(q.query) > 0 ? q.text : []], [1, latinShare(q.query)]),
  'rrf, text × share²': (q) => rrf([q.lexical, q.text], [1, latinShare(q.query) ** 2]),
  'rrf, text × share, off under ½ (shipped)': (q) => rrf([q.lexical, q.text], [1, latinShare(q.query) >= 0.5 ? latinShare(q.query) : 0]),
  'rrf 1:1 (before)': (q) => rrf([q.lexical, q.text], [1, 1]),
  'rrf standout@10': (q) => {
    const z = [standout(q.lexical), standout(q.text)]
    const sum = z[0] + z[1] || 1
    return rrf([q.lexical, q.text], [(2 * z[0]) / sum, (2 * z[1]) / sum])
  },
  'rrf standout@30': (q) => {
    const z = [standout(q.lexical, 30), standout(q.text, 30)]
    const sum = z[0] + z[1] || 1
    return rrf([q.lexical, q.text], [(2 * z[0]) / sum, (2 * z[1]) / sum])
  },
  'rrf sqrt standout@10': (q) => {
    const z = [Math.sqrt(Math.max(standout(q.lexical), 0)), Math.sqrt(Math.max(standout(q.text), 0))]
    const sum = z[0] + z[1] || 1
    return rrf([q.lexical, q.text], [(2 * z[0]) / sum, (2 * z[1]) / sum])
  },
  'rrf agreement': (q) => {
    // The text channel's weight is the share of its top 10 that lexical also ranks in its top 30.
    const lex = new Set(q.lexical.map((x) => x[0]))
    const top = q.text.slice(0, 10)
    const agree = top.filter((x) => lex.has(x[0])).length / (top.length || 1)
    return rrf([q.lexical, q.text], [1, 0.5 + agree])
  },
  'rrf k=20': (q) => rrf([q.lexical, q.text], [1, 1], 20),
  'minmax sum': (q) => normSum([q.lexical, q.text], [1, 1], minmax),
  'minmax 0.6:0.4': (q) => normSum([q.lexical, q.text], [0.6, 0.4], minmax),
  'minmax 0.4:0.6': (q) => normSum([q.lexical, q.text], [0.4, 0.6], minmax),
  'zscore sum': (q) => normSum([q.lexical, q.text], [1, 1], zscore),
  'bymax sum': (q) => normSum([q.lexical, q.text], [1, 1], bymax),
  'bymax 1:2': (q) => normSum([q.lexical, q.text], [1, 2], bymax),
  'bymax 1:3': (q) => normSum([q.lexical, q.text], [1, 3], bymax),
  'rrf text 2 if >300 chars': (q) => rrf([q.lexical, q.text], [1, q.chars > 300 ? 2 : 1]),
  'rrf text 1.5 if >300 chars': (q) => rrf([q.lexical, q.text], [1, q.chars > 300 ? 1.5 : 1]),
  'rrf text clamp(chars/250,1,2)': (q) => rrf([q.lexical, q.text], [1, Math.min(2, Math.max(1, q.chars / 250))]),
  'minmax@10 sum': (q) => normSum([q.lexical.slice(0, 10), q.text.slice(0, 10)], [1, 1], minmax),
}
// The blend as crate::fusion runs it: each list min-max normalised between its best and its 30th
// score and clamped to [0, 1] (an owner a list lacks counts 0), summed with the channels' weights
// as shares (the text channel's scaled by the share of the query its model reads, off under ½);
// ties to the better own rank.
function blendRule(textWeight) {
  return (q) => {
    const share = latinShare(q.query)
    const wt = share >= 0.5 ? textWeight * share : 0
    if (wt === 0 || q.lexical.length === 0 || q.text.length === 0) return (q.lexical.length > 0 ? q.lexical : q.text).map((x) => x[0])
    const lists = [q.lexical, q.text]
    const weights = [1 / (1 + wt), wt / (1 + wt)]
    const fused = new Map()
    for (const [c, list] of lists.entries()) {
      const s = list.map((x) => x[1])
      const top = Math.max(...s)
      const anchor = Math.min(...s.slice(0, 30))
      for (const [i, [d, v]] of list.entries()) {
        const n = top > anchor ? Math.min(1, Math.max(0, (v - anchor) / (top - anchor))) : v >= top ? 1 : 0
        const was = fused.get(d) ?? { score: 0, best: Number.POSITIVE_INFINITY }
        fused.set(d, { score: was.score + weights[c] * n, best: Math.min(was.best, i + 1) })
      }
    }
    return [...fused].sort((a, b) => b[1].score - a[1].score || a[1].best - b[1].best || (a[0] < b[0] ? -1 : 1)).map(([d]) => d)
  }
}
for (const w of [1, 1.25, 1.5, 1.75, 2]) RULES[`blend text ${w}`] = blendRule(w)

const rows = []
for (const name of SETS) {
  if (only.length > 0 && !only.includes(name)) continue
  const path = join(dir, `${name}.json`)
  if (!existsSync(path)) continue
  const data = JSON.parse(readFileSync(path, 'utf8'))
  const set = FUSION_SETS.find((s) => s.name === name)
  for await (const line of lines(locate(set.dir, 'queries.jsonl'))) {
    const q = JSON.parse(line)
    if (data.queries[q._id]) data.queries[q._id].query = q.text
  }
  const qrels = new Map(Object.entries(data.qrels).map(([q, m]) => [q, new Map(Object.entries(m))]))
  const metric = data.metric
  const run = (pick) => new Map(Object.entries(data.queries).map(([qid, q]) => [qid, pick(q).slice(0, 10)]))
  const row = {
    set: name,
    metric,
    lexical: score(
      qrels,
      run((q) => q.lexical.map((x) => x[0])),
    )[metric],
    text: score(
      qrels,
      run((q) => q.text.map((x) => x[0])),
    )[metric],
  }
  for (const [rule, fn] of Object.entries(RULES)) row[rule] = score(qrels, run(fn))[metric]
  rows.push(row)
}
const rules = Object.keys(RULES)
const f = (x) => x.toFixed(4)
const md = [
  "# Fusion rules replayed on each channel's own lists (dev sets)",
  '',
  `${new Date().toISOString().slice(0, 10)}; \`node bench/lexical/fusion-lists.mjs\` (lexical and text channel lists, 30 each, local all-MiniLM-L6-v2) then \`node bench/lexical/fusion-rules.mjs\`; nDCG@10 of each rule's top 10, and its difference to the better channel.`,
  '',
  `| set | lexical | text | ${rules.join(' | ')} |`,
  `|---|---:|---:|${rules.map(() => '---:').join('|')}|`,
  ...rows.map((r) => {
    const best = Math.max(r.lexical, r.text)
    return `| ${r.set} | ${f(r.lexical)} | ${f(r.text)} | ${rules.map((k) => `${f(r[k])} (${r[k] - best >= 0 ? '+' : ''}${(r[k] - best).toFixed(3)})`).join(' | ')} |`
  }),
]
writeFileSync(join(dirname(fileURLToPath(import.meta.url)), '../results/fusion-rules.md'), `${md.join('\n')}\n`)
console.log(md.join('\n'))
