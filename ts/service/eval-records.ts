import { constants } from 'node:fs'
import { lstat, open, readdir, realpath } from 'node:fs/promises'
import { join, sep } from 'node:path'
import type { z } from 'zod'
import { EVAL_RECORD_ID, EVAL_RECORDS_DIR, type EvalRecord, type EvalRecordBrief, EvalRecordBriefSchema, type EvalRecordList, EvalRecordSchema } from '../contracts/eval.js'
import { TychoraError, formatIssues } from '../errors.js'

/**
 * Reads the evaluation records a workspace keeps in `evals/` (`tychora eval … --record`, written
 * by `ts/eval/records.ts`): the listing for a dashboard's charts and one record's queries.
 */

/** A record larger than this is not read (a 5,000-query record is a few tens of MB). */
const MAX_RECORD_BYTES = 128 * 1024 * 1024

/** Reads at a time while listing. */
const PARALLEL_READS = 16

type Outcome = { ok: true; text: string; stamp?: string } | { ok: false; code: 'E_NOT_FOUND' | 'E_FORBIDDEN' | 'E_CORRUPT' | 'E_IO'; reason: string }

const errno = (error: unknown) => (error as NodeJS.ErrnoException).code

/**
 * The workspace's evals folder as a real path, or why it cannot be read: absent, or not a folder
 * of its own (a symlink, which could lead anywhere, is not followed).
 */
async function evalsFolder(workspaceDir: string): Promise<{ dir: string; real: string } | { missing: true } | { refused: string }> {
  const dir = join(workspaceDir, EVAL_RECORDS_DIR)
  try {
    const stat = await lstat(dir)
    if (stat.isSymbolicLink()) return { refused: `${dir} is a symlink; records are read only from the workspace's own evals folder` }
    if (!stat.isDirectory()) return { refused: `${dir} is not a folder` }
    return { dir, real: await realpath(dir) }
  } catch (error) {
    if (errno(error) === 'ENOENT' || errno(error) === 'ENOTDIR') return { missing: true }
    throw new TychoraError('E_IO', `cannot read ${dir}: ${(error as Error).message}`, { cause: error })
  }
}

/**
 * The text of `name` in the folder: a symlink is followed only when its target is inside the
 * folder; the file is opened without following a link and must be a regular file of bounded size.
 */
async function readConfined(folder: { dir: string; real: string }, name: string): Promise<Outcome> {
  let path = join(folder.dir, name)
  try {
    const stat = await lstat(path)
    if (stat.isSymbolicLink()) {
      const target = await realpath(path)
      if (!target.startsWith(folder.real + sep)) return { ok: false, code: 'E_FORBIDDEN', reason: 'a symlink out of the evals folder; not followed' }
      path = target
    }
  } catch (error) {
    if (errno(error) === 'ENOENT') return { ok: false, code: 'E_NOT_FOUND', reason: 'no such record' }
    return { ok: false, code: 'E_IO', reason: (error as Error).message }
  }
  let handle: Awaited<ReturnType<typeof open>> | undefined
  try {
    handle = await open(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0))
    const stat = await handle.stat()
    if (!stat.isFile()) return { ok: false, code: 'E_CORRUPT', reason: 'not a regular file' }
    if (stat.size > MAX_RECORD_BYTES) return { ok: false, code: 'E_CORRUPT', reason: `${stat.size} bytes: larger than ${MAX_RECORD_BYTES}` }
    const text = await handle.readFile('utf8')
    // The stamp of what was read, for the listing's cache: only for a file read by its own name.
    return { ok: true, text, ...(path === join(folder.dir, name) ? { stamp: stampOf(stat) } : {}) }
  } catch (error) {
    if (errno(error) === 'ENOENT') return { ok: false, code: 'E_NOT_FOUND', reason: 'no such record' }
    if (errno(error) === 'ELOOP') return { ok: false, code: 'E_FORBIDDEN', reason: 'a symlink; not followed' }
    return { ok: false, code: 'E_IO', reason: (error as Error).message }
  } finally {
    await handle?.close()
  }
}

/** Parses a record's text with `schema`, checking it is the record its file name says. */
function parseRecord<T extends { id: string }>(text: string, id: string, schema: z.ZodType<T>): { ok: true; record: T } | { ok: false; reason: string } {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    return { ok: false, reason: `not JSON: ${(error as Error).message}` }
  }
  const parsed = schema.safeParse(json)
  if (!parsed.success) return { ok: false, reason: formatIssues(parsed.error.issues) }
  if (parsed.data.id !== id) return { ok: false, reason: `its id ${JSON.stringify(parsed.data.id)} is not its file name's` }
  return { ok: true, record: parsed.data }
}

