// OCR of scanned pages (issue 12): the OCRmyPDF test scans in shared/data/docs/scanned read by
// `add` with [ocr] on (pdf.js renders, tesseract.js reads), side by side with the tesseract CLI a
// user would otherwise run (Debian's tesseract-ocr on pdftoppm's rendering at the same dpi), when
// both are installed. Word error rate against linn.txt for linn.pdf and its skewed and rotated
// twins; confidence and the turn kept for cardinal.pdf's four orientations; pages/s of the add.
import { spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Workspace } from '../../dist/index.js'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const scanned = resolve(root, '../shared/data/docs/scanned')
const scratch = mkdtempSync(join(tmpdir(), 'tychora-ocr-bench-'))
const DPI = Number(process.env.BENCH_OCR_DPI ?? 300)
const reference = readFileSync(join(scanned, 'linn.txt'), 'utf8')
const files = readdirSync(scanned).filter((f) => f.endsWith('.pdf') && f !== 'invalid.pdf')
const haveTesseract = spawnSync('tesseract', ['--version']).status === 0 && spawnSync('pdftoppm', ['-v']).status === 0

/** Words as OCR scoring compares them: case, quotes and edge punctuation aside. */
const words = (s) =>
  s
    .toLowerCase()
    .normalize('NFKC')
    .replace(/[’‘]/g, "'")
    .split(/\s+/)
    .map((w) => w.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, ''))
    .filter(Boolean)

/** Word error rate: word-level edit distance over the reference's length. */
function wer(ref, hyp) {
  const [r, h] = [words(ref), words(hyp)]
  let prev = Array.from({ length: h.length + 1 }, (_, j) => j)
  for (let i = 1; i <= r.length; i++) {
    const cur = [i]
    for (let j = 1; j <= h.length; j++) cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (r[i - 1] === h[j - 1] ? 0 : 1))
    prev = cur
  }
  return prev[h.length] / r.length
}

async function tychora(file) {
  const data = join(scratch, `data-${file}`)
  const ws = join(scratch, `ws-${file}`)
  mkdirSync(data, { recursive: true })
  cpSync(join(scanned, file), join(data, file))
  await Workspace.init(ws)
  const config = join(ws, 'workspace.toml')
  writeFileSync(
    config,
    readFileSync(config, 'utf8')
      .replace(/^enabled = false/m, 'enabled = true')
      .replace('dpi = 300', `dpi = ${DPI}`),
  )
  const workspace = await Workspace.open(ws)
  try {
    const started = performance.now()
    const receipt = await workspace.add({ paths: [data] })
    const ms = performance.now() - started
    const source = (await workspace.listSources({ limit: 10 })).sources[0]
    const revision = await workspace.inspect(`revision:${source.revision_id}`)
    const extraction = await workspace.inspect(`extraction:${revision.extractions.at(-1).id}`)
    const ocr = extraction.units.filter((u) => u.unit_type === 'ocr_text')
    const note = receipt.diagnostics.find((d) => /read by OCR/.test(d.message))?.message ?? ''
    return {
      pages: extraction.document?.pages ?? 0,
      ms,
      text: ocr.map((u) => u.text).join('\n'),
      units: ocr.length,
      confidence: Number(/mean confidence ([\d.]+)/.exec(note)?.[1] ?? Number.NaN),
      turned: /read turned: (.*)$/.exec(note)?.[1] ?? '',
    }
  } finally {
    workspace.close()
  }
}

function tesseractCli(file) {
  const out = join(scratch, `cli-${file}`)
  mkdirSync(out, { recursive: true })
  const started = performance.now()
  spawnSync('pdftoppm', ['-r', String(DPI), '-png', join(scanned, file), join(out, 'p')])
  let text = ''
  for (const png of readdirSync(out)
    .filter((f) => f.endsWith('.png'))
    .sort()) {
    text += `${spawnSync('tesseract', [join(out, png), '-', '--dpi', String(DPI)], { encoding: 'utf8' }).stdout}\n`
  }
  return { ms: performance.now() - started, text }
}

const rows = []
for (const file of files) {
  const t = await tychora(file)
  const cli = haveTesseract ? tesseractCli(file) : null
  const linn = /^(linn|skew|rotated_skew)\.pdf$/.test(file)
  rows.push({
    file,
    pages: t.pages,
    tychora: {
      seconds: t.ms / 1000,
      pages_per_s: t.pages / (t.ms / 1000),
      units: t.units,
      confidence: t.confidence,
      turned: t.turned,
      wer: linn ? wer(reference, t.text) : null,
      words: words(t.text).length,
    },
    tesseract_cli: cli && {
      seconds: cli.ms / 1000,
      pages_per_s: t.pages / (cli.ms / 1000),
      wer: linn ? wer(reference, cli.text) : null,
      words: words(cli.text).length,
    },
  })
  console.error(`${file}: ${t.pages} pp, ${(t.ms / 1000).toFixed(1)} s, wer ${rows.at(-1).tychora.wer?.toFixed(3) ?? '-'}`)
}
rmSync(scratch, { recursive: true, force: true })

const pages = rows.reduce((n, r) => n + r.pages, 0)
const seconds = rows.reduce((n, r) => n + r.tychora.seconds, 0)
const cliSeconds = haveTesseract ? rows.reduce((n, r) => n + r.tesseract_cli.seconds, 0) : null
const result = {
  corpus: `shared/data/docs/scanned: ${rows.length} scanned PDFs, ${pages} pages, rendered at ${DPI} dpi`,
  engine: 'tesseract.js 7 (LSTM, eng 4.0.0_best_int, automatic page segmentation) on pdf.js + @napi-rs/canvas',
  rows,
  throughput: { pages, seconds, pages_per_s: pages / seconds, tesseract_cli_pages_per_s: cliSeconds && pages / cliSeconds },
}
writeFileSync(join(root, 'bench/results/docs-ocr.json'), `${JSON.stringify(result, null, 2)}\n`)
const f = (v, d = 3) => (v === null || v === undefined || Number.isNaN(v) ? '–' : v.toFixed(d))
const md = [
  `# OCR of scanned pages (${result.corpus})`,
  '',
  `Tychora: ${result.engine}, through a whole \`add\` with \`[ocr] enabled = true\`. Peer: \`pdftoppm -r ${DPI}\` + tesseract CLI ${haveTesseract ? '(installed)' : '(not installed: columns empty)'}. WER against linn.txt (word-level edit distance / reference words, case and edge punctuation aside).`,
  '',
  '| file | pages | tychora s | tychora WER | confidence | turned | tesseract CLI s | CLI WER |',
  '|---|---:|---:|---:|---:|---|---:|---:|',
  ...rows.map(
    (r) =>
      `| ${r.file} | ${r.pages} | ${f(r.tychora.seconds, 1)} | ${f(r.tychora.wer)} | ${f(r.tychora.confidence, 2)} | ${r.tychora.turned || '–'} | ${f(r.tesseract_cli?.seconds, 1)} | ${f(r.tesseract_cli?.wer)} |`,
  ),
  '',
  `Throughput: ${f(result.throughput.pages_per_s, 2)} pages/s through add (tesseract CLI: ${f(result.throughput.tesseract_cli_pages_per_s, 2)}).`,
]
writeFileSync(join(root, 'bench/results/docs-ocr.md'), `${md.join('\n')}\n`)
console.log(md.join('\n'))
