// DOCX extraction fidelity: Tychora's reader and mammoth.js (the converter a Node user would
// otherwise pick) side by side, against docling's expected Markdown for the 33 docling fixtures,
// and against each other on mammoth's 17 edge cases (which have no reference output).
//
// Metrics per file, then macro-averaged: word precision, recall and F1 (multisets of lowercased
// letter/digit runs); reading order as the normalised word-level edit distance (0 = same order);
// heading recall (expected `#` headings found as headings); table cell accuracy (expected pipe-table
// cells found among the extracted cells). docling's Markdown is a reference extraction (docling v2
// output), not human gold. Writes bench/results/docs-fidelity.{json,md}.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import mammoth from 'mammoth'
import { Workspace } from '../../dist/index.js'
import { htmlCells, norm, prf, score, words } from './metrics.mjs'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const shared = resolve(root, '../shared/data/docs/docx')
const scratch = mkdtempSync(join(tmpdir(), 'tychora-fidelity-'))

/** Tychora's view of every file: its units in order, through `inspect extraction:N`. */
async function tychoraRead(files) {
  const data = join(scratch, 'docx')
  mkdirSync(data, { recursive: true })
  for (const f of files) cpSync(f, join(data, basename(f)))
  const ws = join(scratch, 'ws')
  await Workspace.init(ws)
  const workspace = await Workspace.open(ws)
  const started = performance.now()
  const receipt = await workspace.add({ paths: [data] })
  const addMs = performance.now() - started
  const out = new Map()
  const list = await workspace.listSources({ limit: 1000 })
  for (const s of list.sources) {
    const revision = await workspace.inspect(`revision:${s.revision_id}`)
    const extraction = await workspace.inspect(`extraction:${revision.extractions.at(-1).id}`)
    const units = extraction.units
    out.set(s.path, {
      text: units.map((u) => u.text).join('\n'),
      headings: units.filter((u) => u.unit_type === 'heading').map((u) => norm(u.text)),
      cells: units.flatMap((u) => (u.document?.cells ?? []).map((c) => norm(c.text))).filter(Boolean),
      units: units.length,
    })
  }
  await workspace.close()
  return { out, addMs, receipt }
}

