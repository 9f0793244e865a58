import { existsSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { TychoraError } from '../errors.js'

/** The flag every workspace command takes. */
export const workspaceArg = {
  workspace: {
    type: 'string',
    alias: 'w',
    description: 'Workspace directory (default: $TYCHORA_WORKSPACE, else the nearest .tychora/ up from here)',
  },
} as const

/**
 * Resolves the workspace: --workspace, $TYCHORA_WORKSPACE, else walking up from the current
 * directory, the first folder that is a workspace itself (one `tychora init DIR` made: its
 * workspace.toml beside corpus.sqlite3) or holds one in `.tychora/`.
 */
export function resolveWorkspace(flag: string | undefined): string {
  if (flag) return resolve(flag)
  if (process.env.TYCHORA_WORKSPACE) return resolve(process.env.TYCHORA_WORKSPACE)
  let dir = process.cwd()
  for (;;) {
    if (isWorkspace(dir)) return dir
    const candidate = join(dir, '.tychora')
    if (isWorkspace(candidate)) return candidate
    const parent = dirname(dir)
    if (parent === dir) break
    dir = parent
  }
  throw new TychoraError('E_NOT_FOUND', 'no workspace here or above: pass --workspace DIR, set TYCHORA_WORKSPACE, run from inside a workspace folder, or run `tychora init` (creates ./.tychora)')
}

function isWorkspace(dir: string): boolean {
  return existsSync(join(dir, 'workspace.toml')) && existsSync(join(dir, 'corpus.sqlite3'))
}

/** Exit code a command asks for, without throwing (partial jobs). */
export const exitState = { code: 0 }

export function writeOut(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`)
}

/** `--debounce-ms` of `watch` and `serve --watch`: whole milliseconds up to a minute (default 300). */
export function debounceMs(value: string | undefined): number {
  if (value === undefined) return 300
  const ms = Number(value)
  if (!Number.isInteger(ms) || ms < 0 || ms > 60_000) throw new TychoraError('E_INVALID_ARGUMENT', `--debounce-ms must be a whole number of milliseconds from 0 to 60000, got ${value}`)
  return ms
}
