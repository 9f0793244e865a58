// PDF text extraction: Tychora (pdf.js in worker threads + its layout) and `pdftotext -layout`
// (Debian's poppler-utils, the baseline a user already has) side by side, in one run. Tables:
// cell recall against docling's expected pipe tables, and the cells pdfplumber's own tests assert.
// Fidelity: the docling PDFs that have docling's expected Markdown (a reference extraction, not
// human gold): word precision, recall, F1, reading order (normalised word edit distance) and
// heading recall. Throughput: pages/s adding every text-layer PDF of pdf/docling and
// pdf/pdfplumber (median of BENCH_RUNS, fresh workspace each run) against pdftotext over the same
// files. Writes bench/results/docs-pdf.{json,md}.
import { execFileSync, spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Workspace } from '../../dist/index.js'
import { norm, score } from './metrics.mjs'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const docs = resolve(root, '../shared/data/docs/pdf')
const scratch = mkdtempSync(join(tmpdir(), 'tychora-pdf-'))
const RUNS = Number(process.env.BENCH_RUNS ?? 3)
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const havePdftotext = spawnSync('pdftotext', ['-v']).status === 0

const pdfs = (dir) =>
  readdirSync(join(docs, dir))
    .filter((f) => f.endsWith('.pdf'))
    .map((f) => join(docs, dir, f))
// Text-layer files only: the error cases (encrypted, empty, malformed) are not throughput.
const corpus = [...pdfs('docling'), ...pdfs('pdfplumber')].filter((f) => !/password|empty\.pdf|malformed/.test(f))

async function addAll(files, ws, { figures = true } = {}) {
  const data = join(scratch, `data-${basename(ws)}`)
  mkdirSync(data, { recursive: true })
  for (const f of files) cpSync(f, join(data, basename(f)))
  await Workspace.init(ws)
  if (!figures) {
    const config = join(ws, 'workspace.toml')
    writeFileSync(config, readFileSync(config, 'utf8').replace('pdf_figures = true', 'pdf_figures = false'))
  }
  const workspace = await Workspace.open(ws)
  const started = performance.now()
  await workspace.add({ paths: [data] })
  const ms = performance.now() - started
  return { workspace, ms }
}

async function unitsOf(workspace) {
  const out = new Map()
  let pages = 0
  for (const s of (await workspace.listSources({ limit: 1000 })).sources) {
    const revision = await workspace.inspect(`revision:${s.revision_id}`)
    const extraction = await workspace.inspect(`extraction:${revision.extractions.at(-1).id}`)
    pages += extraction.document?.pages ?? 0
    const rows = extraction.units.filter((u) => u.unit_type === 'table_row')
    out.set(s.path, {
      text: extraction.units.map((u) => u.text).join('\n'),
      headings: extraction.units.filter((u) => u.unit_type === 'heading').map((u) => norm(u.text)),
      cells: rows.flatMap((u) => u.document.cells.map((c) => norm(c.text))).filter(Boolean),
      // Rows of each logical table, in order, as cell texts.
      tables: Object.values(
        rows.reduce((acc, u) => {
          ;(acc[u.document.table] ??= []).push(u.document.cells.map((c) => c.text))
          return acc
        }, {}),
      ),
    })
  }
  return { out, pages }
}

function pdftotext(file) {
  return execFileSync('pdftotext', ['-layout', '-q', file, '-'], { encoding: 'utf8', maxBuffer: 1 << 28 })
}

const fmt = (x) => (x === null || x === undefined ? '—' : x.toFixed(3))
const mean = (xs) => {
  const v = xs.filter((x) => x !== null && x !== undefined)
  return v.length ? v.reduce((a, b) => a + b, 0) / v.length : null
}

// Fidelity on the docling PDFs with an expected Markdown.
const referenced = pdfs('docling').filter((f) => existsSync(`${f.replace(/\.pdf$/, '')}.expected.md`) || existsSync(`${f}.expected.md`))
const expectedOf = (f) => readFileSync(existsSync(`${f}.expected.md`) ? `${f}.expected.md` : `${f.replace(/\.pdf$/, '')}.expected.md`, 'utf8')
const { workspace: fw } = await addAll(referenced, join(scratch, 'fidelity'))
const { out: ours } = await unitsOf(fw)
fw.close()
const rows = referenced.map((f) => {
  const expected = expectedOf(f)
  const t = ours.get(basename(f)) ?? { text: '', headings: [], cells: [] }
  const row = { file: basename(f), tychora: score(expected, t) }
  if (havePdftotext) row.pdftotext = score(expected, { text: pdftotext(f), headings: [], cells: [] })
  return row
})
const summary = (who) => ({
  precision: mean(rows.map((r) => r[who]?.precision)),
  recall: mean(rows.map((r) => r[who]?.recall)),
  f1: mean(rows.map((r) => r[who]?.f1)),
  order: mean(rows.map((r) => r[who]?.order)),
  headings: mean(rows.map((r) => r[who]?.headings)),
  cells: who === 'tychora' ? mean(rows.map((r) => r[who]?.cells)) : null,
})

