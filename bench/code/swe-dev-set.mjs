#!/usr/bin/env node
// A DEV set for the SWE-bench harness (`npm run eval:swebench`), in the SWE-bench Lite subset's
// format, built from the git history of the same three repositories, so graph-channel (and other)
// settings can be chosen without tuning on the 26 test instances in ../shared/data/swebench-lite.
//
//   node bench/code/swe-dev-set.mjs [--mirrors /work/.mirror] [--test ../shared/data/swebench-lite]
//                                   [--out ~/.cache/tychora/swe-dev] [--seed 20170101]
//
// Each instance is one non-merge commit since 2017-01-01 of the mirror's default branch:
//   problem_statement = the commit message (subject + body, trailers such as Co-authored-by dropped),
//   base_commit       = its first parent,
//   gold_files        = the non-test .py files it changes (1–3, at least one modified, all in the package),
//   gold_functions    = functions/methods (CPython ast, as bench/eval/python-defs.ts names them: `path:Class.method`)
//                       of the parent's version whose line span overlaps an old-side hunk of the diff.
// Selection is deterministic: candidates per repository are cut into equal-count bins in date order and a
// seeded PRNG picks one per bin. See the README.md written next to the set.
import { execFileSync } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import { prng } from './prng.mjs'

const args = process.argv.slice(2)
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : fallback
}
const MIRRORS = resolve(opt('mirrors', '/work/.mirror'))
const TEST = resolve(opt('test', new URL('../../../shared/data/swebench-lite', import.meta.url).pathname))
const OUT = resolve(opt('out', join(homedir(), '.cache', 'tychora', 'swe-dev')))
const SEED = Number(opt('seed', '20170101'))
const SINCE = '2017-01-01'
const WINDOW_DAYS = 30

const REPOS = [
  { repo: 'pytest-dev/pytest', picks: 14, pkg: /^(src\/_pytest\/|src\/pytest\/|_pytest\/|pytest\.py$|src\/pytest\.py$)/ },
  { repo: 'psf/requests', picks: 12, pkg: /^(requests\/|src\/requests\/)/ },
  { repo: 'pallets/flask', picks: 10, pkg: /^(flask\/|src\/flask\/)/ },
]

// Vendored third-party code in requests' tree is not requests' own code.
const VENDORED = /(^|\/)packages\//
const TESTISH = /(^|\/)(testing|tests?|docs?|doc|examples?|scripts|bench|extra|changelog)\//
const isTestFile = (p) => TESTISH.test(p) || /(^|\/)(test_[^/]*|[^/]*_test|conftest)\.py$/.test(p)

// Message filters: must read like a fix or behaviour change; never a release, bump, typo, docs or tooling commit.
const FIXLIKE = /\b(fix(e[sd])?|bug|issue|regression|crash|error|incorrect(ly)?|wrong|broken|fail(s|ed|ure)?|raise[sd]?|exception|should|instead|no longer|now|handle[sd]?|support)\b|#\d+/i
const EXCLUDE =
  /\b(release|releasing|version bump|bump(ed)? (the )?version|bump|prepare|preparing|typo|typos|spelling|changelog|news fragment|revert|merge|lint|ruff|pylint|flake8|black|isort|pre-commit|pyupgrade|mypy|type annotations?|type hints?|typing|docstrings?|reformat|formatting|refactor(ing|ed)?|cleanup|clean up|rename|deprecat\w*|remove unused|py2|python 2|python2|drop support|copyright|license|docs?|documentation|document(s|ed)?|comments?|coverage|review|tests?|example)\b/i
const TRAILER = /^(co-authored-by|signed-off-by|reviewed-by|acked-by|cc):/i

function git(gitDir, ...a) {
  return execFileSync('git', ['--git-dir', gitDir, ...a], { encoding: 'utf8', maxBuffer: 512 * 1024 * 1024 })
}

function cleanMessage(raw) {
  const lines = raw.replace(/\r/g, '').split('\n')
  while (lines.length && (TRAILER.test(lines.at(-1).trim()) || !lines.at(-1).trim())) lines.pop()
  return lines
    .filter((l) => !TRAILER.test(l.trim()))
    .join('\n')
    .trim()
}

// Test instances' base commits and their dates, per repository.
const testBases = new Map()
for (const line of readFileSync(join(TEST, 'instances.jsonl'), 'utf8').split('\n')) {
  if (!line.trim()) continue
  const t = JSON.parse(line)
  const gitDir = join(MIRRORS, t.repo.replace('/', '+'), 'repo')
  const date = Number(git(gitDir, 'show', '-s', '--format=%ct', t.base_commit).trim())
  if (!testBases.has(t.repo)) testBases.set(t.repo, [])
  testBases.get(t.repo).push({ sha: t.base_commit, date })
}

