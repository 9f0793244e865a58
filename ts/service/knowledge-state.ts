import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { mkdir, open, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { basename, join } from 'node:path'
import type { ApplyReport, Migration, ProjectConfig } from '../contracts/knowledge.js'
import { native } from '../engine/native.js'
import { ensureTokens } from '../engine/tokens.js'
import { Workspace } from '../engine/workspace.js'
import { TychoraError } from '../errors.js'
import { type Item, applyChange, withinCeiling } from '../knowledge/items.js'
import { type ProjectPaths, readProjectConfig } from '../knowledge/layout.js'
import { migrationChecksums, readMigrations, sha256, writeAtomic } from '../knowledge/migrations.js'

/** Approved items live in this collection (trust `approved`). */
export const KNOWLEDGE_COLLECTION = 'knowledge'
/** Rejected approaches live in this one (trust `rejected_approach`). */
export const REJECTED_COLLECTION = 'rejected-approaches'

/** `state.json` in a built state: what it was built from. */
interface StateRecord {
  version: 1
  state_hash: string
  migrations: { id: string; checksum: string }[]
  config: string
  engine: string
  schema: number
  /** Items above the ceiling: applied, never indexed. */
  withheld: string[]
  snapshot_id: number | null
  built_at: string
}

/** What a state hash covers, read from the tracked inputs. */
export interface Inputs {
  /** Each migration's id and checksum (checked against its checksum file), in order. */
  migrations: { id: string; checksum: string }[]
  config: ProjectConfig
  configChecksum: string
  engine: string
  schema: number
}

export function readInputs(paths: ProjectPaths): Inputs {
  const config = readProjectConfig(paths)
  const identity = native().engineIdentity()
  return {
    migrations: migrationChecksums(paths),
    config,
    configChecksum: sha256(readFileSync(paths.config)),
    engine: identity.engine_version,
    schema: identity.schema_version,
  }
}

/**
 * `sha256(sorted migration ids + their checksums + project configuration + schema version + engine
 * version)`: one built state per distinct hash, so a branch switch back to a built state finds it
 * by name. The project's configuration stands in for "source checksums": the approved sources of a
 * state are the migrations themselves, and project.json (sensitivity levels and ceiling, profile)
 * decides what of them is indexed.
 */
export function stateHash(inputs: Inputs): string {
  const lines = inputs.migrations.map((m) => `${m.id} ${m.checksum}`).sort()
  return sha256([...lines, `config ${inputs.configChecksum}`, `schema ${inputs.schema}`, `engine ${inputs.engine}`].join('\n'))
}

const stateDir = (paths: ProjectPaths, hash: string) => join(paths.states, hash)

/** The workspace name of the state with this hash (what the daemon serves it as). */
export const stateName = (hash: string) => `knowledge-${hash.slice(0, 12)}`
const bodiesDir = (paths: ProjectPaths) => join(paths.states, 'bodies')
const currentFile = (paths: ProjectPaths) => join(paths.states, 'current')

/** The migrations (id and checksum) the built state in `dir` applied; empty when it is not one. */
export function appliedMigrations(dir: string): { id: string; checksum: string }[] {
  return readRecord(dir)?.migrations ?? []
}

function readRecord(dir: string): StateRecord | undefined {
  try {
    return JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8')) as StateRecord
  } catch {
    return undefined
  }
}

/** Every complete state in the states folder (a branch's, a worktree's), newest first. */
export function builtStates(paths: ProjectPaths): string[] {
  if (!existsSync(paths.states)) return []
  return readdirSync(paths.states)
    .filter((n) => /^[0-9a-f]{64}$/.test(n))
    .map((n) => ({ dir: stateDir(paths, n), record: readRecord(stateDir(paths, n)) }))
    .filter((s): s is { dir: string; record: StateRecord } => s.record?.state_hash === basename(s.dir))
    .sort((a, b) => b.record.built_at.localeCompare(a.record.built_at))
    .map((s) => s.dir)
}

/** The built state for the tracked inputs now, if built: `O(1)` — hash the inputs, look the folder up. */
export function builtState(paths: ProjectPaths): { hash: string; dir: string } | undefined {
  const hash = stateHash(readInputs(paths))
  const dir = stateDir(paths, hash)
  return readRecord(dir)?.state_hash === hash ? { hash, dir } : undefined
}

/**
 * The state that answers: the one built for the tracked inputs now, else the last complete state
 * (`behind`: apply the migrations to catch up) — a branch that is not built yet never leaves the
 * project without answers.
 */
export function answeringState(paths: ProjectPaths): { hash: string; dir: string; behind: boolean; problem?: string } | undefined {
  let problem: string | undefined
  try {
    const built = builtState(paths)
    if (built) return { ...built, behind: false }
  } catch (error) {
    // Inputs that cannot be read (a migration edited after acceptance, two with one number)
    // never take answers away: the last complete state keeps answering, and says why.
    problem = (error as Error).message
  }
  const last = existsSync(currentFile(paths)) ? readFileSync(currentFile(paths), 'utf8').trim() : ''
  if (/^[0-9a-f]{64}$/.test(last) && readRecord(stateDir(paths, last))) return { hash: last, dir: stateDir(paths, last), behind: true, ...(problem ? { problem } : {}) }
  return undefined
}

export interface ApplyOptions {
  /** Called after each migration is applied to the state being built (progress; awaited). */
  onMigration?: (id: string, done: number, total: number) => void | Promise<void>
}

/**
 * `migrate apply`: makes the state for the tracked inputs now. A state already built is reused
 * as it is (a `git checkout` back costs a hash of the inputs). Otherwise the nearest built
 * ancestor — a state whose migrations are a prefix of these — is cloned (its database by SQLite's
 * backup API, its artifacts and lexical generations hard-linked) and only the delta is applied;
 * with none, the state is built from empty. The new state is built
 * aside and renamed into place when complete, so the state that was answering keeps answering
 * until then, and a crash leaves no half state behind.
 *
 * Each migration is one publication in order, so a state rebuilt from nothing holds the same rows
 * and answers the same queries, byte for byte, as one built up apply by apply.
 */
export async function applyMigrations(paths: ProjectPaths, options: ApplyOptions = {}): Promise<ApplyReport> {
  const started = performance.now()
  await mkdir(paths.states, { recursive: true })
  const release = await buildLock(paths)
  try {
    const inputs = readInputs(paths)
    const hash = stateHash(inputs)
    const target = stateDir(paths, hash)
    const diagnostics: string[] = []
    const built = readRecord(target)
    if (built?.state_hash === hash) {
      await writeAtomic(currentFile(paths), `${hash}\n`)
      const record = built
      return {
        state_hash: hash,
        state_dir: target,
        base: 'reused',
        applied: [],
        snapshot_id: record?.snapshot_id ?? null,
        withheld: record?.withheld ?? [],
        purged: [],
        diagnostics,
        duration_ms: performance.now() - started,
      }
    }
    // The migrations themselves, read once more: the same files the hash covered, or the tree
    // changed under us (a checkout mid-read) and this apply stops before building anything.
    const migrations = readMigrations(paths)
    if (migrations.map((m) => `${m.migration.id} ${m.checksum}`).join('\n') !== inputs.migrations.map((m) => `${m.id} ${m.checksum}`).join('\n')) {
      throw new TychoraError('E_CONFLICT', 'the tracked migrations changed while they were read (a branch switch?); run `tychora migrate apply` again')
    }
    const building = `${target}.building-${process.pid}`
    await rm(building, { recursive: true, force: true })
    const ancestor = nearestAncestor(paths, inputs)
    if (ancestor) {
      // The ancestor keeps answering meanwhile: it is read, never written.
      await native().cloneWorkspace(ancestor.dir, building)
      await ensureTokens(building)
    } else {
      await Workspace.init(building, { profile: inputs.config.profile })
      // The bodies folder is the state's one capture root, so a body's root-relative path
      // (knowledge/<item>.md) names it in every state, and nothing else is ever captured.
      await mkdir(bodiesDir(paths), { recursive: true })
      const toml = join(building, 'workspace.toml')
      const text = await readFile(toml, 'utf8')
      const rooted = text.replace(/^roots = \[\]\nauto_add_roots = true$/m, `roots = [${JSON.stringify(bodiesDir(paths))}]\nauto_add_roots = false`)
      if (rooted === text) throw new TychoraError('E_INTERNAL', `${toml}: no [capture] section to set the knowledge root in`)
      await writeFile(toml, rooted)
    }
    const done = ancestor?.record.migrations.length ?? 0
    // The items as the ancestor left them: replaying its migrations is pure (no I/O).
    let items = new Map<string, Item>()
    for (const m of migrations.slice(0, done)) if (m.migration.decision === 'accepted') items = applyChange(items, m.migration.change, m.migration.id, inputs.config)
    const withheld = new Set(ancestor?.record.withheld ?? [])
    const applied: string[] = []
    const purged: string[] = []
    const ws = await Workspace.open(building)
    let snapshot: number | null
    try {
      for (const { migration } of migrations.slice(done)) {
        items = await applyOne(ws, paths, migration, items, inputs.config, withheld, purged)
        applied.push(migration.id)
        await options.onMigration?.(migration.id, applied.length, migrations.length - done)
      }
      snapshot = (await ws.status({ tables: false })).current_snapshot?.id ?? null
    } finally {
      ws.close()
    }
    const record: StateRecord = {
      version: 1,
      state_hash: hash,
      migrations: inputs.migrations,
      config: inputs.configChecksum,
      engine: inputs.engine,
      schema: inputs.schema,
      withheld: [...withheld].sort(),
      snapshot_id: snapshot,
      built_at: new Date().toISOString(),
    }
    await writeAtomic(join(building, 'state.json'), `${JSON.stringify(record, null, 2)}\n`)
    // Served side by side (a daemon holding two branches' states), each state has its own name.
    const toml = join(building, 'workspace.toml')
    await writeFile(toml, (await readFile(toml, 'utf8')).replace(/^name = .*$/m, `name = "${stateName(hash)}"`))
    await rm(target, { recursive: true, force: true })
    await rename(building, target)
    // Inputs that changed while building (a branch switch mid-build) leave this state valid for
    // what it was built from; it does not become the answering state of inputs it never saw.
    if (stateHash(readInputs(paths)) === hash) await writeAtomic(currentFile(paths), `${hash}\n`)
    else diagnostics.push('the tracked inputs changed during the build (a branch switch?): the state built is for the inputs read at its start; run `tychora migrate apply` again')
    return {
      state_hash: hash,
      state_dir: target,
      base: ancestor ? 'descendant' : 'empty',
      applied,
      snapshot_id: snapshot,
      withheld: record.withheld,
      purged,
      diagnostics,
      duration_ms: performance.now() - started,
    }
  } finally {
    await release()
  }
}

/** The built state with the longest migration list that is a prefix of `inputs`' (same configuration and engine). */
function nearestAncestor(paths: ProjectPaths, inputs: Inputs): { dir: string; record: StateRecord } | undefined {
  if (!existsSync(paths.states)) return undefined
  let best: { dir: string; record: StateRecord } | undefined
  for (const name of readdirSync(paths.states)) {
    if (!/^[0-9a-f]{64}$/.test(name)) continue
    const dir = stateDir(paths, name)
    const record = readRecord(dir)
    if (!record || record.config !== inputs.configChecksum || record.engine !== inputs.engine || record.schema !== inputs.schema) continue
    const prefix = record.migrations.every((m, i) => inputs.migrations[i]?.id === m.id && inputs.migrations[i]?.checksum === m.checksum)
    if (prefix && record.migrations.length < inputs.migrations.length && (!best || record.migrations.length > best.record.migrations.length)) best = { dir, record }
  }
  return best
}

/** Applies one migration to the state being built: at most one publication. */
async function applyOne(
  ws: Workspace,
  paths: ProjectPaths,
  migration: Migration,
  before: Map<string, Item>,
  config: ProjectConfig,
  withheld: Set<string>,
  purged: string[],
): Promise<Map<string, Item>> {
  const stamp = (trust: 'approved' | 'rejected_approach') => ({ trust, as_of: Date.parse(migration.reviewed_at), origin: migration.id })
  const change = migration.change
  if (migration.decision === 'rejected') {
    const level = change.op === 'create' ? (change.sensitivity ?? config.sensitivity.default) : (before.get(change.item)?.sensitivity ?? config.sensitivity.default)
    const name = `rejected/${migration.proposal}.md`
    if (!withinCeiling(level, config)) {
      withheld.add(name)
      return before
    }
    const file = await writeBody(paths, name, rejectedBody(migration, before))
    await ws.add({ paths: [file], collection: REJECTED_COLLECTION, kind: 'rationale' }, { stamp: stamp('rejected_approach') })
    return before
  }
  const items = applyChange(before, change, migration.id, config)
  const item = items.get(change.item) as Item
  const name = `knowledge/${item.id}.md`
  const indexed = (i: Item | undefined) => i !== undefined && withinCeiling(i.sensitivity, config)
  const add = async () => {
    const file = await writeBody(paths, name, `# ${item.title}\n\n${item.body.trimEnd()}\n`)
    await ws.add({ paths: [file], collection: KNOWLEDGE_COLLECTION, kind: item.kind }, { stamp: stamp('approved') })
    withheld.delete(name)
  }
  switch (change.op) {
    case 'create':
    case 'edit':
      if (indexed(item)) await add()
      else withheld.add(name)
      break
    case 'supersede':
      if (indexed(before.get(change.item))) await ws.withdraw(name, `superseded by ${change.by} (${migration.id})`)
      break
    case 'sensitivity':
      if (indexed(before.get(change.item)) && !indexed(item)) {
        // Past the ceiling: the rows leave the published state and the bytes are erased, in
        // this apply (a tombstone says what, when and why).
        await ws.deleteOriginal(name, `sensitivity raised to ${item.sensitivity}, above the ceiling ${config.sensitivity.ceiling} (${migration.id})`)
        withheld.add(name)
        purged.push(item.id)
      } else if (!indexed(before.get(change.item)) && indexed(item) && !item.superseded_by) {
        await add()
      }
      break
  }
  return items
}

function rejectedBody(migration: Migration, items: Map<string, Item>): string {
  const change = migration.change
  const title = change.op === 'create' ? change.title : (items.get(change.item)?.title ?? change.item)
  const proposed =
    change.op === 'create' || change.op === 'edit'
      ? change.body.trimEnd()
      : `${change.op} ${change.item}${change.op === 'supersede' ? ` by ${change.by}` : ''}${change.op === 'sensitivity' ? ` to ${change.sensitivity}` : ''}`
  return `# Rejected approach: ${title}\n\nRejected by ${migration.reviewed_by} (${migration.id}): ${migration.reason ?? ''}\n\n## What was proposed\n\n${proposed}\n\n## Its rationale\n\n${migration.rationale.trimEnd()}\n`
}

/**
 * Writes a body where the state's captures read it. The folder is shared by every state (and
 * worktree), so a body's captured URI is the same in every state built from the same migrations.
 */
async function writeBody(paths: ProjectPaths, name: string, text: string): Promise<string> {
  const file = join(bodiesDir(paths), name)
  await mkdir(join(file, '..'), { recursive: true })
  await writeFile(file, text)
  return file
}

/**
 * One build at a time per states folder (worktrees share it): an exclusive lock file holding the
 * builder's pid; one left by a process that is gone is taken over.
 */
async function buildLock(paths: ProjectPaths): Promise<() => Promise<void>> {
  const file = join(paths.states, 'build.lock')
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(file, 'wx')
      await handle.writeFile(String(process.pid))
      await handle.close()
      return () => rm(file, { force: true })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      const pid = Number((await readFile(file, 'utf8').catch(() => '')).trim())
      if (pid > 0 && alive(pid)) throw new TychoraError('E_LOCKED', `another build of this project's knowledge state is running (pid ${pid}); the state that was answering keeps answering`)
      await rm(file, { force: true })
    }
  }
  throw new TychoraError('E_LOCKED', 'could not take the knowledge build lock')
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}
