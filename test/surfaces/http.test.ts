import { request as httpRequest } from 'node:http'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { connect } from '../../ts/client/http-client.js'
import { QueryResultSchema } from '../../ts/contracts/result.js'
import { ensureTokens } from '../../ts/engine/tokens.js'
import { Workspace } from '../../ts/engine/workspace.js'
import { ERROR_CODES, type ErrorCode, TychoraError } from '../../ts/errors.js'
import { type HttpOptions, createHttpApp } from '../../ts/http/app.js'
import { startHttpServer } from '../../ts/http/server.js'
import { ProjectRegistry } from '../../ts/service/registry.js'
import { nativeMissing, scratch } from '../native/_setup.js'
import { Database } from '../support/sqlite.js'

interface Project {
  name: string
  dir: string
  /** The owner's token. */
  token: string
  agentToken: string
  ws: Workspace
}

interface Served {
  url: string
  port: number
  docs: string
  alpha: Project
  beta: Project
  close(): Promise<void>
}

const teardown: Array<() => Promise<void> | void> = []

/** Two real workspaces (alpha, beta) with the fixture docs, served by a real server on port 0. */
async function serve(options: Partial<HttpOptions> & { allowAgentAdd?: boolean } = {}): Promise<Served> {
  const { dir, docs } = await scratch()
  const registry = new ProjectRegistry()
  const projects: Project[] = []
  for (const name of ['alpha', 'beta']) {
    const wsDir = join(dir, name)
    await Workspace.init(wsDir)
    const ws = await Workspace.open(wsDir)
    teardown.push(async () => {
      ws.close()
      await ws.idle()
    })
    expect((await ws.add({ paths: [docs] })).status).toBe('succeeded')
    const tokens = await ensureTokens(wsDir)
    registry.register(ws, { tokens, allowAgentAdd: options.allowAgentAdd ?? false })
    projects.push({ name: ws.name, dir: wsDir, token: tokens.owner, agentToken: tokens.agent, ws })
  }
  const app = createHttpApp(registry, { port: 0, ...options })
  const server = await startHttpServer(app, { port: 0 })
  teardown.push(() => server.close())
  const [alpha, beta] = projects as [Project, Project]
  return { url: server.url, port: server.port, docs, alpha, beta, close: server.close }
}

interface RawResponse {
  status: number
  headers: Record<string, string | string[] | undefined>
  json: any
}

/** A request through node:http, which (unlike fetch) lets a test set Host and lie about lengths. */
function raw(served: { port: number }, options: { method?: string; path: string; headers?: Record<string, string>; body?: string | Buffer; chunks?: Buffer[] }): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: served.port,
        method: options.method ?? 'GET',
        path: options.path,
        headers: { host: `127.0.0.1:${served.port}`, ...options.headers },
      },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (d: string) => (text += d))
        res.on('end', () => {
          let json: unknown
          try {
            json = text ? JSON.parse(text) : undefined
          } catch {
            json = text
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, json })
        })
      },
    )
    req.on('error', reject)
    if (options.chunks) {
      for (const c of options.chunks) req.write(c)
      req.end()
    } else req.end(options.body)
  })
}

const bearer = (p: Project) => ({ authorization: `Bearer ${p.token}` })
const jsonBody = (value: unknown) => ({ body: JSON.stringify(value), headers: { 'content-type': 'application/json' } })

function expectError(res: RawResponse, code: ErrorCode): void {
  expect({ status: res.status, code: res.json?.code }).toEqual({ status: ERROR_CODES[code].http, code })
  expect(typeof res.json.message).toBe('string')
  expect(Object.keys(res.json).sort()).toEqual(['code', 'message'])
}

/** What a refused request must not change. */
async function state(ws: Workspace) {
  const s = await ws.status()
  return {
    snapshot: s.current_snapshot?.id ?? null,
    sources: s.counts.sources,
    jobs: s.counts.jobs,
    snapshots: s.counts.snapshots,
    query_runs: s.counts.query_runs,
  }
}

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 30_000): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const v = await fn()
    if (ok(v) || Date.now() > end) return v
    await new Promise((r) => setTimeout(r, 25))
  }
}

