// The SWE-bench Lite localization harness, run from the repository (`npm run eval:swebench -- …`),
// never shipped: it shells out to git, tar, find and python3. It uses the built package through
// its public entry, as any consumer would, so run `npm run build:ts` after changing ts/.
import { existsSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { ERROR_CODES, type QueryRequest, TychoraError } from 'tychora'
import { type SwebenchProfile, evalSwebench } from './swebench.js'

const USAGE = `usage: npm run eval:swebench -- --repos DIR [options]

SWE-bench Lite file/function localization from the issue text: lexical baseline vs code profile.

  --repos DIR       Directory of full-history git dirs named <owner>+<name>/repo (required)
  --data DIR        Directory with instances.jsonl and gold.jsonl (default ../shared/data/swebench-lite)
  --profile P       code | baseline | both (default both)
  --cache DIR       Checkouts at base_commit (default ~/.cache/tychora/swebench)
  --limit N         Segments per query (default 100)
  --out FILE        Where to write the JSON report (default ./tychora-eval-swebench-lite.json)
  --graph-toml T    Body of a [graph] table for the code profile's workspaces, lines separated by
                    newlines, '\\n' or ';' (e.g. 'depth = 1; callers = false')
  --lexical-toml T  Body of a [lexical] table for both profiles' workspaces, the same way
                    (e.g. 'idf = "probabilistic"; max_query_terms = 32')
  --channels LIST   Channels for the code profile, comma-separated (e.g. exact,lexical); default the profile's own
  --embeddings local
                    The code profile with the text channel (local all-MiniLM-L6-v2; run
                    node scripts/fetch-model.mjs first); vectors cached under --cache/embeddings`

/** Relative to the working directory when it exists there, else to the repository root. */
function dataDir(given: string | undefined, fallback: string): string {
  if (given) return resolve(given)
  const fromCwd = resolve(fallback)
  if (existsSync(fromCwd)) return fromCwd
  // bench/dist/eval (compiled) or bench/eval (sources) → the repository root
  const here = fileURLToPath(new URL('.', import.meta.url))
  return resolve(here, here.includes('/dist/') ? '../../..' : '../..', fallback)
}

const pct = (v: number | null | undefined) => (v === null || v === undefined ? '-' : (v * 100).toFixed(1))
const num = (v: number | null | undefined, digits = 3) => (v === null || v === undefined ? '-' : v.toFixed(digits))

/** Rows of label + columns, left-aligned label, right-aligned values. */
function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ')
  return [line(header), ...rows.map(line)].join('\n')
}

function fail(message: string): never {
  process.stderr.write(`${message}\n\n${USAGE}\n`)
  process.exit(2)
}

const OPTIONS = {
  repos: { type: 'string' },
  data: { type: 'string' },
  profile: { type: 'string', default: 'both' },
  cache: { type: 'string' },
  limit: { type: 'string', default: '100' },
  out: { type: 'string' },
  'graph-toml': { type: 'string' },
  'lexical-toml': { type: 'string' },
  channels: { type: 'string' },
  embeddings: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const

/** The command line, or the usage and exit 2: strict, so a misspelt option is refused, not ignored. */
function options() {
  try {
    return parseArgs({ options: OPTIONS, strict: true, allowPositionals: false }).values
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error))
  }
}

