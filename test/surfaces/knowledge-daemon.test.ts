import { readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connect } from '../../ts/client/http-client.js'
import { runtimePath } from '../../ts/contracts/runtime.js'
import { Daemon, KNOWLEDGE_ALIAS } from '../../ts/daemon/daemon.js'
import { type ProjectPaths, initProject } from '../../ts/knowledge/layout.js'
import { accept, propose } from '../../ts/knowledge/lifecycle.js'
import { answeringState, applyMigrations, builtStates, stateName } from '../../ts/service/knowledge-state.js'
import { nativeMissing } from '../native/_setup.js'

/**
 * A daemon serving a knowledge project answers `knowledge` from the state the tracked migrations
 * build at each call: a state built after the daemon started (the developer applied a migration,
 * or switched branches) answers without a restart, while each state's own name keeps answering
 * what it always held (a task's pinned knowledge base).
 */
let repo = ''
let paths: ProjectPaths
let daemon: Daemon | undefined

async function addItem(item: string, title: string, body: string): Promise<void> {
  const p = await propose(paths, { change: { op: 'create', item, title, kind: 'decision', body }, rationale: 'r' }, async () => undefined)
  await accept(paths, { proposal: p.id, reviewer: 'ana' }, async () => undefined)
}

beforeAll(async () => {
  if (nativeMissing) return
  repo = await mkdtemp(join(tmpdir(), 'tychora-knowledge-daemon-'))
  paths = await initProject(repo)
  await addItem('release-freeze', 'Release freeze', 'No releases during the December freeze window.\n')
  await applyMigrations(paths)
  daemon = await Daemon.start({ workspaces: builtStates(paths), port: 0, knowledge: { root: paths.root } })
})

afterAll(async () => {
  await daemon?.stop()
  if (repo) await rm(repo, { recursive: true, force: true })
})

describe.skipIf(nativeMissing)('knowledge through the daemon', () => {
  it('follows a state built after the daemon started, while the old state keeps its name and answers', async () => {
    const token = readFileSync(runtimePath(paths.root, 'agentToken'), 'utf8').trim()
    const moving = connect(daemon!.url, { token, project: KNOWLEDGE_ALIAS })
    const first = await moving.search({ query: 'December freeze window', limit: 3 })
    expect(first.segments[0]?.text).toContain('December freeze window')
    const firstState = answeringState(paths)!
    const pinnedName = stateName(firstState.hash)
    const pinnedToken = readFileSync(runtimePath(firstState.dir, 'agentToken'), 'utf8').trim()
    const pinned = connect(daemon!.url, { token: pinnedToken, project: pinnedName })

    await addItem('pager-escalation', 'Pager escalation', 'Escalate an unanswered incident page after fifteen minutes.\n')
    // Not built yet: the last complete state answers.
    expect((await moving.search({ query: 'unanswered incident page escalation', limit: 3 })).segments.some((s) => s.text.includes('fifteen minutes'))).toBe(false)
    await applyMigrations(paths)
    const secondState = answeringState(paths)!
    expect(secondState.hash).not.toBe(firstState.hash)

    const after = await moving.search({ query: 'unanswered incident page escalation', limit: 3 })
    expect(after.segments[0]?.text).toContain('fifteen minutes')
    // Opened on first use and served under its own name too, announced to CLIs; the project's
    // token lists only the alias, which now names the new state's folder.
    const listed = await moving.projects()
    expect(listed.map((p) => p.name)).toEqual([KNOWLEDGE_ALIAS])
    expect(listed[0]?.dir).toBe(daemon!.registry.workspace(stateName(secondState.hash)).dir)
    expect(JSON.parse(readFileSync(runtimePath(secondState.dir, 'daemon'), 'utf8')).project).toBe(stateName(secondState.hash))
    // The state an agent pinned still answers what it held.
    const old = await pinned.search({ query: 'unanswered incident page escalation', limit: 3 })
    expect(old.segments.some((s) => s.text.includes('fifteen minutes'))).toBe(false)
    expect((await pinned.search({ query: 'December freeze window', limit: 3 })).segments[0]?.text).toContain('December freeze window')
    // A state's tokens open only that state, never the alias (E_NOT_FOUND, as for any project the
    // token does not open).
    const crossed = connect(daemon!.url, { token: pinnedToken, project: KNOWLEDGE_ALIAS })
    await expect(crossed.search({ query: 'freeze' })).rejects.toMatchObject({ code: 'E_NOT_FOUND' })
  })
})
