#!/usr/bin/env node
// A DEV set of long issue texts over code for the SWE-bench harness (`npm run eval:swebench`): real
// GitHub issues (the `problem_statement` people wrote), with the files and functions their merged fix
// changed as gold, from repositories whose history fits a `fetch` — for choosing ranking settings on
// paragraphs, never on the 26 test instances in ../shared/data/swebench-lite.
//
//   node bench/code/swe-issue-set.mjs [--mirrors /work/.mirror] [--swebench DIR/repo] [--commit SHA]
//                                     [--parquet-dir DIR] [--test ../shared/data/swebench-lite]
//                                     [--out ~/.cache/tychora/swe-issues] [--seed 20240110]
//                                     [--per-repo 30] [--subset N]
//
// Provenance and licence
//   Instances come from the SWE-bench datasets (Jimenez et al., "SWE-bench: Can Language Models Resolve
//   Real-World GitHub Issues?", ICLR 2024; dataset and code MIT-licensed, (c) 2023 the SWE-bench authors),
//   read from the parquet files the official repository `SWE-bench/SWE-bench` kept under data/ until it
//   removed them (commit fbf17c1, 2026-08-10). Default: commit e05e7b3a28bffbf2d960c813078d403c3b5893ba
//   ("Regenerate SWE-bench parquets with the django-10097 label fix"), files
//     data/SWE-bench/dev.parquet           (the dev split, 225 instances, 6 repositories)
//     data/SWE-bench_Verified/test.parquet (500)
//     data/SWE-bench_Lite/test.parquet     (300)
//   taken from the `fetch` snapshot of github:SWE-bench/SWE-bench (git history, read with `git show`;
//   --parquet-dir DIR reads dev.parquet / verified-test.parquet / lite-test.parquet from a folder instead).
//   `problem_statement` is the GitHub issue title and body as SWE-bench collected it, under the issue
//   authors' GitHub terms; the code is each repository's own (licences listed in the README written next
//   to the set). Nothing of it is committed here: the set is written to ~/.cache/tychora/swe-issues.
//   Parquet is read by pyarrow (pinned below) in a venv of its own under ~/.cache/tychora, as
//   bench/code/corpora.mjs does for jedi.
//
// Repositories: the dev split's (sqlfluff, marshmallow, pvlib, pydicom, astroid — pyvista's snapshot is
// over the 500 MiB fetch limit) and the test instances (Verified ∪ Lite) of sympy, astropy, pytest,
// requests and flask (django, matplotlib and scikit-learn are over the fetch limit). Never
// sphinx-doc/sphinx, pylint-dev/pylint, pydata/xarray or mwaskom/seaborn (held out), never the 26
// instances of ../shared/data/swebench-lite (test set). Each needs its bare mirror:
// `fetch github:<owner>/<name>` → /work/.mirror/<owner>+<name>/repo, the layout the harness reads.
//
// Gold (same notions as bench/code/swe-dev-set.mjs): gold_files = the .py files the gold `patch` modifies
// (files it adds, deletes or renames are listed apart: they cannot be found at base_commit);
// gold_functions = functions/methods (CPython ast of base_commit's file, decorators included, nested
// functions folded into their outer one, indentation fallback for files ast cannot parse — as
// bench/eval/python-defs.ts names them: `path:Class.method`) whose span holds a line the patch removes or
// changes, or an insertion point between two of their lines (the patch's context lines do not count).
// Selection is deterministic: eligible instances of each repository sorted by instance_id, shuffled
// with a seeded PRNG (mulberry32), the first --per-repo kept. --subset N also writes a seeded,
// per-repository proportional subset of N instances (at least one per repository) to <out>/subset-N.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { prng } from './prng.mjs'

// The function-naming script is the SWE harness's own (bench/eval/python-defs.ts), so the gold is
// named exactly as the harness names what it ranks; build the harness first.
execFileSync('npx', ['tsc', '-p', fileURLToPath(new URL('../tsconfig.json', import.meta.url))], { stdio: 'inherit' })
const { DEFINITIONS_PY } = await import('../dist/eval/python-defs.js')

