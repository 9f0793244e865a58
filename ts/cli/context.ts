import { existsSync, writeSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { TychoraError } from '../errors.js'
import { visible } from '../format/terminal.js'
import { PROJECT_FILE, projectPaths } from '../knowledge/paths.js'

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
export async function resolveWorkspace(flag: string | undefined): Promise<string> {
  if (flag) return resolve(flag)
  if (process.env.TYCHORA_WORKSPACE) return resolve(process.env.TYCHORA_WORKSPACE)
  let dir = process.cwd()
  for (;;) {
    if (isWorkspace(dir)) return dir
    const candidate = join(dir, '.tychora')
    if (isWorkspace(candidate)) return candidate
    if (existsSync(join(candidate, PROJECT_FILE))) return await projectState(candidate)
    const parent = dirname(dir)
    if (parent === dir) break
    dir = parent
  }
  throw new TychoraError('E_NOT_FOUND', 'no workspace here or above: pass --workspace DIR, set TYCHORA_WORKSPACE, run from inside a workspace folder, or run `tychora init` (creates ./.tychora)')
}

/**
 * A knowledge project answers from the state built for its tracked inputs (or, until that is
 * built, the last one). The knowledge modules load only here: a plain workspace's commands never
 * build their schemas (issue 11).
 */
async function projectState(root: string): Promise<string> {
  const { answeringState } = await import('../service/knowledge-state.js')
  const state = answeringState(projectPaths(root))
  if (!state) throw new TychoraError('E_NOT_FOUND', `${root} is a knowledge project with no built state yet: run \`tychora migrate apply\``)
  if (state.behind) {
    const why = state.problem ? `the tracked migrations cannot be applied (${state.problem})` : 'the knowledge state is behind the tracked migrations (run `tychora migrate apply`)'
    const warning = `${why}; answering from the last built state`
    if (deferWarnings.on) workspaceWarnings.push(warning)
    else process.stderr.write(`tychora: ${visible(warning)}\n`)
  }
  return state.dir
}

/**
 * What resolving the workspace found that every answer should carry (a knowledge project
 * answering from an older state). Printed on stderr at once, unless the command's output has a
 * place for warnings (`search`: md, agent and JSON alike): it sets `deferWarnings.on` and takes
 * them into its output; `run` prints on stderr what it did not take (it failed first).
 */
const workspaceWarnings: string[] = []
export const deferWarnings = { on: false }

/** The workspace's warnings, for a command to put in its own output; they are not printed again. */
export function takeWorkspaceWarnings(): string[] {
  return workspaceWarnings.splice(0)
}

function isWorkspace(dir: string): boolean {
  return existsSync(join(dir, 'workspace.toml')) && existsSync(join(dir, 'corpus.sqlite3'))
}

/** Exit code a command asks for, without throwing (partial jobs). */
export const exitState = { code: 0 }

export function writeOut(text: string): void {
  writeStdout(text.endsWith('\n') ? text : `${text}\n`)
}

/** Set once fd 1 refused a write: from then on everything goes through `process.stdout`, in order. */
let streamed = false

/**
 * Writes to fd 1 directly: creating `process.stdout` (a stream over the pipe, file or terminal)
 * cost a CLI search ~2 ms, and on Linux its writes are synchronous anyway. A descriptor a parent
 * made non-blocking may refuse a large write (EAGAIN): the rest then goes through the stream, as
 * does every later write. A reader that went away (EPIPE: `tychora search … | head`) ends the
 * output quietly.
 */
function writeStdout(text: string): void {
  if (streamed) {
    process.stdout.write(text)
    return
  }
  const bytes = Buffer.from(text)
  let written = 0
  try {
    while (written < bytes.length) written += writeSync(1, bytes, written)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EPIPE') return
    if (code !== 'EAGAIN') throw error
    streamed = true
    process.stdout.write(bytes.subarray(written))
  }
}

/** `--debounce-ms` of `watch` and `serve --watch`: whole milliseconds up to a minute (default 300). */
export function debounceMs(value: string | undefined): number {
  if (value === undefined) return 300
  const ms = Number(value)
  if (!Number.isInteger(ms) || ms < 0 || ms > 60_000) throw new TychoraError('E_INVALID_ARGUMENT', `--debounce-ms must be a whole number of milliseconds from 0 to 60000, got ${value}`)
  return ms
}

/**
 * Every value of a flag given more than once (`--facet a=1 --facet b=2`, or `--facet=a=1`):
 * citty keeps only the last, and a value may itself hold commas, so the raw words are read.
 */
export function repeatedFlag(rawArgs: readonly string[], name: string): string[] {
  const values: string[] = []
  for (let i = 0; i < rawArgs.length; i++) {
    const word = rawArgs[i]!
    if (word === '--') break
    const next = rawArgs[i + 1]
    if (word === `--${name}` && next !== undefined) {
      values.push(next)
      i++
    } else if (word.startsWith(`--${name}=`)) values.push(word.slice(name.length + 3))
  }
  return values
}

/** `NAME=VALUE` flags into an object; a word without `=` is refused. */
export function assignments(words: readonly string[], flag: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const word of words) {
    const at = word.indexOf('=')
    if (at <= 0) throw new TychoraError('E_INVALID_ARGUMENT', `--${flag} takes NAME=VALUE, got ${JSON.stringify(word)}`)
    out[word.slice(0, at).trim()] = word.slice(at + 1)
  }
  return out
}
