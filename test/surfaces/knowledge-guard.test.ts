import { createHash } from 'node:crypto'
import { readFileSync, readdirSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureTokens } from '../../ts/engine/tokens.js'
import { Workspace } from '../../ts/engine/workspace.js'
import { API_ROUTES, createHttpApp } from '../../ts/http/app.js'
import { type HttpServer, startHttpServer } from '../../ts/http/server.js'
import { type ProjectPaths, initProject } from '../../ts/knowledge/layout.js'
import { accept, propose } from '../../ts/knowledge/lifecycle.js'
import { createMcpServer } from '../../ts/mcp/server.js'
import { applyMigrations } from '../../ts/service/knowledge-state.js'
import { ProjectRegistry } from '../../ts/service/registry.js'
import { nativeMissing } from '../native/_setup.js'

/**
 * No MCP tool and no HTTP route mutates approved knowledge (DESIGN §10). Every route and every
 * tool is called — with the owner's token, on a project that lets agents add sources, the most
 * permissive setting there is — and approved knowledge (the tracked migrations and bodies, and
 * what the state answers as approved) is the same afterwards. A route or tool this table does not
 * know fails the test, so a new one is classified on purpose.
 */

let repo = ''
let paths: ProjectPaths
let ws: Workspace
let server: HttpServer
let token = ''
let project = ''
let segment = ''

/** Approved knowledge as files and as answers: a hash that any change to either moves. */
async function approved(): Promise<string> {
  const hash = createHash('sha256')
  for (const dir of [paths.migrations, paths.knowledge]) for (const name of readdirSync(dir).sort()) hash.update(name).update(readFileSync(join(dir, name)))
  const sources = await ws.listSources({ collection: 'knowledge' })
  hash.update(JSON.stringify(sources.sources.map((s) => [s.path, s.sha256, s.revision_id])))
  const result = await ws.search({ query: 'December freeze window', limit: 5 })
  // Segment ids name the snapshot, which any capture moves on; the approved windows themselves must not change.
  hash.update(JSON.stringify(result.segments.filter((s) => s.trust_level === 'approved').map((s) => [s.chunk_id, s.revision.sha256, s.text])))
  return hash.digest('hex')
}

beforeAll(async () => {
  if (nativeMissing) return
  repo = await mkdtemp(join(tmpdir(), 'tychora-guard-'))
  paths = await initProject(repo)
  const p = await propose(
    paths,
    {
      change: {
        op: 'create',
        item: 'release-freeze',
        title: 'Release freeze',
        kind: 'decision',
        body: 'No releases during the December freeze window.\n',
      },
      rationale: 'r',
    },
    async () => undefined,
  )
  await accept(paths, { proposal: p.id, reviewer: 'ana' }, async () => undefined)
  const state = await applyMigrations(paths)
  ws = await Workspace.open(state.state_dir)
  const tokens = await ensureTokens(ws.dir)
  token = tokens.owner
  project = ws.name
  const registry = new ProjectRegistry()
  registry.register(ws, { tokens, allowAgentAdd: true })
  server = await startHttpServer(createHttpApp(registry, { port: 0 }), { port: 0 })
  segment = (await ws.search({ query: 'December freeze window' })).segments[0]!.id
})

afterAll(async () => {
  if (nativeMissing) return
  await server?.close()
  ws?.close()
  await ws?.idle()
  await rm(repo, { recursive: true, force: true })
})

