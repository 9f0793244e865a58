// CLI search end to end (issue 11: target <= 100 ms): wall time of `tychora search` as a user
// runs it, one process per query, on the SciFact corpus (5,183 documents) and on a three-file
// Markdown workspace, interleaved round by round with bare `node -e ''` (Node's own start on
// this machine, which no CLI can beat), the CLI with V8's code cache off
// (NODE_DISABLE_COMPILE_CACHE=1: what every run paid before the cache) and the peer a user
// would otherwise type, the sqlite3 shell querying an FTS5 index of the same SciFact documents.
// Medians of ROUNDS rounds; each round asks the next of 10 SciFact test queries. The SciFact search
// and bare Node also run under each other supported Node major (22, 24: binaries from the npm
// `node` package, scripts/node-versions.mjs), interleaved in the same rounds.
// Usage: node bench/scale/cli-start.mjs   (CLI_ROUNDS, default 30)
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gunzipSync } from 'node:zlib'
import Database from 'better-sqlite3'
import { nodeBinary } from '../../scripts/node-versions.mjs'
import { median, root, shared, worker } from './common.mjs'

const CLI = join(root, 'dist/bin/tychora.cjs')

function time(command, args, env = {}) {
  const t = process.hrtime.bigint()
  const r = spawnSync(command, args, { encoding: 'utf8', env: { ...process.env, ...env }, maxBuffer: 1 << 24 })
  const ms = Number(process.hrtime.bigint() - t) / 1e6
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} failed: ${r.stderr}`)
  return ms
}

/** The words of a query as an FTS5 OR of quoted terms (FTS5's syntax would reject its punctuation). */
const ftsQuery = (text) =>
  text
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 1)
    .map((w) => `"${w}"`)
    .join(' OR ')

export async function runCliStart({ rounds = Number(process.env.CLI_ROUNDS ?? 30) } = {}) {
  const scratch = mkdtempSync(join(tmpdir(), 'tychora-cli-start-'))
  try {
    const records = gunzipSync(readFileSync(join(shared, 'scifact/corpus.jsonl.gz')))
      .toString('utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    const data = join(scratch, 'scifact')
    mkdirSync(data)
    writeFileSync(join(data, 'corpus.jsonl'), `${records.map((r) => JSON.stringify(r)).join('\n')}\n`)
    const scifact = join(scratch, 'ws-scifact')
    const added = worker('full-add', { ws: scifact, data })
    const small = join(scratch, 'ws-small')
    spawnSync(process.execPath, [CLI, 'init', small], { stdio: 'ignore' })
    spawnSync(process.execPath, [CLI, 'add', '-w', small, join(root, 'test/fixtures/docs')], { stdio: 'ignore' })
    const fts = join(scratch, 'fts5.sqlite3')
    const db = new Database(fts)
    db.exec("CREATE VIRTUAL TABLE docs USING fts5(title, body, tokenize = 'porter')")
    const insert = db.prepare('INSERT INTO docs (title, body) VALUES (?, ?)')
    db.transaction(() => {
      for (const r of records) insert.run(r.title ?? '', r.text ?? '')
    })()
    db.close()
    const queries = readFileSync(join(shared, 'scifact/queries.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .slice(0, 10)
      .map((l) => JSON.parse(l).text)

    const runs = { bare: [], scifact: [], scifact_uncached: [], small: [], sqlite3_fts5: [] }
    const others = (process.env.BENCH_NODE_MAJORS ?? '22,24')
      .split(',')
      .filter(Boolean)
      .map((major) => ({ major, ...nodeBinary(major) }))
    for (const o of others) {
      runs[`bare_node${o.major}`] = []
      runs[`scifact_node${o.major}`] = []
    }
    // A first run of each keeps the code cache the later ones read.
    time(process.execPath, [CLI, 'search', '-w', scifact, queries[0], '--limit', '10'])
    for (const o of others) time(o.node, [CLI, 'search', '-w', scifact, queries[0], '--limit', '10'])
    for (let i = 0; i < rounds; i++) {
      const q = queries[i % queries.length]
      for (const o of others) {
        runs[`bare_node${o.major}`].push(time(o.node, ['-e', '']))
        runs[`scifact_node${o.major}`].push(time(o.node, [CLI, 'search', '-w', scifact, q, '--limit', '10']))
      }
      runs.bare.push(time(process.execPath, ['-e', '']))
      runs.scifact.push(time(process.execPath, [CLI, 'search', '-w', scifact, q, '--limit', '10']))
      runs.scifact_uncached.push(time(process.execPath, [CLI, 'search', '-w', scifact, q, '--limit', '10'], { NODE_DISABLE_COMPILE_CACHE: '1' }))
      runs.small.push(time(process.execPath, [CLI, 'search', '-w', small, 'ETag validator', '--limit', '10']))
      runs.sqlite3_fts5.push(time('sqlite3', [fts, `SELECT rowid, title FROM docs WHERE docs MATCH '${ftsQuery(q).replaceAll("'", "''")}' ORDER BY rank LIMIT 10`]))
    }
    const result = {
      date: new Date().toISOString(),
      machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version },
      other_nodes: Object.fromEntries(others.map((o) => [o.major, o.version])),
      rounds,
      scifact_chunks: added.chunks,
      median_ms: Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, median(v)])),
      // The quarter of runs the machine's noise touched least.
      p25_ms: Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, [...v].sort((a, b) => a - b)[Math.floor(v.length / 4)]])),
      runs_ms: runs,
    }
    const m = result.median_ms
    const q = result.p25_ms
    const f = (x) => x.toFixed(1)
    const md = [
      `# CLI search end to end (${result.date.slice(0, 10)}, ${result.machine.cpus} cores, Node ${process.version})`,
      '',
      `Wall time of one process per query, ${rounds} interleaved rounds (\`node bench/scale/cli-start.mjs\`): the median, and the 25th percentile (the runs this VM's noise touched least).`,
      '',
      '| what | median ms | p25 ms | median over bare node |',
      '|---|---:|---:|---:|',
      `| bare \`node -e ''\` | ${f(m.bare)} | ${f(q.bare)} | — |`,
      `| \`tychora search\`, SciFact (${added.chunks} chunks) | ${f(m.scifact)} | ${f(q.scifact)} | ${f(m.scifact - m.bare)} |`,
      `| \`tychora search\`, SciFact, no code cache | ${f(m.scifact_uncached)} | ${f(q.scifact_uncached)} | ${f(m.scifact_uncached - m.bare)} |`,
      `| \`tychora search\`, 3 Markdown files | ${f(m.small)} | ${f(q.small)} | ${f(m.small - m.bare)} |`,
      `| \`sqlite3\` shell, FTS5 over the same SciFact documents | ${f(m.sqlite3_fts5)} | ${f(q.sqlite3_fts5)} | — |`,
      '',
      'Per Node version (the same rounds):',
      '',
      '| Node | bare `node -e` median ms | `tychora search` SciFact median ms | p25 ms | over bare node |',
      '|---|---:|---:|---:|---:|',
      `| ${process.version} | ${f(m.bare)} | ${f(m.scifact)} | ${f(q.scifact)} | ${f(m.scifact - m.bare)} |`,
      ...others.map((o) => {
        const [b, s] = [`bare_node${o.major}`, `scifact_node${o.major}`]
        return `| ${o.version} | ${f(m[b])} | ${f(m[s])} | ${f(q[s])} | ${f(m[s] - m[b])} |`
      }),
      '',
    ].join('\n')
    mkdirSync(join(root, 'bench/results'), { recursive: true })
    writeFileSync(join(root, 'bench/results/cli-start.json'), `${JSON.stringify(result, null, 2)}\n`)
    writeFileSync(join(root, 'bench/results/cli-start.md'), md)
    console.log(md)
    return result
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await runCliStart()
