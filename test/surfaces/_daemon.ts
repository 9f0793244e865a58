import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { runtimePath } from '../../ts/contracts/runtime.js'
import { CLI } from '../native/_setup.js'

export interface RunningDaemon {
  url: string
  child: ChildProcess
  output: () => string
  /** SIGTERM and wait for exit; resolves with the exit code. */
  stop(): Promise<number | null>
}

/** Starts `tychora serve` for the workspaces on a free loopback port (with `flags`) and waits until it listens. */
export function startDaemon(workspaces: string[], env: Record<string, string> = {}, flags: string[] = []): Promise<RunningDaemon> {
  return new Promise((resolve, reject) => {
    const args = [CLI, 'serve', '--port', '0', ...workspaces.flatMap((w) => ['--workspace', w]), ...flags]
    const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    const timer = setTimeout(() => reject(new Error(`daemon did not start:\n${out}`)), 30_000)
    const onData = (d: Buffer) => {
      out += d
      const m = /listening on (http:\/\/\S+)/.exec(out)
      if (m) {
        clearTimeout(timer)
        resolve({
          url: m[1] as string,
          child,
          output: () => out,
          stop: () =>
            new Promise((done) => {
              if (child.exitCode !== null || child.signalCode !== null) return done(child.exitCode)
              child.once('exit', (code) => done(code))
              child.kill('SIGTERM')
            }),
        })
      }
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', (d: Buffer) => (out += d))
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`daemon exited with ${code}:\n${out}`))
    })
  })
}

export function tokenOf(workspace: string): string {
  return readFileSync(runtimePath(workspace, 'ownerToken'), 'utf8').trim()
}

export function projectOf(workspace: string): string {
  return /^name = "(.+)"$/m.exec(readFileSync(join(workspace, 'workspace.toml'), 'utf8'))?.[1] ?? ''
}
