import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { runtimePath } from '../contracts/runtime.js'
import { ANNOUNCE_CHECK_MS, type DaemonInfo } from './discovery.js'

/**
 * The `runtime/daemon.json` of each workspace a daemon serves, kept in place while it runs.
 * Commands find the daemon only through that file: deleted (a user clearing `runtime/`, a cleanup
 * tool) or overwritten, every command would fail E_LOCKED against a live daemon. So each file is
 * checked every `ANNOUNCE_CHECK_MS` and rewritten when it is not this daemon's, and written by
 * rename, so a command never reads half of one.
 */
export class Announcements {
  readonly #files = new Map<string, string>()
  readonly #timer: NodeJS.Timeout

  constructor() {
    this.#timer = setInterval(() => this.#check(), ANNOUNCE_CHECK_MS)
    // Keeping the files is no reason to keep the process alive.
    this.#timer.unref()
  }

  /** Announces the daemon described by `info` for the workspace in `dir`. */
  announce(dir: string, info: DaemonInfo): void {
    const path = runtimePath(dir, 'daemon')
    const text = `${JSON.stringify(info, null, 2)}\n`
    write(path, text)
    this.#files.set(path, text)
  }

  /** Stops keeping the files and removes them: commands open the workspaces themselves again. */
  stop(): void {
    clearInterval(this.#timer)
    for (const path of this.#files.keys()) rmSync(path, { force: true })
    this.#files.clear()
  }

  #check(): void {
    for (const [path, text] of this.#files) {
      try {
        if (readFileSync(path, 'utf8') === text) continue
      } catch {
        // Missing or unreadable: written again below.
      }
      try {
        write(path, text)
      } catch {
        // The runtime folder itself is gone or read-only: the next check tries again.
      }
    }
  }
}

function write(path: string, text: string): void {
  const staging = `${path}.${process.pid}.tmp`
  writeFileSync(staging, text)
  renameSync(staging, path)
}
