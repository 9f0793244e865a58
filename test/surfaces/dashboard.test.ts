import { existsSync, readFileSync } from 'node:fs'
import { readFile, rm, writeFile } from 'node:fs/promises'
import { request as httpRequest } from 'node:http'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { runtimePath } from '../../ts/contracts/runtime.js'
import { Daemon } from '../../ts/daemon/daemon.js'
import { ensureTokens } from '../../ts/engine/tokens.js'
import { propose } from '../../ts/knowledge/lifecycle.js'
import { builtStates } from '../../ts/service/knowledge-state.js'
import { Workspace } from '../../ts/engine/workspace.js'
import { createHttpApp } from '../../ts/http/app.js'
import { DashboardAccess } from '../../ts/http/dashboard/access.js'
import { dashboardApi } from '../../ts/http/dashboard/api.js'
import { Dashboard } from '../../ts/http/dashboard/dashboard.js'
import { CONTENT_SECURITY_POLICY } from '../../ts/http/dashboard/assets.js'
import { startHttpServer } from '../../ts/http/server.js'
import { ProjectRegistry } from '../../ts/service/registry.js'
import { cli, nativeMissing, scratch } from '../native/_setup.js'
import { approvedKnowledge } from '../support/knowledge.js'
import { projectOf, startDaemon } from './_daemon.js'

interface Served {
  url: string
  port: number
  docs: string
  ws: Workspace
  dashboard: Dashboard
  owner: string
  agent: string
  project: string
}

const teardown: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const step of teardown.splice(0).reverse()) await step()
})

/** A real workspace with the fixture docs, served with the dashboard on a free loopback port. */
async function serve(): Promise<Served> {
  const { dir, docs } = await scratch()
  const wsDir = join(dir, 'ws')
  await Workspace.init(wsDir)
  const ws = await Workspace.open(wsDir)
  teardown.push(async () => {
    ws.close()
    await ws.idle()
  })
  expect((await ws.add({ paths: [docs] })).status).toBe('succeeded')
  const tokens = await ensureTokens(wsDir)
  const registry = new ProjectRegistry()
  registry.register(ws, { tokens })
  const dashboard = new Dashboard(registry)
  const server = await startHttpServer(createHttpApp(registry, { port: 0, dashboard }), { port: 0 })
  teardown.push(async () => {
    dashboard.close()
    await server.close()
  })
  return { url: server.url, port: server.port, docs, ws, dashboard, owner: tokens.owner, agent: tokens.agent, project: ws.name }
}

/**
 * Logs in through a fresh one-time URL as a browser would: the session cookie (name=value) and the
 * session key the redirect hands the page in its fragment (sent as `x-tychora-key` on every call).
 */
async function login(s: Served): Promise<{ cookie: string; csrf: string }> {
  const response = await fetch(s.dashboard.loginUrl(s.url), { redirect: 'manual' })
  expect(response.status).toBe(303)
  const cookie = (response.headers.get('set-cookie') ?? '').split(';')[0] as string
  const key = /^\/#key=([A-Za-z0-9_-]{43})$/.exec(response.headers.get('location') ?? '')?.[1] as string
  return { cookie, csrf: key }
}

/** A request through node:http, which (unlike fetch) lets a test set Host. */
function raw(port: number, path: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers: { host: `127.0.0.1:${port}`, ...headers } }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
    })
    req.on('error', reject)
    req.end()
  })
}

/** Values for a route's parameters that would pass validation, so a refusal can only come from access. */
const SAMPLE: Record<string, string> = {
  id: '1',
  revision: '1',
  page: '1',
  extraction: '1',
  ordinal: '1',
  segment: 'seg_1_1',
}

/**
 * Every route the dashboard's API registers (read from `dashboardApi`, so a new one cannot be
 * forgotten here), with sample parameters, plus the page itself.
 */
function dashboardRoutes(project: string): Array<[string, string]> {
  const api = dashboardApi({ registry: new ProjectRegistry(), access: new DashboardAccess(), maxBodyBytes: 1024, streams: new Set(), review: undefined, closed: () => false })
  const routes = api.map(([method, path]): [string, string] => [method, path.replace(':project', project).replace(/:(\w+)/g, (_, name: string) => SAMPLE[name] ?? 'x')])
  expect(routes.length).toBeGreaterThan(25)
  return [['GET', '/'], ...routes]
}