async function main(): Promise<void> {
  const values = options()
  if (values.help) {
    process.stdout.write(`${USAGE}\n`)
    return
  }
  if (!values.repos) fail('--repos is required')
  const graphToml = values['graph-toml']
    ?.split(/\\n|\n|;/)
    .map((l) => l.trim())
    .filter(Boolean)
    .join('\n')
  const codeChannels = values.channels
    ?.split(',')
    .map((c) => c.trim())
    .filter(Boolean)
  if (values.embeddings !== undefined && values.embeddings !== 'local') fail(`--embeddings: only "local" runs here (got ${values.embeddings})`)
  for (const c of codeChannels ?? []) if (!['exact', 'lexical', 'graph', 'text'].includes(c)) fail(`--channels: unknown channel ${c}`)
  const profile = values.profile
  const profiles: SwebenchProfile[] = profile === 'both' ? ['baseline', 'code'] : profile === 'code' || profile === 'baseline' ? [profile] : []
  if (profiles.length === 0) fail('--profile must be code, baseline or both')
  const limit = Number(values.limit)
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) fail('--limit must be an integer in 1..1000')

  const report = await evalSwebench({
    data: dataDir(values.data, '../shared/data/swebench-lite'),
    repos: resolve(values.repos),
    profiles,
    limit,
    ...(graphToml ? { graphToml } : {}),
    ...(values['lexical-toml'] ? { lexicalToml: values['lexical-toml'].replaceAll('\\n', '\n').replaceAll(';', '\n') } : {}),
    ...(codeChannels && codeChannels.length > 0 ? { codeChannels: codeChannels as NonNullable<QueryRequest['channels']> } : {}),
    ...(values.cache ? { cache: resolve(values.cache) } : {}),
    ...(values.embeddings ? { embeddings: { cache_dir: join(values.cache ? resolve(values.cache) : join(homedir(), '.cache', 'tychora', 'swebench'), 'embeddings') } } : {}),
    onInstance: (line) => process.stderr.write(`${line}\n`),
  })
  const out = resolve(values.out ?? 'tychora-eval-swebench-lite.json')
  await writeFile(out, `${JSON.stringify(report, null, 2)}\n`)
  const ref = report.reference_fts5
  const cols = profiles.map((p) => report.profiles[p])
  const row = (label: string, fmt: (v: number | null | undefined) => string, pick: (s: NonNullable<(typeof cols)[number]>) => number | null, refValue?: number) => [
    label,
    fmt(refValue),
    ...cols.map((s) => (s ? fmt(pick(s)) : '-')),
  ]
  const repos = Object.keys(cols[0]?.per_repo ?? {})
  process.stdout.write(
    `${[
      `SWE-bench Lite subset: ${report.instances} instances; ${report.limit} segments per query; ${report.truncated_queries.length} problem statement(s) cut to ${report.query_max_chars} chars (${report.truncated_queries.join(', ') || 'none'})`,
      ...cols.map((s) => (s ? `  ${s.profile}: ${s.setup} (ran: ${s.channels.join(', ')})` : '')),
      table(
        ['', 'FTS5 (README)', ...profiles],
        [
          row('file Acc@1', pct, (s) => s.file_acc_at_1, ref.file_acc_at_1),
          row('file Acc@5', pct, (s) => s.file_acc_at_5, ref.file_acc_at_5),
          row('file Acc@10', pct, (s) => s.file_acc_at_10, ref.file_acc_at_10),
          row('file Recall@5', pct, (s) => s.file_recall_at_5),
          row('file MRR', num, (s) => s.file_mrr, ref.file_mrr),
          row('function Acc@10', pct, (s) => s.function_acc_at_10, ref.function_acc_at_10),
          row('function Acc@10 (by lines)', pct, (s) => s.function_acc_at_10_by_lines),
          ...repos.map((repo) => row(`file Acc@5 ${repo}`, pct, (s) => s.per_repo[repo]?.file_acc_at_5 ?? null)),
          ...repos.map((repo) => row(`function Acc@10 ${repo}`, pct, (s) => s.per_repo[repo]?.function_acc_at_10 ?? null)),
          row(
            'ingest s (total)',
            (v) => num(v, 1),
            (s) => s.ingest_seconds.total,
          ),
          row(
            'query ms (p50)',
            (v) => num(v, 1),
            (s) => s.query_latency_ms.p50,
          ),
          row(
            'query ms (max)',
            (v) => num(v, 1),
            (s) => s.query_latency_ms.max,
          ),
        ],
      ),
      `written to ${out}`,
    ].join('\n')}\n`,
  )
}

// Exit codes from the package's error table, as `tychora eval` had them.
main().catch((error: unknown) => {
  const coded = error instanceof TychoraError ? error : undefined
  process.stderr.write(`error[${coded?.code ?? 'E_INTERNAL'}]: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exitCode = coded ? ERROR_CODES[coded.code].exit : 1
})
