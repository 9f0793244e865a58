import { PassThrough } from 'node:stream'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { describe, expect, it } from 'vitest'
import { LineTransport, MAX_LINE_BYTES } from '../../ts/mcp/line-transport.js'

/** A started transport over in-memory streams: what it delivered, what it answered. */
async function harness(maxLineBytes?: number) {
  const input = new PassThrough()
  const output = new PassThrough()
  const transport = new LineTransport(input, output, maxLineBytes)
  const messages: JSONRPCMessage[] = []
  const errors: Error[] = []
  transport.onmessage = (m) => messages.push(m)
  transport.onerror = (e) => errors.push(e)
  await transport.start()
  let written = ''
  output.on('data', (d: Buffer) => (written += d))
  const settle = () => new Promise((r) => setImmediate(r))
  const replies = () =>
    written
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { id: unknown; error?: { code: number; message: string } })
  return { input, transport, messages, errors, settle, replies }
}

const ping = (id: number) => `${JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' })}\n`

describe('LineTransport', () => {
  it('delivers one message per line, however the lines are split into chunks', async () => {
    const h = await harness()
    const text = `${ping(1)}\r\n${ping(2).replace('\n', '\r\n')}${ping(3)}`
    for (const byte of Buffer.from(text)) h.input.write(Buffer.from([byte]))
    h.input.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/x', params: { s: 'é🦓' } })}\n`)
    await h.settle()
    expect(h.messages.map((m) => ('id' in m ? m.id : 'method' in m ? m.method : undefined))).toEqual([1, 2, 3, 'notifications/x'])
    expect(h.replies()).toEqual([])
  })

  it('answers a line that is not JSON with -32700 (id null) and one that is not JSON-RPC with -32600 (its id when valid)', async () => {
    const h = await harness()
    h.input.write('garbage{\n')
    h.input.write('{"jsonrpc":"2.0","id":7,"method":5}\n')
    h.input.write('{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}\n')
    h.input.write('[1,2]\n42\nnull\n')
    h.input.write(ping(8))
    await h.settle()
    expect(h.replies()).toEqual([
      { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } },
      { jsonrpc: '2.0', id: 7, error: { code: -32600, message: 'Invalid Request' } },
      { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request' } },
      { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request' } },
      { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request' } },
      { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request' } },
    ])
    expect(h.messages).toEqual([{ jsonrpc: '2.0', id: 8, method: 'ping' }])
    expect(h.errors).toHaveLength(6)
  })

  it('answers an oversize line once, as soon as it passes the limit, drops the rest unbuffered and reads on', async () => {
    const h = await harness(1024)
    h.input.write(ping(1))
    h.input.write('x'.repeat(600))
    h.input.write('x'.repeat(600)) // past the limit: answered now, before the line ends
    await h.settle()
    expect(h.replies()).toEqual([{ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringContaining('1024 bytes') } }])
    for (let i = 0; i < 100; i++) h.input.write('y'.repeat(500))
    h.input.write(`end of the long line\n${ping(2)}`)
    h.input.write('z'.repeat(1024)) // exactly the limit is allowed
    h.input.write('\n')
    await h.settle()
    expect(h.messages.map((m) => ('id' in m ? m.id : undefined))).toEqual([1, 2])
    // The oversize line, then the exact-limit line of z's (not JSON).
    expect(h.replies().map((r) => r.error?.code)).toEqual([-32600, -32700])
  })

  it('the default limit is 4 MiB', () => {
    expect(MAX_LINE_BYTES).toBe(4 * 1024 * 1024)
  })

  it('sends each message as one line and stops reading on close', async () => {
    const h = await harness()
    let closed = false
    h.transport.onclose = () => (closed = true)
    await h.transport.send({ jsonrpc: '2.0', id: 1, result: {} })
    await h.settle()
    expect(h.replies()).toEqual([{ jsonrpc: '2.0', id: 1, result: {} }])
    await h.transport.close()
    expect(closed).toBe(true)
    h.input.write(ping(3))
    await h.settle()
    expect(h.messages).toEqual([])
  })
})
