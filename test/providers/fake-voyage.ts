import { createHash } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * A loopback stand-in for Voyage's HTTP API (`POST /v1/embeddings`, `/v1/contextualizedembeddings`,
 * `/v1/multimodalembeddings`, `/v1/rerank`), so the real `voyageai` SDK can be driven through faults
 * without a network or a key. Vectors are deterministic unit vectors seeded by a hash of the text;
 * rerank scores are word overlap. A multimodal input is keyed by its text and the sha256 of each
 * image it holds; `depicts(text, image)` makes a text query embed like that image, the one thing a
 * real multimodal model is for. Every request is recorded; faults are queued and each request
 * consumes the next one.
 */

export type Fault =
  /** Answer normally (to aim a later fault at a later request). */
  | { kind: 'none' }
  | { kind: 'status'; status: number; retryAfter?: string; body?: unknown }
  /** Never answer: the client must time out. */
  | { kind: 'hang' }
  /** 200 with a body that is not JSON. */
  | { kind: 'malformed' }
  /** The first vector (or every vector) gets this many dimensions. */
  | { kind: 'dimension'; dimension: number; all?: boolean }
  /** The last item of the answer is left out. */
  | { kind: 'partial' }
  /** The second item repeats the first one's index. */
  | { kind: 'duplicate-index' }
  /** The first vector holds 1e999, which JSON.parse reads as Infinity. */
  | { kind: 'non-finite' }
  /** 400 whose detail quotes the Authorization header back, as a careless server might. */
  | { kind: 'echo-auth'; status?: number }

export interface RecordedRequest {
  path: string
  headers: IncomingHttpHeaders
  body: Record<string, unknown>
  /** Date.now() when the request arrived. */
  at: number
}

export interface FakeVoyage {
  /** The API root to give the SDK, e.g. http://127.0.0.1:41234/v1. */
  url: string
  requests: RecordedRequest[]
  /** Queue `fault` for the next `times` requests (after any already queued). */
  fail(fault: Fault, times?: number): void
  /** The vector a plain embedding of `text` gets. */
  vector(text: string, dimension?: number): number[]
  /** The vector window `window` of `document` gets: its text in the context of the whole document. */
  contextVector(document: readonly string[], window: number, dimension?: number): number[]
  score(query: string, document: string): number
  tokens(text: string): number
  /** From now on a multimodal input that is exactly `text` embeds like `image` (its bytes). */
  depicts(text: string, image: Uint8Array): void
  /** The key a multimodal input is embedded by: its text and `image:<sha256>` of each image. */
  multimodalKey(content: ReadonlyArray<{ type: string; text?: string; image_base64?: string }>): string
  close(): Promise<void>
}