const DEFS_PY = `
import ast, json, sys
def defs(src):
    out = []
    def walk(body, prefix):
        for node in body:
            if isinstance(node, ast.ClassDef):
                walk(node.body, prefix + [node.name])
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = min([node.lineno] + [d.lineno for d in node.decorator_list])
                out.append({'name': '.'.join(prefix + [node.name]), 'start': start, 'end': node.end_lineno})
    walk(ast.parse(src).body, [])
    return out
try:
    print(json.dumps(defs(sys.stdin.read())))
except (SyntaxError, ValueError):
    print('null')
`
// Same notion of "function" as bench/eval/python-defs.ts (ast; decorators included; nested functions
// belong to their outer function). Old files CPython cannot parse make the candidate ineligible.
function pythonDefs(source) {
  return JSON.parse(execFileSync('python3', ['-c', DEFS_PY], { input: source, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }))
}

// Old-side line ranges of a file's hunks ([start, end]; a pure insertion after line n is [n+0.5, n+0.5]).
function oldHunks(gitDir, parent, commit, path) {
  const diff = git(gitDir, 'diff', '-U0', '--no-color', '--no-ext-diff', parent, commit, '--', path)
  const out = []
  for (const m of diff.matchAll(/^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@/gm)) {
    const start = Number(m[1])
    const len = m[2] === undefined ? 1 : Number(m[2])
    out.push(len === 0 ? [start + 0.5, start + 0.5] : [start, start + len - 1])
  }
  return out
}

function candidates({ repo, pkg }) {
  const gitDir = join(MIRRORS, repo.replace('/', '+'), 'repo')
  const bases = testBases.get(repo) ?? []
  const log = git(gitDir, 'log', '--no-merges', `--since=${SINCE}`, '--format=%x00%H %P%x01%ct%x01%B%x02', '--name-status', '--no-renames', 'HEAD')
  const out = []
  const stats = { commits: 0, files: 0, message: 0, leak: 0 }
  for (const rec of log.split('\x00').slice(1)) {
    stats.commits++
    const [head, rest] = rec.split('\x02')
    const [shas, ct, body] = head.split('\x01')
    const [sha, parent, ...otherParents] = shas.split(' ')
    if (!parent || otherParents.length) continue
    const changes = rest
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean)
      .map((l) => {
        const [status, path] = l.split('\t')
        return { status, path }
      })
    const py = changes.filter((c) => c.path.endsWith('.py') && !isTestFile(c.path) && !VENDORED.test(c.path))
    if (py.length < 1 || py.length > 3 || !py.every((c) => pkg.test(c.path)) || !py.some((c) => c.status === 'M') || py.some((c) => c.status === 'D')) {
      stats.files++
      continue
    }
    const message = cleanMessage(body)
    const subject = message.split('\n')[0]
    if (message.length < 60 || EXCLUDE.test(subject) || !(FIXLIKE.test(message) || message.length >= 200)) {
      stats.message++
      continue
    }
    const date = Number(ct)
    const parentDate = Number(git(gitDir, 'show', '-s', '--format=%ct', parent).trim())
    const near = (t) => bases.some((b) => Math.abs(b.date - t) < WINDOW_DAYS * 86400)
    if (bases.some((b) => b.sha === sha || b.sha === parent) || near(date) || near(parentDate)) {
      stats.leak++
      continue
    }
    out.push({ sha, parent, date, message, py })
  }
  return { gitDir, list: out.sort((a, b) => a.date - b.date || a.sha.localeCompare(b.sha)), stats }
}

// Gold of one candidate; null when the parent's code cannot be parsed or no function is touched.
function goldOf(gitDir, c) {
  const functions = []
  let hunkLines = 0
  for (const { status, path } of c.py) {
    if (status !== 'M') continue
    const defs = pythonDefs(git(gitDir, 'show', `${c.parent}:${path}`))
    if (defs === null) return null
    for (const [s, e] of oldHunks(gitDir, c.parent, c.sha, path)) {
      hunkLines += Math.max(1, Math.floor(e) - Math.ceil(s) + 1)
      for (const d of defs) if (d.start <= e && d.end >= s) functions.push(`${path}:${d.name}`)
    }
  }
  // Very large rewrites read like refactors rather than issue fixes.
  if (hunkLines > 150) return null
  return [...new Set(functions)]
}

