import { readFileSync } from 'node:fs'
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connect } from '../../ts/client/http-client.js'
import type { QueryRequest } from '../../ts/contracts/query.js'
import { type QueryResult, QueryResultSchema } from '../../ts/contracts/result.js'
import { Workspace } from '../../ts/engine/workspace.js'
import { type SymbolReport, SymbolReportSchema } from '../../ts/contracts/symbol.js'
import { CLI, FIXTURE_CODE, FIXTURE_DOCS, cli, nativeMissing } from '../native/_setup.js'
import { type RunningDaemon, projectOf, startDaemon, tokenOf } from './_daemon.js'

/** What every surface must answer identically. */
interface Surface {
  search(request: QueryRequest): Promise<QueryResult>
  getEvidence(id: string): Promise<Record<string, unknown>>
  /** The error code a failing search reports on this surface. */
  searchErrorCode(request: QueryRequest): Promise<string>
  inspectSymbol(name: string): Promise<SymbolReport>
}

type Factory = (ws: string) => Promise<{ surface: Surface; close(): Promise<void> }>

async function mcpSurface(client: Client, project: string): Promise<Surface> {
  const call = async (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: { project, ...args } })
  return {
    async search({ channels, ...request }) {
      // MCP asks for the graph by intent, not by channel list.
      const r = await call('search_evidence', channels?.includes('graph') ? { ...request, graph: true } : request)
      if (r.isError) throw new Error(JSON.stringify({ meta: r._meta, content: r.content }))
      return QueryResultSchema.parse(r.structuredContent)
    },
    async getEvidence(id) {
      return (await call('get_evidence', { id })).structuredContent as Record<string, unknown>
    },
    async searchErrorCode(request) {
      // Tool errors carry their code in _meta (see ts/mcp/_tool.ts for why not structuredContent).
      const r = await call('search_evidence', request)
      return String((r._meta?.['tychora/error'] as { code?: string } | undefined)?.code)
    },
    async inspectSymbol(name) {
      const r = await call('inspect_symbol', { name })
      expect(r.content).toEqual([expect.objectContaining({ type: 'text', text: expect.stringContaining('callers: 1') })])
      return SymbolReportSchema.parse(r.structuredContent)
    },
  }
}