describe.skipIf(nativeMissing)('no surface mutates approved knowledge', () => {
  it('holds for every HTTP route, called with the owner token', async () => {
    const note = join(repo, 'note.md')
    await writeFile(note, '# Note\n\nA note about the December freeze window.\n')
    const bodies = join(paths.states, 'bodies', 'knowledge', 'release-freeze.md')
    const p = `/v1/projects/${project}`
    const calls: Record<string, Array<{ method: string; path: string; body?: unknown }>> = {
      listProjects: [{ method: 'GET', path: '/v1/projects' }],
      search: [{ method: 'POST', path: `${p}/search`, body: { query: 'December freeze' } }],
      getEvidence: [{ method: 'GET', path: `${p}/evidence/${segment}` }],
      inspectSymbol: [{ method: 'GET', path: `${p}/symbols/release` }],
      listSources: [{ method: 'GET', path: `${p}/sources` }],
      getSource: [{ method: 'GET', path: `${p}/sources/1` }],
      // Captures never write curated knowledge: into its collection they are refused, and the
      // approved body itself, captured, is a captured source of another collection.
      addSource: [
        { method: 'POST', path: `${p}/sources`, body: { paths: [note], collection: 'knowledge' } },
        { method: 'POST', path: `${p}/sources`, body: { paths: [bodies] } },
      ],
      jobStatus: [{ method: 'GET', path: `${p}/jobs/1` }],
      listSnapshots: [{ method: 'GET', path: `${p}/snapshots` }],
      proposeChange: [
        {
          method: 'POST',
          path: `${p}/proposals`,
          body: {
            change: { op: 'edit', item: 'release-freeze', body: 'Releases are fine in December.' },
            rationale: 'agents want to ship',
            evidence: [segment],
          },
        },
      ],
      listProposals: [{ method: 'GET', path: `${p}/proposals` }],
      // The owner's administration reads the state, and a backup writes only its copy.
      workspaceStatus: [{ method: 'GET', path: `${p}/status` }],
      verifyWorkspace: [{ method: 'POST', path: `${p}/verify` }],
      backupWorkspace: [{ method: 'POST', path: `${p}/backup`, body: { dest: join(repo, 'backup') } }],
      // Only a queued job is cancelled, and a cancellation changes a job's row, never knowledge.
      cancelJob: [{ method: 'POST', path: `${p}/jobs/1/cancel`, body: { reason: 'no longer wanted' } }],
    }
    expect(Object.keys(calls).sort()).toEqual(API_ROUTES.map((r) => r.operationId).sort())
    const before = await approved()
    const statuses: Record<string, number[]> = {}
    for (const [operation, list] of Object.entries(calls)) {
      for (const c of list) {
        const response = await fetch(`${server.url}${c.path}`, {
          method: c.method,
          headers: { Authorization: `Bearer ${token}`, ...(c.body ? { 'Content-Type': 'application/json' } : {}) },
          ...(c.body ? { body: JSON.stringify(c.body) } : {}),
        })
        await response.arrayBuffer()
        ;(statuses[operation] ??= []).push(response.status)
      }
    }
    await ws.idle()
    expect(statuses.addSource).toEqual([202, 202])
    expect(statuses.proposeChange).toEqual([201])
    expect([statuses.workspaceStatus, statuses.verifyWorkspace, statuses.backupWorkspace]).toEqual([[200], [200], [200]])
    expect(statuses.cancelJob).toEqual([409])
    // The queued capture into `knowledge` failed on the core's trust check.
    const jobs = await Promise.all([2, 3].map((id) => ws.jobStatus(id).catch(() => undefined)))
    expect(jobs.some((j) => j?.error?.includes('only `tychora migrate apply`') || j?.receipt?.diagnostics.some((d) => d.code === 'E_FORBIDDEN'))).toBe(true)
    expect(await approved()).toBe(before)
    expect(readdirSync(paths.proposals)).toHaveLength(1)
  })

  it('holds for every MCP tool', async () => {
    const registry = new ProjectRegistry()
    registry.register(ws, { tokens: await ensureTokens(ws.dir), allowAgentAdd: true })
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    const mcp = createMcpServer(registry)
    await mcp.connect(serverSide)
    const client = new Client({ name: 'guard', version: '1.0.0' })
    await client.connect(clientSide)
    try {
      const note = join(repo, 'note2.md')
      await writeFile(note, '# Note\n\nAnother note.\n')
      const calls: Record<string, Record<string, unknown>> = {
        list_projects: {},
        search_evidence: { project, query: 'December freeze' },
        get_evidence: { project, id: segment },
        inspect_symbol: { project, name: 'release' },
        list_sources: { project },
        job_status: { project, job_id: 1 },
        add_source: { project, paths: [note], collection: 'knowledge' },
        propose_change: { project, change: { op: 'supersede', item: 'release-freeze', by: 'release-freeze' }, rationale: 'r' },
        list_proposals: { project },
      }
      const { tools } = await client.listTools()
      expect(Object.keys(calls).sort()).toEqual(tools.map((t) => t.name).sort())
      const before = await approved()
      const results: Record<string, CallToolResult> = {}
      for (const [name, args] of Object.entries(calls)) results[name] = (await client.callTool({ name, arguments: args })) as CallToolResult
      await ws.idle()
      expect(results.search_evidence?.isError).toBeFalsy()
      expect(results.propose_change?.isError).toBe(true) // an item cannot supersede itself: refused, nothing written
      expect(await approved()).toBe(before)
    } finally {
      await client.close()
    }
  })
})