export async function startFakeVoyage(options: { apiKey: string; dimension?: number }): Promise<FakeVoyage> {
  const defaultDimension = options.dimension ?? 16
  const requests: RecordedRequest[] = []
  const faults: Fault[] = []

  const vector = (text: string, dimension = defaultDimension): number[] => {
    // xorshift32 seeded from sha256: deterministic, spread over the sphere well enough for tests.
    let state = createHash('sha256').update(text).digest().readUInt32LE(0) || 1
    const v = Array.from({ length: dimension }, () => {
      state ^= state << 13
      state ^= state >>> 17
      state ^= state << 5
      return (state >>> 0) / 0xffffffff - 0.5
    })
    const norm = Math.hypot(...v) || 1
    return v.map((x) => x / norm)
  }
  const contextVector = (document: readonly string[], window: number, dimension = defaultDimension) => vector(`${document[window]}\u0000${document.join('\u0001')}`, dimension)
  const words = (text: string) => new Set(text.toLowerCase().match(/\w+/g) ?? [])
  const score = (query: string, document: string) => {
    const q = words(query)
    const d = words(document)
    return q.size === 0 ? 0 : [...q].filter((w) => d.has(w)).length / q.size
  }
  const tokens = (text: string) => Math.ceil(text.length / 4)
  const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')
  const depicted = new Map<string, string>()
  const multimodalKey = (content: ReadonlyArray<{ type: string; text?: string; image_base64?: string }>) => {
    const parts = content.map((piece) => {
      if (piece.type === 'text') return piece.text ?? ''
      const data = /^data:image\/(png|jpeg|webp|gif);base64,(.*)$/s.exec(piece.image_base64 ?? '')
      if (piece.type !== 'image_base64' || !data) throw new Error(`unsupported content ${piece.type}`)
      return `image:${sha(Buffer.from(data[2] as string, 'base64'))}`
    })
    const key = parts.join('\u0000')
    return depicted.get(key) ?? key
  }

  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers })
    res.end(typeof body === 'string' ? body : JSON.stringify(body))
  }

  /** Applies a data-shaping fault to an answer's `data` list of embedding items. */
  const shape = (fault: Fault | undefined, data: Array<{ index: number; embedding: number[] | string }>) => {
    if (fault?.kind === 'dimension') {
      for (const item of fault.all ? data : data.slice(0, 1)) item.embedding = vector(String(item.index), fault.dimension)
    } else if (fault?.kind === 'partial') data.pop()
    else if (fault?.kind === 'duplicate-index' && data.length > 1) (data[1] as { index: number }).index = (data[0] as { index: number }).index
    return data
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      let body: Record<string, unknown> = {}
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>
      } catch {
        return json(res, 400, { detail: 'request body is not JSON' })
      }
      const path = req.url ?? ''
      requests.push({ path, headers: req.headers, body, at: Date.now() })

      if (req.headers.authorization !== `Bearer ${options.apiKey}`) return json(res, 401, { detail: 'Provided API key is invalid.' })
      const fault = faults.shift()
      if (fault?.kind === 'hang') return // the socket stays open until close()
      if (fault?.kind === 'status') return json(res, fault.status, fault.body ?? { detail: `fault ${fault.status}` }, fault.retryAfter ? { 'retry-after': fault.retryAfter } : {})
      if (fault?.kind === 'echo-auth') return json(res, fault.status ?? 400, { detail: `Refused credentials ${req.headers.authorization}` })
      if (fault?.kind === 'malformed') return json(res, 200, '{"object": "list", "data": [{"embedding": [0.1, ')

      const dimension = typeof body.output_dimension === 'number' ? body.output_dimension : defaultDimension
      let answer: Record<string, unknown>
      if (path === '/v1/embeddings') {
        const input = body.input as string[]
        const data = shape(
          fault,
          input.map((text, index) => ({ object: 'embedding', index, embedding: vector(text, dimension) })),
        )
        answer = { object: 'list', data, model: body.model, usage: { total_tokens: input.reduce((s, t) => s + tokens(t), 0) } }
      } else if (path === '/v1/contextualizedembeddings') {
        const inputs = body.inputs as string[][]
        const data = inputs.map((doc, index) => ({
          object: 'list',
          index,
          data: doc.map((_, w) => ({ object: 'embedding', index: w, embedding: contextVector(doc, w, dimension) })),
        }))
        // Faults apply to the first document's windows, or to the document list for a partial batch.
        if (fault?.kind === 'partial') data.pop()
        else if (data[0]) shape(fault, data[0].data)
        answer = { object: 'list', data, model: body.model, usage: { total_tokens: inputs.flat().reduce((s, t) => s + tokens(t), 0) } }
      } else if (path === '/v1/multimodalembeddings') {
        const inputs = body.inputs as Array<{ content: Array<{ type: string; text?: string; image_base64?: string }> }>
        let keys: string[]
        try {
          keys = inputs.map((input) => multimodalKey(input.content))
        } catch (e) {
          return json(res, 400, { detail: (e as Error).message })
        }
        const data = shape(
          fault,
          keys.map((key, index) => ({ object: 'embedding', index, embedding: vector(key, dimension) })),
        )
        const images = keys.reduce((n, k) => n + (k.match(/image:/g)?.length ?? 0), 0)
        const textTokens = keys.reduce((s, k) => s + tokens(k.replace(/image:[0-9a-f]{64}/g, '')), 0)
        answer = {
          object: 'list',
          data,
          model: body.model,
          usage: { text_tokens: textTokens, image_pixels: images * 560 * 100, total_tokens: textTokens + images * 100 },
        }
      } else if (path === '/v1/rerank') {
        const query = body.query as string
        const documents = body.documents as string[]
        const ranked = documents
          .map((doc, index) => ({ index, relevance_score: score(query, doc) }))
          .sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index)
          .slice(0, typeof body.top_k === 'number' ? body.top_k : documents.length)
        if (fault?.kind === 'partial') ranked.pop()
        answer = {
          object: 'list',
          data: ranked,
          model: body.model,
          usage: { total_tokens: documents.reduce((s, d) => s + tokens(query) + tokens(d), 0) },
        }
      } else {
        return json(res, 404, { detail: `no route ${path}` })
      }
      let text = JSON.stringify(answer)
      // JSON cannot spell Infinity; 1e999 is valid JSON that parses to it.
      if (fault?.kind === 'non-finite') text = text.replace(/"embedding":\[[^,\]]+/, '"embedding":[1e999')
      json(res, 200, text)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    fail(fault, times = 1) {
      for (let i = 0; i < times; i++) faults.push(fault)
    },
    vector,
    contextVector,
    score,
    tokens,
    depicts(text, image) {
      depicted.set(text, `image:${sha(image)}`)
    },
    multimodalKey,
    close() {
      server.closeAllConnections()
      return new Promise((resolve) => server.close(() => resolve()))
    },
  }
}
