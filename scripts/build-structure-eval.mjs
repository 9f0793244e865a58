// Builds test/eval/structure.questions.json: identifier and structure questions over the GDPR (clean
// text), three RFCs and the OWASP ASVS 5.0 (chapter Markdown, CSV, JSON) in ../shared/data/docs.
//
// The expected evidence is found here, from the raw files, by their printed structure — article
// headers, numbered paragraphs and points, RFC section headers at column 0, requirement ids in
// table rows, CSV rows and JSON objects — never from the engine's output, so the set measures the
// engine instead of agreeing with it. Each expected item is a file and a 1-based inclusive line
// range; a result segment that overlaps it is that evidence. Forbidden items are the near misses a
// reader must not be handed: the recital that shares an article's number, the section of another
// RFC with the same number.
//
// Usage: node scripts/build-structure-eval.mjs [--data ../shared/data/docs]
import { readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'

const root = resolve(dirname(new URL(import.meta.url).pathname), '..')
const at = process.argv.indexOf('--data')
const data = resolve(at > 0 ? process.argv[at + 1] : join(root, '../shared/data/docs'))
const lines = (rel) => readFileSync(join(data, rel), 'utf8').split(/\r?\n/)

/** Every `step`-th item from `start`, at most `n`: a fixed spread over the document. */
function spread(items, n) {
  if (items.length <= n) return items
  const step = items.length / n
  return Array.from({ length: n }, (_, i) => items[Math.floor(i * step)])
}

const questions = []
const ask = (id, type, query, expected, forbidden = []) => questions.push({ id, type, query, expected, forbidden })

// ---- GDPR: articles, paragraphs, points, recitals -------------------------------------------
const GDPR = 'gdpr/gdpr_2016-679_clean.txt'
const g = lines(GDPR)
const articles = []
g.forEach((line, i) => {
  const m = /^Article (\d+)$/.exec(line.trim())
  if (m) articles.push({ n: Number(m[1]), start: i + 1 })
})
articles.forEach((a, i) => {
  a.end = (articles[i + 1]?.start ?? g.length + 1) - 1
  // The title is the first non-empty line after the header.
  a.title =
    g
      .slice(a.start, a.end)
      .find((l) => l.trim() !== '')
      ?.trim() ?? ''
})
// Recitals: `(N)` lines before Article 1, each running to the next.
const firstArticle = articles[0].start
const recitals = new Map()
for (let i = 0; i < firstArticle; i++) {
  const m = /^\((\d+)\)$/.exec(g[i].trim())
  if (m) recitals.set(Number(m[1]), { start: i + 1 })
}
const recitalList = [...recitals.entries()].sort((a, b) => a[1].start - b[1].start)
recitalList.forEach(([, r], i) => {
  r.end = (recitalList[i + 1]?.[1].start ?? firstArticle) - 1
})
const recitalOf = (n) => (recitals.has(n) ? [{ path: GDPR, lines: [recitals.get(n).start, recitals.get(n).end] }] : [])

/** Numbered paragraphs (`1.   text`) of an article, each with its points (`(a)` lines). */
function paragraphs(a) {
  const out = []
  for (let i = a.start; i < a.end; i++) {
    const m = /^(\d+)\.\s{2,}\S/.exec(g[i])
    if (m) out.push({ p: Number(m[1]), start: i + 1, points: [] })
  }
  out.forEach((p, i) => {
    p.end = (out[i + 1]?.start ?? a.end + 1) - 1
    for (let j = p.start; j < p.end; j++) {
      const m = /^\(([a-z])\)$/.exec(g[j].trim())
      if (m) p.points.push({ x: m[1], start: j + 1 })
    }
    p.points.forEach((x, k) => {
      x.end = (p.points[k + 1]?.start ?? p.end + 1) - 1
    })
  })
  return out
}

for (const a of spread(articles, 40)) {
  ask(`gdpr-art-${a.n}`, 'exact_id', `Article ${a.n}`, [{ path: GDPR, lines: [a.start, a.end] }], recitalOf(a.n))
}
const titled = articles.filter((a) => a.title && articles.filter((b) => b.title === a.title).length === 1)
for (const a of spread(titled, 20)) {
  const topic = a.title.replace(/^\s*|\s*$/g, '').replace(/\.$/, '')
  ask(`gdpr-title-${a.n}`, 'paraphrase', `Which GDPR article is about ${topic.charAt(0).toLowerCase()}${topic.slice(1)}?`, [{ path: GDPR, lines: [a.start, a.end] }])
}
const withParagraphs = articles.map((a) => ({ a, ps: paragraphs(a) })).filter((x) => x.ps.length >= 2)
for (const { a, ps } of spread(withParagraphs, 20)) {
  const p = ps[Math.min(1, ps.length - 1)]
  ask(`gdpr-par-${a.n}-${p.p}`, 'exact_id', `Article ${a.n}(${p.p})`, [{ path: GDPR, lines: [p.start, p.end] }])
}
const withPoints = withParagraphs.flatMap(({ a, ps }) => ps.filter((p) => p.points.length >= 2).map((p) => ({ a, p })))
for (const { a, p } of spread(withPoints, 15)) {
  const x = p.points[1]
  ask(`gdpr-point-${a.n}-${p.p}-${x.x}`, 'exact_id', `Article ${a.n}(${p.p})(${x.x})`, [{ path: GDPR, lines: [x.start, x.end] }])
}
for (const { a, p } of spread(withPoints, 10)) {
  const x = p.points[0]
  ask(`gdpr-cite-${a.n}-${p.p}-${x.x}`, 'paraphrase', `point (${x.x}) of Article ${a.n}(${p.p}) GDPR`, [{ path: GDPR, lines: [x.start, x.end] }])
}

// ---- RFCs: sections by number and by title ---------------------------------------------------
const rfcSections = {}
for (const n of [2616, 3986, 6749]) {
  const rel = `rfc/rfc${n}.txt`
  const t = lines(rel)
  const sections = []
  t.forEach((line, i) => {
    // Column 0 only: the table of contents is indented. RFC 2616 writes `1.1 Purpose`, later
    // RFCs `1.1.  Roles`.
    const m = /^(\d+(?:\.\d+)*)\.?\s+([A-Z].*)$/.exec(line)
    if (m && !/\.{3,}|\s\d+$/.test(line)) sections.push({ id: m[1], title: m[2].trim(), start: i + 1 })
  })
  sections.forEach((s, i) => {
    s.end = (sections[i + 1]?.start ?? t.length + 1) - 1
  })
  rfcSections[n] = { rel, sections }
}
const sectionIn = (n, id) => rfcSections[n].sections.find((s) => s.id === id)
for (const n of [2616, 3986, 6749]) {
  const { rel, sections } = rfcSections[n]
  const deep = sections.filter((s) => s.id.includes('.'))
  for (const s of spread(deep, 8)) {
    // The same number in another RFC is a near miss.
    const forbidden = []
    for (const other of [2616, 3986, 6749]) {
      const same = other !== n ? sectionIn(other, s.id) : undefined
      if (same) forbidden.push({ path: rfcSections[other].rel, lines: [same.start, same.end] })
    }
    ask(`rfc${n}-sec-${s.id}`, 'exact_id', `RFC ${n} §${s.id}`, [{ path: rel, lines: [s.start, s.end] }], forbidden)
  }
  for (const s of spread(deep.slice(1), 5)) {
    ask(`rfc${n}-of-${s.id}`, 'exact_id', `Section ${s.id} of RFC ${n}`, [{ path: rel, lines: [s.start, s.end] }])
  }
  const unique = deep.filter((s) => sections.filter((o) => o.title === s.title).length === 1 && s.title.split(' ').length >= 2)
  for (const s of spread(unique, 6)) {
    ask(`rfc${n}-title-${s.id}`, 'paraphrase', `${s.title} in RFC ${n}`, [{ path: rel, lines: [s.start, s.end] }])
  }
}

// ---- ASVS: one requirement in three files ----------------------------------------------------
const ASVS = 'owasp-asvs-5.0'
const CSV = `${ASVS}/OWASP_Application_Security_Verification_Standard_5.0.0_en.csv`
const JSON_FILE = `${ASVS}/OWASP_Application_Security_Verification_Standard_5.0.0_en.flat.json`
const CHAPTER = `${ASVS}/md/0x10-V1-Encoding-and-Sanitization.md`
const csvLines = lines(CSV)
const jsonLines = lines(JSON_FILE)
const mdLines = lines(CHAPTER)
const flat = JSON.parse(readFileSync(join(data, JSON_FILE), 'utf8')).requirements
function asvsEvidence(id) {
  const out = []
  const md = mdLines.findIndex((l) => l.startsWith(`| **${id.slice(1)}** |`))
  if (md >= 0) out.push({ path: CHAPTER, lines: [md + 1, md + 1] })
  const csv = csvLines.findIndex((l) => l.includes(`,${id},`))
  if (csv >= 0) out.push({ path: CSV, lines: [csv + 1, csv + 1] })
  const j = jsonLines.findIndex((l) => l.includes(`"req_id": "${id}"`))
  if (j >= 0) {
    let open = j
    while (open > 0 && jsonLines[open].trim() !== '{') open--
    let close = j
    while (close < jsonLines.length - 1 && !jsonLines[close].trim().startsWith('}')) close++
    out.push({ path: JSON_FILE, lines: [open + 1, close + 1] })
  }
  return out
}
const chapterOne = flat.filter((r) => r.chapter_id === 'V1')
const picked = [
  ...spread(chapterOne, 8),
  ...spread(
    flat.filter((r) => r.chapter_id !== 'V1'),
    12,
  ),
]
for (const r of picked) ask(`asvs-${r.req_id}`, 'exact_id', r.req_id, asvsEvidence(r.req_id))
for (const r of spread(flat, 10)) {
  ask(`asvs-ref-${r.req_id}`, 'paraphrase', `ASVS requirement ${r.req_id.slice(1)}`, asvsEvidence(r.req_id))
}

const corpus = [
  { path: GDPR, kind: 'regulation' },
  { path: 'rfc/rfc2616.txt' },
  { path: 'rfc/rfc3986.txt' },
  { path: 'rfc/rfc6749.txt' },
  { path: CHAPTER, kind: 'standard' },
  { path: CSV, kind: 'standard' },
  { path: JSON_FILE, kind: 'standard' },
]
for (const q of questions) {
  if (q.expected.length === 0) throw new Error(`${q.id}: no expected evidence found`)
}
const out = {
  name: 'structure',
  description:
    "Identifier and structure questions over the GDPR, RFC 2616/3986/6749 and OWASP ASVS 5.0, built by scripts/build-structure-eval.mjs from the files themselves. A segment is expected (or forbidden) evidence when it overlaps the item's line range in that file.",
  data: '../../../shared/data/docs',
  corpus,
  questions,
}
writeFileSync(join(root, 'test/eval/structure.questions.json'), `${JSON.stringify(out, null, 1)}\n`)
const byType = {}
for (const q of questions) byType[q.type] = (byType[q.type] ?? 0) + 1
console.log(`${questions.length} questions`, byType)