describe.skipIf(nativeMissing)('the dashboard: access', () => {
  it('the one-time login URL sets an HttpOnly, SameSite=Strict session cookie, moves to a URL without the key, and works once', async () => {
    const s = await serve()
    const url = s.dashboard.loginUrl(s.url)
    const first = await fetch(url, { redirect: 'manual' })
    expect(first.status).toBe(303)
    // The page gets the session's key in the fragment (never sent to a server), not in the cookie.
    expect(first.headers.get('location')).toMatch(/^\/#key=[A-Za-z0-9_-]{43}$/)
    const cookie = first.headers.get('set-cookie') ?? ''
    expect(cookie).toMatch(new RegExp(`^tychora_session_${s.port}=[A-Za-z0-9_-]{43}; `))
    expect(cookie).toContain('HttpOnly')
    expect(cookie).toContain('SameSite=Strict')
    expect(cookie).toContain('Path=/')
    const again = await fetch(url, { redirect: 'manual' })
    expect(again.status).toBe(401)
    expect(again.headers.get('set-cookie')).toBeNull()
    // The cookie opens the page, which carries the strict policy.
    const page = await fetch(`${s.url}/`, { headers: { cookie: cookie.split(';')[0] as string } })
    expect(page.status).toBe(200)
    expect(page.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY)
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/unsafe-inline|unsafe-eval|https?:/)
    const html = await page.text()
    expect(html).toContain('<div id="app">')
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/) // no inline script
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1] as string
    const asset = await fetch(`${s.url}${script}`, { headers: { cookie: cookie.split(';')[0] as string } })
    expect(asset.status).toBe(200)
    expect(asset.headers.get('content-type')).toContain('text/javascript')
  })

  it('agent and owner bearer tokens, a missing cookie and a forged one are refused on every dashboard route', async () => {
    const s = await serve()
    const { csrf } = await login(s)
    for (const [method, path] of dashboardRoutes(s.project)) {
      const variants: Array<Record<string, string>> = [
        {},
        { authorization: `Bearer ${s.agent}` },
        { authorization: `Bearer ${s.owner}` },
        { cookie: `tychora_session_${s.port}=forged-value-forged-value-forged-value-forg` },
        { cookie: `tychora_session_${s.port}=${s.owner}` },
      ]
      for (const headers of variants) {
        const response = await fetch(`${s.url}${path}`, { method, headers: { ...headers, 'x-tychora-key': csrf, 'content-type': 'application/json' }, ...(method === 'POST' ? { body: '{}' } : {}) })
        expect({ path, status: response.status, headers: Object.keys(headers) }).toEqual({ path, status: 401, headers: Object.keys(headers) })
        // `/` answers a page that says how to log in; every other route the error as JSON.
        if (path === '/') expect(await response.text()).toContain('tychora dashboard')
        else expect(((await response.json()) as { code: string }).code).toBe('E_UNAUTHORIZED')
      }
    }
  })

  it('a state-changing call needs the CSRF token; cross-site requests and foreign hosts are refused', async () => {
    const s = await serve()
    const { cookie, csrf } = await login(s)
    const search = `${s.url}/ui/api/projects/${s.project}/search`
    const body = JSON.stringify({ query: 'retention' })
    const post = (headers: Record<string, string>) => fetch(search, { method: 'POST', headers: { cookie, 'content-type': 'application/json', ...headers }, body })
    expect((await post({})).status).toBe(403)
    expect((await post({ 'x-tychora-key': 'not-the-token' })).status).toBe(403)
    expect((await post({ 'x-tychora-key': csrf, 'sec-fetch-site': 'cross-site' })).status).toBe(403)
    expect((await post({ 'x-tychora-key': csrf, origin: 'http://evil.example' })).status).toBe(403)
    expect((await post({ 'x-tychora-key': csrf })).status).toBe(200)
    // A page of another site cannot even read what a GET answers.
    expect((await fetch(`${s.url}/ui/api/session`, { headers: { cookie, 'x-tychora-key': csrf, 'sec-fetch-site': 'cross-site' } })).status).toBe(403)
    // The cookie alone (what any server on another port of this host would receive) opens no call, reads included.
    expect((await fetch(`${s.url}/ui/api/session`, { headers: { cookie } })).status).toBe(403)
    expect((await fetch(`${s.url}/ui/api/projects/${s.project}/sources`, { headers: { cookie } })).status).toBe(403)
    expect((await fetch(`${s.url}/ui/api/session`, { headers: { cookie, 'x-tychora-key': csrf } })).status).toBe(200)
    expect(await raw(s.port, '/', { cookie, host: 'evil.example' })).toBe(403)
    expect(await raw(s.port, '/ui/api/session', { cookie, host: `attacker.test:${s.port}` })).toBe(403)
    expect(await raw(s.port, '/login?key=x', { host: 'evil.example' })).toBe(403)
  })

  it('the evidence API still takes only bearer tokens: a dashboard cookie opens nothing there', async () => {
    const s = await serve()
    const { cookie } = await login(s)
    const response = await fetch(`${s.url}/v1/projects/${s.project}/sources`, { headers: { cookie } })
    expect(response.status).toBe(401)
  })

  it('logging out ends the session', async () => {
    const s = await serve()
    const { cookie, csrf } = await login(s)
    expect((await fetch(`${s.url}/logout`, { method: 'POST', headers: { cookie } })).status).toBe(403)
    const out = await fetch(`${s.url}/logout`, { method: 'POST', headers: { cookie, 'x-tychora-key': csrf } })
    expect(out.status).toBe(204)
    expect(out.headers.get('set-cookie')).toContain('Max-Age=0')
    expect((await fetch(`${s.url}/ui/api/session`, { headers: { cookie, 'x-tychora-key': csrf } })).status).toBe(401)
  })
})

