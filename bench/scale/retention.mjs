// Retention on every entry point (issue 32). Three measurements, each on the OWASP cheat sheets
// (120 Markdown files, 2.5 MB) unless said otherwise:
//   1. SYNCS CLI syncs (`tychora add TREE`, default policy: retain = 5), each rewriting 5 files:
//      corpus.sqlite3 and the workspace on disk afterwards, snapshots kept, median seconds a sync;
//   2. purge time on a workspace grown past 1 GB with retention off (retain = 100000), the policy
//      then set back to 5: `tychora manage purge`, wall time and what it removed;
//   3. a no-op sync of a folder of 10,000 files the profile skips: fsync/fdatasync calls
//      (strace -f -c) and the rows and bytes ten such syncs add.
// Usage: node bench/scale/retention.mjs [syncs] [1gb-syncs]
import { spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Workspace } from '../../dist/index.js'
import { du, median } from './common.mjs'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const CLI = join(root, 'dist/bin/tychora.cjs')
const source = resolve(root, '../shared/data/docs/owasp-cheatsheets')

function tychora(args, options = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', maxBuffer: 1 << 28, ...options })
  if (r.status !== 0) throw new Error(`tychora ${args.join(' ')}: ${r.status}\n${r.stderr}`)
  return r.stdout
}

function touch(tree, files, i) {
  for (let k = 0; k < 5; k++) {
    const file = join(tree, files[(i * 5 + k) % files.length])
    writeFileSync(file, `${readFileSync(file, 'utf8')}\nSync ${i} changed this file.\n`)
  }
}

function scratchTree() {
  const scratch = mkdtempSync(join(tmpdir(), 'tychora-retention-'))
  const tree = join(scratch, 'tree')
  cpSync(source, tree, { recursive: true })
  const files = readdirSync(tree)
    .filter((f) => f.endsWith('.md'))
    .sort()
  return { scratch, tree, files, ws: join(scratch, 'ws') }
}

function status(ws) {
  return JSON.parse(tychora(['manage', 'status', '-w', ws, '--format', 'json']))
}

