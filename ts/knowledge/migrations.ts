import { createHash } from 'node:crypto'
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { type Migration, MigrationSchema } from '../contracts/knowledge.js'
import { TychoraError } from '../errors.js'
import type { ProjectPaths } from './layout.js'

export const sha256 = (bytes: string | Buffer) => createHash('sha256').update(bytes).digest('hex')

/** A migration as read from Git, with the checksum of its exact bytes. */
export interface MigrationFile {
  migration: Migration
  checksum: string
  file: string
}

const NAME = /^([0-9]{4})-[a-z0-9-]+\.json$/

/**
 * Every knowledge migration, in order, each checked against the checksum recorded beside it when
 * it was accepted (`NNNN-name.sha256`, in `sha256sum` format, so `sha256sum -c` checks it too).
 *
 * @throws E_CHECKSUM_MISMATCH when a migration's bytes changed after acceptance (or its checksum
 *   file is missing); E_CONFLICT when two migrations share a number (branches that each accepted
 *   one, merged); E_INVALID_ARGUMENT naming the file and field of a malformed one.
 */
export function readMigrations(paths: ProjectPaths): MigrationFile[] {
  return checkedFiles(paths).map(({ name, number, file, bytes, checksum }) => {
    let raw: unknown
    try {
      raw = JSON.parse(bytes.toString('utf8'))
    } catch (error) {
      throw new TychoraError('E_INVALID_ARGUMENT', `migrations/${name}: not valid JSON (${(error as Error).message})`)
    }
    const parsed = MigrationSchema.safeParse(raw)
    if (!parsed.success) {
      const issue = parsed.error.issues[0]
      throw new TychoraError('E_INVALID_ARGUMENT', `migrations/${name}: ${issue?.path.join('.') || '(root)'}: ${issue?.message}`)
    }
    const migration = parsed.data
    if (`${migration.id}.json` !== name || migration.seq !== Number(number)) {
      throw new TychoraError('E_INVALID_ARGUMENT', `migrations/${name}: its id (${migration.id}) and seq (${migration.seq}) must match its file name`)
    }
    return { migration, checksum, file }
  })
}

/**
 * Every migration's id and checksum, checked against its checksum file, without parsing it: what
 * a state hash covers, read on every command that resolves the answering state.
 */
export function migrationChecksums(paths: ProjectPaths): { id: string; checksum: string }[] {
  return checkedFiles(paths).map(({ name, checksum }) => ({ id: name.replace(/\.json$/, ''), checksum }))
}

function checkedFiles(paths: ProjectPaths): { name: string; number: string; file: string; bytes: Buffer; checksum: string }[] {
  if (!existsSync(paths.migrations)) return []
  const names = readdirSync(paths.migrations)
    .filter((n) => n.endsWith('.json'))
    .sort()
  // Names first: two migrations with one number is a merge to resolve, whatever their contents.
  const bySeq = new Map<string, string>()
  for (const name of names) {
    const number = NAME.exec(name)?.[1]
    if (!number) throw new TychoraError('E_INVALID_ARGUMENT', `migrations/${name}: a migration file is named NNNN-name.json (four digits, lower-case words)`)
    const twin = bySeq.get(number)
    if (twin) {
      throw new TychoraError(
        'E_CONFLICT',
        `migrations/${twin} and migrations/${name} share the number ${number}: two branches each accepted a migration and were merged. Renumber the later one (tychora migrate renumber ${name.replace(/\.json$/, '')}) and commit`,
      )
    }
    bySeq.set(number, name)
  }
  return names.map((name) => {
    const file = join(paths.migrations, name)
    const bytes = readFileSync(file)
    const checksum = sha256(bytes)
    const sidecar = file.replace(/\.json$/, '.sha256')
    const recorded = existsSync(sidecar) ? /^([0-9a-f]{64})\b/.exec(readFileSync(sidecar, 'utf8'))?.[1] : undefined
    if (!recorded)
      throw new TychoraError(
        'E_CHECKSUM_MISMATCH',
        `migrations/${name}: its checksum file ${name.replace(/\.json$/, '.sha256')} is missing or unreadable; a migration is accepted with \`tychora review accept\`, which writes both`,
      )
    if (recorded !== checksum) {
      throw new TychoraError(
        'E_CHECKSUM_MISMATCH',
        `migrations/${name} changed after it was accepted (recorded sha256 ${recorded.slice(0, 12)}…, now ${checksum.slice(0, 12)}…): an approved change is never edited; propose a new change instead`,
      )
    }
    return { name, number: NAME.exec(name)?.[1] as string, file, bytes, checksum }
  })
}

/** The bytes a migration is written as (and checksummed over). */
export const migrationBytes = (migration: Migration) => `${JSON.stringify(migration, null, 2)}\n`

/** Writes a migration and its checksum file, each by rename, so a reader never sees half of one. */
export async function writeMigration(paths: ProjectPaths, migration: Migration): Promise<MigrationFile> {
  const bytes = migrationBytes(migration)
  const file = join(paths.migrations, `${migration.id}.json`)
  const checksum = sha256(bytes)
  await writeAtomic(file.replace(/\.json$/, '.sha256'), `${checksum}  ${migration.id}.json\n`)
  await writeAtomic(file, bytes)
  return { migration, checksum, file }
}

export async function writeAtomic(file: string, data: string): Promise<void> {
  const temp = `${file}.${process.pid}.tmp`
  await writeFile(temp, data)
  await rename(temp, file)
}

/** The next migration number: one past the highest, so order follows acceptance. */
export const nextSeq = (migrations: MigrationFile[]) => Math.max(0, ...migrations.map((m) => m.migration.seq)) + 1

/** `0007-use-token-rotation`. */
export const migrationId = (seq: number, slug: string) => `${String(seq).padStart(4, '0')}-${slug.slice(0, 60).replace(/-+$/, '')}`

/**
 * Gives migration `id` the next free number (after a merge left two with one number): a new file
 * and checksum, the old pair removed. Its content is unchanged but its identity is new, so a
 * state that applied it under the old id is rebuilt, as it must be: the order changed.
 */
export async function renumber(paths: ProjectPaths, id: string): Promise<MigrationFile> {
  const file = join(paths.migrations, `${id}.json`)
  if (!/^[0-9]{4}-[a-z0-9-]+$/.test(id) || !existsSync(file)) throw new TychoraError('E_NOT_FOUND', `no migration ${JSON.stringify(id)} in migrations/`)
  const parsed = MigrationSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')))
  if (!parsed.success) throw new TychoraError('E_INVALID_ARGUMENT', `migrations/${id}.json: ${parsed.error.issues[0]?.message}`)
  const numbers = readdirSync(paths.migrations)
    .map((n) => NAME.exec(n)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number)
  const seq = Math.max(0, ...numbers) + 1
  const moved = { ...parsed.data, seq, id: migrationId(seq, id.slice(5)) }
  const written = await writeMigration(paths, moved)
  await rm(file, { force: true })
  await rm(file.replace(/\.json$/, '.sha256'), { force: true })
  return written
}