describe.skipIf(nativeMissing)('the dashboard: its API answers from the workspace', () => {
  it('search with explain, evidence, sources, jobs, runs and a replay diff', async () => {
    const s = await serve()
    const { cookie, csrf } = await login(s)
    const get = async (path: string) => {
      const response = await fetch(`${s.url}/ui/api/projects/${s.project}${path}`, { headers: { cookie, 'x-tychora-key': csrf } })
      expect({ path, status: response.status }).toEqual({ path, status: 200 })
      return (await response.json()) as any
    }
    const post = async (path: string, body: unknown) => {
      const response = await fetch(`${s.url}/ui/api/projects/${s.project}${path}`, {
        method: 'POST',
        headers: { cookie, 'x-tychora-key': csrf, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
      expect({ path, status: response.status }).toEqual({ path, status: 200 })
      return (await response.json()) as any
    }
    const result = await post('/search', { query: 'cache freshness lifetime', explain: true })
    expect(result.segments.length).toBeGreaterThan(0)
    expect(result.segments[0].channels[0].score).toEqual(expect.any(Number))
    expect(result.trace.length).toBeGreaterThan(0)

    // The citation in its file: the lines around it, the cited range as the locator says.
    const top = result.segments[0]
    const context = await get(`/context/${top.id}`)
    expect(context.cited).toEqual([top.locator.line_start, top.locator.line_end])
    expect(context.lines.slice(top.locator.line_start - context.first_line, top.locator.line_end - context.first_line + 1).join('\n')).toContain(top.text.split('\n')[0])

    const sources = await get('/sources?limit=2')
    expect(sources.sources).toHaveLength(2)
    expect(sources.total).toBe((await s.ws.listSources({})).total)
    const source = await get(`/evidence/source:${sources.sources[0].id}`)
    expect(source.type).toBe('source')
    // Its sensitivity label: the workspace's default level for a source added without one.
    expect(source.sensitivity).toBe('internal')

    const jobs = await get('/jobs')
    expect(jobs.jobs[0]).toMatchObject({ type: 'job', kind: 'add', status: 'succeeded' })
    expect((await get(`/jobs/${jobs.jobs[0].id}`)).id).toBe(jobs.jobs[0].id)

    const runs = await get('/runs')
    expect(runs.runs[0]).toMatchObject({ id: result.run_id, query: 'cache freshness lifetime', results: result.segments.length })
    const run = await get(`/runs/${result.run_id}`)
    expect(run.summary.segments).toEqual(result.segments.map((x: { id: string }) => x.id))
    const diff = await post(`/runs/${result.run_id}/replay`, { snapshot: 'recorded' })
    expect(diff).toMatchObject({ run_id: result.run_id, same: true, added: [], removed: [] })
    expect(diff.after_citations).toEqual(result.segments.map((x: { citation: string }) => x.citation))

    // A queued job (enqueued, not kicked) is cancelled; a cancelled one cannot be cancelled again.
    const queued = await s.ws.enqueueAdd({ paths: [s.docs] })
    const cancelled = await post(`/jobs/${queued}/cancel`, { reason: 'wrong folder' })
    expect(cancelled).toMatchObject({ id: queued, status: 'cancelled', error: 'cancelled by the owner: wrong folder' })
    const again = await fetch(`${s.url}/ui/api/projects/${s.project}/jobs/${queued}/cancel`, {
      method: 'POST',
      headers: { cookie, 'x-tychora-key': csrf, 'content-type': 'application/json' },
      body: '{}',
    })
    expect(again.status).toBe(409)

    // A changed file has two revisions; their diff is the changed text, line by line.
    const file = join(s.docs, 'http-caching.md')
    await writeFile(file, (await readFile(file, 'utf8')).replace('A response is fresh', 'A stored response is fresh'))
    expect((await s.ws.add({ paths: [s.docs] })).files.changed).toBe(1)
    const changed = (await get('/sources?limit=100')).sources.find((x: { path: string }) => x.path === 'http-caching.md')
    const revisions = (await get(`/evidence/source:${changed.id}`)).revisions.map((r: { id: number }) => r.id).sort((a: number, b: number) => a - b)
    expect(revisions).toHaveLength(2)
    const changes = await get(`/diff?from=${revisions[0]}&to=${revisions[1]}`)
    expect(changes.added).toBeGreaterThan(0)
    expect(
      changes.lines
        .filter((l: { op: string }) => l.op === '+')
        .map((l: { text: string }) => l.text)
        .join('\n'),
    ).toContain('A stored response is fresh')
    expect(
      changes.lines
        .filter((l: { op: string }) => l.op === '-')
        .map((l: { text: string }) => l.text)
        .join('\n'),
    ).toContain('A response is fresh')

    const status = await get('/status')
    expect(status.counts.sources).toBe(sources.total)
    const doctor = await get('/doctor')
    expect(doctor.findings.length).toBeGreaterThan(0)
  })

  it('bad input gets a precise error: an unknown project, a bad job id, an unknown search field', async () => {
    const s = await serve()
    const { cookie, csrf } = await login(s)
    const status = async (path: string, init: RequestInit = {}) => {
      const response = await fetch(`${s.url}${path}`, { ...init, headers: { cookie, 'x-tychora-key': csrf, 'content-type': 'application/json', ...(init.headers ?? {}) } })
      return { status: response.status, code: ((await response.json()) as { code: string }).code }
    }
    expect(await status('/ui/api/projects/nope/status')).toEqual({ status: 404, code: 'E_NOT_FOUND' })
    expect(await status(`/ui/api/projects/${s.project}/jobs/abc`)).toEqual({ status: 400, code: 'E_INVALID_ARGUMENT' })
    expect(await status(`/ui/api/projects/${s.project}/jobs?limit=100000`)).toEqual({ status: 400, code: 'E_INVALID_ARGUMENT' })
    expect(await status(`/ui/api/projects/${s.project}/search`, { method: 'POST', body: JSON.stringify({ query: 'x', limti: 3 }) })).toEqual({ status: 400, code: 'E_INVALID_ARGUMENT' })
    expect(await status(`/ui/api/projects/${s.project}/search`, { method: 'POST', body: '{not json' })).toEqual({ status: 400, code: 'E_INVALID_ARGUMENT' })
  })

  it('jobs arrive live as server-sent events: a sync is queued, starts and finishes; closing the dashboard ends the stream', async () => {
    const s = await serve()
    const { cookie, csrf } = await login(s)
    const stream = await fetch(`${s.url}/ui/api/projects/${s.project}/events`, { headers: { cookie, 'x-tychora-key': csrf } })
    expect(stream.status).toBe(200)
    expect(stream.headers.get('content-type')).toContain('text/event-stream')
    const reader = (stream.body as ReadableStream<Uint8Array>).getReader()
    const decoder = new TextDecoder()
    let text = ''
    const until = async (pattern: RegExp) => {
      while (!pattern.test(text)) {
        const { value, done } = await reader.read()
        if (done) throw new Error(`stream ended before ${pattern}:\n${text}`)
        text += decoder.decode(value)
      }
    }
    await until(/event: ready/)
    const queued = await fetch(`${s.url}/ui/api/projects/${s.project}/sync`, {
      method: 'POST',
      headers: { cookie, 'x-tychora-key': csrf, 'content-type': 'application/json' },
      body: JSON.stringify({ paths: [s.docs] }),
    })
    expect(queued.status).toBe(200)
    const { job_id } = (await queued.json()) as { job_id: number }
    await until(new RegExp(`"phase":"finished","status":\\{"type":"job","id":${job_id}[^\\n]*"status":"succeeded"`))
    const phases = [...text.matchAll(new RegExp(`"phase":"(\\w+)","status":\\{"type":"job","id":${job_id}`, 'g'))].map((m) => m[1])
    expect(phases).toEqual(['queued', 'started', 'finished'])
    s.dashboard.close()
    for (;;) if ((await reader.read()).done) break
  })
})

describe.skipIf(nativeMissing)('the dashboard: knowledge review', () => {
  it('lists a pending proposal with its diff and checks; rejecting needs a reason; accepting writes the migration', async () => {
    const { repo, paths } = await approvedKnowledge('tychora-dashboard-review-')
    teardown.push(() => rm(repo, { recursive: true, force: true }))
    const daemon = await Daemon.start({ workspaces: builtStates(paths), port: 0, knowledge: { root: paths.root } })
    teardown.push(() => daemon.stop())
    const edit = await propose(
      paths,
      { change: { op: 'edit', item: 'release-freeze', body: 'No releases from 15 December.\nAsk the release lead.\n' }, rationale: 'the freeze starts mid-month', agent: 'agent-7' },
      async () => undefined,
    )

    const login = await fetch(daemon.loginUrl(), { redirect: 'manual' })
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] as string
    const csrf = /#key=(.+)$/.exec(login.headers.get('location') ?? '')?.[1] as string
    const listed = (await (await fetch(`${daemon.url}/ui/api/review`, { headers: { cookie, 'x-tychora-key': csrf } })).json()) as any
    expect(listed.enabled).toBe(true)
    expect(listed.reviews).toHaveLength(1)
    const review = listed.reviews[0]
    expect(review.proposal.id).toBe(edit.id)
    expect(review.current).toMatchObject({ title: 'Release freeze', body: 'No releases in December.\nAsk the release lead.\n' })
    expect(review.diff).toEqual([
      { op: '-', text: 'No releases in December.' },
      { op: '+', text: 'No releases from 15 December.' },
      { op: ' ', text: 'Ask the release lead.' },
    ])
    expect(review.checks.map((c: { check: string; ok: boolean }) => [c.check, c.ok])).toEqual([
      ['fits the approved items', true],
      ['evidence still holds', true],
      ['within the ceiling', true],
    ])

    const decide = (body: unknown) =>
      fetch(`${daemon.url}/ui/api/review/${edit.id}`, { method: 'POST', headers: { cookie, 'x-tychora-key': csrf, 'content-type': 'application/json' }, body: JSON.stringify(body) })
    const noReason = await decide({ decision: 'reject' })
    expect(noReason.status).toBe(400)
    // The agents' token never reaches a decision.
    const agent = readFileSync(runtimePath(paths.root, 'agentToken'), 'utf8').trim()
    const asAgent = await fetch(`${daemon.url}/ui/api/review/${edit.id}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${agent}`, 'content-type': 'application/json' },
      body: '{"decision":"accept"}',
    })
    expect(asAgent.status).toBe(401)
    const accepted = await decide({ decision: 'accept' })
    expect(accepted.status).toBe(200)
    const { migration } = (await accepted.json()) as { migration: { id: string; decision: string; proposal: string } }
    expect(migration).toMatchObject({ decision: 'accepted', proposal: edit.id })
    expect(existsSync(join(paths.migrations, `${migration.id}.json`))).toBe(true)
    expect(readFileSync(join(paths.knowledge, 'release-freeze.md'), 'utf8')).toContain('15 December')
    const after = (await (await fetch(`${daemon.url}/ui/api/review`, { headers: { cookie, 'x-tychora-key': csrf } })).json()) as any
    expect(after.reviews).toEqual([])
  })
})

