// The summary tree (RAPTOR) against questions broader than one passage: evidence recall@budget with
// and without the summary channel, on the OWASP Cheat Sheet Series (120 files) and the GDPR (clean
// text, read as a regulation), with the local embedding model. Also the tree's build time and the
// tokens a model summariser would be sent per 1,000 windows (a dry run: nothing leaves the machine).
//
//   node bench/raptor/recall.mjs          (after `npm run build`; about 6 minutes on 2 cores)
//
// Questions: test/eval/multipassage.questions.json (60). An OWASP question expects every section of
// its cheat sheet (## headings with at least 40 words under them); a GDPR question the articles it
// lists. Recall is the share of them the returned segments cover, within the token budget.
// Every other question of each corpus is the dev half (settings were chosen there), the rest test.
// Writes bench/results/raptor.{json,md}.
import { execFileSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Workspace } from '../../dist/index.js'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const shared = resolve(root, '../shared/data/docs')
const cli = join(root, 'dist/bin/tychora.cjs')
const BUDGET = Number(process.env.RAPTOR_BUDGET ?? 4000)
const LIMIT = 20
const WEIGHTS = (process.env.RAPTOR_WEIGHTS ?? '0.5,1,1.5').split(',').map(Number)

const run = (...args) => execFileSync(process.execPath, [cli, ...args], { encoding: 'utf8', maxBuffer: 1 << 28 })
const { questions } = JSON.parse(readFileSync(join(root, 'test/eval/multipassage.questions.json'), 'utf8'))