/**
 * Briefs already parsed, by record file's real path, with the file's identity and size when read:
 * a listing re-reads only records written (or replaced) since, not every record's queries again
 * (a record is written once, by rename; a changed file has a new inode or mtime). Bounded by the
 * records one process has listed.
 */
const briefs = new Map<string, { stamp: string; brief: EvalRecordBrief }>()
const stampOf = (s: { ino: number; size: number; mtimeMs: number }) => `${s.ino}:${s.size}:${s.mtimeMs}`

/** Whether a folder entry is a record's file at all: temp files (`.<id>….tmp`) and other names are not. */
const isCandidate = (name: string) => name.endsWith('.json') && !name.startsWith('.')

/**
 * The workspace's evaluation records without their queries, newest first. A file that cannot be
 * read as a record (not JSON, not the schema, a name that is not a record id, a symlink out of the
 * folder) is skipped and reported with its reason; one bad file never fails the listing. Temp
 * files and names not ending in `.json` are ignored. No evals folder: no records.
 */
export async function listEvalRecords(workspaceDir: string): Promise<EvalRecordList> {
  const folder = await evalsFolder(workspaceDir)
  if ('missing' in folder) return { records: [], skipped: [] }
  if ('refused' in folder) return { records: [], skipped: [{ file: EVAL_RECORDS_DIR, reason: folder.refused }] }
  const names = (await readdir(folder.dir)).filter(isCandidate).sort()
  const records: EvalRecordBrief[] = []
  const skipped: EvalRecordList['skipped'] = []
  const one = async (file: string) => {
    const id = file.slice(0, -'.json'.length)
    if (!EVAL_RECORD_ID.test(id)) return skipped.push({ file, reason: 'not an evaluation record name (<time>-<kind>-<8 hex>.json)' })
    const key = join(folder.real, file)
    const known = briefs.get(key)
    if (known) {
      // A plain file unchanged since it was read (a symlink goes through the full read, which confines it).
      const stat = await lstat(key).catch(() => undefined)
      if (stat?.isFile() && stampOf(stat) === known.stamp) return records.push(known.brief)
    }
    const read = await readConfined(folder, file)
    // Removed between the listing and the read: nothing to report.
    if (!read.ok) return read.code === 'E_NOT_FOUND' ? undefined : skipped.push({ file, reason: read.reason })
    const parsed = parseRecord(read.text, id, EvalRecordBriefSchema)
    if (!parsed.ok) return skipped.push({ file, reason: parsed.reason })
    if (read.stamp) briefs.set(key, { stamp: read.stamp, brief: parsed.record })
    return records.push(parsed.record)
  }
  for (let i = 0; i < names.length; i += PARALLEL_READS) await Promise.all(names.slice(i, i + PARALLEL_READS).map(one))
  records.sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
  skipped.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0))
  return { records, skipped }
}

/**
 * One record with its queries. The id is checked against the record id pattern before the file
 * system is touched (E_INVALID_ARGUMENT: no path can be smuggled in); E_NOT_FOUND when there is no
 * such record, E_CORRUPT (with the schema's message) when its file is not a valid record,
 * E_FORBIDDEN for a symlink out of the folder.
 */
export async function readEvalRecord(workspaceDir: string, id: string): Promise<EvalRecord> {
  if (typeof id !== 'string' || !EVAL_RECORD_ID.test(id)) throw new TychoraError('E_INVALID_ARGUMENT', `${JSON.stringify(id)} is not an evaluation record id (<time>-<kind>-<8 hex>)`)
  const folder = await evalsFolder(workspaceDir)
  if ('missing' in folder) throw new TychoraError('E_NOT_FOUND', `no evaluation record ${id}: the workspace has none`)
  if ('refused' in folder) throw new TychoraError('E_FORBIDDEN', folder.refused)
  const file = `${id}.json`
  const read = await readConfined(folder, file)
  if (!read.ok) throw new TychoraError(read.code, read.code === 'E_NOT_FOUND' ? `no evaluation record ${id}` : `evaluation record ${id}: ${read.reason}`)
  const parsed = parseRecord(read.text, id, EvalRecordSchema)
  if (!parsed.ok) throw new TychoraError('E_CORRUPT', `evaluation record ${id} is malformed: ${parsed.reason}`)
  return parsed.record
}
