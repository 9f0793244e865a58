import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCommand } from 'citty'
import { afterEach, describe, expect, it } from 'vitest'
import evalCommand from '../../ts/cli/commands/eval.js'
import { EVAL_PER_QUERY_CAP, EVAL_RECORD_ID, EvalRecordBriefSchema, EvalRecordListSchema, EvalRecordSchema } from '../../ts/contracts/eval.js'
import { Workspace } from '../../ts/engine/workspace.js'
import { type BeirReport, evalBeir } from '../../ts/eval/beir.js'
import { evalEvidence } from '../../ts/eval/evidence.js'
import { buildEvalRecord, gitCommit, recordEval, writeEvalRecord } from '../../ts/eval/records.js'
import { listEvalRecords, readEvalRecord } from '../../ts/service/eval-records.js'
import { ROOT, nativeMissing } from '../native/_setup.js'

const BEIR_MINI = join(ROOT, 'test/fixtures/beir-mini')
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version
const CHECKOUT = { root: ROOT, version: VERSION }

/** HEAD of this checkout as git itself reads it, or null where git is missing. */
function gitHead(dir: string): string | null {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: dir, encoding: 'utf8' }).trim()
  } catch {
    return null
  }
}

const temps: string[] = []
afterEach(async () => {
  for (const dir of temps.splice(0)) await rm(dir, { recursive: true, force: true })
})

async function temp(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix))
  temps.push(dir)
  return dir
}

/** A folder the recorder accepts as a workspace (it only writes into `evals/`): a workspace.toml. */
async function fakeWorkspace(): Promise<string> {
  const dir = await temp('tychora-evals-ws-')
  await writeFile(join(dir, 'workspace.toml'), '')
  return dir
}

/** A BEIR report as evalBeir returns it with `perQuery`, `n` queries of `returned` documents each. */
function syntheticBeir(n: number, returned = 3): BeirReport {
  return {
    dataset: '/data/scifact',
    split: 'test',
    documents: 100,
    queries: n,
    ndcg_at_10: 0.5,
    recall_at_100: 0.9,
    mrr_at_10: 0.4,
    recall_at_10: 0.7,
    ingest_seconds: 1.5,
    query_latency_ms: { p50: 2, p99: 9, mean: 3 },
    ignore_identical_ids: false,
    per_query: Array.from({ length: n }, (_, i) => ({
      id: `q${i}`,
      query: `query ${i}`,
      expected: [{ doc: `d${i}`, relevance: 1 }],
      returned: Array.from({ length: returned }, (_, r) => ({ rank: r + 1, doc: `d${r}`, channels: [{ channel: 'lexical', rank: r + 1 }] })),
      metrics: { 'ndcg@10': 0.5 },
    })),
  }
}

const listing = (dir: string) => readdirSync(join(dir, 'evals')).sort()