const args = process.argv.slice(2)
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : fallback
}
const CACHE = join(homedir(), '.cache', 'tychora')
const MIRRORS = resolve(opt('mirrors', '/work/.mirror'))
const SWEBENCH = resolve(opt('swebench', join(MIRRORS, 'SWE-bench+SWE-bench', 'repo')))
const COMMIT = opt('commit', 'e05e7b3a28bffbf2d960c813078d403c3b5893ba')
const PARQUET_DIR = opt('parquet-dir', null)
const TEST = resolve(opt('test', new URL('../../../shared/data/swebench-lite', import.meta.url).pathname))
const OUT = resolve(opt('out', join(CACHE, 'swe-issues')))
const SEED = Number(opt('seed', '20240110'))
const PER_REPO = Number(opt('per-repo', '30'))
const SUBSET = opt('subset', null) === null ? null : Number(opt('subset', '0'))
const VENV = join(CACHE, 'swe-issues-venv')
const PYARROW_VERSION = '18.1.0'

const SOURCES = [
  { dataset: 'SWE-bench', split: 'dev', path: 'data/SWE-bench/dev.parquet', file: 'dev.parquet' },
  { dataset: 'SWE-bench_Verified', split: 'test', path: 'data/SWE-bench_Verified/test.parquet', file: 'verified-test.parquet' },
  { dataset: 'SWE-bench_Lite', split: 'test', path: 'data/SWE-bench_Lite/test.parquet', file: 'lite-test.parquet' },
]

// Repositories taken, with their licence (for the README) and where their instances come from.
const REPOS = [
  { repo: 'sqlfluff/sqlfluff', licence: 'MIT', from: 'SWE-bench dev' },
  { repo: 'marshmallow-code/marshmallow', licence: 'MIT', from: 'SWE-bench dev' },
  { repo: 'pvlib/pvlib-python', licence: 'BSD-3-Clause', from: 'SWE-bench dev' },
  { repo: 'pydicom/pydicom', licence: 'MIT (parts BSD-style, see its LICENSE)', from: 'SWE-bench dev' },
  { repo: 'pylint-dev/astroid', licence: 'LGPL-2.1', from: 'SWE-bench dev' },
  { repo: 'sympy/sympy', licence: 'BSD-3-Clause', from: 'SWE-bench Verified ∪ Lite test' },
  { repo: 'astropy/astropy', licence: 'BSD-3-Clause', from: 'SWE-bench Verified ∪ Lite test' },
  { repo: 'pytest-dev/pytest', licence: 'MIT', from: 'SWE-bench Verified ∪ Lite test' },
  { repo: 'psf/requests', licence: 'Apache-2.0', from: 'SWE-bench Verified ∪ Lite test' },
  { repo: 'pallets/flask', licence: 'BSD-3-Clause', from: 'SWE-bench Verified ∪ Lite test' },
]
const HELD_OUT = new Set(['sphinx-doc/sphinx', 'pylint-dev/pylint', 'pydata/xarray', 'mwaskom/seaborn'])
const LEFT_OUT = {
  'pyvista/pyvista': 'snapshot 535 MB, over the 500 MiB fetch limit',
  'django/django': 'snapshot 637 MB, over the 500 MiB fetch limit',
  'matplotlib/matplotlib': 'snapshot 873 MB, over the 500 MiB fetch limit',
  'scikit-learn/scikit-learn': 'snapshot 788 MB, over the 500 MiB fetch limit',
}

const run = (cmd, a, o = {}) => execFileSync(cmd, a, { encoding: 'utf8', maxBuffer: 1024 * 1024 * 1024, ...o })
const git = (gitDir, ...a) => run('git', ['--git-dir', gitDir, ...a])

const shuffled = (list, seed) => {
  const rand = prng(seed)
  return list
    .map((x) => ({ x, k: rand() }))
    .sort((p, q) => p.k - q.k)
    .map((p) => p.x)
}
// A stable per-repository seed, so adding a repository does not reshuffle the others.
const repoSeed = (repo) => [...repo].reduce((h, c) => (Math.imul(h, 31) + c.charCodeAt(0)) >>> 0, SEED)

