// Real code that nobody in this project wrote, fetched at bench time from the package registries
// and cached under ~/.cache/tychora, plus the venv that holds the Python oracle (jedi).
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'

export const CACHE = join(homedir(), '.cache/tychora')
const CODE_DIR = join(CACHE, 'bench-code')
const VENV = join(CACHE, 'bench-venv')
const JEDI_VERSION = '0.20.1'

/**
 * The corpora. `subdir` is what gets analysed: for Python the directory above the package, so that
 * module anchors read `requests.models`, as an installed package's would.
 */
export const CORPORA = [
  { language: 'python', registry: 'pypi', name: 'requests', version: '2.32.3', subdir: 'src' },
  { language: 'python', registry: 'pypi', name: 'flask', version: '3.0.3', subdir: 'src' },
  // rxjs ships its TypeScript sources and a tsconfig whose `paths` make `rxjs/...` self-imports resolve.
  { language: 'typescript', registry: 'npm', name: 'rxjs', version: '7.8.1', subdir: 'src', tsconfig: 'src/tsconfig.base.json' },
  // axios's lib/ is plain ES-module JavaScript with classes and cross-file imports (dist/ is bundled, skipped).
  { language: 'javascript', registry: 'npm', name: 'axios', version: '1.7.7', subdir: 'lib' },
  // Held out: added after the resolver was improved on the corpora above, and never used to change
  // it, so their figures say how the resolver does on code it was not adjusted to.
  { language: 'python', registry: 'pypi', name: 'click', version: '8.1.7', subdir: 'src', heldOut: true },
  { language: 'javascript', registry: 'npm', name: 'express', version: '4.21.1', subdir: 'lib', heldOut: true },
]

const run = (cmd, args, opts = {}) => execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', ...opts })

/** Downloads and unpacks one corpus (once); returns the absolute directory to analyse. */
export function fetchCorpus(corpus) {
  const dest = join(CODE_DIR, `${corpus.name}-${corpus.version}`)
  if (!existsSync(join(dest, corpus.subdir))) {
    mkdirSync(CODE_DIR, { recursive: true })
    const archive = corpus.registry === 'pypi' ? downloadSdist(corpus) : packNpm(corpus)
    // Unpack into a scratch dir first so an interrupted run never leaves a half-filled cache entry.
    const tmp = `${dest}.partial`
    rmSync(tmp, { recursive: true, force: true })
    mkdirSync(tmp, { recursive: true })
    // Both sdists (`name-version/`) and npm tarballs (`package/`) have one top-level directory.
    run('tar', ['-xzf', archive, '-C', tmp, '--strip-components=1'])
    rmSync(dest, { recursive: true, force: true })
    renameSync(tmp, dest)
  }
  return join(dest, corpus.subdir)
}

function downloadSdist({ name, version }) {
  const found = () => readdirSync(CODE_DIR).find((f) => f.toLowerCase() === `${name}-${version}.tar.gz`)
  if (!found()) run('python3', ['-m', 'pip', 'download', '--quiet', '--no-deps', '--no-binary', ':all:', `${name}==${version}`, '-d', CODE_DIR])
  return join(CODE_DIR, found())
}

function packNpm({ name, version }) {
  const file = join(CODE_DIR, `${name}-${version}.tgz`)
  if (!existsSync(file)) run('npm', ['pack', `${name}@${version}`, '--pack-destination', CODE_DIR, '--silent'])
  return file
}

/** A venv with jedi pinned, so oracle answers do not drift between bench runs; returns its python. */
export function ensureJedi() {
  const python = join(VENV, 'bin/python')
  if (!existsSync(python)) run('python3', ['-m', 'venv', VENV])
  const have = () => {
    try {
      return run(python, ['-c', 'import jedi; print(jedi.__version__)']).trim()
    } catch {
      return null
    }
  }
  if (have() !== JEDI_VERSION) run(python, ['-m', 'pip', 'install', '--quiet', `jedi==${JEDI_VERSION}`])
  return { python, jedi: have(), pythonVersion: run(python, ['--version']).trim() }
}
