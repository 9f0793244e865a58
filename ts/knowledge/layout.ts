import { existsSync, readFileSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { type ProjectConfig, ProjectConfigSchema } from '../contracts/knowledge.js'
import { TychoraError } from '../errors.js'
import { type ProjectPaths, projectPaths } from './paths.js'

export { PROJECT_FILE, type ProjectPaths, findProject, projectPaths } from './paths.js'

/** What `.tychora/.gitignore` keeps out of Git: everything rebuildable. */
const GITIGNORE = '# Rebuildable: `tychora migrate apply` makes them again from the tracked folders.\nstate/\ngenerated/\nruntime/\n'

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
