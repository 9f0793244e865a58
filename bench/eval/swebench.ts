import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { appendFile, mkdir, mkdtemp, readFile, rename, rm } from 'node:fs/promises'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { type QueryRequest, QueryRequestSchema, type Segment, TychoraError, initWorkspace, openWorkspace } from 'tychora'
import { allInTop, firstAppearance, mean, percentile, reciprocalRank, recallInTop } from './localization.js'
import { type PythonDef, asFunction, functionsCovering, pythonDefinitions } from './python-defs.js'

type Channel = NonNullable<QueryRequest['channels']>[number]

export type SwebenchProfile = 'baseline' | 'code'

export interface SwebenchOptions {
  /** Directory with instances.jsonl and gold.jsonl. */
  data: string
  /** Directory holding full-history git dirs as `<owner>+<name>/repo`. */
  repos: string
  profiles?: SwebenchProfile[]
  /** Where checkouts at base_commit are kept between runs (default ~/.cache/tychora/swebench). */
  cache?: string
  /** Segments per query; files and functions are ranked from them. */
  limit?: number
  /**
   * Body of a `[graph]` table (TOML lines: depth, fanout, seeds, max_nodes, relations, callers, weight)
   * appended to each code-profile workspace's workspace.toml between init and open.
   */
  graphToml?: string
  /** Body of a [lexical] table for both profiles' workspaces (lines `key = value`), for dev-set comparisons. */
  lexicalToml?: string
  /** Channels for the code profile's query (default: the profile's own). The baseline always runs lexical only. */
  codeChannels?: Channel[]
  /**
   * The text channel for the code profile: the local model (all-MiniLM-L6-v2), its vectors kept in
   * this user-level cache so a window shared by two checkouts of one repository is embedded once.
   */
  embeddings?: { cache_dir: string }
  onInstance?: (line: string) => void
}

interface Instance {
  instance_id: string
  repo: string
  base_commit: string
  problem_statement: string
}

interface Gold {
  instance_id: string
  gold_files: string[]
  gold_functions?: string[]
}

export interface InstanceRun {
  instance_id: string
  repo: string
  profile: SwebenchProfile
  files: string[]
  functions: string[]
  functions_by_lines: string[]
  gold_files: string[]
  gold_functions: string[]
  file_acc: { at_1: number | null; at_5: number | null; at_10: number | null }
  file_recall_at_5: number | null
  file_rr: number
  function_acc_at_10: number | null
  function_acc_at_10_by_lines: number | null
  channels: string[]
  ingest_seconds: number
  query_ms: number
  query_truncated: boolean
  warnings: string[]
}

export interface ProfileSummary {
  profile: SwebenchProfile
  setup: string
  channels: string[]
  instances: number
  file_acc_at_1: number | null
  file_acc_at_5: number | null
  file_acc_at_10: number | null
  file_recall_at_5: number | null
  file_mrr: number | null
  /** Functions from symbol paths (code) or from line ranges (baseline, which has no symbols). */
  function_acc_at_10: number | null
  /** Both profiles derived the same way: the functions a segment's line range overlaps. */
  function_acc_at_10_by_lines: number | null
  function_instances: number
  per_repo: Record<string, { instances: number; file_acc_at_5: number | null; file_mrr: number | null; function_acc_at_10: number | null }>
  ingest_seconds: { total: number; mean: number }
  query_latency_ms: { p50: number; mean: number; max: number }
}

export interface SwebenchReport {
  dataset: string
  instances: number
  limit: number
  /** The `[graph]` table given to code-profile workspaces, if any. */
  graph_toml: string | null
  /** Channels requested for the code profile, if not its defaults. */
  code_channels: Channel[] | null
  /** 'local' when the code profile ran with the text channel. */
  embeddings: 'local' | null
  query_max_chars: number
  truncated_queries: string[]
  profiles: Partial<Record<SwebenchProfile, ProfileSummary>>
  reference_fts5: Record<string, number>
  runs: InstanceRun[]
}

const SETUP: Record<SwebenchProfile, string> = {
  baseline: "documents profile, the checkout's .py files added with kind 'text', query channels ['lexical']",
  code: "code profile, the checkout's .py files added (symbols via tree-sitter), the profile's default channels",
}