/** A venv with pyarrow pinned (reads the parquet files); returns its python. */
function ensurePyarrow() {
  const python = join(VENV, 'bin/python')
  if (!existsSync(python)) run('python3', ['-m', 'venv', VENV])
  const have = () => {
    try {
      return run(python, ['-c', 'import pyarrow; print(pyarrow.__version__)'], { stdio: ['ignore', 'pipe', 'ignore'] }).trim()
    } catch {
      return null
    }
  }
  if (have() !== PYARROW_VERSION) run(python, ['-m', 'pip', 'install', '--quiet', `pyarrow==${PYARROW_VERSION}`], { stdio: 'inherit' })
  return python
}

const READ_PARQUET = `
import io, json, sys
import pyarrow.parquet as pq
cols = ['repo', 'instance_id', 'base_commit', 'patch', 'problem_statement', 'created_at', 'version']
for row in pq.read_table(io.BytesIO(sys.stdin.buffer.read()), columns=cols).to_pylist():
    print(json.dumps(row))
`

function readSource(python, source) {
  const bytes = PARQUET_DIR ? readFileSync(join(resolve(PARQUET_DIR), source.file)) : execFileSync('git', ['--git-dir', SWEBENCH, 'show', `${COMMIT}:${source.path}`], { maxBuffer: 256 * 1024 * 1024 })
  return run(python, ['-c', READ_PARQUET], { input: bytes })
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
}

/**
 * Per file of a unified diff: its status and the old-side lines the patch changes — removed lines as
 * [n, n], insertions after old line n as [n + 0.5, n + 0.5] (context lines are not changes).
 */
function parsePatch(patch) {
  const files = []
  let f = null
  let oldLine = 0
  let inHunk = false
  for (const line of patch.replace(/\r/g, '').split('\n')) {
    const head = line.match(/^diff --git a\/(.+) b\/(.+)$/)
    if (head) {
      f = { oldPath: head[1], path: head[2], status: 'M', changes: [] }
      files.push(f)
      inHunk = false
      continue
    }
    if (!f) continue
    if (!inHunk) {
      if (line.startsWith('new file mode')) f.status = 'A'
      else if (line.startsWith('deleted file mode')) f.status = 'D'
      else if (line.startsWith('rename from') || line.startsWith('copy from')) f.status = 'R'
    }
    const hunk = line.match(/^@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@/)
    if (hunk) {
      oldLine = Number(hunk[1])
      // `@@ -n,0` (pure insertion) counts from the line after which text is inserted.
      if (/^@@ -\d+,0 /.test(line)) oldLine += 1
      inHunk = true
      continue
    }
    if (!inHunk) continue
    if (line.startsWith('-')) {
      f.changes.push([oldLine, oldLine])
      oldLine++
    } else if (line.startsWith('+')) {
      f.changes.push([oldLine - 0.5, oldLine - 0.5])
    } else if (line.startsWith(' ') || line === '') {
      oldLine++
    }
    // '\ No newline at end of file' moves nothing.
  }
  return files
}

/** Sorted, merged ranges: removed lines that touch are joined; an insertion point inside a range is absorbed. */
function mergeRanges(ranges) {
  const out = []
  for (const [s, e] of [...ranges].sort((a, b) => a[0] - b[0] || a[1] - b[1])) {
    const last = out.at(-1)
    const touches = last && (s <= last[1] || (Number.isInteger(s) && Number.isInteger(last[1]) && s === last[1] + 1))
    if (touches) last[1] = Math.max(last[1], e)
    else out.push([s, e])
  }
  return out
}

// The definitions script of bench/eval/python-defs.ts (ast; indentation fallback), driven over
// one JSON object of path → source text.
const DEFS_PY = `${DEFINITIONS_PY}
result = {}
for path, src in json.loads(sys.stdin.read()).items():
    try:
        result[path] = {'parser': 'ast', 'defs': by_ast(src)}
    except (SyntaxError, ValueError):
        result[path] = {'parser': 'indent', 'defs': by_indent(src)}
print(json.dumps(result))
`

function hasCommit(gitDir, sha) {
  try {
    git(gitDir, 'cat-file', '-e', `${sha}^{commit}`)
    return true
  } catch {
    return false
  }
}

