// Agent-surface benchmark: HTTP search latency and throughput with autocannon against the daemon
// on loopback, and MCP tool-call latency over Streamable HTTP and stdio. Returns one JSON object.
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { runtimePath } from '../dist/contracts/runtime.js'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const cliPath = join(root, 'dist/bin/tychora.cjs')
const QUERIES = ['input validation', 'session management cookies', 'password storage hashing', 'cross site scripting prevention', 'RFC 9110', 'logging sensitive data']

function pct(xs, p) {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? 0
}

function run(args) {
  return new Promise((res, rej) => {
    const c = spawn(process.execPath, [cliPath, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    let err = ''
    c.stderr.on('data', (d) => (err += d))
    c.on('exit', (code) => (code === 0 ? res() : rej(new Error(err))))
  })
}

function startDaemon(ws) {
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, [cliPath, 'serve', '--port', '0', '--workspace', ws], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (d) => {
      out += d
      const m = /listening on (http:\/\/\S+)/.exec(out)
      if (m) res({ url: m[1], child })
    })
    child.on('exit', (code) => rej(new Error(`daemon exited ${code}: ${out}`)))
  })
}

async function mcpLatency(client, project, calls) {
  const lat = []
  for (let i = 0; i < calls; i++) {
    const t = performance.now()
    const r = await client.callTool({ name: 'search_evidence', arguments: { project, query: QUERIES[i % QUERIES.length], limit: 5 } })
    lat.push(performance.now() - t)
    if (r.isError) throw new Error(JSON.stringify(r.content))
  }
  return { calls, p50_ms: pct(lat, 50), p99_ms: pct(lat, 99) }
}

export async function benchSurfaces({ corpus = join(root, '../shared/data/docs/owasp-cheatsheets'), seconds = 10, connections = 10 } = {}) {
  const scratch = mkdtempSync(join(tmpdir(), 'tychora-bench-surfaces-'))
  const ws = join(scratch, 'ws')
  try {
    await run(['init', ws])
    await run(['add', '-w', ws, corpus])
    const token = readFileSync(runtimePath(ws, 'ownerToken'), 'utf8').trim()
    const project = /^name = "(.+)"$/m.exec(readFileSync(join(ws, 'workspace.toml'), 'utf8'))[1]
    const { url, child } = await startDaemon(ws)
    try {
      let i = 0
      const http = await autocannon({
        url: `${url}/v1/projects/${project}/search`,
        connections,
        duration: seconds,
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify({ query: QUERIES[i++ % QUERIES.length], limit: 5 }) }) }],
      })
      const mcpHttp = new Client({ name: 'tychora-bench', version: '1.0.0' })
      await mcpHttp.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }))
      const overHttp = await mcpLatency(mcpHttp, project, 200)
      await mcpHttp.close()
      return {
        corpus,
        http_search: {
          connections,
          seconds,
          requests: http.requests.total,
          non_2xx: http.non2xx,
          errors: http.errors,
          requests_per_s: http.requests.average,
          p50_ms: http.latency.p50,
          p99_ms: http.latency.p99,
        },
        mcp_streamable_http: overHttp,
        ...(await (async () => {
          child.kill('SIGTERM')
          await new Promise((r) => child.once('exit', r))
          const stdio = new Client({ name: 'tychora-bench', version: '1.0.0' })
          await stdio.connect(new StdioClientTransport({ command: process.execPath, args: [cliPath, 'mcp', '--workspace', ws] }))
          const overStdio = await mcpLatency(stdio, project, 200)
          await stdio.close()
          return { mcp_stdio: overStdio }
        })()),
      }
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await benchSurfaces(), null, 2))
}
