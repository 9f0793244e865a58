// Resolver agreement: how often the syntactic resolver (tychora-bench analyze-tree) names the definition that a
// compiler-grade oracle names, on real packages nobody here wrote: jedi for Python, the TypeScript
// LanguageService for TS/JS. Writes bench/results/resolver-agreement.{json,md}.
//
//   node bench/code/resolver-agreement.mjs [--quick]
//
// --quick asks the oracles about an evenly spread sample of sites per corpus instead of all of them.
import { spawn } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { indexDefinitions, judgeSite, segmentByte, summarize } from './agreement.mjs'
import { CORPORA, ensureJedi, fetchCorpus } from './corpora.mjs'
import { createTsOracle, ts } from './ts-oracle.mjs'
import { analyzeTree, benchBinary } from './tychora-bench.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const repo = resolve(here, '../..')
const QUICK_SITES_PER_CORPUS = 600
const TARGETS = { precision: 0.95, recall: 0.8 }

const languageOf = (path) => (/\.py$/.test(path) ? 'python' : /\.(ts|tsx|mts|cts)$/.test(path) ? 'typescript' : 'javascript')

async function analyze(root) {
  benchBinary() // built before the clock starts
  const started = performance.now()
  const report = analyzeTree(root)
  return { report, seconds: (performance.now() - started) / 1000 }
}

/** Every site, or for --quick an evenly spaced sample (deterministic, so quick runs compare). */
function sample(refs, quick) {
  if (!quick || refs.length <= QUICK_SITES_PER_CORPUS) return refs
  const step = refs.length / QUICK_SITES_PER_CORPUS
  return Array.from({ length: QUICK_SITES_PER_CORPUS }, (_, i) => refs[Math.floor(i * step)])
}

/**
 * Asks jedi about all sites through one long-lived process, one JSON line per file, so each file
 * is parsed once and jedi's inference caches carry over between files.
 */
function askJedi(python, root, sites) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(python, [join(here, 'jedi_oracle.py'), root], { stdio: ['pipe', 'pipe', 'inherit'] })
    const answers = new Map()
    let buffered = ''
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (chunk) => {
      buffered += chunk
      let nl
      while ((nl = buffered.indexOf('\n')) >= 0) {
        for (const [id, defs] of JSON.parse(buffered.slice(0, nl)).results) answers.set(id, defs)
        buffered = buffered.slice(nl + 1)
      }
    })
    child.on('error', reject)
    child.on('close', (code) => (code === 0 ? resolvePromise(answers) : reject(new Error(`jedi oracle exited with ${code}`))))
    const byPath = new Map()
    for (const s of sites) byPath.set(s.ref.path, [...(byPath.get(s.ref.path) ?? []), s])
    for (const [path, group] of byPath) child.stdin.write(`${JSON.stringify({ path, sites: group.map((s) => [s.id, s.byte]) })}\n`)
    child.stdin.end()
  })
}

function askTs(root, tsconfig, sites) {
  const oracle = createTsOracle(root, tsconfig)
  const answers = new Map()
  for (const s of sites) {
    try {
      answers.set(s.id, oracle.definitions(s.ref.path, s.byte))
    } catch (e) {
      answers.set(s.id, { error: String(e?.message ?? e).split('\n')[0] })
    }
  }
  return answers
}

/** Analyses one corpus and judges each (sampled) site against its oracle. */
async function runCorpus(corpus, { quick, python }) {
  const root = fetchCorpus(corpus)
  const { report, seconds } = await analyze(root)
  const refs = sample(report.references, quick)
  const sites = refs.map((ref, id) => ({ id, ref, byte: segmentByte(ref), corpus: `${corpus.name}@${corpus.version}` }))
  const started = performance.now()
  // `corpus.tsconfig` is relative to the package directory, one level above the analysed subdir.
  const tsconfig = corpus.tsconfig && join(root, '..', corpus.tsconfig)
  const answers = corpus.language === 'python' ? await askJedi(python, root, sites) : askTs(root, tsconfig, sites)
  const oracleSeconds = (performance.now() - started) / 1000
  const index = indexDefinitions(report.definitions)
  for (const s of sites) {
    s.answer = answers.get(s.id) ?? { error: 'no answer' }
    s.verdict = judgeSite(s.ref, s.answer, index)
  }
  const info = {
    corpus: `${corpus.name}@${corpus.version}`,
    registry: corpus.registry,
    analysed_dir: root,
    files: report.files,
    bytes: report.bytes,
    definitions: report.definitions.length,
    references: report.references.length,
    sites_asked: sites.length,
    analyzer_diagnostics: report.diagnostics.length,
    analyze_seconds: Number(seconds.toFixed(2)),
    oracle_seconds: Number(oracleSeconds.toFixed(1)),
    oracle_errors: sites.filter((s) => s.verdict.oracle === 'error').length,
  }
  return { info, sites }
}