describe.skipIf(nativeMissing)('the dashboard: login links from the CLI', () => {
  it('`serve` prints a one-time login link; `tychora dashboard` asks the daemon for a fresh one with the owner token; an agent token gets none', async () => {
    const { ws, dir } = await scratch()
    const other = join(dir, 'other')
    expect((await cli(['init', ws])).code).toBe(0)
    expect((await cli(['init', other])).code).toBe(0)
    const daemon = await startDaemon([ws, other])
    teardown.push(async () => {
      await daemon.stop()
    })
    // The line follows the one `startDaemon` waits for.
    await expect.poll(() => /dashboard: (http:\/\/\S+\/login\?key=[A-Za-z0-9_-]{43})/.exec(daemon.output())?.[1]).toBeDefined()
    const printed = /dashboard: (http:\/\/\S+\/login\?key=[A-Za-z0-9_-]{43})/.exec(daemon.output())?.[1]
    const fresh = await cli(['dashboard', '-w', ws])
    expect(fresh.code).toBe(0)
    const link = fresh.stdout.trim()
    expect(link).toMatch(new RegExp(`^${daemon.url.replaceAll('.', '\\.')}/login\\?key=[A-Za-z0-9_-]{43}$`))
    expect(link).not.toBe(printed)
    // A HEAD (a link preview) does not spend a link.
    expect((await fetch(link, { method: 'HEAD', redirect: 'manual' })).status).toBe(404)
    const sessions: Array<{ cookie: string; key: string }> = []
    for (const url of [printed as string, link]) {
      const redeemed = await fetch(url, { redirect: 'manual' })
      expect(redeemed.status).toBe(303)
      sessions.push({ cookie: (redeemed.headers.get('set-cookie') ?? '').split(';')[0] as string, key: /#key=(.+)$/.exec(redeemed.headers.get('location') ?? '')?.[1] as string })
      expect((await fetch(url, { redirect: 'manual' })).status).toBe(401)
    }
    // The printed link opens every project; the owner token of one opens that one only, as on the API.
    const opens = async ({ cookie, key }: { cookie: string; key: string }) =>
      ((await (await fetch(`${daemon.url}/ui/api/session`, { headers: { cookie, 'x-tychora-key': key } })).json()) as { projects: string[] }).projects.sort()
    expect(await opens(sessions[0] as { cookie: string; key: string })).toEqual([projectOf(ws), projectOf(other)].sort())
    expect(await opens(sessions[1] as { cookie: string; key: string })).toEqual([projectOf(ws)])
    const elsewhere = await fetch(`${daemon.url}/ui/api/projects/${projectOf(other)}/status`, { headers: { cookie: sessions[1]?.cookie as string, 'x-tychora-key': sessions[1]?.key as string } })
    expect(elsewhere.status).toBe(404)
    const agent = readFileSync(runtimePath(ws, 'agentToken'), 'utf8').trim()
    const refused = await fetch(`${daemon.url}/ui/login-link`, { method: 'POST', headers: { authorization: `Bearer ${agent}` } })
    expect(refused.status).toBe(403)
    expect((await fetch(`${daemon.url}/ui/login-link`, { method: 'POST' })).status).toBe(401)
  })
})
