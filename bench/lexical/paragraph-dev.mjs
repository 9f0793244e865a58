// Builds a development set whose queries are whole paragraphs, for the lexical channel's choices
// on long queries (the held-out argument-retrieval set stays held out). From SciFact's corpus
// (documents only; no qrels of any split are read): every abstract of 250 words or more is cut at
// the sentence where 55% of its words are reached; the first part (≈ 150-word paragraph) is a
// query, the rest (with the title) is the document it must find. Every eligible abstract is cut the
// same way in the corpus, so cut documents are not shorter than their neighbours only when queried;
// 400 of them (by sha256 of the id) are queried.
//
//   node bench/lexical/paragraph-dev.mjs [--out ~/.cache/tychora/paragraph-dev]
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gunzipSync } from 'node:zlib'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const args = process.argv.slice(2)
const out = args.includes('--out') ? args[args.indexOf('--out') + 1] : join(homedir(), '.cache', 'tychora', 'paragraph-dev')
const QUERIES = 400
const MIN_WORDS = 250
const CUT = 0.55

const corpus = gunzipSync(readFileSync(resolve(root, '../shared/data/scifact/corpus.jsonl.gz')))
  .toString('utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l))
const words = (t) => t.split(/\s+/).filter(Boolean).length
const docs = []
const queries = []
for (const d of corpus) {
  const total = words(d.text)
  const sentences = d.text.match(/[^.!?]+[.!?]+(\s+|$)|[^.!?]+$/g) ?? [d.text]
  if (total < MIN_WORDS || sentences.length < 4) {
    docs.push({ _id: d._id, title: d.title, text: d.text })
    continue
  }
  let seen = 0
  let k = 0
  while (k < sentences.length - 1 && seen < CUT * total) seen += words(sentences[k++])
  docs.push({ _id: d._id, title: d.title, text: sentences.slice(k).join('').trim() })
  queries.push({ _id: `p${d._id}`, doc: d._id, text: sentences.slice(0, k).join('').trim() })
}
const key = (q) => createHash('sha256').update(q._id).digest('hex')
const chosen = queries.sort((a, b) => key(a).localeCompare(key(b))).slice(0, QUERIES)
mkdirSync(join(out, 'qrels'), { recursive: true })
writeFileSync(join(out, 'corpus.jsonl'), `${docs.map((d) => JSON.stringify(d)).join('\n')}\n`)
writeFileSync(join(out, 'queries.jsonl'), `${chosen.map((q) => JSON.stringify({ _id: q._id, text: q.text })).join('\n')}\n`)
writeFileSync(join(out, 'qrels', 'dev.tsv'), `query-id\tcorpus-id\tscore\n${chosen.map((q) => `${q._id}\t${q.doc}\t1`).join('\n')}\n`)
const lengths = chosen.map((q) => words(q.text)).sort((a, b) => a - b)
console.log(
  JSON.stringify({
    out,
    documents: docs.length,
    eligible: queries.length,
    queries: chosen.length,
    query_words_median: lengths[lengths.length >> 1],
    query_words_mean: Math.round(lengths.reduce((a, b) => a + b, 0) / lengths.length),
  }),
)