/** Gold of one instance, or a reason it is not eligible. */
function goldOf(gitDir, inst) {
  if (!inst.problem_statement || inst.problem_statement.trim().length < 20) return { skip: 'empty problem statement' }
  if (!hasCommit(gitDir, inst.base_commit)) return { skip: 'base_commit not in mirror' }
  const files = parsePatch(inst.patch)
  const py = files.filter((f) => f.path.endsWith('.py') || f.oldPath.endsWith('.py'))
  const modified = py.filter((f) => f.status === 'M')
  if (modified.length === 0) return { skip: 'no modified .py file' }
  const sources = {}
  for (const f of modified) {
    try {
      sources[f.path] = git(gitDir, 'show', `${inst.base_commit}:${f.path}`)
    } catch {
      return { skip: 'modified file absent at base_commit' }
    }
  }
  const defs = JSON.parse(run('python3', ['-c', DEFS_PY], { input: JSON.stringify(sources) }))
  const functions = []
  const oldLines = {}
  for (const f of modified) {
    const ranges = mergeRanges(f.changes)
    oldLines[f.path] = ranges
    for (const d of defs[f.path].defs) if (ranges.some(([s, e]) => d.start <= e && d.end >= s)) functions.push(`${f.path}:${d.name}`)
  }
  return {
    gold_files: modified.map((f) => f.path),
    gold_other_py_files: py.filter((f) => f.status !== 'M').map((f) => ({ status: f.status, path: f.status === 'D' ? f.oldPath : f.path })),
    gold_old_lines: oldLines,
    gold_functions: [...new Set(functions)],
    parsers: [...new Set(modified.map((f) => defs[f.path].parser))],
  }
}

// ---------------------------------------------------------------------------------------------------

const missing = REPOS.map((r) => join(MIRRORS, r.repo.replace('/', '+'), 'repo')).filter((d) => !existsSync(d))
if (!PARQUET_DIR && !existsSync(SWEBENCH)) missing.unshift(SWEBENCH)
if (missing.length) {
  process.stderr.write(`missing (fetch github:<owner>/<name> for each):\n${missing.map((m) => `  ${m}`).join('\n')}\n`)
  process.exit(2)
}

const testIds = new Set(
  readFileSync(join(TEST, 'instances.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l).instance_id),
)

const python = ensurePyarrow()
const pool = new Map()
const sourceCounts = []
for (const source of SOURCES) {
  const rows = readSource(python, source)
  sourceCounts.push({ ...source, rows: rows.length })
  for (const r of rows) {
    const seen = pool.get(r.instance_id)
    if (seen) {
      if (seen.problem_statement !== r.problem_statement || seen.patch !== r.patch || seen.base_commit !== r.base_commit)
        throw new Error(`${r.instance_id}: differs between ${seen.source} and ${source.dataset} ${source.split}`)
      seen.also.push(`${source.dataset} ${source.split}`)
      continue
    }
    pool.set(r.instance_id, { ...r, source: `${source.dataset} ${source.split}`, also: [] })
  }
}

const instances = []
const golds = []
const summary = []
const byRepo = new Map()
for (const spec of REPOS) {
  const gitDir = join(MIRRORS, spec.repo.replace('/', '+'), 'repo')
  const all = [...pool.values()].filter((r) => r.repo === spec.repo).sort((a, b) => a.instance_id.localeCompare(b.instance_id))
  const skipped = {}
  const inTest = all.filter((r) => testIds.has(r.instance_id)).length
  const order = shuffled(
    all.filter((r) => !testIds.has(r.instance_id)),
    repoSeed(spec.repo),
  )
  const picked = []
  let eligible = 0
  // Eligibility is checked for every candidate (so the README's counts are the pool's), picks in seeded order.
  for (const inst of order) {
    const g = goldOf(gitDir, inst)
    if (g.skip) {
      skipped[g.skip] = (skipped[g.skip] ?? 0) + 1
      continue
    }
    eligible++
    if (picked.length < PER_REPO) picked.push({ inst, g })
  }
  byRepo.set(spec.repo, picked)
  for (const { inst, g } of picked) {
    instances.push({
      repo: inst.repo,
      instance_id: inst.instance_id,
      base_commit: inst.base_commit,
      problem_statement: inst.problem_statement,
      created_at: inst.created_at,
      version: inst.version,
      source: [inst.source, ...inst.also].join(', '),
    })
    golds.push({
      instance_id: inst.instance_id,
      repo: inst.repo,
      base_commit: inst.base_commit,
      gold_files: g.gold_files,
      ...(g.gold_other_py_files.length ? { gold_other_py_files: g.gold_other_py_files } : {}),
      gold_old_lines: g.gold_old_lines,
      gold_functions: g.gold_functions,
      gold_functions_source: `base_commit's functions (${g.parsers.join('+')}) holding a line the SWE-bench gold patch changes or an insertion between two of their lines`,
    })
  }
  const words = picked.map(({ inst }) => inst.problem_statement.split(/\s+/).filter(Boolean).length).sort((a, b) => a - b)
  summary.push({
    ...spec,
    pool: all.length,
    inTest,
    eligible,
    skipped,
    picked: picked.length,
    withFunctions: picked.filter(({ g }) => g.gold_functions.length > 0).length,
    medianWords: words.length ? words[Math.floor(words.length / 2)] : 0,
  })
  process.stderr.write(`${spec.repo}: ${all.length} in pool, ${inTest} test, ${eligible} eligible ${JSON.stringify(skipped)}, picked ${picked.length}\n`)
}

const writeSet = (dir, insts, gs) => {
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'instances.jsonl'), `${insts.map((i) => JSON.stringify(i)).join('\n')}\n`)
  writeFileSync(join(dir, 'gold.jsonl'), `${gs.map((g) => JSON.stringify(g)).join('\n')}\n`)
}
rmSync(join(OUT, 'instances.jsonl'), { force: true })
writeSet(OUT, instances, golds)

