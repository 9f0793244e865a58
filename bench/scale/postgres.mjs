// A real PostgreSQL for the scale benches: Debian's server in a temp dir (as the `postgres` user
// when root: initdb refuses root), fsync on, Unix socket only. `database()` makes a fresh one.
import { execFileSync } from 'node:child_process'
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export function startPostgres() {
  const base = '/usr/lib/postgresql'
  const version = readdirSync(base)
    .filter((v) => existsSync(join(base, v, 'bin/initdb')))
    .sort((x, y) => Number(x) - Number(y))
    .at(-1)
  if (!version) throw new Error('no PostgreSQL server under /usr/lib/postgresql (apt-get install postgresql)')
  const bin = join(base, version, 'bin')
  const dir = mkdtempSync(join(tmpdir(), 'tychora-bench-pg-'))
  const socket = join(dir, 'sock')
  mkdirSync(socket)
  const asRoot = process.getuid?.() === 0
  if (asRoot) execFileSync('chown', ['-R', 'postgres:postgres', dir])
  const run = (program, args) => execFileSync(asRoot ? 'runuser' : join(bin, program), asRoot ? ['-u', 'postgres', '--', join(bin, program), ...args] : args, { stdio: 'pipe' })
  run('initdb', ['-D', join(dir, 'data'), '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C'])
  const port = 40_000 + (process.pid % 10_000)
  run('pg_ctl', ['-D', join(dir, 'data'), '-l', join(dir, 'log'), '-w', '-o', `-k ${socket} -c listen_addresses='' -p ${port} -c max_connections=200`, 'start'])
  let made = 0
  return {
    version,
    database() {
      const name = `bench${made++}`
      run('psql', ['-h', socket, '-p', String(port), '-U', 'postgres', '-d', 'postgres', '-c', `CREATE DATABASE ${name}`])
      return `host=${socket} port=${port} user=postgres dbname=${name}`
    },
    stop() {
      try {
        run('pg_ctl', ['-D', join(dir, 'data'), '-m', 'immediate', '-w', 'stop'])
      } finally {
        if (asRoot) chownSync(dir, 0, 0)
        rmSync(dir, { recursive: true, force: true })
      }
    },
  }
}