// The contract's limit on query length; problem statements longer than it are cut at a word boundary.
const QUERY_MAX_CHARS = (QueryRequestSchema.shape.query as { maxLength?: number | null }).maxLength ?? 10_000

const run = promisify(execFile)

async function readJsonl<T>(path: string): Promise<T[]> {
  if (!existsSync(path)) throw new TychoraError('E_NOT_FOUND', `${path} not found`)
  return (await readFile(path, 'utf8'))
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as T)
}

/**
 * `git archive` of `commit` (optionally only paths matching `pathspec`) extracted into `dest`,
 * unless `dest` exists from an earlier run. It reads objects only: no checkout, no hooks.
 */
async function materialise(gitDir: string, commit: string, dest: string, pathspec?: string): Promise<void> {
  if (existsSync(dest)) return
  const partial = `${dest}.partial-${process.pid}`
  await rm(partial, { recursive: true, force: true })
  await mkdir(partial, { recursive: true })
  const spec = pathspec ? ` -- '${pathspec}'` : ''
  await run('bash', ['-c', `set -o pipefail; git --git-dir="$1" archive "$2"${spec} | tar -x -C "$3"`, 'materialise', gitDir, commit, partial], {
    maxBuffer: 64 * 1024 * 1024,
  })
  await rename(partial, dest)
}

function truncateQuery(text: string): { query: string; truncated: boolean } {
  if (text.length <= QUERY_MAX_CHARS) return { query: text, truncated: false }
  const cut = text.slice(0, QUERY_MAX_CHARS)
  const space = cut.search(/\s\S*$/)
  return { query: space > 0 ? cut.slice(0, space) : cut, truncated: true }
}