const allWords = instances.map((i) => i.problem_statement.split(/\s+/).filter(Boolean).length).sort((a, b) => a - b)
const pctl = (p) => allWords[Math.min(allWords.length - 1, Math.floor((p / 100) * allWords.length))] ?? 0
const source = PARQUET_DIR ? `the parquet files in \`${resolve(PARQUET_DIR)}\`` : `\`SWE-bench/SWE-bench\` @ \`${COMMIT}\` (mirror \`${SWEBENCH}\`)`
const table = (rows) =>
  [
    '| repo | licence | from | pool | of them test set | eligible | picked | with gold functions | median words |',
    '|---|---|---|---:|---:|---:|---:|---:|---:|',
    ...rows.map((s) => `| ${s.repo} | ${s.licence} | ${s.from} | ${s.pool} | ${s.inTest} | ${s.eligible} | ${s.picked} | ${s.withFunctions} | ${s.medianWords} |`),
    `| **total** | | | ${rows.reduce((a, s) => a + s.pool, 0)} | ${rows.reduce((a, s) => a + s.inTest, 0)} | ${rows.reduce((a, s) => a + s.eligible, 0)} | **${rows.reduce((a, s) => a + s.picked, 0)}** | ${rows.reduce((a, s) => a + s.withFunctions, 0)} | |`,
  ].join('\n')

let subsetNote = ''
if (SUBSET) {
  // Largest-remainder shares of N, at least one per repository, each the first k of its seeded order.
  const total = instances.length
  const shares = REPOS.map((r) => {
    const n = byRepo.get(r.repo).length
    const exact = (SUBSET * n) / total
    return { repo: r.repo, n, k: Math.min(n, Math.max(1, Math.floor(exact))), rem: exact - Math.floor(exact) }
  })
  let left = SUBSET - shares.reduce((a, s) => a + s.k, 0)
  for (const s of [...shares].sort((a, b) => b.rem - a.rem || a.repo.localeCompare(b.repo))) {
    if (left <= 0) break
    if (s.k < s.n) {
      s.k++
      left--
    }
  }
  const keep = new Set(
    shares.flatMap((s) =>
      byRepo
        .get(s.repo)
        .slice(0, s.k)
        .map(({ inst }) => inst.instance_id),
    ),
  )
  const dir = join(OUT, `subset-${SUBSET}`)
  writeSet(
    dir,
    instances.filter((i) => keep.has(i.instance_id)),
    golds.filter((g) => keep.has(g.instance_id)),
  )
  const lines = shares.map((s) => `| ${s.repo} | ${s.k} |`).join('\n')
  writeFileSync(
    join(dir, 'README.md'),
    `# SWE issue dev set — seeded subset of ${keep.size}\n\nThe first k instances of each repository's seeded order in ../ (largest-remainder shares of ${SUBSET}, at least one per repository), for runs too slow on the whole set. Same format and gold as ../README.md.\n\n| repo | instances |\n|---|---:|\n${lines}\n`,
  )
  subsetNote = `\n## Subset\n\`subset-${SUBSET}/\`: ${keep.size} instances, the first k of each repository's seeded order (largest-remainder shares, at least one per repository); see its README.\n`
}

