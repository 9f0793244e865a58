import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type H3, toNodeHandler } from 'h3'
import { TychoraError } from '../errors.js'

export interface HttpServer {
  url: string
  port: number
  /** Stops accepting connections and resolves once in-flight requests have finished. */
  close(): Promise<void>
}

/** Limits against slow or oversized clients. */
const HEADERS_TIMEOUT_MS = 10_000
const REQUEST_TIMEOUT_MS = 30_000
const MAX_HEADER_BYTES = 16 * 1024

/**
 * Serves an h3 app with `node:http` on `host:port` (loopback by default; port 0 picks a free
 * port and the real one is returned). A port already taken is E_CONFLICT.
 *
 * @example
 * const server = await startHttpServer(createHttpApp(registry, { port: 0 }), { port: 0 })
 * console.log(server.url) // http://127.0.0.1:<port>
 * await server.close()
 */
export async function startHttpServer(app: H3, options: { host?: string; port: number }): Promise<HttpServer> {
  const host = options.host ?? '127.0.0.1'
  const server = createServer({ maxHeaderSize: MAX_HEADER_BYTES, headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS }, toNodeHandler(app))
  server.headersTimeout = HEADERS_TIMEOUT_MS
  server.requestTimeout = REQUEST_TIMEOUT_MS

  await new Promise<void>((resolve, reject) => {
    const fail = (error: NodeJS.ErrnoException) => {
      const message = `cannot listen on ${host}:${options.port}: ${error.message}`
      reject(new TychoraError(error.code === 'EADDRINUSE' ? 'E_CONFLICT' : 'E_IO', message, { cause: error }))
    }
    server.once('error', fail)
    server.listen(options.port, host, () => {
      server.off('error', fail)
      resolve()
    })
  })
  const port = (server.address() as AddressInfo).port
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`

  let closing: Promise<void> | undefined
  const close = () =>
    (closing ??= new Promise<void>((resolve, reject) => {
      // Keep-alive sockets that go idle after their in-flight request are closed as they appear.
      const sweep = setInterval(() => server.closeIdleConnections(), 100)
      server.close((error) => {
        clearInterval(sweep)
        if (error) reject(error)
        else resolve()
      })
      server.closeIdleConnections()
    }))
  return { url, port, close }
}