/** Sections of a cheat sheet: `## ` headings outside code fences with at least 40 words under them. */
function sections(file) {
  const out = []
  let fenced = false
  let current = null
  for (const line of readFileSync(join(shared, 'owasp-cheatsheets', file), 'utf8').split('\n')) {
    if (/^(```|~~~)/.test(line.trim())) fenced = !fenced
    if (!fenced && /^## /.test(line)) {
      current = { title: line.slice(3).trim(), words: 0 }
      out.push(current)
    } else if (current) current.words += line.split(/\s+/).filter(Boolean).length
  }
  return out.filter((s) => s.words >= 40).map((s) => s.title)
}

/** What a segment covers: `sheet#section`, or `article N`. */
function covered(segment) {
  const found = new Set()
  const path = segment.source.path
  if (path.endsWith('_Cheat_Sheet.md') && segment.locator.heading_path.length > 1) found.add(`${path.split('/').pop()}#${segment.locator.heading_path[1]}`)
  for (const m of `${segment.locator.heading_path.join(' ')} ${segment.citation}`.matchAll(/\bArticle (\d+)/g)) found.add(`article ${m[1]}`)
  return found
}

const expected = (q) => (q.sheet ? sections(q.sheet).map((s) => `${q.sheet}#${s}`) : q.articles.map((a) => `article ${a}`))

function recall(result, want) {
  const got = new Set()
  for (const s of result.segments) for (const c of covered(s)) got.add(c)
  return want.filter((w) => got.has(w)).length / want.length
}

/** Every other question of each corpus is dev, the rest test (positions alternate OWASP and GDPR). */
const half = (q) => (questions.filter((o) => Boolean(o.sheet) === Boolean(q.sheet)).indexOf(q) % 2 === 0 ? 'dev' : 'test')

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)

// RAPTOR_KEEP=1 keeps the scratch folder; RAPTOR_REUSE=DIR measures the queries again on a kept one.
const reuse = process.env.RAPTOR_REUSE
const scratch = reuse ?? mkdtempSync(join(tmpdir(), 'tychora-raptor-'))
try {
  const ws = join(scratch, 'ws')
  let addMs
  let built
  let buildWall
  let planned
  let toml
  if (reuse) {
    ;({ addMs, built, buildWall, planned, toml } = JSON.parse(readFileSync(join(scratch, 'build.json'), 'utf8')))
  } else {
    const corpus = join(scratch, 'corpus')
    mkdirSync(join(corpus, 'owasp'), { recursive: true })
    mkdirSync(join(corpus, 'gdpr'), { recursive: true })
    for (const f of readdirSync(join(shared, 'owasp-cheatsheets'))) cpSync(join(shared, 'owasp-cheatsheets', f), join(corpus, 'owasp', f))
    cpSync(join(shared, 'gdpr/gdpr_2016-679_clean.txt'), join(corpus, 'gdpr/gdpr.txt'))
    run('init', ws, '--embeddings', 'local')
    writeFileSync(join(ws, 'workspace.toml'), `${readFileSync(join(ws, 'workspace.toml'), 'utf8')}\n[summaries]\nprovider = "extractive"\nchannel = false\n`)
    let t = Date.now()
    run('add', '-w', ws, join(corpus, 'owasp'), '--collection', 'owasp')
    run('add', '-w', ws, join(corpus, 'gdpr'), '--collection', 'gdpr', '--kind', 'regulation')
    addMs = Date.now() - t
    t = Date.now()
    built = JSON.parse(run('index', 'build', '--raptor', '-w', ws, '--format', 'json'))
    buildWall = Date.now() - t
    // What a model summariser would be sent: the same tree as a dry run against an anthropic config.
    toml = readFileSync(join(ws, 'workspace.toml'), 'utf8')
    writeFileSync(
      join(ws, 'workspace.toml'),
      toml
        .replace('[summaries]\nprovider = "extractive"', '[summaries]\nprovider = "anthropic"\nmodel = "claude-sonnet-4-5"\ncollections = ["owasp", "gdpr"]')
        .replace(/network = false/g, 'network = true'),
    )
    planned = JSON.parse(run('index', 'build', '--raptor', '--dry-run', '-w', ws, '--format', 'json'))
    writeFileSync(join(ws, 'workspace.toml'), toml)
    writeFileSync(join(scratch, 'build.json'), JSON.stringify({ addMs, built, buildWall, planned, toml }))
  }

  const rows = []
  for (const weight of WEIGHTS) {
    writeFileSync(join(ws, 'workspace.toml'), toml.replace('[summaries]\nprovider = "extractive"\n', `[summaries]\nprovider = "extractive"\nweight = ${weight}\n`))
    const open = await Workspace.open(ws)
    try {
      for (const [channels, label] of [
        [['exact', 'lexical', 'text'], 'without'],
        [['exact', 'lexical', 'text', 'summary'], 'with'],
      ]) {
        if (label === 'without' && rows.some((r) => r.label === 'without')) continue
        const per = []
        for (const q of questions) {
          const result = await open.search({ query: q.question, channels, limit: LIMIT, max_per_source: 0, budget_tokens: BUDGET })
          per.push({
            id: q.id,
            half: half(q),
            corpus: q.sheet ? 'owasp' : 'gdpr',
            recall: recall(result, expected(q)),
            summaries: result.summaries.length,
            ms: result.duration_ms,
          })
        }
        rows.push({ label, weight: label === 'with' ? weight : null, per })
      }
    } finally {
      open.close()
    }
  }
  writeFileSync(join(ws, 'workspace.toml'), toml)

  const summarise = (per) => ({
    dev: mean(per.filter((p) => p.half === 'dev').map((p) => p.recall)),
    test: mean(per.filter((p) => p.half === 'test').map((p) => p.recall)),
    owasp: mean(per.filter((p) => p.corpus === 'owasp').map((p) => p.recall)),
    gdpr: mean(per.filter((p) => p.corpus === 'gdpr').map((p) => p.recall)),
    all: mean(per.map((p) => p.recall)),
    query_ms_p50: [...per.map((p) => p.ms)].sort((a, b) => a - b)[Math.floor(per.length / 2)],
  })
  const table = rows.map((r) => ({ label: r.label, weight: r.weight, ...summarise(r.per) }))
  const perThousand = (n) => Math.round((n * 1000) / Math.max(1, built.windows))
  const report = {
    date: new Date().toISOString(),
    corpus: `OWASP Cheat Sheet Series (120 files) + GDPR clean text (--kind regulation); local all-MiniLM-L6-v2; limit ${LIMIT}, budget ${BUDGET} tokens, no per-source limit`,
    questions: questions.length,
    add_ms: addMs,
    tree: built,
    build_wall_ms: buildWall,
    per_1000_windows: {
      build_ms: perThousand(built.build_ms),
      model_input_tokens: perThousand(planned.planned_input_tokens),
      model_calls: perThousand(planned.nodes),
      model_output_tokens_at_most: perThousand(planned.nodes * 160),
    },
    table,
    rows,
  }
  mkdirSync(join(root, 'bench/results'), { recursive: true })
  writeFileSync(join(root, 'bench/results/raptor.json'), `${JSON.stringify(report, null, 2)}\n`)
  const f = (x) => x.toFixed(3)
  const md = [
    '# Summary tree (RAPTOR): evidence recall@budget',
    '',
    `${report.date.slice(0, 10)} · ${report.corpus} · ${questions.length} questions (test/eval/multipassage.questions.json)`,
    '',
    '| channels | summary weight | recall dev | recall test | OWASP | GDPR | all | query p50 ms |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...table.map(
      (r) =>
        `| exact+lexical+text${r.label === 'with' ? '+summary' : ''} | ${r.weight ?? '–'} | ${f(r.dev)} | ${f(r.test)} | ${f(r.owasp)} | ${f(r.gdpr)} | ${f(r.all)} | ${r.query_ms_p50.toFixed(1)} |`,
    ),
    '',
    `Tree: ${built.windows} windows of ${built.documents} documents → ${built.nodes} summaries (levels ${built.levels.join(', ')}); extractive build ${(built.build_ms / 1000).toFixed(2)} s (cluster ${built.cluster_ms.toFixed(0)} ms, summarise ${built.summarize_ms.toFixed(0)} ms).`,
    `Per 1,000 windows: ${report.per_1000_windows.build_ms} ms to build offline; a model summariser would get ${report.per_1000_windows.model_calls} calls with ${report.per_1000_windows.model_input_tokens} input tokens (cl100k count of what would be sent) and write at most ${report.per_1000_windows.model_output_tokens_at_most} output tokens.`,
    '',
  ].join('\n')
  writeFileSync(join(root, 'bench/results/raptor.md'), md)
  process.stdout.write(md)
} finally {
  if (!process.env.RAPTOR_KEEP && !reuse) rmSync(scratch, { recursive: true, force: true })
  else process.stdout.write(`kept ${scratch}\n`)
}