describe('evaluation records: writing, listing, reading', () => {
  it('builds a record that parses, with metrics under stable keys, the commit and the version', async () => {
    const record = buildEvalRecord({
      kind: 'beir',
      report: syntheticBeir(2),
      settings: { split: 'test', profile: 'documents', limit: undefined },
      checkout: CHECKOUT,
      now: Date.UTC(2026, 0, 15, 10, 30, 45, 123),
    })
    expect(EvalRecordSchema.parse(record)).toEqual(record)
    expect(record.id).toMatch(/^20260115T103045123Z-beir-[0-9a-f]{8}$/)
    expect(record.id).toMatch(EVAL_RECORD_ID)
    expect(record).toMatchObject({ version: 1, kind: 'beir', set: 'scifact', split: 'test', engine_version: VERSION, settings: { split: 'test', profile: 'documents' } })
    expect('limit' in record.settings).toBe(false)
    expect(record.metrics).toMatchObject({ 'ndcg@10': 0.5, 'recall@100': 0.9, 'mrr@10': 0.4, 'recall@10': 0.7, queries: 2, query_p50_ms: 2 })
    // This is a git checkout: the commit is the one git reads, without running git.
    expect(record.git_commit).toMatch(/^[0-9a-f]{40}$/)
    const head = gitHead(ROOT)
    if (head) expect(record.git_commit).toBe(head)
    expect(record.per_query_truncated).toBeUndefined()
  })

  it('caps per_query at 5,000 queries (flagged) and returned at 10 per query', async () => {
    const record = buildEvalRecord({ kind: 'beir', report: syntheticBeir(EVAL_PER_QUERY_CAP + 1, 12), settings: {}, checkout: CHECKOUT })
    expect(record.per_query).toHaveLength(EVAL_PER_QUERY_CAP)
    expect(record.per_query_truncated).toBe(true)
    expect(record.per_query[0]!.returned).toHaveLength(10)
  })

  it('reads the commit from .git without git: packed refs, a worktree pointer, none at all', async () => {
    expect(gitCommit(null)).toBeNull()
    const plain = await temp('tychora-evals-nogit-')
    expect(gitCommit(plain)).toBeNull()
    const repo = await temp('tychora-evals-git-')
    const sha = 'a'.repeat(40)
    await mkdir(join(repo, '.git'))
    await writeFile(join(repo, '.git', 'HEAD'), 'ref: refs/heads/main\n')
    expect(gitCommit(repo)).toBeNull() // the branch has no commit yet
    await writeFile(join(repo, '.git', 'packed-refs'), `# pack-refs with: peeled fully-peeled sorted\n${sha} refs/heads/main\n`)
    expect(gitCommit(repo)).toBe(sha)
    const worktree = await temp('tychora-evals-worktree-')
    await mkdir(join(repo, '.git', 'worktrees', 'w'), { recursive: true })
    await writeFile(join(repo, '.git', 'worktrees', 'w', 'HEAD'), `${'b'.repeat(40)}\n`)
    await writeFile(join(repo, '.git', 'worktrees', 'w', 'commondir'), '../..\n')
    await writeFile(join(worktree, '.git'), `gitdir: ${join(repo, '.git', 'worktrees', 'w')}\n`)
    expect(gitCommit(worktree)).toBe('b'.repeat(40))
    await writeFile(join(repo, '.git', 'HEAD'), 'ref: refs/../../etc\n')
    expect(gitCommit(repo)).toBeNull()
  })

  it('writes atomically into <workspace>/evals (no temp file left) and refuses a folder that is not a workspace', async () => {
    const ws = await fakeWorkspace()
    const { path, record } = await recordEval(ws, { kind: 'beir', report: syntheticBeir(1), settings: {}, checkout: CHECKOUT })
    expect(path).toBe(join(ws, 'evals', `${record.id}.json`))
    expect(listing(ws)).toEqual([`${record.id}.json`])
    expect(EvalRecordSchema.parse(JSON.parse(await readFile(path, 'utf8')))).toEqual(record)
    const notWs = await temp('tychora-evals-notws-')
    await expect(writeEvalRecord(notWs, record)).rejects.toMatchObject({ code: 'E_INVALID_ARGUMENT' })
    expect(existsSync(join(notWs, 'evals'))).toBe(false)
    // An evals/ that is a symlink is not written through.
    const elsewhere = await temp('tychora-evals-elsewhere-')
    const linked = await fakeWorkspace()
    await symlink(elsewhere, join(linked, 'evals'))
    await expect(writeEvalRecord(linked, record)).rejects.toMatchObject({ code: 'E_INVALID_ARGUMENT' })
    expect(readdirSync(elsewhere)).toEqual([])
  })

  it('lists newest first, skipping bad files with their reasons and ignoring temp and other files', async () => {
    const ws = await fakeWorkspace()
    expect(await listEvalRecords(ws)).toEqual({ records: [], skipped: [] })
    const made = []
    for (const now of [Date.UTC(2026, 0, 1), Date.UTC(2026, 0, 3), Date.UTC(2026, 0, 2)])
      made.push((await recordEval(ws, { kind: 'beir', report: syntheticBeir(1), settings: {}, checkout: CHECKOUT, now })).record)
    const dir = join(ws, 'evals')
    const badId = '20260104T000000000Z-beir-0000000a'
    await writeFile(join(dir, `${badId}.json`), '{"version": 1, "id": "x"}')
    const notJson = '20260105T000000000Z-evidence-0000000b'
    await writeFile(join(dir, `${notJson}.json`), '{"version": 1, "id": ')
    const misnamed = '20260106T000000000Z-beir-0000000c'
    await writeFile(join(dir, `${misnamed}.json`), `${JSON.stringify({ ...made[0], id: made[1]!.id })}\n`)
    await writeFile(join(dir, 'notes.json'), '{}')
    await writeFile(join(dir, `.${made[0]!.id}.123.abcd.tmp`), '{"half": ')
    await writeFile(join(dir, 'README.txt'), 'not a record')
    const outside = await temp('tychora-evals-outside-')
    const escapee = '20260107T000000000Z-beir-0000000d'
    await writeFile(join(outside, 'record.json'), JSON.stringify({ ...made[0], id: escapee }))
    await symlink(join(outside, 'record.json'), join(dir, `${escapee}.json`))
    const list = await listEvalRecords(ws)
    expect(EvalRecordListSchema.parse(list)).toEqual(list)
    expect(list.records.map((r) => r.id)).toEqual([made[1]!.id, made[2]!.id, made[0]!.id])
    for (const r of list.records) {
      expect('per_query' in r).toBe(false)
      expect(EvalRecordBriefSchema.parse(r)).toEqual(r)
    }
    expect(list.skipped.map((s) => s.file)).toEqual([`${badId}.json`, `${notJson}.json`, `${misnamed}.json`, `${escapee}.json`, 'notes.json'])
    const reason = Object.fromEntries(list.skipped.map((s) => [s.file, s.reason]))
    expect(reason[`${badId}.json`]).toMatch(/id/)
    expect(reason[`${notJson}.json`]).toMatch(/not JSON/)
    expect(reason[`${misnamed}.json`]).toMatch(/file name/)
    expect(reason[`${escapee}.json`]).toMatch(/symlink/)
    expect(reason['notes.json']).toMatch(/not an evaluation record name/)

    // A second listing reuses what it parsed, yet sees a record replaced, corrupted or removed since.
    const replaced = { ...made[1]!, created_at: made[1]!.created_at + 1, settings: { changed: true } }
    await writeFile(join(dir, `${made[1]!.id}.json.new`), JSON.stringify(replaced))
    const { rename, unlink } = await import('node:fs/promises')
    await rename(join(dir, `${made[1]!.id}.json.new`), join(dir, `${made[1]!.id}.json`))
    await writeFile(join(dir, `${made[2]!.id}.json`), '{"version": 1, "id": ')
    await unlink(join(dir, `${made[0]!.id}.json`))
    const again = await listEvalRecords(ws)
    expect(again.records.map((r) => [r.id, r.settings])).toEqual([[made[1]!.id, { changed: true }]])
    expect(again.skipped.map((s) => s.file)).toContain(`${made[2]!.id}.json`)
  })

  it('reads one record, refusing ids that are not record ids before touching the disk', async () => {
    const ws = await fakeWorkspace()
    const { record } = await recordEval(ws, { kind: 'beir', report: syntheticBeir(2), settings: {}, checkout: CHECKOUT })
    expect(await readEvalRecord(ws, record.id)).toEqual(record)
    for (const id of ['../x', '../../etc/passwd', `${record.id}/../${record.id}`, `${record.id}.json`, '', 'x'])
      await expect(readEvalRecord(ws, id)).rejects.toMatchObject({ code: 'E_INVALID_ARGUMENT' })
    await expect(readEvalRecord(ws, '20300101T000000000Z-beir-00000000')).rejects.toMatchObject({ code: 'E_NOT_FOUND' })
    await expect(readEvalRecord(await fakeWorkspace(), record.id)).rejects.toMatchObject({ code: 'E_NOT_FOUND' })
    const bad = '20260104T000000000Z-cosqa-0000000a'
    await writeFile(join(ws, 'evals', `${bad}.json`), JSON.stringify({ ...record, id: bad, metrics: { 'ndcg@10': 'high' } }))
    const corrupt = await readEvalRecord(ws, bad).catch((e: unknown) => e)
    expect(corrupt).toMatchObject({ code: 'E_CORRUPT' })
    expect((corrupt as Error).message).toMatch(/metrics\.ndcg@10/)
    const outside = await temp('tychora-evals-outside-')
    const escapee = '20260107T000000000Z-beir-0000000d'
    await writeFile(join(outside, 'r.json'), JSON.stringify({ ...record, id: escapee }))
    await symlink(join(outside, 'r.json'), join(ws, 'evals', `${escapee}.json`))
    await expect(readEvalRecord(ws, escapee)).rejects.toMatchObject({ code: 'E_FORBIDDEN' })
  })
})