const SURFACES: Record<string, Factory> = {
  async sdk(ws) {
    const w = await Workspace.open(ws)
    return {
      surface: {
        search: (r) => w.search(r),
        getEvidence: (id) => w.getEvidence(id),
        searchErrorCode: (r) =>
          w.search(r).then(
            () => 'none',
            (e: { code: string }) => e.code,
          ),
        inspectSymbol: (name) => w.inspectSymbol({ name }),
      },
      close: async () => w.close(),
    }
  },
  async http(ws) {
    const daemon: RunningDaemon = await startDaemon([ws])
    const client = connect(daemon.url, { token: tokenOf(ws), project: projectOf(ws) })
    return {
      surface: {
        search: (r) => client.search(r),
        getEvidence: (id) => client.getEvidence(id),
        searchErrorCode: (r) =>
          client.search(r).then(
            () => 'none',
            (e: { code: string }) => e.code,
          ),
        inspectSymbol: (name) => client.inspectSymbol({ name }),
      },
      close: async () => void (await daemon.stop()),
    }
  },
  async mcp(ws) {
    const daemon = await startDaemon([ws])
    const client = new Client({ name: 'parity', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${tokenOf(ws)}` } } }))
    return {
      surface: await mcpSurface(client, projectOf(ws)),
      close: async () => {
        await client.close()
        await daemon.stop()
      },
    }
  },
  async mcpStdio(ws) {
    const client = new Client({ name: 'parity', version: '1.0.0' })
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', '--workspace', ws], stderr: 'pipe' }))
    return { surface: await mcpSurface(client, projectOf(ws)), close: () => client.close() }
  },
  async cli(ws) {
    const flags = (r: QueryRequest) => [
      ...(r.limit ? ['--limit', String(r.limit)] : []),
      ...(r.snapshot_id ? ['--snapshot', String(r.snapshot_id)] : []),
      ...(r.kinds ? ['--kind', r.kinds.join(',')] : []),
      ...(r.facets ?? []).flatMap((f) => ['--facet', f]),
      ...(r.mode ? ['--mode', r.mode] : []),
      ...(r.channels ? ['--channels', r.channels.join(',')] : []),
    ]
    return {
      surface: {
        async search(r) {
          const out = await cli(['search', '-w', ws, r.query, '--format', 'json', ...flags(r)])
          return QueryResultSchema.parse(JSON.parse(out.stdout))
        },
        async getEvidence(id) {
          return JSON.parse((await cli(['inspect', '-w', ws, id])).stdout) as Record<string, unknown>
        },
        async searchErrorCode(r) {
          const out = await cli(['search', '-w', ws, r.query, '--format', 'json', ...flags(r)])
          return out.code === 0 ? 'none' : (JSON.parse(out.stderr) as { code: string }).code
        },
        async inspectSymbol(name) {
          const md = await cli(['inspect', '-w', ws, 'symbol', name])
          expect(md.stdout).toContain('callers: 1')
          return SymbolReportSchema.parse(JSON.parse((await cli(['inspect', '-w', ws, 'symbol', name, '--format', 'json'])).stdout))
        },
      },
      close: async () => undefined,
    }
  },
}

/** Runs `tests` once per surface over the workspace `ws()` names (set in a beforeAll). */
function eachSurface(ws: () => string, tests: (surface: () => Surface) => void): void {
  for (const [name, factory] of Object.entries(SURFACES)) {
    describe(name, () => {
      let surface: Surface | undefined
      let close: () => Promise<void> = async () => {}
      beforeAll(async () => {
        const made = await factory(ws())
        surface = made.surface
        close = made.close
      })
      afterAll(() => close())
      tests(() => surface!)
    })
  }
}

describe.skipIf(nativeMissing)('the same evidence through every surface', () => {
  // One workspace for the whole suite (scratch() dirs are removed after each test).
  let dir = ''
  let ws = ''
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tychora-parity-'))
    ws = join(dir, 'ws')
    await cp(FIXTURE_DOCS, join(dir, 'docs'), { recursive: true })
    await cli(['init', ws])
    await cli(['add', '-w', ws, join(dir, 'docs')])
    // Two standards whose verification level is a facet (NAME=VALUE, typed by the kind).
    for (const level of [1, 2]) {
      await mkdir(join(dir, `level${level}`))
      await writeFile(join(dir, `level${level}`, 'passwords.md'), `# Passwords (level ${level})\n\nV2.1.1 Verify that the minimum password length is ${6 + level * 2} characters.\n`)
      const added = await cli(['add', '-w', ws, join(dir, `level${level}`), '--kind', 'standard', '--facet', `level=${level}`, '--facet', 'chapter=V2'])
      expect(added.code, added.stderr).toBe(0)
    }
  })
  afterAll(() => rm(dir, { recursive: true, force: true }))

  eachSurface(
    () => ws,
    (surface) => {
      it('cites the Markdown section, with a locator that slices the source bytes', async () => {
        const r = await surface().search({ query: 'conditional request revalidates stale response', limit: 3 })
        const top = r.segments[0]!
        expect(top.source.path).toBe('http-caching.md')
        expect(top.locator.heading_path).toEqual(['HTTP caching notes', 'Validation'])
        expect(top.citation).toBe(`http-caching.md:${top.locator.line_start}-${top.locator.line_end}`)
        const bytes = readFileSync(join(FIXTURE_DOCS, 'http-caching.md'))
        expect(bytes.subarray(top.locator.byte_start, top.locator.byte_end).toString()).toBe(top.text)
        expect(top.may_contain_instructions).toBe(false)
        const evidence = await surface().getEvidence(top.id)
        expect(evidence.type).toBe('chunk')
        expect(evidence.text).toBe(top.text)
      })

      it('finds a JSON record by its id through the exact channel', async () => {
        const r = await surface().search({ query: 'TERM-SEGMENT', limit: 1 })
        expect(r.segments[0]!.locator.json_pointer).toBe('/2')
        expect(r.segments[0]!.channels.some((c) => c.channel === 'exact' && c.rank === 1)).toBe(true)
      })

      it('applies facet conditions before ranking, with coverage that counts only what they admit', async () => {
        const all = await surface().search({ query: 'V2.1.1 minimum password length', kinds: ['standard'] })
        expect(all.segments.map((s) => s.citation)).toHaveLength(2)
        const r = await surface().search({ query: 'V2.1.1 minimum password length', facets: ['level>=2', 'chapter=V2'] })
        expect(r.segments.map((s) => s.text)).toEqual([expect.stringContaining('10 characters')])
        expect(r.coverage.eligible_sources).toBe(1)
        expect(r.applied_scope.facets).toEqual(['level>=2', 'chapter=V2'])
        expect(await surface().searchErrorCode({ query: 'password', facets: ['level=two'] })).toBe('E_INVALID_ARGUMENT')
      })

      it('a mode draws on its lanes, names the lanes and identifiers it has no evidence for, and says what a decision must do', async () => {
        const r = await surface().search({ query: 'V2.1.1 V9.9.9 minimum password length', mode: 'compliance' })
        expect(r.segments.length).toBeGreaterThan(0)
        expect(r.segments.every((s) => s.source.lane === 'standards')).toBe(true)
        expect(r.applied_scope.mode).toBe('compliance')
        expect(r.coverage_gaps).toEqual([expect.objectContaining({ kind: 'identifier', name: 'V9.9.9' }), expect.objectContaining({ kind: 'lane', name: 'authority' })])
        expect(r.decision_requirements.length).toBeGreaterThan(0)
        expect(r.checks.map((c) => `${c.name}:${c.status}`)).toEqual(['superseded_sources:pass', 'quoted_instructions:pass'])
        expect(await surface().searchErrorCode({ query: 'password', mode: 'nonsense' })).toBe('E_INVALID_ARGUMENT')
      })

      it('reports an unknown snapshot as E_NOT_FOUND', async () => {
        expect(await surface().searchErrorCode({ query: 'anything', snapshot_id: 999 })).toBe('E_NOT_FOUND')
      })
    },
  )
})

