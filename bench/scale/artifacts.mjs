// `npm run bench:artifacts`: the artifact store's two adapters side by side — the workspace's
// folder (the embedded default) and an S3 bucket on a real SeaweedFS on loopback
// (scripts/seaweed.mjs) — on SciFact's abstracts COPIES times over, 50 abstracts a file (1,664
// files, so 1,664 objects, at 16 copies): a full add (MB/s), a one-file add, and verify (which
// reads every object back). Medians of RUNS runs, each on a fresh workspace. Writes
// bench/results/artifacts-s3.{json,md}. Needs `npm run build`, ../shared/data/scifact and
// `node scripts/fetch-servers.mjs`.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Workspace } from '../../dist/engine/workspace.js'
import { startSeaweed } from '../../scripts/seaweed.mjs'
import { median, RUNS, root, scifactFiles } from './common.mjs'

const COPIES = Number(process.env.BENCH_COPIES ?? 16)
const scratch = mkdtempSync(join(tmpdir(), 'tychora-bench-artifacts-'))

async function once(name, toml, docs, bytes, run) {
  const dir = join(scratch, `${name}-${run}`)
  await Workspace.init(dir)
  if (toml) writeFileSync(join(dir, 'workspace.toml'), readFileSync(join(dir, 'workspace.toml'), 'utf8') + toml)
  const ws = await Workspace.open(dir)
  try {
    let t = performance.now()
    const receipt = await ws.add({ paths: [docs] })
    const add = (performance.now() - t) / 1000
    if (receipt.status !== 'succeeded') throw new Error(`${name}: ${receipt.status}`)
    const one = join(scratch, `one-${name}-${run}.jsonl`)
    writeFileSync(one, `${JSON.stringify({ _id: `one-${run}`, title: 'One more', text: `A file added alone, run ${run}.` })}\n`)
    t = performance.now()
    await ws.add({ paths: [one] })
    const oneFile = performance.now() - t
    t = performance.now()
    const verify = await ws.verify()
    const verifyMs = performance.now() - t
    if (!verify.ok) throw new Error(`${name}: verify found ${JSON.stringify(verify.problems.slice(0, 3))}`)
    return { add_s: add, mb_per_s: bytes / 1e6 / add, one_file_ms: oneFile, verify_ms: verifyMs, files: receipt.files.added }
  } finally {
    ws.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

const server = await startSeaweed()
Object.assign(process.env, server.env)
try {
  const docs = join(scratch, 'docs')
  const bytes = scifactFiles(docs, COPIES)
  const rows = { folder: [], bucket: [] }
  for (let run = 0; run < RUNS; run++) {
    rows.folder.push(await once('folder', null, docs, bytes, run))
    rows.bucket.push(await once('bucket', server.toml(`bench-${run}`), docs, bytes, run))
  }
  const summary = Object.fromEntries(Object.entries(rows).map(([k, runs]) => [k, Object.fromEntries(['add_s', 'mb_per_s', 'one_file_ms', 'verify_ms'].map((m) => [m, median(runs.map((r) => r[m]))]))]))
  const out = {
    date: new Date().toISOString(),
    corpus: `SciFact ×${COPIES}, 50 abstracts a file: ${rows.folder[0].files} files, ${(bytes / 1e6).toFixed(1)} MB`,
    server: 'SeaweedFS 4.48 (weed server, one volume server, loopback), signed requests',
    runs: RUNS,
    summary,
    rows,
  }
  mkdirSync(join(root, 'bench/results'), { recursive: true })
  writeFileSync(join(root, 'bench/results/artifacts-s3.json'), `${JSON.stringify(out, null, 2)}\n`)
  const f = (n, d = 1) => n.toFixed(d)
  const md = [
    '# Artifact store: folder vs S3 bucket',
    '',
    `${out.corpus}; ${out.server}; medians of ${RUNS} runs, each on a fresh workspace (2 cores).`,
    '',
    '| artifacts in | full add (s) | MB/s | one-file add (ms) | verify, every object read back (ms) |',
    '|---|---:|---:|---:|---:|',
    ...Object.entries(summary).map(([k, s]) => `| ${k} | ${f(s.add_s)} | ${f(s.mb_per_s, 2)} | ${f(s.one_file_ms, 0)} | ${f(s.verify_ms, 0)} |`),
    '',
  ].join('\n')
  writeFileSync(join(root, 'bench/results/artifacts-s3.md'), md)
  process.stdout.write(md)
} finally {
  await server.stop()
  rmSync(scratch, { recursive: true, force: true })
}