describe.skipIf(nativeMissing)('evaluation records from real runs', () => {
  it('records a BEIR run: the report’s metrics, one entry per query with ranks and channels', async () => {
    const report = await evalBeir(BEIR_MINI, { split: 'test', perQuery: true })
    const ws = await temp('tychora-evals-real-')
    await Workspace.init(join(ws, 'ws'))
    const { path, record } = await recordEval(join(ws, 'ws'), { kind: 'beir', report, settings: { split: 'test', profile: 'documents' }, checkout: CHECKOUT })
    const parsed = EvalRecordSchema.parse(JSON.parse(await readFile(path, 'utf8')))
    expect(parsed).toEqual(record)
    expect(parsed.set).toBe('beir-mini')
    expect(parsed.metrics['ndcg@10']).toBe(report.ndcg_at_10)
    expect(parsed.metrics['recall@100']).toBe(report.recall_at_100)
    expect(parsed.metrics['mrr@10']).toBe(report.mrr_at_10)
    expect(parsed.metrics['recall@10']).toBe(report.recall_at_10)
    expect(parsed.per_query).toHaveLength(report.queries)
    expect(parsed.per_query.map((q) => q.id).sort()).toEqual(['q1', 'q2', 'q3', 'q4'])
    const mean = (key: string) => parsed.per_query.reduce((a, q) => a + (q.metrics[key] ?? 0), 0) / parsed.per_query.length
    expect(mean('ndcg@10')).toBeCloseTo(report.ndcg_at_10, 10)
    expect(mean('mrr@10')).toBeCloseTo(report.mrr_at_10, 10)
    for (const q of parsed.per_query) {
      expect(q.returned.length).toBeGreaterThan(0)
      expect(q.returned.length).toBeLessThanOrEqual(10)
      expect(q.returned.map((r) => r.rank)).toEqual(q.returned.map((_, i) => i + 1))
      for (const r of q.returned) expect(r.channels?.length).toBeGreaterThan(0)
    }
    const q1 = parsed.per_query.find((q) => q.id === 'q1')!
    expect(q1.expected).toEqual([{ doc: 'd2', relevance: 1 }])
    expect(q1.returned[0]).toMatchObject({ doc: 'd2', relevance: 1 })
    // Without perQuery the report is as it always was.
    expect('per_query' in (await evalBeir(BEIR_MINI, { split: 'test' }))).toBe(false)
  })

  it('records an evidence run: citations with their lines, expected and forbidden marked', async () => {
    const dir = await temp('tychora-evals-evidence-')
    const set = join(dir, 'mini.questions.json')
    await writeFile(
      set,
      JSON.stringify({
        name: 'mini',
        data: join(ROOT, 'test/fixtures/docs'),
        corpus: [{ path: 'http-caching.md' }],
        questions: [
          {
            id: 'v',
            type: 'paraphrase',
            query: 'how does a cache revalidate a stale response',
            expected: [{ path: 'http-caching.md', lines: [12, 14] }],
            forbidden: [{ path: 'http-caching.md', lines: [22, 24] }],
          },
          { id: 'f', type: 'paraphrase', query: 'max-age freshness lifetime', expected: [{ path: 'http-caching.md', lines: [7, 8] }] },
        ],
      }),
    )
    const report = await evalEvidence(set, { perQuery: true })
    await Workspace.init(join(dir, 'ws'))
    const { record } = await recordEval(join(dir, 'ws'), { kind: 'evidence', report, setFile: set, settings: { set }, checkout: CHECKOUT })
    expect(record.set).toBe('mini.questions.json')
    expect(record.metrics).toMatchObject({
      'accuracy@1': report.accuracy_at_1,
      'ndcg@10': report.ndcg_at_10,
      'forbidden@10': report.forbidden_at_10,
      'by_type.paraphrase.accuracy@1': report.by_type.paraphrase!.accuracy_at_1,
    })
    expect(record.per_query.map((q) => q.id)).toEqual(['v', 'f'])
    const v = record.per_query[0]!
    expect(v).toMatchObject({ type: 'paraphrase', expected: [{ path: 'http-caching.md', lines: [12, 14] }], forbidden: [{ path: 'http-caching.md', lines: [22, 24] }] })
    expect(v.metrics).toEqual({ 'accuracy@1': expect.any(Number), 'ndcg@10': expect.any(Number), 'forbidden@10': expect.any(Number) })
    const top = v.returned[0]!
    expect(top).toMatchObject({ rank: 1, citation: expect.stringMatching(/http-caching\.md:\d+-\d+/) })
    if (v.metrics['accuracy@1'] === 1) expect(top.relevance).toBe(1)
  })

  it('`tychora eval beir --record` (the command, from the sources) keeps a record the listing shows, and --out stays as it was', async () => {
    const dir = await temp('tychora-evals-cli-')
    const ws = join(dir, 'ws')
    await Workspace.init(ws)
    const out = join(dir, 'report.json')
    await runCommand(evalCommand, { rawArgs: ['beir', BEIR_MINI, '--record', '--workspace', ws, '--out', out] })
    const list = await listEvalRecords(ws)
    expect(list.skipped).toEqual([])
    expect(list.records).toHaveLength(1)
    const brief = list.records[0]!
    expect(brief).toMatchObject({ kind: 'beir', set: 'beir-mini', split: 'test', settings: { profile: 'documents', split: 'test', dataset: BEIR_MINI } })
    const written = JSON.parse(await readFile(out, 'utf8')) as BeirReport
    expect('per_query' in written).toBe(false)
    expect(brief.metrics['ndcg@10']).toBe(written.ndcg_at_10)
    expect((await readEvalRecord(ws, brief.id)).per_query).toHaveLength(4)
    expect(listing(ws)).toEqual([`${brief.id}.json`])
    // No workspace to record into: refused before anything runs, naming the flag.
    const notWs = join(dir, 'plain')
    await mkdir(notWs)
    await expect(runCommand(evalCommand, { rawArgs: ['beir', BEIR_MINI, '--record', '-w', notWs, '--out', out] })).rejects.toMatchObject({
      code: 'E_INVALID_ARGUMENT',
      message: expect.stringMatching(/--record/),
    })
    const saved = { cwd: process.cwd(), env: process.env.TYCHORA_WORKSPACE }
    delete process.env.TYCHORA_WORKSPACE
    process.chdir(notWs)
    try {
      await expect(runCommand(evalCommand, { rawArgs: ['beir', BEIR_MINI, '--record', '--out', out] })).rejects.toMatchObject({
        code: 'E_INVALID_ARGUMENT',
        message: expect.stringMatching(/--record.*--workspace/),
      })
    } finally {
      process.chdir(saved.cwd)
      if (saved.env !== undefined) process.env.TYCHORA_WORKSPACE = saved.env
    }
  })
})
