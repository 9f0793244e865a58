/**
 * A real PostgreSQL for the tests, as crates/tychora-core/tests/common/postgres.rs starts one:
 * Debian's server binaries (`.ci/run` installs the `postgresql` package), `initdb` into a temp
 * dir (as the `postgres` user when this runs as root: initdb refuses root), a Unix socket only
 * (`listen_addresses=''`), trust auth. A missing server skips the suites that need it, or fails
 * them where `TYCHORA_REQUIRE` names `servers`.
 */
import { execFileSync } from 'node:child_process'
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { unless } from './requirements.js'

/** The newest installed server's binaries, if any. */
function binDir(): string | undefined {
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return undefined
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin/initdb')))
    .sort((a, b) => Number(a) - Number(b))
  const newest = versions.at(-1)
  return newest === undefined ? undefined : join(root, newest, 'bin')
}

const BIN = binDir()

/** Why the PostgreSQL tests cannot run here (false when they can); throws where servers are required. */
export const postgresMissing = unless('servers', BIN ? false : 'no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql)')

export interface Postgres {
  /** A connection string for a new, empty database. */
  database(): string
  /** Runs `statement` in database `url` (as `database()` returned it) through psql; the rows, `|`-separated. */
  query(url: string, statement: string): string
  stop(): void
}

/** Starts a server on a socket in a temp dir. */
export function startPostgres(): Postgres {
  if (!BIN) throw new Error('no PostgreSQL server binaries')
  const dir = mkdtempSync(join(tmpdir(), 'tychora-pg-'))
  const socket = join(dir, 'sock')
  mkdirSync(socket)
  const asRoot = process.getuid?.() === 0
  if (asRoot) execFileSync('chown', ['-R', 'postgres:postgres', dir])
  const run = (program: string, args: string[]) => execFileSync(asRoot ? 'runuser' : join(BIN, program), asRoot ? ['-u', 'postgres', '--', join(BIN, program), ...args] : args, { stdio: 'pipe' })
  const data = join(dir, 'data')
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C'])
  const port = 30_000 + (process.pid % 20_000)
  run('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-w', '-o', `-k ${socket} -c listen_addresses='' -p ${port} -c fsync=off`, 'start'])
  let made = 0
  return {
    database() {
      const name = `t${made++}`
      run('psql', ['-h', socket, '-p', String(port), '-U', 'postgres', '-d', 'postgres', '-c', `CREATE DATABASE ${name}`])
      return `host=${socket} port=${port} user=postgres dbname=${name}`
    },
    query(url, statement) {
      const name = /dbname=(\S+)/.exec(url)?.[1] ?? 'postgres'
      return run('psql', ['-h', socket, '-p', String(port), '-U', 'postgres', '-d', name, '-At', '-c', statement])
        .toString()
        .trim()
    },
    stop() {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop'])
      } finally {
        if (asRoot) chownSync(dir, 0, 0)
        rmSync(dir, { recursive: true, force: true })
      }
    },
  }
}
