// `npm run bench:artifact-deletes`: artifacts removed from an S3 bucket (a real SeaweedFS on
// loopback) one at a time against in bulk (`delete_many`: HEADs 16 at a time, then S3
// DeleteObjects), as retention and erasure remove files. The measuring is in Rust
// (crates/tychora-core/examples/artifact_delete_bench.rs, release); this writes
// bench/results/artifact-deletes.{json,md}. Needs `node scripts/fetch-servers.mjs`.
import { execFileSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { root } from './common.mjs'

const out = execFileSync('cargo', ['run', '--quiet', '--release', '-p', 'tychora-core', '--example', 'artifact_delete_bench'], {
  cwd: root,
  encoding: 'utf8',
  maxBuffer: 1 << 24,
  stdio: ['ignore', 'pipe', 'inherit'],
})
const r = { date: new Date().toISOString(), ...JSON.parse(out.trim().split('\n').pop()) }
mkdirSync(join(root, 'bench/results'), { recursive: true })
writeFileSync(join(root, 'bench/results/artifact-deletes.json'), `${JSON.stringify(r, null, 2)}\n`)
const md = [
  '# Removing artifacts from a bucket: one at a time vs in bulk',
  '',
  `${r.objects} objects of 1–4 KiB in ${r.store}; medians of ${r.runs} runs, ${r.cores} cores. One at a time is \`delete\` (HEAD, then DELETE, per object); in bulk is \`delete_many\` (HEADs 16 at a time, then S3 DeleteObjects, up to 1,000 keys a request), which retention and erasure now use.`,
  '',
  '| way | seconds | objects/s |',
  '|---|---:|---:|',
  `| one at a time | ${r.one_by_one_s.toFixed(2)} | ${r.one_by_one_per_s.toFixed(0)} |`,
  `| in bulk | ${r.bulk_s.toFixed(2)} | ${r.bulk_per_s.toFixed(0)} |`,
  '',
].join('\n')
writeFileSync(join(root, 'bench/results/artifact-deletes.md'), md)
process.stdout.write(md)
