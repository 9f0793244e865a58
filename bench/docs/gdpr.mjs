// The GDPR twice: the clean EUR-Lex text and the same law as extracted from the Official Journal
// PDF (split words, running headers inline). The same 30 article-level questions
// (bench/docs/gdpr-questions.json, written for this bench, not tuned on) are asked of each twin,
// each in its own collection; a hit is a window that overlaps the asked article (from its
// `Article N` line to the next). Reports hit@1, hit@5 and MRR@10 per twin, and how often both twins
// put the same article first. Writes bench/results/docs-gdpr.{json,md}.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Workspace } from '../../dist/index.js'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const gdpr = resolve(root, '../shared/data/docs/gdpr')
const scratch = mkdtempSync(join(tmpdir(), 'tychora-gdpr-'))
const questions = JSON.parse(readFileSync(join(root, 'bench/docs/gdpr-questions.json'), 'utf8'))
const twins = { clean: 'gdpr_2016-679_clean.txt', noisy: 'gdpr_2016-679_pdf_extracted.txt' }

/** Byte offsets of `Article N` lines, to map a window's start to its article. */
function articleStarts(bytes) {
  const text = bytes.toString('latin1') // one char per byte: offsets stay byte offsets
  return [...text.matchAll(/^Article (\d+) ?\r?$/gm)].map((m) => ({ at: m.index, article: Number(m[1]) }))
}
/** The articles a window [start, end) overlaps, in order. */
function articlesIn(starts, start, end) {
  const out = []
  for (let i = 0; i < starts.length; i++) {
    const to = starts[i + 1]?.at ?? Number.POSITIVE_INFINITY
    if (starts[i].at < end && to > start) out.push(starts[i].article)
  }
  return out
}

const ws = join(scratch, 'ws')
await Workspace.init(ws)
const workspace = await Workspace.open(ws)
const result = {
  corpus: 'shared/data/docs/gdpr (Regulation (EU) 2016/679, clean text and PDF-extracted text)',
  questions: questions.length,
  twins: {},
}
const firsts = {}
for (const [collection, file] of Object.entries(twins)) {
  const dir = join(scratch, collection)
  mkdirSync(dir)
  copyFileSync(join(gdpr, file), join(dir, file))
  await workspace.add({ paths: [dir], collection, kind: 'text' })
  const starts = articleStarts(readFileSync(join(gdpr, file)))
  let hit1 = 0
  let hit5 = 0
  let mrr = 0
  firsts[collection] = []
  for (const { q, article } of questions) {
    // One source per twin: lift the per-source cap so the top 10 are ten windows of the law.
    const found = await workspace.search({ query: q, collections: [collection], limit: 10, max_per_source: 0 })
    const spans = found.segments.map((s) => articlesIn(starts, s.locator.byte_start, s.locator.byte_end))
    firsts[collection].push(spans[0]?.join(',') ?? null)
    const rank = spans.findIndex((a) => a.includes(article)) + 1
    if (rank === 1) hit1++
    if (rank >= 1 && rank <= 5) hit5++
    if (rank >= 1) mrr += 1 / rank
  }
  result.twins[collection] = { hit_at_1: hit1 / questions.length, hit_at_5: hit5 / questions.length, mrr_at_10: mrr / questions.length }
}
await workspace.close()
result.same_first_article = firsts.clean.filter((a, i) => a !== null && a === firsts.noisy[i]).length / questions.length
mkdirSync(join(root, 'bench/results'), { recursive: true })
writeFileSync(join(root, 'bench/results/docs-gdpr.json'), `${JSON.stringify(result, null, 2)}\n`)
const f = (x) => x.toFixed(3)
const md = [
  '# GDPR: clean text and its noisy PDF-extracted twin, 30 article-level questions',
  '',
  '| twin | hit@1 | hit@5 | MRR@10 |',
  '|---|---:|---:|---:|',
  ...Object.entries(result.twins).map(([k, v]) => `| ${k} | ${f(v.hit_at_1)} | ${f(v.hit_at_5)} | ${f(v.mrr_at_10)} |`),
  '',
  `Same article(s) first in both twins: ${f(result.same_first_article)} of the questions. Lexical + exact channels, default pack.`,
]
writeFileSync(join(root, 'bench/results/docs-gdpr.md'), `${md.join('\n')}\n`)
console.log(md.join('\n'))
rmSync(scratch, { recursive: true, force: true })
