import { spawn } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { cp, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterEach } from 'vitest'
import { unless } from '../support/requirements.js'

export const ROOT = resolve(import.meta.dirname, '../..')
export const CLI = join(ROOT, 'dist/bin/tychora.cjs')
export const FIXTURE_DOCS = join(ROOT, 'test/fixtures/docs')
/** A four-file Python package with calls, an import and a base class: the code graph's fixture. */
export const FIXTURE_CODE = join(ROOT, 'test/fixtures/code-mini')

/** Native suites need the built addon; without it they are skipped with this reason. */
export const nativeMissing = unless(
  'native',
  !readdirSync(join(ROOT, 'ts/native')).some((f) => f.endsWith('.node'))
    ? 'native addon not built: run `npm run build` first'
    : !existsSync(CLI)
      ? 'dist/ not built: run `npm run build` first'
      : false,
)

/** `../shared/data/<path>`, resolved from the repository root (never from the working directory). */
export function sharedData(path: string): string {
  return resolve(ROOT, '../shared/data', path)
}

/** Why a suite reading `../shared/data/<path>` cannot run (skipped, or a failure where data is required), or false. */
export function dataMissing(path: string): string | false {
  return unless('data', existsSync(sharedData(path)) ? false : `shared/data/${path} not present`)
}

const cleanup: string[] = []
afterEach(async () => {
  for (const dir of cleanup.splice(0)) await rm(dir, { recursive: true, force: true })
})

/** A fresh temp dir with a copy of the fixture docs at `docs/`. */
export async function scratch(): Promise<{ dir: string; docs: string; ws: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'tychora-test-'))
  cleanup.push(dir)
  const docs = join(dir, 'docs')
  await cp(FIXTURE_DOCS, docs, { recursive: true })
  return { dir, docs, ws: join(dir, 'ws') }
}

export interface CliResult {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

/** Runs the built CLI as a user would. */
export function cli(args: string[], options: { env?: Record<string, string>; cwd?: string } = {}): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: options.cwd ?? ROOT, env: { ...process.env, ...options.env } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('error', reject)
    child.on('close', (code, signal) => resolvePromise({ code, signal, stdout, stderr }))
  })
}
