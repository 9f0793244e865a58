import type { Readable, Writable } from 'node:stream'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { ErrorCode, type JSONRPCMessage, JSONRPCMessageSchema, RequestIdSchema } from '@modelcontextprotocol/sdk/types.js'

/**
 * The longest line (one JSON-RPC message) read, in bytes. A request here is a query of at most
 * 10,000 characters, ids and paths, so 4 MiB leaves any honest client ample room while a broken or
 * hostile one cannot make the server hold an unbounded line in memory.
 */
export const MAX_LINE_BYTES = 4 * 1024 * 1024

/**
 * MCP's stdio framing (one JSON-RPC message per line) that survives bad input. The SDK's
 * `StdioServerTransport` ignores unparseable lines without a reply and, past 10 MiB of buffered
 * input, closes the session: one oversize line ended it, silently. Here every bad line is answered
 * as JSON-RPC 2.0 says and the session goes on:
 *
 * - not JSON: `-32700 Parse error`, id null;
 * - JSON but not a JSON-RPC message: `-32600 Invalid Request`, with its id when it has a valid one;
 * - longer than the limit (`MAX_LINE_BYTES` unless given): `-32600` naming the limit, sent as soon as the limit is passed;
 *   the rest of that line is dropped as it arrives, never buffered.
 *
 * A blank line is skipped; a last line without its newline is not a message.
 */
export class LineTransport implements Transport {
  onclose?: Transport['onclose']
  onerror?: Transport['onerror']
  onmessage?: Transport['onmessage']

  /** The current line so far, and its length in bytes. */
  #parts: Buffer[] = []
  #size = 0
  /** Whether the current line passed the limit (its error is sent; the rest is being dropped). */
  #dropping = false
  #started = false
  readonly #input: Readable
  readonly #output: Writable
  readonly #maxLineBytes: number

  constructor(input: Readable, output: Writable, maxLineBytes = MAX_LINE_BYTES) {
    this.#input = input
    this.#output = output
    this.#maxLineBytes = maxLineBytes
  }

  async start(): Promise<void> {
    if (this.#started) throw new Error('LineTransport already started')
    this.#started = true
    this.#input.on('data', this.#onData)
    this.#input.on('error', this.#onError)
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.#write(message)
  }

  async close(): Promise<void> {
    this.#input.off('data', this.#onData)
    this.#input.off('error', this.#onError)
    // Leave stdin flowing for any other reader; pause it only when this was the last one.
    if (this.#input.listenerCount('data') === 0) this.#input.pause()
    this.#parts = []
    this.#size = 0
    this.onclose?.()
  }

  readonly #onError = (error: Error) => this.onerror?.(error)

  readonly #onData = (chunk: Buffer | string) => {
    const data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
    let start = 0
    for (let end = data.indexOf(0x0a); end !== -1; end = data.indexOf(0x0a, start)) {
      this.#append(data.subarray(start, end))
      if (!this.#dropping) this.#line(this.#parts.length === 1 ? (this.#parts[0] as Buffer) : Buffer.concat(this.#parts, this.#size))
      this.#parts = []
      this.#size = 0
      this.#dropping = false
      start = end + 1
    }
    this.#append(data.subarray(start))
  }

  /** Adds a piece to the current line, or answers and starts dropping it once it is too long. */
  #append(piece: Buffer): void {
    if (this.#dropping || piece.length === 0) return
    if (this.#size + piece.length > this.#maxLineBytes) {
      this.#parts = []
      this.#size = 0
      this.#dropping = true
      this.#fail(null, ErrorCode.InvalidRequest, `Invalid Request: message longer than ${this.#maxLineBytes} bytes (the line limit); the rest of the line is discarded`)
      return
    }
    this.#parts.push(piece)
    this.#size += piece.length
  }

  #line(bytes: Buffer): void {
    const text = bytes.toString('utf8')
    if (text.trim() === '') return
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      this.#fail(null, ErrorCode.ParseError, 'Parse error')
      return
    }
    const message = JSONRPCMessageSchema.safeParse(value)
    if (!message.success) {
      const id = RequestIdSchema.safeParse(typeof value === 'object' && value !== null ? (value as { id?: unknown }).id : undefined)
      this.#fail(id.success ? id.data : null, ErrorCode.InvalidRequest, 'Invalid Request')
      return
    }
    this.onmessage?.(message.data)
  }

  /** Answers a line that is not a message, and reports it out of band (the server logs it to stderr). */
  #fail(id: string | number | null, code: ErrorCode, message: string): void {
    this.onerror?.(new Error(`refused an input line: ${message}`))
    // `id: null` is JSON-RPC 2.0's answer when the request's id is unknown; the SDK's type has no null.
    void this.#write({ jsonrpc: '2.0', id, error: { code, message } })
  }

  #write(message: object): Promise<void> {
    return new Promise((resolve) => {
      if (this.#output.write(`${JSON.stringify(message)}\n`)) resolve()
      else this.#output.once('drain', resolve)
    })
  }
}
