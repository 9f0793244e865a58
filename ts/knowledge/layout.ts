import { existsSync, readFileSync, statSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { dirname, isAbsolute, join, resolve } from 'node:path'
import { type ProjectConfig, ProjectConfigSchema } from '../contracts/knowledge.js'
import { runtimeDir } from '../contracts/runtime.js'
import { TychoraError } from '../errors.js'

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

/** What `.tychora/.gitignore` keeps out of Git: everything rebuildable. */
const GITIGNORE = '# Rebuildable: `tychora migrate apply` makes them again from the tracked folders.\nstate/\ngenerated/\nruntime/\n'

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

/** Reads and checks project.json: an error names the file and the field. */
export function readProjectConfig(paths: ProjectPaths): ProjectConfig {
  let raw: unknown
  try {
    raw = JSON.parse(readFileSync(paths.config, 'utf8'))
  } catch (error) {
    throw new TychoraError('E_INVALID_ARGUMENT', `${paths.config}: not valid JSON (${(error as Error).message})`)
  }
  const parsed = ProjectConfigSchema.safeParse(raw)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    throw new TychoraError('E_INVALID_ARGUMENT', `${paths.config}: ${issue?.path.join('.') || '(root)'}: ${issue?.message}`)
  }
  const { levels, default: fallback, ceiling } = parsed.data.sensitivity
  for (const [field, level] of [
    ['sensitivity.default', fallback],
    ['sensitivity.ceiling', ceiling],
  ] as const) {
    if (!levels.includes(level)) throw new TychoraError('E_INVALID_ARGUMENT', `${paths.config}: ${field}: ${JSON.stringify(level)} is not one of the levels ${levels.join(', ')}`)
  }
  return parsed.data
}

/**
 * Creates `.tychora/` in `repo`: project.json, the tracked folders and a .gitignore for the
 * rebuildable ones. Refuses a folder that is already a plain workspace (its corpus would be
 * hidden by the project's states).
 */
export async function initProject(repo: string, options: { profile?: ProjectConfig['profile']; ceiling?: string } = {}): Promise<ProjectPaths> {
  const root = join(resolve(repo), '.tychora')
  const paths = projectPaths(root)
  if (existsSync(paths.config)) throw new TychoraError('E_CONFLICT', `${paths.config} already exists`)
  if (existsSync(join(root, 'corpus.sqlite3'))) {
    throw new TychoraError('E_CONFLICT', `${root} is a workspace (tychora init): move it elsewhere (tychora manage backup, then restore) before making this folder a knowledge project`)
  }
  const config = ProjectConfigSchema.parse({ version: 1, ...(options.profile ? { profile: options.profile } : {}) })
  if (options.ceiling) config.sensitivity.ceiling = options.ceiling
  for (const dir of [paths.migrations, paths.knowledge, paths.specifications, paths.proposals, paths.review]) await mkdir(dir, { recursive: true })
  await writeFile(join(root, '.gitignore'), GITIGNORE)
  await writeFile(paths.config, `${JSON.stringify(config, null, 2)}\n`)
  readProjectConfig(paths)
  return paths
}
