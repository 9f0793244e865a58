// History growth (issue 11): 1,000 syncs of the same tree whose files keep changing (the OWASP
// cheat sheets; each sync rewrites 5 of them), once without maintenance (every revision, extraction,
// unit, chunk and snapshot kept: the behaviour before retention) and once with the maintenance a
// daemon or the CLI runs after each job (compaction + `manage purge` with the default policy).
// Reports corpus.sqlite3 and the workspace on disk after both. Usage: node bench/scale/history.mjs [syncs]
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Workspace } from '../../dist/index.js'
import { du } from './common.mjs'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const source = resolve(root, '../shared/data/docs/owasp-cheatsheets')

async function run(syncs, maintain) {
  const scratch = mkdtempSync(join(tmpdir(), 'tychora-history-'))
  try {
    const tree = join(scratch, 'tree')
    cpSync(source, tree, { recursive: true })
    const files = readdirSync(tree)
      .filter((f) => f.endsWith('.md'))
      .sort()
    const ws = join(scratch, 'ws')
    await Workspace.init(ws)
    const handle = await Workspace.open(ws)
    const treeBytes = du(tree)
    const started = performance.now()
    for (let i = 0; i < syncs; i++) {
      for (let k = 0; k < 5; k++) {
        const file = join(tree, files[(i * 5 + k) % files.length])
        writeFileSync(file, `${readFileSync(file, 'utf8')}\nSync ${i} changed this file.\n`)
      }
      await handle.add({ paths: [tree] })
      if (maintain) await handle.maintain()
    }
    const seconds = (performance.now() - started) / 1000
    const status = await handle.status()
    handle.close()
    return {
      syncs,
      maintain,
      tree_bytes: treeBytes,
      seconds,
      corpus_sqlite_bytes: status.bytes.corpus,
      workspace_bytes: status.bytes.corpus + status.bytes.artifacts + status.bytes.indexes,
      counts: status.counts,
      tables: status.bytes.tables.slice(0, 5),
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}

export async function runHistory({ syncs = 1000 } = {}) {
  const before = await run(syncs, false)
  console.error(JSON.stringify(before))
  const after = await run(syncs, true)
  console.error(JSON.stringify(after))
  const result = { date: new Date().toISOString(), machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version }, before, after }
  const mb = (b) => (b / 1e6).toFixed(1)
  const md = [
    `# History growth (${result.date.slice(0, 10)})`,
    '',
    `${syncs} syncs of the OWASP cheat sheets (${readdirSync(source).length} files, ${mb(before.tree_bytes)} MB), each rewriting 5 files; ${result.machine.cpus} cores, release build.`,
    '',
    '| run | corpus.sqlite3 MB | workspace MB | snapshots | revisions | extractions | evidence units | chunks | query runs | s |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...[
      ['no maintenance (before)', before],
      ['compaction + purge after each job (after)', after],
    ].map(
      ([name, r]) =>
        `| ${name} | ${mb(r.corpus_sqlite_bytes)} | ${mb(r.workspace_bytes)} | ${r.counts.snapshots} | ${r.counts.revisions} | ${r.counts.extractions} | ${r.counts.evidence_units} | ${r.counts.chunks} | ${r.counts.query_runs} | ${r.seconds.toFixed(0)} |`,
    ),
  ]
  writeFileSync(join(root, 'bench/results/history.json'), `${JSON.stringify(result, null, 2)}\n`)
  writeFileSync(join(root, 'bench/results/history.md'), `${md.join('\n')}\n`)
  return result
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await runHistory({ syncs: process.argv[2] ? Number(process.argv[2]) : undefined })
  console.log(readFileSync(join(root, 'bench/results/history.md'), 'utf8'))
}