const instances = []
const golds = []
const summary = []
let seedOffset = 0
for (const spec of REPOS) {
  const { gitDir, list, stats } = candidates(spec)
  const rand = prng(SEED + seedOffset++)
  const picked = []
  // Equal-count bins in date order; within a bin, try candidates in seeded order until one has gold functions.
  for (let b = 0; b < spec.picks; b++) {
    const bin = list.slice(Math.floor((b * list.length) / spec.picks), Math.floor(((b + 1) * list.length) / spec.picks))
    const order = bin.map((c) => ({ c, k: rand() })).sort((x, y) => x.k - y.k)
    for (const { c } of order) {
      const fns = goldOf(gitDir, c)
      if (!fns || fns.length === 0) continue
      picked.push({ c, fns })
      break
    }
  }
  const [owner, name] = spec.repo.split('/')
  for (const { c, fns } of picked) {
    const instance_id = `${owner}__${name}-dev-${c.sha.slice(0, 10)}`
    instances.push({
      repo: spec.repo,
      instance_id,
      base_commit: c.parent,
      fix_commit: c.sha,
      created_at: new Date(c.date * 1000).toISOString(),
      problem_statement: c.message,
    })
    golds.push({
      instance_id,
      repo: spec.repo,
      base_commit: c.parent,
      gold_files: c.py.map((p) => p.path),
      gold_functions: fns,
      gold_functions_source: 'ast functions of the parent overlapping the old-side hunks of git diff -U0 parent commit',
    })
  }
  summary.push({ repo: spec.repo, candidates: list.length, picked: picked.length, stats, first: picked[0]?.c.date, last: picked.at(-1)?.c.date })
  process.stderr.write(`${spec.repo}: ${list.length} candidates (${JSON.stringify(stats)}), picked ${picked.length}\n`)
}

mkdirSync(OUT, { recursive: true })
writeFileSync(join(OUT, 'instances.jsonl'), `${instances.map((i) => JSON.stringify(i)).join('\n')}\n`)
writeFileSync(join(OUT, 'gold.jsonl'), `${golds.map((g) => JSON.stringify(g)).join('\n')}\n`)
const day = (t) => (t ? new Date(t * 1000).toISOString().slice(0, 10) : '-')
const readme = `# SWE dev set (from git history) — for choosing settings, not for reporting

Built by \`bench/code/swe-dev-set.mjs\` (seed ${SEED}) from the full-history mirrors in \`${MIRRORS}\`.
Same format as the SWE-bench Lite subset (\`instances.jsonl\`: repo, instance_id, base_commit, problem_statement,
plus fix_commit/created_at; \`gold.jsonl\`: instance_id, gold_files, gold_functions as \`path:Class.method\`), so
\`npm run eval:swebench -- --data ${OUT}\` runs it unchanged.

## Selection
- Non-merge commits reachable from the default branch since ${SINCE}.
- 1–3 changed non-test \`.py\` files (test = under testing/, test/, tests/, doc(s)/, examples/, scripts/, bench/,
  extra/, changelog/, or named test_*.py, *_test.py, conftest.py; requests' vendored packages/ ignored), all
  inside the package (pytest: src/_pytest, src/pytest, _pytest; requests: requests/; flask: flask/, src/flask/),
  at least one modified, none deleted. Test, docs and changelog files in the same commit are allowed (ignored).
- Message (subject + body, trailer lines such as Co-authored-by dropped) ≥ 60 characters and fix-like
  (fix/bug/issue/error/regression/raise/should/#N … or ≥ 200 characters); subject not a release, version bump,
  typo, changelog, revert, lint/format/typing, docs/docstring/comment, test/coverage, review-fixup,
  refactor/cleanup/rename, deprecation or licence commit.
- Leakage guard: neither the commit nor its parent within ${WINDOW_DAYS} days of any of the 26 test instances'
  base_commit dates for the same repository (and never one of those commits).
- At most 150 old-side hunk lines; the parent's files must parse with CPython's ast and at least one
  function/method must overlap a hunk (so function Acc is defined for every instance).
- Pick: candidates per repository sorted by date, cut into N equal-count bins (N = 14 pytest, 12 requests,
  10 flask), one per bin, taken in a seeded (mulberry32) order as the first candidate that passes the gold checks.

## Gold
- base_commit = first parent; gold_files = the changed non-test .py files (an added file is gold but has no
  old-side functions); gold_functions = functions of the parent's file (ast; decorators included; nested
  functions folded into their outer function, as bench/eval/python-defs.ts does) whose span overlaps an old-side
  hunk of \`git diff -U0\` (a pure insertion after line n counts for a function spanning n and n+1).

## Caveats
- Commit messages are not issues: they are written by the fixer and often name the changed function or
  module, so absolute numbers are higher than on issue text; use the set to compare settings, not to report.
- ${instances.length} queries: a difference of one instance is ${(100 / Math.max(1, instances.length)).toFixed(1)} points.

## Counts
| repo | candidates | picked | first | last |
|---|---|---|---|---|
${summary.map((s) => `| ${s.repo} | ${s.candidates} | ${s.picked} | ${day(s.first)} | ${day(s.last)} |`).join('\n')}
`
writeFileSync(join(OUT, 'README.md'), readme)
process.stderr.write(`wrote ${instances.length} instances to ${OUT}\n`)
