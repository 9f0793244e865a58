// A real OpenSearch cluster for the tests and benchmarks (issue 37), from registries only: the
// server jars and plugins from Maven Central (test/opensearch/pom.xml, `mvn
// dependency:copy-dependencies`, cached in ~/.m2 and ~/.cache/tychora/opensearch), the k-NN
// plugin's zip (no native libraries: indexes always name `engine: lucene`), and a small main
// (test/opensearch/…/TestNode.java) that starts one node with those plugins on its classpath.
// `node scripts/opensearch.mjs build` builds it; `startOpenSearch({ nodes })` starts a cluster on
// loopback and resolves once every node has joined.
import { execFileSync, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { homedir, tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
export const HOME = process.env.TYCHORA_OPENSEARCH ?? join(homedir(), '.cache/tychora/opensearch')
const CLASSPATH = ['classes', 'lib/*', 'lib/knn/*'].map((p) => join(HOME, p)).join(':')

const SOURCES = ['test/opensearch/pom.xml', 'test/opensearch/src/main/java/dev/tychora/TestNode.java']

/** What the node is built from: a change to the POM or the main rebuilds it. */
function fingerprint() {
  const hash = createHash('sha256')
  for (const file of SOURCES) hash.update(readFileSync(join(ROOT, file)))
  return hash.digest('hex')
}

/** Whether the node is built here, from the sources as they are now. */
export function built() {
  const stamp = join(HOME, 'build.stamp')
  return existsSync(join(HOME, 'classes/dev/tychora/TestNode.class')) && existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === fingerprint()
}

/** Fetches the jars (Maven), unpacks the k-NN plugin (`jar xf`) and compiles the main; a no-op when built. */
export function build() {
  if (built()) return
  rmSync(HOME, { recursive: true, force: true })
  const lib = join(HOME, 'lib')
  mkdirSync(lib, { recursive: true })
  execFileSync('mvn', ['-q', '-B', '-f', join(ROOT, 'test/opensearch/pom.xml'), 'dependency:copy-dependencies', `-DoutputDirectory=${lib}`], { stdio: 'inherit' })
  const zip = readdirSync(lib).find((f) => f.startsWith('opensearch-knn-') && f.endsWith('.zip'))
  if (!zip) throw new Error('the k-NN plugin zip was not fetched')
  mkdirSync(join(lib, 'knn'), { recursive: true })
  execFileSync('jar', ['xf', join(lib, zip)], { cwd: join(lib, 'knn') })
  execFileSync('javac', ['-d', join(HOME, 'classes'), '-cp', CLASSPATH, join(ROOT, 'test/opensearch/src/main/java/dev/tychora/TestNode.java')], { stdio: 'inherit' })
  writeFileSync(join(HOME, 'build.stamp'), `${fingerprint()}\n`)
}

function freePort() {
  return new Promise((done, fail) => {
    const server = createServer()
    server.unref()
    server.on('error', fail)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => done(port))
    })
  })
}

/** Starts `nodes` nodes as JVMs of their own (`-Xmx384m`), one cluster; see scripts/opensearch.d.mts. */
export async function startOpenSearch({ nodes = 1, timeoutMs = 120_000 } = {}) {
  if (!built()) throw new Error(`no OpenSearch test node at ${HOME}: run \`node scripts/opensearch.mjs build\``)
  const dir = mkdtempSync(join(tmpdir(), 'tychora-opensearch-'))
  const ports = []
  for (let i = 0; i < nodes; i++) ports.push({ http: await freePort(), transport: await freePort(), name: `n${i}` })
  const seeds = ports.map((p) => `127.0.0.1:${p.transport}`).join(',')
  const masters = ports.map((p) => p.name).join(',')
  const launch = (p, fresh) => {
    const home = join(dir, p.name)
    mkdirSync(join(home, 'config'), { recursive: true })
    if (fresh) writeFileSync(join(home, 'config/opensearch.yml'), '')
    const log = openSync(join(home, 'node.log'), fresh ? 'w' : 'a')
    const args = ['-Xms256m', '-Xmx384m', '-cp', CLASSPATH, 'dev.tychora.TestNode', home, String(p.http), String(p.transport), p.name]
    if (nodes > 1) args.push(seeds, masters)
    return spawn('java', args, { stdio: ['ignore', log, log] })
  }
  const children = ports.map((p) => launch(p, true))
  const url = `http://127.0.0.1:${ports[0].http}`
  const stop = async () => {
    // SIGTERM (the node closes), then SIGKILL after a short wait.
    const exits = children.map((c) => (c.exitCode !== null || c.signalCode !== null ? Promise.resolve() : new Promise((r) => c.once('exit', r))))
    for (const c of children) c.kill('SIGTERM')
    await Promise.race([Promise.all(exits), new Promise((r) => setTimeout(r, 10_000))])
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
  }
  const started = Date.now()
  for (;;) {
    const dead = children.find((c) => c.exitCode !== null || c.signalCode !== null)
    if (dead) {
      const log = readFileSync(join(dir, ports[children.indexOf(dead)].name, 'node.log'), 'utf8').slice(-2000)
      await stop()
      throw new Error(`an OpenSearch node exited while starting: ${log}`)
    }
    try {
      const health = await (await fetch(`${url}/_cluster/health`, { signal: AbortSignal.timeout(2_000) })).json()
      if (health.number_of_nodes === nodes && health.status !== 'red') break
    } catch {}
    if (Date.now() - started > timeoutMs) {
      await stop()
      throw new Error(`the OpenSearch cluster did not form within ${timeoutMs} ms`)
    }
    await new Promise((r) => setTimeout(r, 500))
  }
  /** SIGKILLs node `i` (its data stays in its folder). */
  const kill = async (i) => {
    const c = children[i]
    if (c.exitCode !== null || c.signalCode !== null) return
    const exited = new Promise((r) => c.once('exit', r))
    c.kill('SIGKILL')
    await exited
  }
  /** Starts node `i` again on its ports and data; resolves once the cluster reports `status`. */
  const revive = async (i, status = 'green') => {
    children[i] = launch(ports[i], false)
    const deadline = Date.now() + timeoutMs
    for (;;) {
      try {
        const other = ports[(i + 1) % nodes]
        const health = await (
          await fetch(`http://127.0.0.1:${other.http}/_cluster/health?wait_for_status=${status}&wait_for_nodes=${nodes}&timeout=5s`, { signal: AbortSignal.timeout(10_000) })
        ).json()
        if (health.number_of_nodes === nodes && !health.timed_out) return
      } catch {}
      if (Date.now() > deadline) throw new Error(`the cluster was not ${status} with ${nodes} nodes within ${timeoutMs} ms`)
      await new Promise((r) => setTimeout(r, 500))
    }
  }
  return { url, urls: ports.map((p) => `http://127.0.0.1:${p.http}`), pids: children.map((c) => c.pid), startedMs: Date.now() - started, stop, kill, revive }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const command = process.argv[2]
  if (command === 'build') build()
  else if (command === 'check') {
    const cluster = await startOpenSearch({ nodes: Number(process.argv[3] ?? 1) })
    process.stdout.write(`${cluster.urls.length} node(s) up in ${cluster.startedMs} ms at ${cluster.url}\n`)
    await cluster.stop()
  } else {
    process.stderr.write('usage: node scripts/opensearch.mjs build | check [nodes]\n')
    process.exitCode = 2
  }
}
