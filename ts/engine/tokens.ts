import { randomBytes } from 'node:crypto'
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import { type RuntimeFile, runtimePath } from '../contracts/runtime.js'

/** Both bearer tokens of a workspace. */
export interface Tokens {
  owner: string
  agent: string
}

/** Creates a token file (32 random bytes, hex, mode 0600) unless it exists; returns the token. */
async function ensure(dir: string, file: RuntimeFile): Promise<string> {
  const path = runtimePath(dir, file)
  try {
    const existing = (await readFile(path, 'utf8')).trim()
    if (existing) return existing
  } catch {
    // Not there yet: created below.
  }
  const token = randomBytes(32).toString('hex')
  // A knowledge project's runtime/ (its `knowledge` alias's tokens) may not exist yet.
  await mkdir(dirname(path), { recursive: true, mode: 0o700 })
  // `wx`: when two processes race, one write wins and both read the winner's token.
  await writeFile(path, `${token}\n`, { mode: 0o600, flag: 'wx' }).catch(() => undefined)
  await chmod(path, 0o600)
  return (await readFile(path, 'utf8')).trim()
}

/** The owner's and the agents' tokens of the workspace in `dir`, created on first use. */
export async function ensureTokens(dir: string): Promise<Tokens> {
  return { owner: await ensure(dir, 'ownerToken'), agent: await ensure(dir, 'agentToken') }
}