describe.skipIf(nativeMissing)('HTTP surface', () => {
  afterEach(async () => {
    for (const fn of teardown.splice(0).reverse()) await fn()
  })

  describe('through the typed client', () => {
    it('searches with citations whose locators slice the source bytes, and records agent and task', async () => {
      const s = await serve()
      const client = connect(s.url, { token: s.alpha.token, project: s.alpha.name, agentId: 'agent-7', taskId: 'task-42' })
      const result = await client.search({ query: 'conditional request revalidates stale response', limit: 3 })
      expect(QueryResultSchema.safeParse(result).success).toBe(true)
      expect(result.segments.length).toBeGreaterThan(0)
      const top = result.segments[0]!
      expect(top.source.path).toBe('http-caching.md')
      expect(top.locator.heading_path).toEqual(['HTTP caching notes', 'Validation'])
      for (const [i, seg] of result.segments.entries()) {
        const bytes = await readFile(join(s.docs, seg.source.path))
        expect(bytes.subarray(seg.locator.byte_start, seg.locator.byte_end).toString()).toBe(seg.text)
        expect(seg.citation).toBe(`${seg.source.path}:${seg.locator.line_start}-${seg.locator.line_end}`)
        const citation = result.citations[i]!
        expect(citation.segment_id).toBe(seg.id)
        expect(bytes.subarray(citation.byte_start, citation.byte_end).toString()).toBe(seg.text)
        expect(citation.sha256).toBe(seg.revision.sha256)
      }

      // X-Tychora-Agent / X-Tychora-Task land in query_runs; a body value wins over the header.
      await client.search({ query: 'ETag', agent_id: 'from-body' })
      const db = new Database(join(s.alpha.dir, 'corpus.sqlite3'), { readonly: true, fileMustExist: true })
      try {
        const rows = await until(
          async () => db.prepare('SELECT agent_id, task_id FROM query_runs ORDER BY created_at, rowid').all() as Array<{ agent_id: string; task_id: string }>,
          (r) => r.length >= 2,
        )
        expect(rows).toEqual([
          { agent_id: 'agent-7', task_id: 'task-42' },
          { agent_id: 'from-body', task_id: 'task-42' },
        ])
      } finally {
        db.close()
      }
    })

    it('gets evidence, lists sources and snapshots, and lists only the projects the token opens', async () => {
      const s = await serve()
      const client = connect(`${s.url}/`, { token: s.alpha.token, project: s.alpha.name })
      const top = (await client.search({ query: 'conditional request revalidates stale response', limit: 1 })).segments[0]!

      const evidence = await client.getEvidence(top.id)
      expect(evidence).toEqual(await s.alpha.ws.getEvidence(top.id))
      expect(evidence.type).toBe('chunk')

      const sources = await client.listSources()
      expect(sources.total).toBe(3)
      expect(sources.sources.map((x) => x.path).sort()).toEqual(['field-notes.txt', 'glossary.json', 'http-caching.md'])
      const page = await client.listSources({ limit: 1, offset: 1 })
      expect(page.sources).toHaveLength(1)
      expect(page.sources[0]).toEqual(sources.sources[1])
      expect(page).toEqual(await s.alpha.ws.listSources({ limit: 1, offset: 1 }))

      const sourceId = top.source.source_id
      expect(await client.getEvidence(`source:${sourceId}`)).toEqual(await s.alpha.ws.getEvidence(`source:${sourceId}`))
      const bySourceRoute = await fetch(`${s.url}/v1/projects/${s.alpha.name}/sources/${sourceId}`, { headers: bearer(s.alpha) })
      expect(bySourceRoute.status).toBe(200)
      expect(await bySourceRoute.json()).toEqual(await s.alpha.ws.getEvidence(`source:${sourceId}`))

      const snapshots = await client.listSnapshots()
      expect(snapshots.snapshots).toHaveLength(1)
      expect(snapshots.snapshots[0]).toMatchObject({ current: true, sources: 3 })

      const projects = await client.projects()
      expect(projects).toEqual([{ name: 'alpha', dir: s.alpha.ws.dir, snapshot_id: snapshots.snapshots[0]!.id }])
      const other = await connect(s.url, { token: s.beta.token, project: s.beta.name }).projects()
      expect(other.map((p) => p.name)).toEqual(['beta'])
    })

    it('queues an add job (202) that the single writer runs to success', async () => {
      const s = await serve()
      const client = connect(s.url, { token: s.alpha.token, project: s.alpha.name })
      await writeFile(join(s.docs, 'zebra.md'), '# Zebra\n\nA zebra crossing note about striped evidence.\n')
      const before = await client.listSnapshots()

      const res = await raw(s, {
        method: 'POST',
        path: `/v1/projects/alpha/sources`,
        ...jsonBody({ paths: [s.docs] }),
        headers: { ...bearer(s.alpha), 'content-type': 'application/json' },
      })
      expect(res.status).toBe(202)
      expect(res.json).toMatchObject({ project: 'alpha', status: 'queued' })

      const ref = await client.addSource({ paths: [join(s.docs, 'zebra.md')] })
      expect(ref).toMatchObject({ project: 'alpha', status: 'queued' })
      expect(ref.job_id).toBeGreaterThan(res.json.job_id)

      const first = await until(
        () => client.jobStatus(res.json.job_id),
        (j) => j.finished_at !== null,
      )
      expect(first.status).toBe('succeeded')
      expect(first.receipt?.files.added).toBe(1)
      expect(first.receipt?.added).toEqual(['zebra.md'])
      const second = await until(
        () => client.jobStatus(ref.job_id),
        (j) => j.finished_at !== null,
      )
      expect(second.status).toBe('succeeded')

      const after = await client.listSnapshots()
      expect(after.snapshots.length).toBe(before.snapshots.length + 1)
      expect((await client.search({ query: 'zebra crossing' })).segments[0]?.source.path).toBe('zebra.md')
      // The other project did not change.
      expect((await s.beta.ws.status()).counts.sources).toBe(3)
    })

    it('turns error responses into TychoraError with the same code', async () => {
      const s = await serve()
      const wrong = connect(s.url, { token: 'nope', project: s.alpha.name })
      await expect(wrong.search({ query: 'x' })).rejects.toMatchObject({ name: 'TychoraError', code: 'E_UNAUTHORIZED' })
      const client = connect(s.url, { token: s.alpha.token, project: s.alpha.name })
      await expect(client.getEvidence('seg_999_999')).rejects.toMatchObject({ code: 'E_NOT_FOUND' })
      await expect(client.search({ query: '' })).rejects.toMatchObject({ code: 'E_INVALID_ARGUMENT' })
      await expect(client.search({ query: 'x', snapshot_id: 42 })).rejects.toMatchObject({ code: 'E_NOT_FOUND' })
      await expect(client.jobStatus(999)).rejects.toMatchObject({ code: 'E_NOT_FOUND' })
      await expect(connect(s.url, { token: s.alpha.token, project: 'beta' }).listSnapshots()).rejects.toMatchObject({ code: 'E_NOT_FOUND' })
      await s.close()
      const error = await client.listSnapshots().catch((e: unknown) => e)
      expect(error).toBeInstanceOf(TychoraError)
      expect((error as TychoraError).code).toBe('E_IO')
    })
  })

  describe('public routes', () => {
    it('GET /health answers without a token and says nothing about content', async () => {
      const s = await serve()
      const res = await raw(s, { path: '/health', headers: { host: 'evil.example' } })
      expect(res.status).toBe(200)
      expect(res.json).toEqual({ status: 'ok' })
    })

    it('GET /openapi.json is an OpenAPI 3.1 document of every route, generated from the contracts', async () => {
      const s = await serve({ mcp: async () => new Response('{}') })
      const res = await fetch(`${s.url}/openapi.json`)
      expect(res.status).toBe(200)
      const doc = (await res.json()) as any
      expect(doc.openapi).toMatch(/^3\.1\./)
      expect(doc.info.title).toBe('Tychora')
      expect(doc.components.securitySchemes.bearerAuth).toEqual(expect.objectContaining({ type: 'http', scheme: 'bearer' }))
      expect(doc.security).toEqual([{ bearerAuth: [] }])
      const ops = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`))
      expect(ops.sort()).toEqual(
        [
          'GET /health',
          'GET /openapi.json',
          'GET /v1/projects',
          'POST /v1/projects/{project}/search',
          'GET /v1/projects/{project}/evidence/{id}',
          'GET /v1/projects/{project}/symbols/{name}',
          'GET /v1/projects/{project}/sources',
          'GET /v1/projects/{project}/sources/{id}',
          'POST /v1/projects/{project}/sources',
          'GET /v1/projects/{project}/jobs/{id}',
          'POST /v1/projects/{project}/proposals',
          'GET /v1/projects/{project}/proposals',
          'GET /v1/projects/{project}/snapshots',
          'GET /v1/projects/{project}/status',
          'POST /v1/projects/{project}/verify',
          'POST /v1/projects/{project}/backup',
          'POST /v1/projects/{project}/jobs/{job_id}/cancel',
          'GET /mcp',
          'POST /mcp',
          'DELETE /mcp',
        ].sort(),
      )
      const searchOp = doc.paths['/v1/projects/{project}/search'].post
      expect(searchOp.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/QueryRequest' })
      expect(searchOp.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/QueryResult' })
      expect(searchOp.responses['401'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' })
      expect(searchOp.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual(['path:project', 'header:X-Tychora-Agent', 'header:X-Tychora-Task'])
      expect(doc.components.schemas.QueryRequest.properties.query.description).toMatch(/identifier/)
      expect(doc.components.schemas.QueryRequest.required).toEqual(['query'])
      expect(doc.components.schemas.Error.properties.code.enum).toContain('E_UNAUTHORIZED')
      expect(doc.paths['/v1/projects/{project}/sources'].post.responses['202']).toBeDefined()
      const listParams = doc.paths['/v1/projects/{project}/sources'].get.parameters.map((p: { name: string }) => p.name)
      expect(listParams).toEqual(['project', 'collection', 'snapshot_id', 'limit', 'offset'])
      expect(doc.paths['/v1/projects/{project}/jobs/{id}'].get.parameters[1].schema.type).toBe('integer')
      expect(doc.paths['/health'].get.security).toEqual([])
      // Every $ref resolves.
      for (const ref of JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)) expect(doc.components.schemas[ref[1]!]).toBeDefined()
    })
  })

  describe('refused requests change nothing', () => {
    it('no token and a wrong token are 401 E_UNAUTHORIZED', async () => {
      const s = await serve()
      const before = await state(s.alpha.ws)
      const noToken = await raw(s, { method: 'POST', path: '/v1/projects/alpha/search', ...jsonBody({ query: 'ETag' }) })
      expectError(noToken, 'E_UNAUTHORIZED')
      expect(noToken.headers['www-authenticate']).toMatch(/^Bearer/)
      expectError(await raw(s, { method: 'POST', path: '/v1/projects/alpha/sources', ...jsonBody({ paths: [s.docs] }) }), 'E_UNAUTHORIZED')
      const wrong = { authorization: `Bearer ${'0'.repeat(64)}`, 'content-type': 'application/json' }
      expectError(await raw(s, { method: 'POST', path: '/v1/projects/alpha/search', body: JSON.stringify({ query: 'ETag' }), headers: wrong }), 'E_UNAUTHORIZED')
      expectError(await raw(s, { method: 'POST', path: '/v1/projects/alpha/sources', body: JSON.stringify({ paths: [s.docs] }), headers: wrong }), 'E_UNAUTHORIZED')
      expectError(await raw(s, { path: '/v1/projects', headers: { authorization: 'Bearer short' } }), 'E_UNAUTHORIZED')
      expectError(await raw(s, { path: '/v1/projects', headers: { authorization: `Basic ${Buffer.from(`x:${s.alpha.token}`).toString('base64')}` } }), 'E_UNAUTHORIZED')
      // Unknown paths are refused the same way before routing.
      expectError(await raw(s, { path: '/v1/nothing-here' }), 'E_UNAUTHORIZED')
      expectError(await raw(s, { path: '/mcp' }), 'E_UNAUTHORIZED')
      expect(await state(s.alpha.ws)).toEqual(before)
    })

    it("project A's token on project B's routes is 404 E_NOT_FOUND, exactly like an unknown project", async () => {
      // Decision: 404, not 401, so a token holder cannot tell "exists but not yours" from "does not exist".
      const s = await serve()
      const before = await state(s.beta.ws)
      const asAlpha = { ...bearer(s.alpha), 'content-type': 'application/json' }
      const onBeta = await raw(s, { method: 'POST', path: '/v1/projects/beta/search', body: JSON.stringify({ query: 'ETag' }), headers: asAlpha })
      expectError(onBeta, 'E_NOT_FOUND')
      const unknown = await raw(s, { method: 'POST', path: '/v1/projects/gamma/search', body: JSON.stringify({ query: 'ETag' }), headers: asAlpha })
      expectError(unknown, 'E_NOT_FOUND')
      expect(onBeta.json.message.replace('beta', 'X')).toBe(unknown.json.message.replace('gamma', 'X'))
      expectError(await raw(s, { method: 'POST', path: '/v1/projects/beta/sources', body: JSON.stringify({ paths: [s.docs] }), headers: asAlpha }), 'E_NOT_FOUND')
      expectError(await raw(s, { path: '/v1/projects/beta/snapshots', headers: asAlpha }), 'E_NOT_FOUND')
      expectError(await raw(s, { path: '/v1/projects/beta/jobs/1', headers: asAlpha }), 'E_NOT_FOUND')
      expectError(await raw(s, { path: '/v1/projects/gamma/sources', headers: asAlpha }), 'E_NOT_FOUND')
      // An unknown project with no valid token is 401: nothing is learnt without a token.
      expectError(await raw(s, { path: '/v1/projects/gamma/sources' }), 'E_UNAUTHORIZED')
      expect(await state(s.beta.ws)).toEqual(before)
    })

    it('a foreign Host is 403 E_FORBIDDEN even with the right token (DNS rebinding); loopback names pass', async () => {
      const s = await serve()
      const before = await state(s.alpha.ws)
      for (const host of ['evil.example', `evil.example:${s.port}`, `127.0.0.1:${s.port + 1}`, `127.0.0.1`, `localhost.evil.example:${s.port}`]) {
        expectError(await raw(s, { path: '/v1/projects/alpha/snapshots', headers: { ...bearer(s.alpha), host } }), 'E_FORBIDDEN')
        expectError(
          await raw(s, {
            method: 'POST',
            path: '/v1/projects/alpha/sources',
            body: JSON.stringify({ paths: [s.docs] }),
            headers: { ...bearer(s.alpha), host },
          }),
          'E_FORBIDDEN',
        )
      }
      // Host is checked before the token.
      expectError(await raw(s, { path: '/v1/projects/alpha/snapshots', headers: { host: 'evil.example' } }), 'E_FORBIDDEN')
      for (const host of [`127.0.0.1:${s.port}`, `localhost:${s.port}`, `[::1]:${s.port}`, `LOCALHOST:${s.port}`]) {
        expect((await raw(s, { path: '/v1/projects/alpha/snapshots', headers: { ...bearer(s.alpha), host } })).status).toBe(200)
      }
      expect(await state(s.alpha.ws)).toEqual(before)
    })

    it('allowedHosts and allowedOrigins extend the loopback defaults', async () => {
      const s = await serve({ allowedHosts: ['tychora.internal:8443'], allowedOrigins: ['https://ui.example'] })
      expect((await raw(s, { path: '/v1/projects', headers: { ...bearer(s.alpha), host: 'tychora.internal:8443' } })).status).toBe(200)
      expect((await raw(s, { path: '/v1/projects', headers: { ...bearer(s.alpha), origin: 'https://ui.example' } })).status).toBe(200)
      expectError(await raw(s, { path: '/v1/projects', headers: { ...bearer(s.alpha), origin: 'https://ui.example.evil' } }), 'E_FORBIDDEN')
    })

    it('a foreign Origin is 403 E_FORBIDDEN even with the right token; local origins and no Origin pass', async () => {
      const s = await serve()
      const before = await state(s.alpha.ws)
      for (const origin of ['https://evil.example', `http://evil.example:${s.port}`, 'null', `https://127.0.0.1:${s.port}`, `http://localhost:${s.port + 1}`]) {
        expectError(
          await raw(s, {
            method: 'POST',
            path: '/v1/projects/alpha/search',
            body: JSON.stringify({ query: 'ETag' }),
            headers: { ...bearer(s.alpha), origin, 'content-type': 'application/json' },
          }),
          'E_FORBIDDEN',
        )
        expectError(
          await raw(s, {
            method: 'POST',
            path: '/v1/projects/alpha/sources',
            body: JSON.stringify({ paths: [s.docs] }),
            headers: { ...bearer(s.alpha), origin },
          }),
          'E_FORBIDDEN',
        )
      }
      expect(await state(s.alpha.ws)).toEqual(before)
      for (const origin of [`http://127.0.0.1:${s.port}`, `http://localhost:${s.port}`, `http://[::1]:${s.port}`]) {
        expect((await raw(s, { path: '/v1/projects/alpha/snapshots', headers: { ...bearer(s.alpha), origin } })).status).toBe(200)
      }
    })

    it('an oversize body is 413 E_LIMIT_EXCEEDED, by Content-Length and by the bytes actually read', async () => {
      const s = await serve()
      const before = await state(s.alpha.ws)
      const big = JSON.stringify({ query: 'x'.repeat(1024 * 1024) })
      expectError(
        await raw(s, {
          method: 'POST',
          path: '/v1/projects/alpha/search',
          body: big,
          headers: { ...bearer(s.alpha), 'content-type': 'application/json' },
        }),
        'E_LIMIT_EXCEEDED',
      )
      // Chunked, no Content-Length: the limit counts the bytes as they stream.
      const chunks = Array.from({ length: 20 }, () => Buffer.alloc(64 * 1024, 0x20))
      chunks.unshift(Buffer.from('{"paths":["'))
      expectError(
        await raw(s, {
          method: 'POST',
          path: '/v1/projects/alpha/sources',
          chunks,
          headers: { ...bearer(s.alpha), 'content-type': 'application/json' },
        }),
        'E_LIMIT_EXCEEDED',
      )
      expect(await state(s.alpha.ws)).toEqual(before)
    })

    it('maxBodyBytes is configurable', async () => {
      const s = await serve({ maxBodyBytes: 64 })
      const before = await state(s.alpha.ws)
      const headers = { ...bearer(s.alpha), 'content-type': 'application/json' }
      expectError(
        await raw(s, {
          method: 'POST',
          path: '/v1/projects/alpha/sources',
          body: JSON.stringify({ paths: [`${s.docs}/${'a'.repeat(80)}`] }),
          headers,
        }),
        'E_LIMIT_EXCEEDED',
      )
      expect((await raw(s, { method: 'POST', path: '/v1/projects/alpha/search', body: JSON.stringify({ query: 'ETag' }), headers })).status).toBe(200)
      expect((await state(s.alpha.ws)).jobs).toBe(before.jobs)
    })

    it('malformed JSON and an empty body are 400 E_INVALID_ARGUMENT', async () => {
      const s = await serve()
      const before = await state(s.alpha.ws)
      const headers = { ...bearer(s.alpha), 'content-type': 'application/json' }
      expectError(await raw(s, { method: 'POST', path: '/v1/projects/alpha/search', body: '{"query": "ETag"', headers }), 'E_INVALID_ARGUMENT')
      expectError(await raw(s, { method: 'POST', path: '/v1/projects/alpha/sources', body: '{paths: []}', headers }), 'E_INVALID_ARGUMENT')
      expectError(await raw(s, { method: 'POST', path: '/v1/projects/alpha/sources', body: '', headers }), 'E_INVALID_ARGUMENT')
      expect(await state(s.alpha.ws)).toEqual(before)
    })

    it('invalid fields, ids and headers are 400 E_INVALID_ARGUMENT naming the issue', async () => {
      const s = await serve()
      const before = await state(s.alpha.ws)
      const headers = { ...bearer(s.alpha), 'content-type': 'application/json' }
      const post = (path: string, body: unknown, extra: Record<string, string> = {}) => raw(s, { method: 'POST', path, body: JSON.stringify(body), headers: { ...headers, ...extra } })
      const badLimit = await post('/v1/projects/alpha/search', { query: 'ETag', limit: 0 })
      expectError(badLimit, 'E_INVALID_ARGUMENT')
      expect(badLimit.json.message).toContain('limit')
      expectError(await post('/v1/projects/alpha/search', { query: 'ETag', bogus: true }), 'E_INVALID_ARGUMENT')
      expectError(await post('/v1/projects/alpha/search', ['ETag']), 'E_INVALID_ARGUMENT')
      expectError(await post('/v1/projects/alpha/search', { query: 'ETag' }, { 'x-tychora-agent': 'a'.repeat(201) }), 'E_INVALID_ARGUMENT')
      const noPaths = await post('/v1/projects/alpha/sources', { paths: [] })
      expectError(noPaths, 'E_INVALID_ARGUMENT')
      expect(noPaths.json.message).toContain('paths')
      expectError(await post('/v1/projects/alpha/sources', { paths: [s.docs], kind: 'pptx' }), 'E_INVALID_ARGUMENT')
      expectError(await raw(s, { path: '/v1/projects/alpha/evidence/bogus', headers }), 'E_INVALID_ARGUMENT')
      expectError(await raw(s, { path: '/v1/projects/alpha/jobs/abc', headers }), 'E_INVALID_ARGUMENT')
      expectError(await raw(s, { path: '/v1/projects/alpha/jobs/0', headers }), 'E_INVALID_ARGUMENT')
      expectError(await raw(s, { path: '/v1/projects/alpha/sources/1.5', headers }), 'E_INVALID_ARGUMENT')
      expectError(await raw(s, { path: '/v1/projects/alpha/sources?limit=0', headers }), 'E_INVALID_ARGUMENT')
      expectError(await raw(s, { path: '/v1/projects/alpha/sources?limit=ten', headers }), 'E_INVALID_ARGUMENT')
      expectError(await raw(s, { path: '/v1/projects/alpha/sources?sort=path', headers }), 'E_INVALID_ARGUMENT')
      expect(await state(s.alpha.ws)).toEqual(before)
    })

    it('an unknown route or method with a valid token is 404 E_NOT_FOUND', async () => {
      const s = await serve()
      expectError(await raw(s, { path: '/v1/projects/alpha/nothing', headers: bearer(s.alpha) }), 'E_NOT_FOUND')
      expectError(await raw(s, { method: 'DELETE', path: '/v1/projects/alpha/sources', headers: bearer(s.alpha) }), 'E_NOT_FOUND')
      expectError(await raw(s, { path: '/mcp', headers: bearer(s.alpha) }), 'E_NOT_FOUND') // no MCP handler mounted
    })
  })

  describe('credentials: the owner token and the agent token', () => {
    /** Every API route, called as each credential; what each may do is fixed here. */
    it('each route answers each credential as its scope allows', async () => {
      const s = await serve()
      const seg = (await s.alpha.ws.search({ query: 'ETag' })).segments[0]!.id
      const routes: Array<{ method: string; path: string; body?: unknown }> = [
        { method: 'GET', path: '/v1/projects' },
        { method: 'POST', path: '/v1/projects/alpha/search', body: { query: 'ETag' } },
        { method: 'GET', path: `/v1/projects/alpha/evidence/${seg}` },
        { method: 'GET', path: '/v1/projects/alpha/symbols/tokenize' },
        { method: 'GET', path: '/v1/projects/alpha/sources' },
        { method: 'GET', path: '/v1/projects/alpha/sources/1' },
        { method: 'GET', path: '/v1/projects/alpha/jobs/1' },
        { method: 'GET', path: '/v1/projects/alpha/snapshots' },
        { method: 'POST', path: '/v1/projects/alpha/sources', body: { paths: [s.docs] } },
        { method: 'GET', path: '/v1/projects/alpha/status' },
        { method: 'POST', path: '/v1/projects/alpha/verify' },
        { method: 'POST', path: '/v1/projects/alpha/jobs/1/cancel', body: { reason: 'r' } },
      ]
      const credentials: Array<[string, string | undefined]> = [
        ['owner', s.alpha.token],
        ['agent', s.alpha.agentToken],
        ['other owner', s.beta.token],
        ['other agent', s.beta.agentToken],
        ['wrong', '0'.repeat(64)],
        ['none', undefined],
      ]
      const seen: Record<string, number[]> = {}
      for (const [who, token] of credentials) {
        for (const r of routes) {
          const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {}
          const res = await raw(s, {
            method: r.method,
            path: r.path,
            ...(r.body ? jsonBody(r.body) : {}),
            headers: { ...headers, ...(r.body ? { 'content-type': 'application/json' } : {}) },
          })
          ;(seen[who] ??= []).push(res.status)
        }
      }
      // Reads: both tokens of alpha; the other project's tokens see 404 (as if alpha did not exist);
      // no or a wrong token, 401. Adds: owner 202; agent 403 (this workspace does not allow agents to add).
      // Administration (status, verify, cancel): the owner only; the agents' token is 403. Job 1
      // has ended, so the owner's cancel is 409.
      expect(seen).toEqual({
        owner: [200, 200, 200, 200, 200, 200, 200, 200, 202, 200, 200, 409],
        agent: [200, 200, 200, 200, 200, 200, 200, 200, 403, 403, 403, 403],
        'other owner': [200, 404, 404, 404, 404, 404, 404, 404, 404, 404, 404, 404],
        'other agent': [200, 404, 404, 404, 404, 404, 404, 404, 404, 404, 404, 404],
        wrong: [401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401],
        none: [401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401],
      })
      // The agent token lists only its own project too.
      const listed = await raw(s, { path: '/v1/projects', headers: { authorization: `Bearer ${s.alpha.agentToken}` } })
      expect(listed.json.projects.map((p: { name: string }) => p.name)).toEqual(['alpha'])
    })

    it('an agent token never widens the capture roots; the owner token may; relative paths are refused for both', async () => {
      const s = await serve({ allowAgentAdd: true })
      const outside = join(s.docs, '..', 'outside')
      const { mkdir } = await import('node:fs/promises')
      await mkdir(outside, { recursive: true })
      await writeFile(join(outside, 'private.md'), '# Private\n\nnot for agents\n')
      const before = await state(s.alpha.ws)
      const post = (token: string, paths: string[]) =>
        raw(s, {
          method: 'POST',
          path: '/v1/projects/alpha/sources',
          body: JSON.stringify({ paths }),
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        })

      for (const paths of [[outside], ['/'], [join(s.docs, '..')], [join(s.docs, '..', 'outside', 'private.md')]]) {
        expectError(await post(s.alpha.agentToken, paths), 'E_FORBIDDEN')
      }
      for (const token of [s.alpha.agentToken, s.alpha.token]) {
        expectError(await post(token, ['.']), 'E_INVALID_ARGUMENT')
        expectError(await post(token, ['docs']), 'E_INVALID_ARGUMENT')
      }
      expect(await state(s.alpha.ws)).toEqual(before)

      // Inside the existing root an agent may add.
      const inside = await post(s.alpha.agentToken, [s.docs])
      expect(inside.status).toBe(202)
      const job = await until(
        () => s.alpha.ws.jobStatus(inside.json.job_id),
        (j) => j.finished_at !== null,
      )
      expect(job.status).toBe('succeeded')

      // The owner may add a new root.
      const owned = await post(s.alpha.token, [outside])
      expect(owned.status).toBe(202)
      const ownerJob = await until(
        () => s.alpha.ws.jobStatus(owned.json.job_id),
        (j) => j.finished_at !== null,
      )
      expect(ownerJob.receipt?.added).toEqual(['private.md'])
      // Now that the owner made it a root, the agent may sync it.
      expect((await post(s.alpha.agentToken, [outside])).status).toBe(202)
    })
  })

  describe('browser-shaped requests', () => {
    it('Sec-Fetch-Site cross-site or same-site is 403 even with the right token; same-origin and none pass', async () => {
      const s = await serve()
      const before = await state(s.alpha.ws)
      for (const site of ['cross-site', 'same-site', 'Cross-Site']) {
        expectError(
          await raw(s, {
            method: 'POST',
            path: '/v1/projects/alpha/search',
            ...jsonBody({ query: 'ETag' }),
            headers: { ...bearer(s.alpha), 'content-type': 'application/json', 'sec-fetch-site': site },
          }),
          'E_FORBIDDEN',
        )
        expectError(
          await raw(s, {
            method: 'POST',
            path: '/v1/projects/alpha/sources',
            ...jsonBody({ paths: [s.docs] }),
            headers: { ...bearer(s.alpha), 'content-type': 'application/json', 'sec-fetch-site': site },
          }),
          'E_FORBIDDEN',
        )
      }
      expect(await state(s.alpha.ws)).toEqual({ ...before, query_runs: before.query_runs })
      for (const site of ['same-origin', 'none']) {
        const ok = await raw(s, {
          method: 'POST',
          path: '/v1/projects/alpha/search',
          ...jsonBody({ query: 'ETag' }),
          headers: { ...bearer(s.alpha), 'content-type': 'application/json', 'sec-fetch-site': site },
        })
        expect(ok.status).toBe(200)
      }
    })

    it('a body that is not declared JSON is 415 (text/plain, forms and no Content-Type are what a page sends without a preflight)', async () => {
      const s = await serve()
      const before = await state(s.alpha.ws)
      for (const type of ['text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', undefined]) {
        for (const [path, body] of [
          ['/v1/projects/alpha/search', { query: 'ETag' }],
          ['/v1/projects/alpha/sources', { paths: [s.docs] }],
        ] as const) {
          const headers: Record<string, string> = { ...bearer(s.alpha), ...(type ? { 'content-type': type } : {}) }
          expectError(await raw(s, { method: 'POST', path, body: JSON.stringify(body), headers }), 'E_UNSUPPORTED_FORMAT')
        }
      }
      expect(await state(s.alpha.ws)).toEqual(before)
      const typed = await raw(s, {
        method: 'POST',
        path: '/v1/projects/alpha/search',
        body: JSON.stringify({ query: 'ETag' }),
        headers: { ...bearer(s.alpha), 'content-type': 'application/json; charset=utf-8' },
      })
      expect(typed.status).toBe(200)
    })
  })

  describe('/mcp', () => {
    it('passes the bearer token to the MCP handler after the same checks; internal errors hide their details', async () => {
      const calls: Array<{ method: string; token: string; body: string }> = []
      const s = await serve({
        maxBodyBytes: 1024,
        mcp: async (request, auth) => {
          const body = request.method === 'POST' ? await request.text().catch(() => undefined) : ''
          // Like the MCP SDK, this handler answers an unreadable body with its own JSON-RPC error.
          if (body === undefined) return new Response('{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}', { status: 400 })
          if (body.includes('explode')) throw new Error('secret detail /home/user/.ssh')
          calls.push({ method: request.method, token: auth.token, body })
          return new Response(JSON.stringify({ jsonrpc: '2.0', id: 1, result: {} }), { headers: { 'content-type': 'application/json' } })
        },
      })
      for (const method of ['GET', 'POST', 'DELETE']) {
        const res = await raw(s, { method, path: '/mcp', body: method === 'POST' ? '{"jsonrpc":"2.0"}' : undefined, headers: bearer(s.beta) })
        expect(res.status).toBe(200)
      }
      expect(calls.map((c) => c.method)).toEqual(['GET', 'POST', 'DELETE'])
      expect(calls.every((c) => c.token === s.beta.token)).toBe(true)
      expect(calls[1]!.body).toBe('{"jsonrpc":"2.0"}')

      expectError(await raw(s, { method: 'POST', path: '/mcp', body: '{}', headers: { ...bearer(s.alpha), origin: 'https://evil.example' } }), 'E_FORBIDDEN')
      expectError(await raw(s, { method: 'POST', path: '/mcp', body: '{}', headers: { ...bearer(s.alpha), host: 'evil.example' } }), 'E_FORBIDDEN')
      expectError(await raw(s, { method: 'POST', path: '/mcp', body: '{}', headers: { authorization: 'Bearer nope' } }), 'E_UNAUTHORIZED')
      expectError(await raw(s, { method: 'POST', path: '/mcp', body: 'x'.repeat(2048), headers: bearer(s.alpha) }), 'E_LIMIT_EXCEEDED')
      // Chunked: the handler reads, the cap trips mid-stream, and the answer is still 413.
      expectError(await raw(s, { method: 'POST', path: '/mcp', chunks: [Buffer.alloc(800, 0x20), Buffer.alloc(800, 0x20)], headers: bearer(s.alpha) }), 'E_LIMIT_EXCEEDED')
      expect(calls).toHaveLength(3)

      const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined)
      try {
        const res = await raw(s, { method: 'POST', path: '/mcp', body: '"explode"', headers: bearer(s.alpha) })
        expectError(res, 'E_INTERNAL')
        expect(res.json.message).toBe('internal error')
        expect(logged).toHaveBeenCalled()
      } finally {
        logged.mockRestore()
      }
    })
  })

  describe('server', () => {
    it('listens on a free port, refuses oversized headers, and close() lets in-flight requests finish', async () => {
      const s = await serve()
      expect(s.port).toBeGreaterThan(0)
      expect(s.url).toBe(`http://127.0.0.1:${s.port}`)
      expect((await raw(s, { path: '/health', headers: { 'x-big': 'a'.repeat(20 * 1024) } })).status).toBe(431)
      const taken = await startHttpServer(createHttpApp(new ProjectRegistry(), { port: s.port }), { port: s.port }).catch((e: unknown) => e)
      expect(taken).toMatchObject({ name: 'TychoraError', code: 'E_CONFLICT' })

      // A request whose body is still streaming when close() is called still gets its answer.
      let release!: () => void
      const gate = new Promise<void>((r) => (release = r))
      const inFlight = new Promise<RawResponse>((resolve, reject) => {
        const req = httpRequest(
          {
            host: '127.0.0.1',
            port: s.port,
            method: 'POST',
            path: '/v1/projects/alpha/search',
            headers: { ...bearer(s.alpha), 'content-type': 'application/json' },
          },
          (res) => {
            let text = ''
            res.on('data', (d: Buffer) => (text += d))
            res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, json: JSON.parse(text) }))
          },
        )
        req.on('error', reject)
        req.write('{"query": "cache ')
        req.flushHeaders()
        void gate.then(() => req.end('response freshness"}'))
      })
      await new Promise((r) => setTimeout(r, 100))
      let closedYet = false
      const closed = s.close().then(() => (closedYet = true))
      await new Promise((r) => setTimeout(r, 100))
      expect(closedYet).toBe(false)
      release()
      const answer = await inFlight
      await closed
      expect(answer.status).toBe(200)
      expect(answer.json.segments.length).toBeGreaterThan(0)
      const client = connect(s.url, { token: s.alpha.token, project: s.alpha.name })
      await expect(client.listSnapshots()).rejects.toMatchObject({ code: 'E_IO' })
    })
  })
})
