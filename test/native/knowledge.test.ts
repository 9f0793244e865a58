import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { appendFile, mkdtemp, rename, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { QueryResult } from '../../ts/contracts/result.js'
import { Workspace } from '../../ts/engine/workspace.js'
import { TychoraError } from '../../ts/errors.js'
import { type ProjectPaths, initProject } from '../../ts/knowledge/layout.js'
import { accept, listProposals, propose, reject } from '../../ts/knowledge/lifecycle.js'
import { readMigrations } from '../../ts/knowledge/migrations.js'
import { answeringState, applyMigrations } from '../../ts/service/knowledge-state.js'
import { cli, nativeMissing } from './_setup.js'

/**
 * Team knowledge end to end on a real project folder: agents propose, a person accepts or
 * rejects, the migrations are checksummed files, `migrate apply` builds the state, and deleting
 * the state and applying again answers every query byte for byte as before.
 */

const REVIEWER = { reviewer: 'ana' }

async function withState<T>(paths: ProjectPaths, fn: (ws: Workspace) => Promise<T>): Promise<T> {
  const state = answeringState(paths)
  if (!state) throw new Error('no state')
  const ws = await Workspace.open(state.dir)
  try {
    return await fn(ws)
  } finally {
    ws.close()
  }
}

const search = (paths: ProjectPaths, query: string) => withState(paths, (ws) => ws.search({ query, limit: 5 }))
const lookupIn = (paths: ProjectPaths) => (id: string) => (answeringState(paths) ? withState(paths, (ws) => ws.cite(id)) : Promise.resolve(undefined))

/** A result without what differs between two runs of one query on one state (its run id and timings). */
function stable(result: QueryResult): unknown {
  const { run_id: _run, duration_ms: _ms, trace: _trace, ...rest } = result
  return rest
}

async function expectCode(promise: Promise<unknown>, code: string, message?: RegExp): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(TychoraError)
  expect((error as TychoraError).code).toBe(code)
  if (message) expect((error as TychoraError).message).toMatch(message)
}

