import { readFile } from 'node:fs/promises'
import { join } from 'node:path'

/** What `runtime/daemon.json` records, so CLIs route through the daemon instead of fighting it for the lock. */
export interface DaemonInfo {
  pid: number
  host: string
  port: number
  url: string
  project: string
  started_at: string
}

/** Reads `runtime/daemon.json` of a workspace if the daemon that wrote it is still alive. */
export async function runningDaemon(dir: string): Promise<DaemonInfo | undefined> {
  try {
    const info = JSON.parse(await readFile(join(dir, 'runtime', 'daemon.json'), 'utf8')) as DaemonInfo
    process.kill(info.pid, 0)
    return info
  } catch {
    return undefined
  }
}