const readme = `# SWE issue dev set (real GitHub issue texts) — for choosing settings, not for reporting

Built by \`bench/code/swe-issue-set.mjs\` (seed ${SEED}, at most ${PER_REPO} per repository) from ${source}.
Same format as the SWE-bench Lite subset in shared/data (\`instances.jsonl\`: repo, instance_id, base_commit,
problem_statement, plus created_at, version, source; \`gold.jsonl\`: instance_id, gold_files, gold_functions as
\`path:Class.method\`, gold_old_lines), so \`npm run eval:swebench -- --repos ${MIRRORS} --data ${OUT} --cache <dir>\`
runs it unchanged. The queries are the issue texts people wrote (title + body, as SWE-bench collected them):
${instances.length} issues, ${summary.filter((s) => s.picked > 0).length} repositories; words per issue: median ${pctl(50)}, p90 ${pctl(90)}, max ${allWords.at(-1) ?? 0}.

## Sources
${sourceCounts.map((s) => `- \`${s.path}\` (${s.dataset}, ${s.split} split): ${s.rows} instances`).join('\n')}
- An instance in both Verified and Lite is taken once (their problem statements, patches and base commits are identical).
- SWE-bench: Jimenez et al., ICLR 2024; dataset and harness MIT-licensed. Issue texts are the GitHub issue
  authors'; code is each repository's under the licence in the table. Nothing here is committed to the project.

## Selection
- Repositories whose bare mirror fits a \`fetch\` (< 500 MiB), each mirror at \`<mirrors>/<owner>+<name>/repo\`.
- Never: ${[...HELD_OUT].join(', ')} (held out); never the ${testIds.size} instances of \`${TEST}\` (test set).
- Left out for size: ${Object.entries(LEFT_OUT)
  .map(([r, why]) => `${r} (${why})`)
  .join('; ')}.
- Eligible: a problem statement, base_commit present in the mirror, and at least one .py file the gold patch
  modifies (every patch here touches .py files only; files it adds, deletes or renames are kept apart in
  \`gold_other_py_files\`, as they cannot be found at base_commit).
- Pick: each repository's eligible instances sorted by instance_id, shuffled by mulberry32 seeded from
  (seed, repository name), the first ${PER_REPO} kept.

## Gold
- gold_files = the .py files the SWE-bench gold \`patch\` modifies (test files are in \`test_patch\`, never here).
- gold_functions = functions/methods of base_commit's file (CPython ast; decorators included; nested functions
  folded into their outer one; indentation fallback where ast fails — as bench/eval/python-defs.ts names them)
  holding a line the patch removes or changes, or an insertion point between two of their lines. Context lines
  of the patch do not count, so this is the \`git diff -U0\` notion of bench/code/swe-dev-set.mjs, not LocAgent's
  edit_functions used for the 26 test instances (which can differ by a neighbouring function). Instances whose
  fix touches no function (module-level code only) have none and drop out of function Acc.

## Caveats
- Issue texts, unlike commit messages, are written by the reporter: they name symptoms, tracebacks and API
  calls, rarely the file to change. Instances of pytest, requests and flask are other issues of the same
  repositories as the 26 test instances; report tuning on the other repositories separately if that matters.
- ${instances.length} queries: one instance is ${(100 / Math.max(1, instances.length)).toFixed(2)} points.

## Counts
${table(summary)}
${subsetNote}`
writeFileSync(join(OUT, 'README.md'), readme)
process.stderr.write(`wrote ${instances.length} instances from ${summary.filter((s) => s.picked > 0).length} repositories to ${OUT}\n`)