async function listPython(root: string): Promise<string[]> {
  const { stdout } = await run('find', ['.', '-type', 'f', '-name', '*.py'], { cwd: root, maxBuffer: 64 * 1024 * 1024 })
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((p) => p.replace(/^\.\//, ''))
}

/** Files, functions by symbol path, and functions by line range, each in order of first appearance. */
function rankLocations(segments: Segment[], defs: Map<string, PythonDef[]>): { files: string[]; functions: string[]; byLines: string[] } {
  const files = firstAppearance(segments.map((s) => s.source.path))
  const functions = firstAppearance(
    segments.map((s) => {
      // heading_path of a code unit: [module, ...symbols]; plain text has none.
      const name = asFunction(defs.get(s.source.path), s.locator.heading_path.slice(1))
      return name === undefined ? undefined : `${s.source.path}:${name}`
    }),
  )
  const byLines = firstAppearance(segments.flatMap((s) => functionsCovering(defs.get(s.source.path), s.locator.line_start, s.locator.line_end).map((f) => `${s.source.path}:${f}`)))
  return { files, functions, byLines }
}

async function runProfile(
  profile: SwebenchProfile,
  tree: string,
  query: string,
  limit: number,
  graphToml?: string,
  codeChannels?: Channel[],
  lexicalToml?: string,
  embeddings?: SwebenchOptions['embeddings'],
): Promise<{ segments: Segment[]; channels: string[]; ingestSeconds: number; queryMs: number; warnings: string[] }> {
  const scratch = await mkdtemp(join(tmpdir(), `tychora-swe-${profile}-`))
  try {
    const wsDir = join(scratch, 'ws')
    const withText = profile === 'code' && embeddings !== undefined
    await initWorkspace(wsDir, { profile: profile === 'code' ? 'code' : 'documents', ...(withText ? { embeddings: 'local' as const } : {}) })
    // `[embeddings]` is the file's last section after init with embeddings, so the line lands in it.
    if (withText) await appendFile(join(wsDir, 'workspace.toml'), `cache_dir = ${JSON.stringify(embeddings.cache_dir)}\n`)
    // The workspace config is read on open, so a [graph] table written now applies to this run.
    if (profile === 'code' && graphToml) await appendFile(join(wsDir, 'workspace.toml'), `\n[graph]\n${graphToml.trim()}\n`)
    if (lexicalToml) await appendFile(join(wsDir, 'workspace.toml'), `\n[lexical]\n${lexicalToml.trim()}\n`)
    const ws = await openWorkspace(wsDir)
    try {
      const started = performance.now()
      const receipt = await ws.add(profile === 'code' ? { paths: [tree] } : { paths: [tree], kind: 'text' })
      const ingestSeconds = (performance.now() - started) / 1000
      if (receipt.status === 'failed') throw new TychoraError('E_INVALID_ARGUMENT', `${tree} could not be ingested: ${receipt.diagnostics[0]?.message ?? 'unknown'}`)
      // The code run leaves `channels` unset on purpose: whatever the profile's defaults are is what is measured.
      const result = await ws.search({
        query,
        limit,
        max_per_source: 0,
        budget_tokens: 100_000_000,
        ...(profile === 'baseline' ? { channels: ['lexical' as const] } : codeChannels ? { channels: codeChannels } : {}),
      })
      return {
        segments: result.segments,
        channels: result.applied_scope.channels,
        ingestSeconds,
        queryMs: result.duration_ms,
        warnings: result.warnings,
      }
    } finally {
      ws.close()
    }
  } finally {
    await rm(scratch, { recursive: true, force: true })
  }
}

function summarise(profile: SwebenchProfile, runs: InstanceRun[], options: SwebenchOptions): ProfileSummary {
  const mine = runs.filter((r) => r.profile === profile)
  const latencies = mine.map((r) => r.query_ms).sort((a, b) => a - b)
  const withFunctions = mine.filter((r) => r.gold_functions.length > 0)
  const perRepo: ProfileSummary['per_repo'] = {}
  for (const repo of [...new Set(mine.map((r) => r.repo))].sort()) {
    const rs = mine.filter((r) => r.repo === repo)
    perRepo[repo] = {
      instances: rs.length,
      file_acc_at_5: mean(rs.map((r) => r.file_acc.at_5)),
      file_mrr: mean(rs.map((r) => r.file_rr)),
      function_acc_at_10: mean(rs.map((r) => r.function_acc_at_10)),
    }
  }
  const ingest = mine.reduce((a, r) => a + r.ingest_seconds, 0)
  return {
    profile,
    setup:
      profile === 'code'
        ? `${SETUP.code}${options.embeddings ? ', [embeddings] local all-MiniLM-L6-v2 (text channel on)' : ''}${options.codeChannels ? `, channels overridden to [${options.codeChannels.join(', ')}]` : ''}${options.graphToml ? `, workspace.toml [graph] ${options.graphToml.trim().split('\n').join('; ')}` : ''}`
        : SETUP[profile],
    channels: firstAppearance(mine.flatMap((r) => r.channels)),
    instances: mine.length,
    file_acc_at_1: mean(mine.map((r) => r.file_acc.at_1)),
    file_acc_at_5: mean(mine.map((r) => r.file_acc.at_5)),
    file_acc_at_10: mean(mine.map((r) => r.file_acc.at_10)),
    file_recall_at_5: mean(mine.map((r) => r.file_recall_at_5)),
    file_mrr: mean(mine.map((r) => r.file_rr)),
    function_acc_at_10: mean(mine.map((r) => r.function_acc_at_10)),
    function_acc_at_10_by_lines: mean(mine.map((r) => r.function_acc_at_10_by_lines)),
    function_instances: withFunctions.length,
    per_repo: perRepo,
    ingest_seconds: { total: ingest, mean: ingest / (mine.length || 1) },
    query_latency_ms: {
      p50: percentile(latencies, 50),
      mean: latencies.reduce((a, b) => a + b, 0) / (latencies.length || 1),
      max: latencies.at(-1) ?? 0,
    },
  }
}

/**
 * SWE-bench Lite localization through the production query path: per instance, the repository at
 * `base_commit` goes into a scratch workspace, `problem_statement` (and nothing else of the
 * instance) is the query, and the ranked files and functions are scored against the gold fix.
 */
export async function evalSwebench(options: SwebenchOptions): Promise<SwebenchReport> {
  const profiles = options.profiles ?? ['baseline', 'code']
  const limit = options.limit ?? 100
  const cache = options.cache ?? join(homedir(), '.cache', 'tychora', 'swebench')
  const instances = await readJsonl<Instance>(join(options.data, 'instances.jsonl'))
  const gold = new Map((await readJsonl<Gold>(join(options.data, 'gold.jsonl'))).map((g) => [g.instance_id, g]))
  const runs: InstanceRun[] = []
  const truncated: string[] = []
  for (const instance of instances) {
    const g = gold.get(instance.instance_id)
    if (!g) throw new TychoraError('E_NOT_FOUND', `no gold for ${instance.instance_id}`)
    const gitDir = join(options.repos, instance.repo.replace('/', '+'), 'repo')
    if (!existsSync(gitDir)) throw new TychoraError('E_NOT_FOUND', `${gitDir} not found: --repos must hold <owner>+<name>/repo git dirs`)
    let full = join(cache, instance.instance_id)
    // Both runs see the same universe as the README's FTS5 run (and as the gold): the .py files, so
    // the comparison is between retrieval methods, not between what was indexed.
    const pyOnly = join(cache, 'py-only', instance.instance_id)
    await mkdir(join(cache, 'py-only'), { recursive: true })
    await materialise(gitDir, instance.base_commit, pyOnly, '*.py')
    try {
      await materialise(gitDir, instance.base_commit, full)
    } catch {
      // A fetched snapshot may lack a large blob (sqlfluff's bin/act); the definitions only need
      // the Python files.
      full = pyOnly
    }
    const defs = await pythonDefinitions(full, await listPython(full))
    const { query, truncated: cut } = truncateQuery(instance.problem_statement)
    if (cut) truncated.push(instance.instance_id)
    const goldFunctions = g.gold_functions ?? []
    for (const profile of profiles) {
      const out = await runProfile(profile, pyOnly, query, limit, options.graphToml, options.codeChannels, options.lexicalToml, options.embeddings)
      const { files, functions, byLines } = rankLocations(out.segments, defs)
      // Text segments carry no symbols, so the baseline's functions can only come from line ranges.
      const primary = profile === 'code' ? functions : byLines
      const r: InstanceRun = {
        instance_id: instance.instance_id,
        repo: instance.repo,
        profile,
        files: files.slice(0, 10),
        functions: primary.slice(0, 10),
        functions_by_lines: byLines.slice(0, 10),
        gold_files: g.gold_files,
        gold_functions: goldFunctions,
        file_acc: { at_1: allInTop(files, g.gold_files, 1), at_5: allInTop(files, g.gold_files, 5), at_10: allInTop(files, g.gold_files, 10) },
        file_recall_at_5: recallInTop(files, g.gold_files, 5),
        file_rr: reciprocalRank(files, g.gold_files),
        function_acc_at_10: allInTop(primary, goldFunctions, 10),
        function_acc_at_10_by_lines: allInTop(byLines, goldFunctions, 10),
        channels: out.channels,
        ingest_seconds: out.ingestSeconds,
        query_ms: out.queryMs,
        query_truncated: cut,
        warnings: out.warnings,
      }
      runs.push(r)
      const rank = r.file_rr > 0 ? String(Math.round(1 / r.file_rr)) : '-'
      options.onInstance?.(
        `${instance.instance_id} ${profile}: gold file rank ${rank}, fn@10 ${r.function_acc_at_10 ?? 'n/a'}, ingest ${r.ingest_seconds.toFixed(2)} s, query ${r.query_ms.toFixed(1)} ms`,
      )
    }
  }
  const summaries: Partial<Record<SwebenchProfile, ProfileSummary>> = {}
  for (const p of profiles) summaries[p] = summarise(p, runs, options)
  return {
    dataset: options.data,
    instances: instances.length,
    limit,
    graph_toml: options.graphToml?.trim() ?? null,
    code_channels: options.codeChannels ?? null,
    embeddings: options.embeddings ? 'local' : null,
    query_max_chars: QUERY_MAX_CHARS,
    truncated_queries: truncated,
    profiles: summaries,
    reference_fts5: { file_acc_at_1: 0.308, file_acc_at_5: 0.615, file_acc_at_10: 0.731, file_mrr: 0.431, function_acc_at_10: 0.32 },
    runs,
  }
}