// Table cells against pdfplumber's own tests (bench/docs/pdf-tables-gold.json).
const gold = JSON.parse(readFileSync(join(root, 'bench/docs/pdf-tables-gold.json'), 'utf8')).checks
const goldFiles = [...new Set(gold.map((g) => g.file))]
const { workspace: gw } = await addAll(
  goldFiles.map((f) => join(docs, 'pdfplumber', f)),
  join(scratch, 'gold'),
)
const { out: goldUnits } = await unitsOf(gw)
gw.close()
const bare = (t) => String(t ?? '').replace(/\s+/g, '')
const pick = (xs, i) => (i < 0 ? xs[xs.length + i] : xs[i])
const tableChecks = gold.map((g) => {
  const table = goldUnits.get(g.file)?.tables?.[0] ?? []
  const row = typeof g.row === 'string' ? table.find((r) => bare(r[0]) === bare(g.row.slice('starts:'.length))) : pick(table, g.row)
  const expected = g.cells ?? [g.text]
  const got = g.cells ? (row ?? []).slice(0, g.cells.length) : [pick(row ?? [], g.at)]
  const hits = expected.filter((e, i) => bare(e) === bare(got[i])).length
  return { file: g.file, source: g.source, expected, got, hits, total: expected.length }
})
const tableHits = tableChecks.reduce((n, c) => n + c.hits, 0)
const tableTotal = tableChecks.reduce((n, c) => n + c.total, 0)

// Throughput: the whole text-layer corpus.
const times = []
let pages = 0
for (let i = 0; i < RUNS; i++) {
  const { workspace, ms } = await addAll(corpus, join(scratch, `tp-${i}`))
  times.push(ms)
  if (i === 0) pages = (await unitsOf(workspace)).pages
  workspace.close()
}
const ms = median(times)
// The same without the figures pass ([documents] pdf_figures = false): units, locators and tables only.
const textTimes = []
for (let i = 0; i < RUNS; i++) {
  const { workspace, ms: t } = await addAll(corpus, join(scratch, `tp-text-${i}`), { figures: false })
  textTimes.push(t)
  workspace.close()
}
const textMs = median(textTimes)
let baselineMs = null
if (havePdftotext) {
  const base = []
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now()
    for (const f of corpus) pdftotext(f)
    base.push(performance.now() - started)
  }
  baselineMs = median(base)
}
const result = {
  corpus: `shared/data/docs/pdf: ${rows.length} docling PDFs with expected Markdown (fidelity); ${corpus.length} text-layer PDFs of pdf/docling and pdf/pdfplumber, ${pages} pages (throughput)`,
  tychora: summary('tychora'),
  pdftotext: havePdftotext ? summary('pdftotext') : null,
  throughput: {
    runs: RUNS,
    files: corpus.length,
    pages,
    tychora_ms: ms,
    tychora_pages_per_s: (pages * 1000) / ms,
    tychora_text_ms: textMs,
    tychora_text_pages_per_s: (pages * 1000) / textMs,
    pdftotext_ms: baselineMs,
    pdftotext_pages_per_s: baselineMs ? (pages * 1000) / baselineMs : null,
  },
  files: rows,
  pdfplumber_tables: { hits: tableHits, total: tableTotal, accuracy: tableHits / tableTotal, checks: tableChecks },
}
mkdirSync(join(root, 'bench/results'), { recursive: true })
writeFileSync(join(root, 'bench/results/docs-pdf.json'), `${JSON.stringify(result, null, 2)}\n`)
const t = result.throughput
const md = [
  '# PDF text extraction: Tychora (pdf.js + layout) and pdftotext -layout',
  '',
  `${result.corpus}. Macro averages against docling's expected Markdown; order = normalised word edit distance (lower is better).`,
  '',
  '| reader | precision | recall | F1 | order | heading recall | table cells |',
  '|---|---:|---:|---:|---:|---:|---:|',
  ...['tychora', 'pdftotext']
    .filter((w) => result[w])
    .map((w) => `| ${w} | ${fmt(result[w].precision)} | ${fmt(result[w].recall)} | ${fmt(result[w].f1)} | ${fmt(result[w].order)} | ${fmt(result[w].headings)} | ${fmt(result[w].cells)} |`),
  '',
  `Table cells as pdfplumber's own tests assert them (bench/docs/pdf-tables-gold.json; first table of each file): ${tableHits} of ${tableTotal} (${fmt(tableHits / tableTotal)}).`,
  '',
  '| file | expected (from pdfplumber tests) | found | cells |',
  '|---|---|---|---:|',
  ...tableChecks.map((c) => `| ${c.file} | ${c.expected.join(' · ')} | ${c.got.map((x) => x ?? '∅').join(' · ')} | ${c.hits}/${c.total} |`),
  '',
  `Throughput (median of ${t.runs}, 2 cores): Tychora add (capture, extraction, units, windows, index, figures drawn: PNG, JPEG for photographs) ${t.tychora_ms.toFixed(0)} ms = ${t.tychora_pages_per_s.toFixed(1)} pages/s; ` +
    `without the figures pass (pdf_figures = false: units, locators, tables) ${t.tychora_text_ms.toFixed(0)} ms = ${t.tychora_text_pages_per_s.toFixed(1)} pages/s; ` +
    (t.pdftotext_ms
      ? `pdftotext -layout (text only, one process per file) ${t.pdftotext_ms.toFixed(0)} ms = ${t.pdftotext_pages_per_s.toFixed(1)} pages/s.`
      : 'pdftotext not installed (apt-get install poppler-utils).'),
  '',
  '| file | F1 tychora | F1 pdftotext | order tychora | order pdftotext | headings tychora | cells tychora |',
  '|---|---:|---:|---:|---:|---:|---:|',
  ...rows.map((r) => `| ${r.file} | ${fmt(r.tychora.f1)} | ${fmt(r.pdftotext?.f1)} | ${fmt(r.tychora.order)} | ${fmt(r.pdftotext?.order)} | ${fmt(r.tychora.headings)} | ${fmt(r.tychora.cells)} |`),
]
writeFileSync(join(root, 'bench/results/docs-pdf.md'), `${md.join('\n')}\n`)
console.log(md.join('\n'))
rmSync(scratch, { recursive: true, force: true })