/** mammoth's HTML (its primary output; its Markdown writer is deprecated) as text, headings, cells. */
async function mammothRead(file) {
  const html = (await mammoth.convertToHtml({ buffer: readFileSync(file) })).value
  const plain = (h) => h.replace(/<[^>]+>/g, ' ').replace(/&(amp|lt|gt|quot|#39);/g, ' ')
  return {
    text: plain(html.replace(/<\/(p|h\d|li|td|th|tr)>/g, '\n')),
    headings: [...html.matchAll(/<h[1-6][^>]*>([\s\S]*?)<\/h[1-6]>/g)].map((m) => norm(plain(m[1]))).filter(Boolean),
    cells: htmlCells(html),
  }
}

/** Median add time of every DOCX here plus the ASVS standard (3.4 MB), fresh workspace each run. */
async function throughput(files, runs) {
  const data = join(scratch, 'all')
  mkdirSync(data, { recursive: true })
  let bytes = 0
  for (const f of files) {
    cpSync(f, join(data, basename(f)))
    bytes += readFileSync(f).length
  }
  const times = []
  for (let i = 0; i < runs; i++) {
    const ws = join(scratch, `tp-${i}`)
    await Workspace.init(ws)
    const workspace = await Workspace.open(ws)
    const started = performance.now()
    await workspace.add({ paths: [data] })
    times.push(performance.now() - started)
    await workspace.close()
  }
  const ms = [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)]
  return {
    files: files.length,
    bytes,
    runs,
    median_ms: ms,
    files_per_s: (files.length * 1000) / ms,
    mb_per_s: bytes / 1e6 / (ms / 1000),
    peak_rss_mb: process.resourceUsage().maxRSS / 1024,
  }
}

const mean = (xs) => {
  const v = xs.filter((x) => x !== null && x !== undefined)
  return v.length ? v.reduce((a, b) => a + b, 0) / v.length : null
}
const fmt = (x) => (x === null ? '—' : x.toFixed(3))

async function main() {
  const docling = readdirSync(join(shared, 'docling'))
    .filter((f) => f.endsWith('.docx'))
    .map((f) => join(shared, 'docling', f))
  const edge = readdirSync(join(shared, 'mammoth'))
    .filter((f) => f.endsWith('.docx'))
    .map((f) => join(shared, 'mammoth', f))
  const { out: ours, addMs, receipt } = await tychoraRead([...docling, ...edge.map((f) => f)])
  const rows = []
  for (const file of docling) {
    const expected = readFileSync(`${file}.expected.md`, 'utf8')
    const name = basename(file)
    const t = ours.get(name) ?? { text: '', headings: [], cells: [] }
    rows.push({ file: name, tychora: score(expected, t), mammoth: score(expected, await mammothRead(file)) })
  }
  // Edge cases: no reference; agreement of the two readers' words (mammoth's as the reference).
  const agreement = []
  for (const file of edge) {
    const name = basename(file)
    const m = await mammothRead(file)
    const t = ours.get(name) ?? { text: '' }
    agreement.push({ file: name, ...prf(words(m.text), words(t.text)), tychora_words: words(t.text).length, mammoth_words: words(m.text).length })
  }
  const asvs = resolve(root, '../shared/data/docs/owasp-asvs-5.0/OWASP_Application_Security_Verification_Standard_5.0.0_en.docx')
  const speed = await throughput([...docling, ...edge, asvs], Number(process.env.BENCH_RUNS ?? 3))
  const summary = (who) => ({
    precision: mean(rows.map((r) => r[who].precision)),
    recall: mean(rows.map((r) => r[who].recall)),
    f1: mean(rows.map((r) => r[who].f1)),
    order: mean(rows.map((r) => r[who].order)),
    headings: mean(rows.map((r) => r[who].headings)),
    cells: mean(rows.map((r) => r[who].cells)),
  })
  const result = {
    corpus: `shared/data/docs/docx: ${docling.length} docling fixtures with expected Markdown, ${edge.length} mammoth edge cases`,
    tychora: summary('tychora'),
    mammoth: summary('mammoth'),
    add: { files: docling.length + edge.length, ms: addMs, failed: receipt.files.failed },
    throughput: speed,
    files: rows,
    edge_agreement: agreement,
  }
  mkdirSync(join(root, 'bench/results'), { recursive: true })
  writeFileSync(join(root, 'bench/results/docs-fidelity.json'), `${JSON.stringify(result, null, 2)}\n`)
  const lines = [
    '# DOCX fidelity against docling expected Markdown',
    '',
    `${result.corpus}. Macro averages; order = normalised word edit distance (lower is better).`,
    '',
    '| reader | precision | recall | F1 | order | heading recall | cell accuracy |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...['tychora', 'mammoth'].map(
      (w) => `| ${w} | ${fmt(result[w].precision)} | ${fmt(result[w].recall)} | ${fmt(result[w].f1)} | ${fmt(result[w].order)} | ${fmt(result[w].headings)} | ${fmt(result[w].cells)} |`,
    ),
    '',
    `Tychora add of all ${result.add.files} files: ${result.add.ms.toFixed(0)} ms (${result.add.failed} failed).`,
    `Throughput (add, median of ${speed.runs}, fresh workspace, 2 cores): ${speed.files} DOCX files incl. the ASVS 5.0 standard, ${(speed.bytes / 1e6).toFixed(1)} MB, ${speed.median_ms.toFixed(0)} ms = ${speed.files_per_s.toFixed(0)} files/s, ${speed.mb_per_s.toFixed(1)} MB/s; bench process peak RSS ${speed.peak_rss_mb.toFixed(0)} MB.`,
    '',
    '| file | F1 tychora | F1 mammoth | order tychora | order mammoth | headings t/m | cells t/m |',
    '|---|---:|---:|---:|---:|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.file} | ${fmt(r.tychora.f1)} | ${fmt(r.mammoth.f1)} | ${fmt(r.tychora.order)} | ${fmt(r.mammoth.order)} | ${fmt(r.tychora.headings)}/${fmt(r.mammoth.headings)} | ${fmt(r.tychora.cells)}/${fmt(r.mammoth.cells)} |`,
    ),
    '',
    '## mammoth edge cases: word agreement (mammoth as reference)',
    '',
    '| file | precision | recall | F1 | words tychora | words mammoth |',
    '|---|---:|---:|---:|---:|---:|',
    ...agreement.map((a) => `| ${a.file} | ${fmt(a.precision)} | ${fmt(a.recall)} | ${fmt(a.f1)} | ${a.tychora_words} | ${a.mammoth_words} |`),
  ]
  writeFileSync(join(root, 'bench/results/docs-fidelity.md'), `${lines.join('\n')}\n`)
  console.log(lines.slice(0, 10).join('\n'))
  rmSync(scratch, { recursive: true, force: true })
}

await main()