function cliSyncs(syncs) {
  const { scratch, tree, files, ws } = scratchTree()
  try {
    tychora(['init', ws])
    const seconds = []
    for (let i = 0; i < syncs; i++) {
      touch(tree, files, i)
      const t = performance.now()
      tychora(['add', '-w', ws, tree, '--format', 'json'])
      seconds.push((performance.now() - t) / 1000)
    }
    const s = status(ws)
    return {
      syncs,
      median_sync_s: median(seconds),
      corpus_sqlite_bytes: s.bytes.corpus,
      workspace_bytes: du(ws),
      snapshots: s.counts.snapshots,
      extractions: s.counts.extractions,
      chunks: s.counts.chunks,
      jobs: s.counts.jobs,
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}

async function purgeOfAGigabyte(syncs) {
  const { scratch, tree, files, ws } = scratchTree()
  try {
    tychora(['init', ws])
    const config = join(ws, 'workspace.toml')
    writeFileSync(config, readFileSync(config, 'utf8').replace('retain = 5', 'retain = 100000'))
    const handle = await Workspace.open(ws)
    for (let i = 0; i < syncs; i++) {
      touch(tree, files, i)
      await handle.add({ paths: [tree] })
    }
    handle.close()
    await new Promise((r) => setTimeout(r, 200))
    const before = du(ws)
    writeFileSync(config, readFileSync(config, 'utf8').replace('retain = 100000', 'retain = 5'))
    const t = performance.now()
    const report = JSON.parse(tychora(['manage', 'purge', '-w', ws, '--format', 'json']))
    const seconds = (performance.now() - t) / 1000
    const t2 = performance.now()
    tychora(['manage', 'purge', '-w', ws, '--format', 'json'])
    const again = (performance.now() - t2) / 1000
    return { syncs, workspace_bytes_before: before, workspace_bytes_after: du(ws), purge_s: seconds, second_purge_s: again, report }
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}

function noOpSyncs() {
  const scratch = mkdtempSync(join(tmpdir(), 'tychora-noop-'))
  try {
    const tree = join(scratch, 'blobs')
    mkdirSync(tree)
    for (let i = 0; i < 10_000; i++) writeFileSync(join(tree, `f${i}.bin`), `blob ${i}`)
    const ws = join(scratch, 'ws')
    tychora(['init', ws])
    tychora(['add', '-w', ws, tree])
    const db = () => statSync(join(ws, 'corpus.sqlite3')).size + (statSync(join(ws, 'corpus.sqlite3-wal'), { throwIfNoEntry: false })?.size ?? 0)
    // The fsyncs of one no-op sync, as the kernel sees them.
    const traced = spawnSync('strace', ['-f', '-c', '-e', 'trace=fsync,fdatasync', process.execPath, CLI, 'add', '-w', ws, tree], {
      encoding: 'utf8',
      maxBuffer: 1 << 28,
    })
    const calls = (name) =>
      Number(
        traced.stderr
          .split('\n')
          .find((l) => l.trim().endsWith(name))
          ?.trim()
          .split(/\s+/)[3] ?? 0,
      )
    const fsyncs = calls('fsync') + calls('fdatasync')
    const before = { bytes: db(), ...status(ws).counts }
    const seconds = []
    for (let i = 0; i < 10; i++) {
      const t = performance.now()
      tychora(['add', '-w', ws, tree])
      seconds.push((performance.now() - t) / 1000)
    }
    const after = { bytes: db(), ...status(ws).counts }
    return {
      files: 10_000,
      fsyncs_per_no_op_sync: fsyncs,
      ten_syncs_db_bytes_added: after.bytes - before.bytes,
      ten_syncs_jobs_added: after.jobs - before.jobs,
      median_no_op_sync_s: median(seconds),
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}

export async function runRetention({ syncs = 1000, gigabyteSyncs = 1100 } = {}) {
  const cli = cliSyncs(syncs)
  console.error(JSON.stringify(cli))
  const purge = await purgeOfAGigabyte(gigabyteSyncs)
  console.error(JSON.stringify(purge))
  const noop = noOpSyncs()
  console.error(JSON.stringify(noop))
  const result = {
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version },
    cli,
    purge,
    noop,
  }
  const mb = (b) => (b / 1e6).toFixed(1)
  const md = [
    `# Retention on every entry point (${result.date.slice(0, 10)})`,
    '',
    `OWASP cheat sheets (120 files, 2.5 MB), each sync rewriting 5 files; ${result.machine.cpus} cores, release build.`,
    '',
    '| measurement | figure |',
    '|---|---:|',
    `| ${cli.syncs} CLI syncs, default policy: corpus.sqlite3 | ${mb(cli.corpus_sqlite_bytes)} MB |`,
    `| the same: workspace on disk | ${mb(cli.workspace_bytes)} MB |`,
    `| the same: snapshots kept / extractions / chunks | ${cli.snapshots} / ${cli.extractions} / ${cli.chunks} |`,
    `| the same: median CLI sync | ${cli.median_sync_s.toFixed(2)} s |`,
    `| ${purge.syncs} syncs kept (retention off): workspace | ${mb(purge.workspace_bytes_before)} MB |`,
    `| \`manage purge\` back to retain = 5 | ${purge.purge_s.toFixed(1)} s (${purge.report.snapshots} snapshots, ${purge.report.extractions} extractions, ${purge.report.chunks} chunks) |`,
    `| workspace after the purge | ${mb(purge.workspace_bytes_after)} MB |`,
    `| a second purge (nothing to remove) | ${purge.second_purge_s.toFixed(2)} s |`,
    `| no-op sync of ${noop.files} skipped files: fsync + fdatasync calls | ${noop.fsyncs_per_no_op_sync} |`,
    `| ten such syncs: corpus bytes added / jobs | ${noop.ten_syncs_db_bytes_added} / ${noop.ten_syncs_jobs_added} |`,
    `| median no-op sync | ${noop.median_no_op_sync_s.toFixed(2)} s |`,
  ]
  writeFileSync(join(root, 'bench/results/retention.json'), `${JSON.stringify(result, null, 2)}\n`)
  writeFileSync(join(root, 'bench/results/retention.md'), `${md.join('\n')}\n`)
  return result
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await runRetention({
    syncs: process.argv[2] ? Number(process.argv[2]) : undefined,
    gigabyteSyncs: process.argv[3] ? Number(process.argv[3]) : undefined,
  })
  console.log(readFileSync(join(root, 'bench/results/retention.md'), 'utf8'))
}