describe.skipIf(nativeMissing)('the same code evidence through every surface', () => {
  let dir = ''
  let ws = ''
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tychora-parity-code-'))
    ws = join(dir, 'ws')
    await cp(FIXTURE_CODE, join(dir, 'repo'), { recursive: true })
    await cli(['init', ws, '--profile', 'code'])
    await cli(['add', '-w', ws, join(dir, 'repo')])
  })
  afterAll(() => rm(dir, { recursive: true, force: true }))

  eachSurface(
    () => ws,
    (surface) => {
      it('returns symbol-shaped segments, and what the graph reached with the path that reached it', async () => {
        const r = await surface().search({ query: 'marmalade source', limit: 5, channels: ['exact', 'lexical', 'graph'] })
        const top = r.segments[0]!
        expect(top.locator.anchor).toBe('lang.parse.Parser.parse')
        expect(top.locator.heading_path).toEqual(['lang.parse', 'Parser', 'parse'])
        expect(top.citation).toBe('lang/parse.py:8-11')
        const reached = r.segments.find((s) => s.locator.anchor === 'lang.lex.tokenize')
        expect(reached?.channels.map((c) => c.channel)).toContain('graph')
        expect(reached?.found_via).toEqual([{ from: 'Parser.parse', relation: 'calls', to: 'tokenize', path: 'lang/parse.py', line: 10 }])
        // The profile's default channels leave the graph out.
        const plain = await surface().search({ query: 'marmalade source', limit: 5 })
        expect(plain.segments.some((s) => s.found_via !== undefined)).toBe(false)
      })

      it('inspects a symbol: its definition, its caller and its callees, each cited', async () => {
        const report = await surface().inspectSymbol('tokenize')
        expect(report.resolution).toBe('syntactic')
        expect(report.definitions.map((d) => [d.symbol, d.site.citation, d.signature])).toEqual([['lang.lex.tokenize', 'lang/lex.py:4-6', 'def tokenize(text):']])
        const [def] = report.definitions
        expect(def!.callers.map((c) => [c.symbol, c.site.citation])).toEqual([['Parser.parse', 'lang/parse.py:10']])
        expect(def!.callees).toEqual([expect.objectContaining({ text: 'text.split', outcome: 'unresolved', reason: 'no visible binding for text' })])
      })
    },
  )
})
