import { type Readable, Writable } from 'node:stream'
import type { EvidenceService } from '../contracts/client.js'
import { LineTransport } from './line-transport.js'
import { createMcpServer } from './server.js'

/**
 * stdout belongs to the protocol. The transport gets a private stream onto fd 1, and for the
 * session `process.stdout.write` (and with it console.log) goes to stderr instead, so no stray
 * write from this process can corrupt the JSON-RPC stream. Returns the undo.
 */
function claimStdout(): { protocol: Writable; release: () => void } {
  const stdout = process.stdout
  const write = stdout.write
  const toStdout = write.bind(stdout) as (chunk: unknown, encoding: BufferEncoding, callback: (error?: Error | null) => void) => boolean
  const protocol = new Writable({
    write(chunk: Buffer, encoding, callback) {
      toStdout(chunk, encoding, callback)
    },
  })
  stdout.write = ((...args: Parameters<typeof process.stderr.write>) => process.stderr.write(...args)) as typeof stdout.write
  return {
    protocol,
    release: () => {
      stdout.write = write
    },
  }
}

/** What one stdio session serves, and its owner's hooks around the session. */
export interface StdioSession {
  service: EvidenceService
  /** The one project served: a tool call that names none uses it. */
  project: string
  /** Names what is served in the log line on stderr. */
  label: string
  /** Runs once the transport is connected. */
  started?: () => void
  /** Runs after the session ends, before stdout is given back. */
  close?: () => void
}

/**
 * Serves MCP on stdin/stdout and resolves when the session ends (the client closes stdin, the
 * transport closes, or SIGINT/SIGTERM). `open` runs after stdout is claimed, so nothing it
 * writes can reach the protocol stream. Diagnostics go to stderr.
 */
export async function serveStdio(open: () => Promise<StdioSession>, stdin: Readable = process.stdin): Promise<void> {
  const { protocol, release } = claimStdout()
  let session: StdioSession | undefined
  try {
    session = await open()
    const server = createMcpServer(session.service, { defaultProject: session.project })
    server.server.onerror = (error) => process.stderr.write(`tychora mcp: ${error.message}\n`)

    let finish: () => void = () => undefined
    const ended = new Promise<void>((resolve) => (finish = resolve))
    const onSignal = () => finish()
    server.server.onclose = onSignal
    stdin.once('end', onSignal)
    stdin.once('close', onSignal)
    process.once('SIGINT', onSignal)
    process.once('SIGTERM', onSignal)

    await server.connect(new LineTransport(stdin, protocol))
    session.started?.()
    process.stderr.write(`tychora mcp: serving ${session.label} on stdio\n`)
    await ended

    stdin.off('end', onSignal)
    stdin.off('close', onSignal)
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
    server.server.onclose = undefined
    await server.close()
    stdin.pause()
  } finally {
    session?.close?.()
    await new Promise<void>((resolve) => protocol.end(resolve))
    release()
  }
}
