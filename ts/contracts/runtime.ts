import { join } from 'node:path'

/**
 * The files under a workspace's `runtime/` folder, named once. Every surface that reads or writes
 * them (the engine's init, the daemon, the CLI's routing, the stdio MCP proxy) goes through here.
 */
export const RUNTIME_FILES = {
  /** The owner's bearer token (0600): full access; the CLI uses it to talk to a running daemon. */
  ownerToken: 'token',
  /** The agents' bearer token (0600): search and read; adds only inside existing roots, and only with `[agents] allow_add_source`. */
  agentToken: 'agent-token',
  /** What a running daemon records about itself (pid, url, instance), so CLIs route through it. */
  daemon: 'daemon.json',
  /** The OS lock file of the process that owns the workspace. */
  lock: 'lock',
} as const

export type RuntimeFile = keyof typeof RUNTIME_FILES

/** The runtime folder of a workspace (or of a knowledge project's `.tychora/`): untracked, never backed up. */
export function runtimeDir(dir: string): string {
  return join(dir, 'runtime')
}

/** The path of one runtime file of the workspace in `dir`. */
export function runtimePath(dir: string, file: RuntimeFile): string {
  return join(runtimeDir(dir), RUNTIME_FILES[file])
}

/**
 * What a bearer token may do. `owner`: everything the API offers, including adds that register a
 * new capture root. `agent`: search and read; add only inside the roots the owner set, and only
 * where the workspace allows agents to add.
 */
export type Scope = 'owner' | 'agent'
