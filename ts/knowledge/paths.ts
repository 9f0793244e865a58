import { existsSync, readFileSync, statSync } from 'node:fs'
import { dirname, isAbsolute, join, resolve } from 'node:path'
import { runtimeDir } from '../contracts/runtime.js'

// Where a project's files are, without its contracts: a CLI search resolves its workspace
// through here and must not build the knowledge schemas to do it (issue 11).

/**
 * Where a project's knowledge lives (DESIGN §5): Git-tracked inputs (migrations, approved bodies,
 * specifications, proposals, review evidence) beside untracked, rebuildable state.
 */
export interface ProjectPaths {
  /** The `.tychora` folder. */
  root: string
  config: string
  migrations: string
  knowledge: string
  specifications: string
  proposals: string
  review: string
  /** Built states, one folder per state hash; shared by the repository's worktrees. */
  states: string
  generated: string
  runtime: string
}

export const PROJECT_FILE = 'project.json'

export function projectPaths(root: string): ProjectPaths {
  return {
    root,
    config: join(root, PROJECT_FILE),
    migrations: join(root, 'migrations'),
    knowledge: join(root, 'knowledge'),
    specifications: join(root, 'specifications'),
    proposals: join(root, 'proposals'),
    review: join(root, 'review'),
    states: sharedStates(root),
    generated: join(root, 'generated'),
    runtime: runtimeDir(root),
  }
}

/** The `.tychora` project folder at or above `start`, if any. */
export function findProject(start: string): string | undefined {
  let dir = resolve(start)
  for (;;) {
    const candidate = join(dir, '.tychora')
    if (existsSync(join(candidate, PROJECT_FILE))) return candidate
    if (existsSync(join(dir, PROJECT_FILE)) && dir.endsWith('.tychora')) return dir
    const parent = dirname(dir)
    if (parent === dir) return undefined
    dir = parent
  }
}

/**
 * The states folder. A linked Git worktree (its `.git` is a file naming the main repository's
 * `worktrees/<name>` folder) uses the main worktree's `.tychora/state/`, so worktrees share the
 * states they have built instead of building each again: a state is named by the hash of its
 * inputs, so sharing can never mix two different inputs.
 */
function sharedStates(root: string): string {
  const own = join(root, 'state')
  const dotGit = join(dirname(root), '.git')
  try {
    if (!existsSync(dotGit) || statSync(dotGit).isDirectory()) return own
    const gitdir = /^gitdir:\s*(.+)\s*$/m.exec(readFileSync(dotGit, 'utf8'))?.[1]
    if (!gitdir) return own
    const worktreeGit = isAbsolute(gitdir) ? gitdir : resolve(dirname(root), gitdir)
    const common = resolve(worktreeGit, readFileSync(join(worktreeGit, 'commondir'), 'utf8').trim())
    const main = join(dirname(common), '.tychora')
    return existsSync(join(main, PROJECT_FILE)) ? join(main, 'state') : own
  } catch {
    return own
  }
}
