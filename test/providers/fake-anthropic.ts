import { createHash } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * A loopback stand-in for Anthropic's Messages API (`POST /v1/messages`), so the real
 * `@anthropic-ai/sdk` client can be driven through faults without a network or a key. It answers
 * a picture with a description naming the image's media type, size and sha256, so a test can tell
 * which bytes arrived, and a text request (the summary tree's passages) with a summary that starts
 * `Model summary of N passages:` and repeats the first passage's opening words. Every request is recorded; faults are queued and each request takes the next.
 */

export type AnthropicFault =
  | { kind: 'none' }
  /** An error answer in the API's shape: `{ type: 'error', error: { type, message } }`. */
  | { kind: 'status'; status: number; type?: string; message?: string; retryAfter?: string }
  /** 200 with stop_reason `refusal` and no text. */
  | { kind: 'refusal' }
  /** 200 with no content blocks. */
  | { kind: 'empty' }
  /** Never answer. */
  | { kind: 'hang' }
  /** 400 whose message quotes the key back, as a careless server might. */
  | { kind: 'echo-key' }
  /** 200 with text that is no summary of what was sent (a summary request only). */
  | { kind: 'garbage' }

export interface AnthropicRequest {
  path: string
  headers: IncomingHttpHeaders
  body: {
    model?: string
    max_tokens?: number
    system?: string
    messages?: Array<{ role: string; content: Array<{ type: string; text?: string; source?: { type: string; media_type: string; data: string } }> }>
  }
}

export interface FakeAnthropic {
  /** The API root to give the SDK (no version), e.g. http://127.0.0.1:41234. */
  url: string
  requests: AnthropicRequest[]
  fail(fault: AnthropicFault, times?: number): void
  /** The description the server gives a picture of these bytes. */
  describe(mediaType: string, bytes: Buffer): string
  close(): Promise<void>
}

export async function startFakeAnthropic(options: { apiKey: string }): Promise<FakeAnthropic> {
  const requests: AnthropicRequest[] = []
  const faults: AnthropicFault[] = []
  const describe = (mediaType: string, bytes: Buffer) =>
    `A ${mediaType} picture of ${bytes.length} bytes showing a bar chart titled Quarterly revenue; sha256 ${createHash('sha256').update(bytes).digest('hex')}`

  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_${requests.length}`, ...headers })
    res.end(JSON.stringify(body))
  }
  const error = (res: ServerResponse, status: number, type: string, message: string, headers: Record<string, string> = {}) => json(res, status, { type: 'error', error: { type, message } }, headers)

  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      let body: AnthropicRequest['body']
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as AnthropicRequest['body']
      } catch {
        return error(res, 400, 'invalid_request_error', 'request body is not JSON')
      }
      requests.push({ path: req.url ?? '', headers: req.headers, body })
      if (req.url !== '/v1/messages' || req.method !== 'POST') return error(res, 404, 'not_found_error', 'Not found')
      // The API takes the key as x-api-key or as a bearer token (the SDK's 1.x clients send the latter).
      const presented = req.headers['x-api-key'] ?? req.headers.authorization?.replace(/^Bearer /, '')
      if (presented !== options.apiKey) return error(res, 401, 'authentication_error', 'invalid x-api-key')
      if (!req.headers['anthropic-version']) return error(res, 400, 'invalid_request_error', 'anthropic-version header is required')
      const fault = faults.shift()
      if (fault?.kind === 'hang') return
      if (fault?.kind === 'status') {
        return error(res, fault.status, fault.type ?? 'api_error', fault.message ?? `fault ${fault.status}`, fault.retryAfter ? { 'retry-after': fault.retryAfter } : {})
      }
      if (fault?.kind === 'echo-key') return error(res, 400, 'invalid_request_error', `Refused credentials ${String(presented)}`)
      const base = { id: `msg_${requests.length}`, type: 'message', role: 'assistant', model: `${body.model}-20260101`, stop_sequence: null }
      const image = body.messages?.[0]?.content.find((c) => c.type === 'image')?.source
      const prose = body.messages?.[0]?.content.find((c) => c.type === 'text')?.text
      if (!image && prose !== undefined) {
        if (fault?.kind === 'refusal') return json(res, 200, { ...base, content: [], stop_reason: 'refusal', usage: { input_tokens: 900, output_tokens: 0 } })
        if (fault?.kind === 'empty') return json(res, 200, { ...base, content: [], stop_reason: 'end_turn', usage: { input_tokens: 900, output_tokens: 0 } })
        const passages = [...prose.matchAll(/<passage n="\d+">\n([\s\S]*?)\n<\/passage>/g)].map((m) => m[1] as string)
        const opening = (passages[0] ?? '').split(/\s+/).filter(Boolean).slice(0, 16).join(' ')
        const text = fault?.kind === 'garbage' ? 'zq xv 42 ~~~ ### 17 ::: 99 %%% 3' : `Model summary of ${passages.length} passages: ${opening}`
        return json(res, 200, {
          ...base,
          content: [{ type: 'text', text }],
          stop_reason: 'end_turn',
          usage: { input_tokens: Math.ceil(prose.length / 4), output_tokens: 30 },
        })
      }
      if (image?.type !== 'base64') return error(res, 400, 'invalid_request_error', 'messages.0.content: an image block is required')
      const bytes = Buffer.from(image.data, 'base64')
      if (fault?.kind === 'refusal') return json(res, 200, { ...base, content: [], stop_reason: 'refusal', usage: { input_tokens: 1500, output_tokens: 0 } })
      if (fault?.kind === 'empty') return json(res, 200, { ...base, content: [], stop_reason: 'end_turn', usage: { input_tokens: 1500, output_tokens: 0 } })
      const text = describe(image.media_type, bytes)
      return json(res, 200, { ...base, content: [{ type: 'text', text }], stop_reason: 'end_turn', usage: { input_tokens: 1500, output_tokens: 40 } })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    fail(fault, times = 1) {
      for (let i = 0; i < times; i++) faults.push(fault)
    },
    describe,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