describe.skipIf(nativeMissing)('team knowledge: propose → review → migrate apply', () => {
  let repo = ''
  let paths: ProjectPaths
  const QUERIES = ['token rotation schedule', 'rotate signing keys every ninety days', 'shared admin password vault', 'incident pager escalation', 'quarterly access review']
  let before: unknown[] = []

  beforeAll(async () => {
    repo = await mkdtemp(join(tmpdir(), 'tychora-knowledge-'))
    paths = await initProject(repo)
  })
  afterAll(async () => {
    await rm(repo, { recursive: true, force: true })
  })

  it('accepts, rejects, edits, withholds above the ceiling, purges past it, supersedes; each step through a checksummed migration', async () => {
    const lookup = lookupIn(paths)
    // 1. An agent proposes; nothing approved exists until a person accepts and apply runs.
    const p1 = await propose(
      paths,
      {
        change: {
          op: 'create',
          item: 'token-rotation',
          title: 'Token rotation',
          kind: 'procedure',
          body: 'Rotate signing keys every ninety days.\n\nThe token rotation schedule is owned by the platform team.\n',
        },
        rationale: 'Audit finding 12',
        agent: 'claude',
        task: 't-1',
      },
      lookup,
    )
    expect(existsSync(join(paths.proposals, p1.id, 'proposal.json'))).toBe(true)
    expect(listProposals(paths).proposals.map((p) => p.id)).toEqual([p1.id])
    expect(readMigrations(paths)).toEqual([])
    const m1 = await accept(paths, { proposal: p1.id, ...REVIEWER }, lookup, new Date('2026-11-01T10:00:00Z'))
    expect(m1.id).toBe('0001-create-token-rotation')
    expect(readFileSync(join(paths.migrations, '0001-create-token-rotation.sha256'), 'utf8')).toMatch(/^[0-9a-f]{64} {2}0001-create-token-rotation\.json\n$/)
    expect(readFileSync(join(paths.knowledge, 'token-rotation.md'), 'utf8')).toContain('ninety days')
    expect(existsSync(join(paths.proposals, p1.id))).toBe(false)
    expect(answeringState(paths)).toBeUndefined() // accepted is not applied: no state answers yet

    const a1 = await applyMigrations(paths)
    expect(a1).toMatchObject({ base: 'empty', applied: ['0001-create-token-rotation'] })
    const found = await search(paths, 'token rotation schedule')
    const top = found.segments[0]!
    expect(top.source.collection).toBe('knowledge')
    expect(top.source.kind).toBe('procedure')
    expect(top.trust_level).toBe('approved')
    expect(top.source.lane).toBe('approved_knowledge')
    expect(found.lanes[0]).toBe('approved_knowledge')
    expect(top.freshness).toEqual({ as_of: Date.parse('2026-11-01T10:00:00Z'), basis: 'reviewed' })
    expect(top.revision.commit).toBeUndefined() // the stamp, not the repository's HEAD, is its provenance

    // 2. A proposal citing that evidence is rejected: a rejected approach, searchable with its reason.
    const p2 = await propose(
      paths,
      {
        change: {
          op: 'create',
          item: 'shared-admin-password',
          title: 'Shared admin password',
          kind: 'procedure',
          body: 'Keep one shared admin password in the team vault.\n',
        },
        rationale: 'Simpler on-call',
        evidence: [top.id],
        agent: 'claude',
      },
      lookup,
    )
    expect(p2.evidence).toEqual([expect.objectContaining({ segment_id: top.id, sha256: top.revision.sha256 })])
    await expectCode(reject(paths, { proposal: p2.id, ...REVIEWER }), 'E_INVALID_ARGUMENT', /reason/)
    await reject(paths, { proposal: p2.id, ...REVIEWER, reason: 'Shared credentials defeat the audit trail' }, new Date('2026-11-02T10:00:00Z'))

    // 3. An edit, a secret item (above the ceiling `internal`), and a second approved item.
    const p3 = await propose(
      paths,
      {
        change: {
          op: 'edit',
          item: 'token-rotation',
          body: 'Rotate signing keys every thirty days.\n\nThe token rotation schedule is owned by the security team.\n',
        },
        rationale: 'Policy v2',
        evidence: [top.id],
      },
      lookup,
    )
    await accept(paths, { proposal: p3.id, ...REVIEWER }, lookup, new Date('2026-11-03T10:00:00Z'))
    const p4 = await propose(
      paths,
      {
        change: {
          op: 'create',
          item: 'incident-pager',
          title: 'Incident pager',
          kind: 'procedure',
          body: 'The incident pager escalation goes to the secondary after ten minutes.\n',
          sensitivity: 'secret',
        },
        rationale: 'Runbook',
      },
      lookup,
    )
    await accept(paths, { proposal: p4.id, ...REVIEWER }, lookup, new Date('2026-11-04T10:00:00Z'))
    const p5 = await propose(
      paths,
      {
        change: {
          op: 'create',
          item: 'access-review',
          title: 'Access review',
          kind: 'procedure',
          body: 'A quarterly access review covers every production role.\n',
        },
        rationale: 'SOC 2',
      },
      lookup,
    )
    await accept(paths, { proposal: p5.id, ...REVIEWER }, lookup, new Date('2026-11-05T10:00:00Z'))

    const a2 = await applyMigrations(paths)
    expect(a2).toMatchObject({
      base: 'descendant',
      applied: ['0002-reject-shared-admin-password', '0003-edit-token-rotation', '0004-create-incident-pager', '0005-create-access-review'],
      withheld: ['knowledge/incident-pager.md'],
    })
    const rotation = await search(paths, 'rotate signing keys every thirty days')
    expect(rotation.segments[0]?.text).toContain('thirty days')
    expect(rotation.segments.some((s) => s.text.includes('ninety days'))).toBe(false)
    const rejected = (await search(paths, 'shared admin password vault')).segments[0]!
    expect(rejected.trust_level).toBe('rejected_approach')
    expect(rejected.source.collection).toBe('rejected-approaches')
    expect(rejected.source.lane).toBe('rejected_approaches')
    // Above the ceiling: never indexed, so no channel, statistic or count can reveal it.
    const pager = await search(paths, 'incident pager escalation')
    expect(pager.segments.some((s) => s.text.includes('pager'))).toBe(false)
    const sources = await withState(paths, (ws) => ws.listSources())
    expect(sources.sources.map((s) => s.path).sort()).toEqual(['knowledge/access-review.md', 'knowledge/token-rotation.md', `rejected/${p2.id}.md`].sort())

    // 4. Sensitivity raised past the ceiling: purged from the published state in the same apply.
    const p6 = await propose(paths, { change: { op: 'sensitivity', item: 'access-review', sensitivity: 'confidential' }, rationale: 'Names roles' }, lookup)
    await accept(paths, { proposal: p6.id, ...REVIEWER }, lookup, new Date('2026-11-06T10:00:00Z'))
    const p7 = await propose(
      paths,
      {
        change: {
          op: 'create',
          item: 'token-rotation-v3',
          title: 'Token rotation v3',
          kind: 'procedure',
          body: 'Keys rotate automatically through the KMS.\n',
        },
        rationale: 'Automation',
      },
      lookup,
    )
    await accept(paths, { proposal: p7.id, ...REVIEWER }, lookup, new Date('2026-11-07T10:00:00Z'))
    const p8 = await propose(paths, { change: { op: 'supersede', item: 'token-rotation', by: 'token-rotation-v3' }, rationale: 'Replaced' }, lookup)
    await accept(paths, { proposal: p8.id, ...REVIEWER }, lookup, new Date('2026-11-08T10:00:00Z'))
    const a3 = await applyMigrations(paths)
    expect(a3).toMatchObject({ base: 'descendant', purged: ['access-review'] })
    expect((await search(paths, 'quarterly access review')).segments.some((s) => s.text.includes('quarterly'))).toBe(false)
    expect((await search(paths, 'token rotation schedule')).segments.some((s) => s.text.includes('thirty days'))).toBe(false)
    const evidence = await withState(paths, (ws) => ws.listSources())
    expect(evidence.sources.map((s) => s.path).sort()).toEqual(['knowledge/token-rotation-v3.md', `rejected/${p2.id}.md`].sort())

    before = []
    for (const q of QUERIES) before.push(stable(await search(paths, q)))
    expect(JSON.stringify(before)).toContain('rejected_approach')
  })

  it('rebuilds from the tracked folders alone: deleting state/ and applying every migration answers byte for byte as before', async () => {
    expect(before.length).toBe(QUERIES.length)
    await rm(paths.states, { recursive: true, force: true })
    const rebuilt = await applyMigrations(paths)
    expect(rebuilt.base).toBe('empty')
    expect(rebuilt.applied).toHaveLength(readMigrations(paths).length)
    const after: unknown[] = []
    for (const q of QUERIES) after.push(stable(await search(paths, q)))
    expect(JSON.stringify(after)).toBe(JSON.stringify(before))
  })

  it('switches back to a built state without rebuilding, and refuses what would corrupt approved knowledge', async () => {
    const built = await applyMigrations(paths)
    expect(built.base).toBe('reused')
    // A branch without the last migration: built once, then switching between the two is reuse.
    const last = readMigrations(paths).at(-1)!.file
    await rename(last, `${last}.away`)
    await rename(last.replace(/\.json$/, '.sha256'), `${last}.sha.away`)
    const branch = await applyMigrations(paths)
    expect(branch.base).not.toBe('reused')
    await rename(`${last}.away`, last)
    await rename(`${last}.sha.away`, last.replace(/\.json$/, '.sha256'))
    const back = await applyMigrations(paths)
    expect(back).toMatchObject({ base: 'reused', state_hash: built.state_hash, applied: [] })

    // A migration edited after acceptance is refused; the state that answered keeps answering.
    const first = readMigrations(paths)[0]!.file
    const bytes = readFileSync(first, 'utf8')
    await writeFile(first, bytes.replace('ninety', 'nine'))
    await expectCode(applyMigrations(paths), 'E_CHECKSUM_MISMATCH', /changed after it was accepted/)
    expect((await search(paths, 'token rotation v3 KMS')).segments.length).toBeGreaterThan(0)
    await writeFile(first, bytes)

    // Two migrations with one number (two branches merged): a clear conflict naming both.
    const dup = join(paths.migrations, '0003-create-other.json')
    await writeFile(dup, '{}\n')
    await expectCode(applyMigrations(paths), 'E_CONFLICT', /share the number 0003/)
    await rm(dup)

    // Proposals that cannot stand: an unknown sensitivity, another tenant, evidence that is gone.
    const lookup = lookupIn(paths)
    await expectCode(
      propose(paths, { change: { op: 'create', item: 'x', title: 'X', kind: 'guidance', body: 'x', sensitivity: 'top-secret' }, rationale: 'r' }, lookup),
      'E_INVALID_ARGUMENT',
      /not one of the project's levels/,
    )
    await expectCode(propose(paths, { change: { op: 'create', item: 'x', title: 'X', kind: 'guidance', body: 'x' }, rationale: 'r', tenant: 'acme' }, lookup), 'E_FORBIDDEN')
    await expectCode(
      propose(paths, { change: { op: 'create', item: 'x', title: 'X', kind: 'guidance', body: 'x' }, rationale: 'r', acl_group: 'finance' }, lookup),
      'E_FORBIDDEN',
      /access group "finance" is not one of this project's \(default\)/,
    )
    await expectCode(
      propose(paths, { change: { op: 'create', item: 'x', title: 'X', kind: 'guidance', body: 'x' }, rationale: 'r', evidence: ['seg_1_999999'] }, lookup),
      'E_NOT_FOUND',
      /does not exist in the current state/,
    )
    await expectCode(propose(paths, { change: { op: 'edit', item: 'nope', body: 'x' }, rationale: 'r' }, lookup), 'E_NOT_FOUND')
    // Cited evidence that left the state after the proposal: accept refuses unless told otherwise.
    const cited = (await search(paths, 'token rotation v3 KMS')).segments[0]!
    const p = await propose(paths, { change: { op: 'edit', item: 'token-rotation-v3', body: 'Keys rotate through the KMS every week.\n' }, rationale: 'r', evidence: [cited.id] }, lookup)
    const gone = { ...p, evidence: [{ ...p.evidence[0]!, sha256: '0'.repeat(64) }] }
    await writeFile(join(paths.proposals, p.id, 'proposal.json'), JSON.stringify(gone))
    await expectCode(accept(paths, { proposal: p.id, ...REVIEWER }, lookup), 'E_CONFLICT', /no longer holds/)
    expect(p.acl_group).toBe('default')
    const m = await accept(paths, { proposal: p.id, ...REVIEWER, allow_stale_evidence: true }, lookup)
    expect(m.acl_group).toBe('default')
    expect(m.decision).toBe('accepted')

    // The core refuses a capture of another trust into curated knowledge, from anyone.
    await withState(paths, async (ws) => {
      const file = join(repo, 'note.md')
      await writeFile(file, '# Note\n\nA captured note.\n')
      await expectCode(ws.add({ paths: [file], collection: 'knowledge' }), 'E_FORBIDDEN', /only `tychora migrate apply`/)
      // Inside the state's root, so what refuses it is the stamp, not the root check.
      const inside = join(paths.states, 'bodies', 'note.md')
      await writeFile(inside, '# Note\n\nA captured note.\n')
      await expectCode(ws.add({ paths: [inside], collection: 'notes' }, { requester: 'agent', stamp: { trust: 'approved', as_of: 0, origin: 'x' } }), 'E_FORBIDDEN', /propose a change/)
    })
  })

  it('leaves no trace of an item above the ceiling: every answer and count is what a project without it gives', async () => {
    const make = async (withSecret: boolean) => {
      const dir = await mkdtemp(join(tmpdir(), 'tychora-ceiling-'))
      const project = await initProject(dir)
      const none = async () => undefined
      const items = [
        { item: 'deploy-window', body: 'Deploys happen on Tuesdays after the change review.\n', secret: false },
        { item: 'breach-contacts', body: 'During a breach call the deploy hotline and the external counsel on Tuesdays.\n', secret: true },
        { item: 'change-review', body: 'The change review checks rollback plans before deploys.\n', secret: false },
      ]
      let day = 1
      for (const i of items) {
        if (i.secret && !withSecret) continue
        const p = await propose(
          project,
          {
            change: { op: 'create', item: i.item, title: i.item, kind: 'procedure', body: i.body, ...(i.secret ? { sensitivity: 'secret' } : {}) },
            rationale: 'r',
          },
          none,
        )
        await accept(project, { proposal: p.id, ...REVIEWER }, none, new Date(Date.UTC(2026, 10, i.secret ? 20 : day++)))
      }
      await applyMigrations(project)
      const answers = []
      for (const q of ['deploy hotline breach counsel', 'deploys on Tuesdays', 'change review rollback']) answers.push(stable(await search(project, q)))
      await rm(dir, { recursive: true, force: true })
      // The two projects live in different folders, which the captured URIs name.
      return JSON.stringify(answers).replaceAll(dir, 'PROJECT')
    }
    const withSecret = await make(true)
    expect(withSecret).not.toContain('external counsel')
    expect(withSecret).toBe(await make(false))
  })

  it('keeps answering from the last complete state when the migrations change in the middle of a build', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tychora-midbuild-'))
    try {
      const project = await initProject(dir)
      const none = async () => undefined
      const create = async (item: string, body: string) => {
        const p = await propose(project, { change: { op: 'create', item, title: item, kind: 'guidance', body }, rationale: 'r' }, none)
        return accept(project, { proposal: p.id, ...REVIEWER }, none)
      }
      await create('first', 'The first rule of the on-call rota.\n')
      const first = await applyMigrations(project)
      await create('second', 'The second rule of the on-call rota.\n')
      // A checkout that brings a third migration while the second is being applied.
      const report = await applyMigrations(project, { onMigration: async () => void (await create('third', 'The third rule.\n')) })
      expect(report.applied).toEqual(['0002-create-second'])
      expect(report.diagnostics.join(' ')).toMatch(/changed during the build/)
      const answering = answeringState(project)!
      expect(answering).toMatchObject({ hash: first.state_hash, behind: true })
      const caughtUp = await applyMigrations(project)
      expect(caughtUp).toMatchObject({ base: 'descendant', applied: ['0003-create-third'] })
      expect(answeringState(project)).toMatchObject({ hash: caughtUp.state_hash, behind: false })
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('runs through the CLI: init, propose, review, migrate apply, search', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tychora-knowledge-cli-'))
    try {
      expect((await cli(['knowledge', 'init'], { cwd: dir })).code).toBe(0)
      expect(readFileSync(join(dir, '.tychora/.gitignore'), 'utf8')).toContain('state/')
      const proposed = await cli(
        [
          'knowledge',
          'propose',
          'create',
          'release-freeze',
          '--title',
          'Release freeze',
          '--kind',
          'decision',
          '--body',
          'No releases during the December freeze window.',
          '--rationale',
          'Holidays',
          '--agent',
          'claude',
          '--format',
          'json',
        ],
        { cwd: dir },
      )
      expect(proposed.code, proposed.stderr).toBe(0)
      const id = JSON.parse(proposed.stdout).id as string
      expect((await cli(['review', 'list'], { cwd: dir })).stdout).toContain(id)
      const accepted = await cli(['review', 'accept', id, '--reviewer', 'ana'], { cwd: dir })
      expect(accepted.code, accepted.stderr).toBe(0)
      expect(accepted.stdout).toContain('migrations/0001-create-release-freeze.json')
      expect((await cli(['migrate', 'status'], { cwd: dir })).stdout).toMatch(/pending {2}0001-create-release-freeze/)
      const applied = await cli(['migrate', 'apply'], { cwd: dir })
      expect(applied.code, applied.stderr).toBe(0)
      const found = await cli(['search', 'December freeze window', '--format', 'json'], { cwd: dir })
      expect(found.code, found.stderr).toBe(0)
      expect(JSON.parse(found.stdout).segments[0]).toMatchObject({ trust_level: 'approved', source: { collection: 'knowledge', kind: 'decision' } })
      await appendFile(join(dir, '.tychora/migrations/0001-create-release-freeze.json'), ' ')
      const tampered = await cli(['migrate', 'apply'], { cwd: dir })
      expect(tampered.code).toBe(7) // E_CHECKSUM_MISMATCH
      expect(tampered.stderr).toContain('changed after it was accepted')
      expect(readdirSync(join(dir, '.tychora/state')).filter((n) => /^[0-9a-f]{64}$/.test(n))).toHaveLength(1)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