function toMarkdown(results) {
  const pct = (x) => (x == null ? '–' : `${(x * 100).toFixed(1)}%`)
  const num = (x) => (x == null ? '–' : x.toFixed(3))
  const lines = [
    '# Resolver agreement with compiler oracles',
    '',
    `${results.date} · ${results.quick ? 'quick (sampled sites)' : 'all sites'} · oracles: jedi ${results.oracles.jedi}, TypeScript ${results.oracles.typescript} LanguageService · targets: precision ≥ ${TARGETS.precision}, recall ≥ ${TARGETS.recall}`,
    '',
    '| language | corpora | sites | resolved | ambiguous | unresolved | precision (sites) | precision, exact anchor | oracle-unresolvable among resolved | recall (sites) |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ]
  for (const [lang, m] of Object.entries(results.languages)) {
    lines.push(
      `| ${lang} | ${m.corpora.join(', ')} | ${m.sites} | ${pct(m.resolved_share)} | ${pct(m.ambiguous_share)} | ${pct(m.unresolved_share)} | ${num(m.precision)} (${m.precision_sites}) | ${num(m.precision_strict)} | ${m.oracle_unresolvable_among_resolved} | ${num(m.recall)} (${m.recall_sites}) |`,
    )
  }
  for (const [lang, m] of Object.entries(results.languages)) {
    lines.push('', `## ${lang}: top reasons`, '')
    const list = (title, xs) =>
      `- ${title}: ${
        xs.length
          ? xs
              .slice(0, 5)
              .map((r) => `${r.reason} (${r.count})`)
              .join('; ')
          : 'none'
      }`
    lines.push(list('unresolved', m.top_unresolved_reasons))
    lines.push(list('unresolved, where the oracle names a definition we index', m.top_unresolved_reasons_among_recall_misses))
    lines.push(list('ambiguous', m.top_ambiguous_reasons))
    lines.push(list('precision disagreements', m.disagreements_by_cause))
  }
  lines.push(
    '',
    'Precision counts a site when the oracle’s definition lies inside our target’s span (a module target: anywhere in that file); the exact-anchor column also requires it to be that very definition. Recall’s sites are those where the oracle’s definition is one we index. Rules and examples: resolver-agreement.json.',
    '',
  )
  return lines.join('\n')
}

export async function runResolverAgreement({ quick = false } = {}) {
  const { python, jedi, pythonVersion } = ensureJedi()
  const corpora = []
  const sitesByLanguage = new Map()
  for (const corpus of CORPORA) {
    console.error(`# ${corpus.name}@${corpus.version} (${corpus.language})`)
    const { info, sites } = await runCorpus(corpus, { quick, python })
    console.error(`  ${info.files} files, ${info.references} references, ${info.sites_asked} asked; oracle ${info.oracle_seconds}s`)
    corpora.push(info)
    // A package's stray files in another language (rxjs ships one .js) count under their own language.
    for (const s of sites) {
      const lang = `${languageOf(s.ref.path)}${corpus.heldOut ? ' (held out)' : ''}`
      if (!sitesByLanguage.has(lang)) sitesByLanguage.set(lang, [])
      sitesByLanguage.get(lang).push(s)
    }
  }
  const languages = {}
  for (const [lang, sites] of sitesByLanguage) {
    languages[lang] = { corpora: [...new Set(sites.map((s) => s.corpus))], ...summarize(sites) }
  }
  const results = {
    date: new Date().toISOString(),
    quick,
    targets: TARGETS,
    oracles: { jedi, typescript: ts.version, python: pythonVersion, node: process.version },
    rules: {
      site: 'the last segment of the reference chain, at its first byte',
      precision:
        'among our resolved sites the oracle answers: some oracle definition is in our target’s file and inside its byte range; for a module target, anywhere in that module’s file (an oracle pointing at the import line does not count; both oracles follow imports)',
      precision_strict: 'as precision, but the oracle definition must map to exactly our target anchor',
      oracle_unresolvable: 'the oracle returns no definition (or fails); excluded from precision, counted separately',
      mapping: 'an oracle definition maps to ours when it is a module (→ that file’s module unit) or when the innermost of our definitions containing its position has the oracle’s name',
      recall: 'among sites where some oracle definition maps to one of our definitions: outcome resolved with exactly that anchor',
    },
    corpora,
    languages,
  }
  const out = join(repo, 'bench/results')
  mkdirSync(out, { recursive: true })
  writeFileSync(join(out, 'resolver-agreement.json'), `${JSON.stringify(results, null, 2)}\n`)
  writeFileSync(join(out, 'resolver-agreement.md'), toMarkdown(results))
  return results
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const results = await runResolverAgreement({ quick: process.argv.includes('--quick') })
  console.log(toMarkdown(results))
}
