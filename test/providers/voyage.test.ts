import { inspect } from 'node:util'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { ProviderCall } from '../../ts/contracts/provider.js'
import { TychoraError } from '../../ts/errors.js'
import { createVoyageProvider, type VoyageProviderOptions } from '../../ts/providers/voyage.js'
import { type FakeVoyage, startFakeVoyage } from './fake-voyage.js'

// Recognisable, so the leak test can grep for it; the fake server checks it as a bearer token.
const KEY = 'pa-FAKE-tychora-test-key-7f3a9c2e41'

let fake: FakeVoyage
let calls: ProviderCall[]

beforeEach(async () => {
  fake = await startFakeVoyage({ apiKey: KEY })
  calls = []
})
afterEach(async () => {
  await fake.close()
})

const provider = (options: VoyageProviderOptions = {}) => createVoyageProvider({ apiKey: KEY, baseUrl: fake.url, backoffMs: 10, timeoutMs: 5_000, onCall: (c) => calls.push(c), ...options })

const f32 = (v: number[]) => Float32Array.from(v)

/** The rejection of `promise`, which must be a one-line `TychoraError` with no cause attached. */
async function failure(promise: Promise<unknown>): Promise<TychoraError> {
  const error = await promise.then(
    () => {
      throw new Error('expected a rejection')
    },
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(TychoraError)
  const t = error as TychoraError
  expect(t.message).not.toBe('')
  expect(t.message).not.toMatch(/\n/)
  expect(t.cause).toBeUndefined()
  return t
}

const embedSizes = () => fake.requests.map((r) => (r.body.input as string[]).length)

describe('embeddings', () => {
  it('returns one vector per input in input order, with the key as a bearer token', async () => {
    const inputs = ['alpha', 'beta gamma', 'delta', 'ε unicode', 'zeta']
    const result = await provider().embed({ model: 'voyage-3.5', inputs, inputType: 'document' })
    expect(result.vectors).toEqual(inputs.map((t) => f32(fake.vector(t))))
    expect(result.dimension).toBe(16)
    expect(result.tokens).toBe(inputs.reduce((s, t) => s + fake.tokens(t), 0))
    expect(result.calls).toBe(1)
    const [request] = fake.requests
    expect(request?.path).toBe('/v1/embeddings')
    expect(request?.headers.authorization).toBe(`Bearer ${KEY}`)
    expect(request?.body).toMatchObject({ model: 'voyage-3.5', input_type: 'document' })
    expect(calls).toEqual([
      {
        provider: 'voyage',
        operation: 'embed',
        model: 'voyage-3.5',
        inputs: 5,
        tokens: result.tokens,
        ms: expect.any(Number),
        status: 200,
        attempt: 1,
      },
    ])
  })

  it('passes the input type and output dimension, and checks the dimension', async () => {
    const result = await provider().embed({ model: 'voyage-3.5', inputs: ['q'], inputType: 'query', outputDimension: 8 })
    expect(fake.requests[0]?.body).toMatchObject({ input_type: 'query', output_dimension: 8 })
    expect(result.dimension).toBe(8)
    expect(result.vectors[0]).toEqual(f32(fake.vector('q', 8)))
  })

  it('sends at most 1,000 inputs a request', async () => {
    const inputs = Array.from({ length: 2500 }, (_, i) => `text ${i}`)
    const result = await provider().embed({ model: 'voyage-3.5', inputs, inputType: 'document' })
    expect(embedSizes()).toEqual([1000, 1000, 500])
    expect(result.calls).toBe(3)
    expect(result.vectors).toEqual(inputs.map((t) => f32(fake.vector(t))))
    expect(result.tokens).toBe(inputs.reduce((s, t) => s + fake.tokens(t), 0))
  })

  it("sizes batches by the model's token budget (estimated at 3 bytes a token)", async () => {
    // 30,000 bytes each: an estimated 10,000 tokens.
    const inputs = Array.from({ length: 40 }, (_, i) => String(i).padStart(5, '0') + 'a'.repeat(29_995))
    const code = await provider().embed({ model: 'voyage-code-3', inputs: inputs.slice(0, 30), inputType: 'document' })
    expect(embedSizes()).toEqual([12, 12, 6]) // 120K
    expect(code.vectors).toEqual(inputs.slice(0, 30).map((t) => f32(fake.vector(t))))
    fake.requests.length = 0
    await provider().embed({ model: 'voyage-3.5', inputs, inputType: 'document' })
    expect(embedSizes()).toEqual([32, 8]) // 320K
    fake.requests.length = 0
    await provider().embed({ model: 'some-future-model', inputs: inputs.slice(0, 13), inputType: 'document' })
    expect(embedSizes()).toEqual([12, 1]) // unknown models get the smallest budget
  })

  it('makes no call for no inputs', async () => {
    const result = await provider().embed({ model: 'voyage-3.5', inputs: [], inputType: 'document' })
    expect(result).toEqual({ vectors: [], dimension: 0, tokens: 0, calls: 0 })
    expect(fake.requests).toHaveLength(0)
  })
})

describe('contextualized embeddings', () => {
  it("returns each document's window vectors, in order", async () => {
    const documents = [['intro', 'body'], ['single'], ['a', 'b', 'c']]
    const result = await provider().embedContextualized({ model: 'voyage-context-3', documents, inputType: 'document' })
    expect(fake.requests[0]?.path).toBe('/v1/contextualizedembeddings')
    expect(fake.requests[0]?.body).toMatchObject({ inputs: documents, input_type: 'document' })
    expect(result.vectors).toEqual(documents.map((doc) => doc.map((_, w) => f32(fake.contextVector(doc, w)))))
    expect(result.dimension).toBe(16)
    expect(result.tokens).toBe(documents.flat().reduce((s, t) => s + fake.tokens(t), 0))
    expect(calls).toMatchObject([{ operation: 'contextualized_embed', inputs: 6, status: 200, attempt: 1 }])
  })

  it('keeps a request within 16,000 windows, never splitting a document', async () => {
    const documents = Array.from({ length: 20 }, (_, d) => Array.from({ length: 1000 }, (_, w) => `d${d}w${w}`))
    const result = await provider().embedContextualized({ model: 'voyage-context-3', documents, inputType: 'document', outputDimension: 4 })
    expect(fake.requests.map((r) => (r.body.inputs as string[][]).length)).toEqual([16, 4])
    expect(result.vectors.map((doc) => doc.length)).toEqual(documents.map((doc) => doc.length))
    expect(result.vectors[19]?.[999]).toEqual(f32(fake.contextVector(documents[19] as string[], 999, 4)))
  })
})

describe('rerank', () => {
  const query = 'vector index rebuild'
  const documents = ['lexical index', 'rebuild the vector index', 'unrelated text', 'vector math', 'index rebuild steps']

  it('returns one score per document, in input order', async () => {
    const result = await provider().rerank({ model: 'rerank-2.5', query, documents })
    expect(fake.requests[0]?.path).toBe('/v1/rerank')
    expect(result.scores).toEqual(documents.map((d) => fake.score(query, d)))
    expect(result.calls).toBe(1)
  })

  it('gives documents outside the top K -Infinity', async () => {
    const result = await provider().rerank({ model: 'rerank-2.5', query, documents, topK: 2 })
    expect(fake.requests[0]?.body.top_k).toBe(2)
    expect(result.scores).toEqual([-Infinity, 1, -Infinity, -Infinity, fake.score(query, documents[4] as string)])
  })

  it('splits more than 1,000 documents and keeps the global top K', async () => {
    const many = Array.from({ length: 1500 }, (_, i) => (i === 1234 ? query : i === 17 ? 'vector index' : `doc ${i}`))
    const result = await provider().rerank({ model: 'rerank-2.5', query, documents: many, topK: 2 })
    expect(fake.requests.map((r) => (r.body.documents as string[]).length)).toEqual([1000, 500])
    expect(result.scores.filter(Number.isFinite)).toHaveLength(2)
    expect(result.scores[1234]).toBe(1)
    expect(result.scores[17]).toBe(fake.score(query, 'vector index'))
  })
})

describe('retries', () => {
  it('honours Retry-After in seconds on 429', async () => {
    fake.fail({ kind: 'status', status: 429, retryAfter: '1' })
    const result = await provider().embed({ model: 'voyage-3.5', inputs: ['x'], inputType: 'document' })
    const [first, second] = fake.requests
    expect((second?.at as number) - (first?.at as number)).toBeGreaterThanOrEqual(990)
    expect(result.calls).toBe(2)
    expect(calls.map((c) => [c.status, c.attempt])).toEqual([
      [429, 1],
      [200, 2],
    ])
  })

  it('honours Retry-After as an HTTP date', async () => {
    // HTTP dates have whole seconds: the wait is between 1 and 2 s.
    fake.fail({ kind: 'status', status: 429, retryAfter: new Date(Date.now() + 2000).toUTCString() })
    await provider().embed({ model: 'voyage-3.5', inputs: ['x'], inputType: 'document' })
    const [first, second] = fake.requests
    expect((second?.at as number) - (first?.at as number)).toBeGreaterThanOrEqual(950)
  })

  it('retries 500s with backoff, then succeeds', async () => {
    fake.fail({ kind: 'status', status: 500 }, 2)
    const result = await provider().rerank({ model: 'rerank-2.5', query: 'q', documents: ['q', 'r'] })
    expect(result.scores).toEqual([1, 0])
    expect(result.calls).toBe(3)
    expect(calls.map((c) => c.status)).toEqual([500, 500, 200])
  })

  it('keeps the status of an error page that is not JSON', async () => {
    // The SDK reads a 502 whose body fails to parse as a failed fetch; the provider still sees 502.
    fake.fail({ kind: 'status', status: 502, body: '<html>bad gateway</html>' })
    await provider().embed({ model: 'voyage-3.5', inputs: ['x'], inputType: 'document' })
    expect(calls.map((c) => c.status)).toEqual([502, 200])
  })

  it('gives E_PROVIDER with the status once retries are spent', async () => {
    fake.fail({ kind: 'status', status: 429, retryAfter: '0' }, 3)
    const error = await failure(provider({ maxRetries: 2 }).embed({ model: 'voyage-3.5', inputs: ['x'], inputType: 'document' }))
    expect(error.code).toBe('E_PROVIDER')
    expect(error.details).toEqual({ provider: 'voyage', status: 429, retryable: true })
    expect(fake.requests).toHaveLength(3)
  })

  it('does not wait out a Retry-After over a minute', async () => {
    fake.fail({ kind: 'status', status: 429, retryAfter: '120' })
    const error = await failure(provider().embed({ model: 'voyage-3.5', inputs: ['x'], inputType: 'document' }))
    expect(error.details).toEqual({ provider: 'voyage', status: 429, retryable: true })
    expect(fake.requests).toHaveLength(1)
  })

  it('does not retry a 400', async () => {
    fake.fail({ kind: 'status', status: 400, body: { detail: 'bad model' } })
    const error = await failure(provider().embed({ model: 'voyage-3.5', inputs: ['x'], inputType: 'document' }))
    expect(error.code).toBe('E_PROVIDER')
    expect(error.details).toEqual({ provider: 'voyage', status: 400, retryable: false })
    expect(fake.requests).toHaveLength(1)
  })

  it('times out a request that hangs, retries it, and gives E_PROVIDER', async () => {
    fake.fail({ kind: 'hang' }, 2)
    const started = Date.now()
    const error = await failure(provider({ timeoutMs: 200, maxRetries: 1 }).embed({ model: 'voyage-3.5', inputs: ['x'], inputType: 'document' }))
    expect(Date.now() - started).toBeGreaterThanOrEqual(400)
    expect(error.code).toBe('E_PROVIDER')
    expect(error.details).toEqual({ provider: 'voyage', retryable: true })
    expect(calls.map((c) => c.status)).toEqual(['timeout', 'timeout'])
  })

  it('recovers when a retry after a timeout answers', async () => {
    fake.fail({ kind: 'hang' })
    const result = await provider({ timeoutMs: 200 }).embed({ model: 'voyage-3.5', inputs: ['x'], inputType: 'document' })
    expect(result.vectors).toEqual([f32(fake.vector('x'))])
    expect(calls.map((c) => c.status)).toEqual(['timeout', 200])
  })

  it('gives E_PROVIDER when nothing listens', async () => {
    const url = fake.url
    await fake.close()
    const error = await failure(provider({ baseUrl: url, maxRetries: 1 }).embed({ model: 'voyage-3.5', inputs: ['x'], inputType: 'document' }))
    expect(error.details).toEqual({ provider: 'voyage', retryable: true })
    expect(calls.map((c) => c.status)).toEqual(['network', 'network'])
    fake = await startFakeVoyage({ apiKey: KEY }) // for afterEach
  })
})

describe('bad answers are E_PROVIDER, not retried', () => {
  const embed = (options: VoyageProviderOptions = {}) => provider(options).embed({ model: 'voyage-3.5', inputs: ['a', 'b', 'c'], inputType: 'document' })
  const expectMalformed = (error: TychoraError) => {
    expect(error.code).toBe('E_PROVIDER')
    expect(error.details).toEqual({ provider: 'voyage', status: 200, retryable: false })
    expect(fake.requests).toHaveLength(1)
  }

  it('a body that is not JSON', async () => {
    fake.fail({ kind: 'malformed' })
    expectMalformed(await failure(embed()))
  })

  it('a vector of another dimension', async () => {
    fake.fail({ kind: 'dimension', dimension: 15 })
    expectMalformed(await failure(embed()))
  })

  it('vectors that are not the requested output dimension', async () => {
    fake.fail({ kind: 'dimension', dimension: 12, all: true })
    expectMalformed(await failure(provider().embed({ model: 'voyage-3.5', inputs: ['a', 'b'], inputType: 'document', outputDimension: 8 })))
  })

  it('a dimension that changes between batches', async () => {
    fake.fail({ kind: 'none' }) // the first batch answers normally
    fake.fail({ kind: 'dimension', dimension: 12, all: true })
    const inputs = Array.from({ length: 1001 }, (_, i) => `t${i}`)
    const error = await failure(provider().embed({ model: 'voyage-3.5', inputs, inputType: 'document' }))
    expect(error.code).toBe('E_PROVIDER')
    expect(error.details).toEqual({ provider: 'voyage', status: 200, retryable: false })
    expect(embedSizes()).toEqual([1000, 1])
  })

  it('a partial batch', async () => {
    fake.fail({ kind: 'partial' })
    expectMalformed(await failure(embed()))
  })

  it('a duplicate index', async () => {
    fake.fail({ kind: 'duplicate-index' })
    expectMalformed(await failure(embed()))
  })

  it('a non-finite number', async () => {
    fake.fail({ kind: 'non-finite' })
    expectMalformed(await failure(embed()))
  })

  it('contextualized: wrong dimension, partial batch', async () => {
    const contextualized = () => provider().embedContextualized({ model: 'voyage-context-3', documents: [['a', 'b'], ['c']], inputType: 'document' })
    fake.fail({ kind: 'dimension', dimension: 3 })
    expect((await failure(contextualized())).code).toBe('E_PROVIDER')
    fake.fail({ kind: 'partial' })
    expect((await failure(contextualized())).code).toBe('E_PROVIDER')
    fake.fail({ kind: 'malformed' })
    expect((await failure(contextualized())).code).toBe('E_PROVIDER')
    expect(fake.requests).toHaveLength(3)
  })

  it('rerank: a partial batch, a malformed body', async () => {
    const rerank = () => provider().rerank({ model: 'rerank-2.5', query: 'q', documents: ['a', 'b', 'c'] })
    fake.fail({ kind: 'partial' })
    expect((await failure(rerank())).code).toBe('E_PROVIDER')
    fake.fail({ kind: 'malformed' })
    expect((await failure(rerank())).code).toBe('E_PROVIDER')
    expect(fake.requests).toHaveLength(2)
  })
})

describe('bad input', () => {
  it('needs a key: VOYAGE_API_KEY, else E_INVALID_ARGUMENT', async () => {
    const saved = process.env.VOYAGE_API_KEY
    try {
      delete process.env.VOYAGE_API_KEY
      expect(() => createVoyageProvider({ baseUrl: fake.url })).toThrow(expect.objectContaining({ code: 'E_INVALID_ARGUMENT' }))
      process.env.VOYAGE_API_KEY = KEY
      const result = await createVoyageProvider({ baseUrl: fake.url }).embed({ model: 'voyage-3.5', inputs: ['x'], inputType: 'query' })
      expect(result.vectors).toHaveLength(1)
    } finally {
      if (saved === undefined) delete process.env.VOYAGE_API_KEY
      else process.env.VOYAGE_API_KEY = saved
    }
  })

  it('refuses a malformed key, an empty text, a local model and a bad dimension before any request', async () => {
    const codes: Array<() => unknown> = [
      () => createVoyageProvider({ apiKey: `${KEY}\n`, baseUrl: fake.url }),
      () => provider().embed({ model: 'voyage-3.5', inputs: ['a', ''], inputType: 'document' }),
      () => provider().embed({ model: 'voyage-4-nano', inputs: ['a'], inputType: 'document' }),
      () => provider().embed({ model: 'voyage-3.5', inputs: ['a'], inputType: 'document', outputDimension: 0 }),
      () => provider().embedContextualized({ model: 'voyage-context-3', documents: [[]], inputType: 'document' }),
      () => provider().rerank({ model: 'rerank-2.5', query: 'q', documents: ['a'], topK: 0 }),
    ]
    for (const call of codes) {
      const error = await failure(Promise.resolve().then(call))
      expect(error.code).toBe('E_INVALID_ARGUMENT')
      expect(error.message).not.toContain(KEY)
    }
    expect(fake.requests).toHaveLength(0)
  })
})

describe('the key', () => {
  it('appears in no error (message, stack, JSON, details, cause chain) and no call record', async () => {
    const errors: unknown[] = []
    const attempt = async (setup: () => void, run: () => Promise<unknown>) => {
      setup()
      await run().then(
        () => errors.push(new Error('expected a failure')),
        (e: unknown) => errors.push(e),
      )
    }
    const embed =
      (options: VoyageProviderOptions = {}) =>
      () =>
        provider(options).embed({ model: 'voyage-3.5', inputs: ['a', 'b'], inputType: 'document' })
    // A careless server quoting the Authorization header, once refused and once after retries.
    await attempt(() => fake.fail({ kind: 'echo-auth', status: 401 }), embed())
    await attempt(() => fake.fail({ kind: 'echo-auth', status: 503 }, 2), embed({ maxRetries: 1 }))
    await attempt(() => fake.fail({ kind: 'status', status: 500 }, 2), embed({ maxRetries: 1 }))
    await attempt(() => fake.fail({ kind: 'hang' }), embed({ timeoutMs: 100, maxRetries: 0 }))
    await attempt(() => fake.fail({ kind: 'malformed' }), embed())
    await attempt(() => fake.fail({ kind: 'dimension', dimension: 5 }), embed())
    await attempt(() => fake.fail({ kind: 'partial' }), embed())
    await attempt(
      () => fake.fail({ kind: 'echo-auth', status: 400 }),
      () => provider().rerank({ model: 'rerank-2.5', query: 'q', documents: ['a'] }),
    )
    await attempt(
      () => fake.fail({ kind: 'echo-auth', status: 400 }),
      () => provider().embedContextualized({ model: 'voyage-context-3', documents: [['a']], inputType: 'document' }),
    )
    await attempt(
      () => {},
      async () => createVoyageProvider({ apiKey: `${KEY} `, baseUrl: fake.url }),
    )
    const url = fake.url
    await fake.close()
    await attempt(() => {}, embed({ baseUrl: url, maxRetries: 0 }))
    fake = await startFakeVoyage({ apiKey: KEY }) // for afterEach

    expect(errors).toHaveLength(11)
    for (const error of errors) {
      expect(error).toBeInstanceOf(TychoraError)
      const seen: string[] = []
      for (let e: unknown = error; e !== undefined && e !== null; e = (e as { cause?: unknown }).cause) {
        const err = e as Error & { details?: unknown }
        seen.push(String(err.message), String(err.stack), JSON.stringify(err), JSON.stringify(err.details ?? null), inspect(err, { depth: Infinity, showHidden: true }))
      }
      for (const text of seen) expect(text).not.toContain(KEY)
    }
    // The server did quote the key back; the provider scrubbed it.
    expect(errors.some((e) => e instanceof TychoraError && e.message.includes('[redacted]'))).toBe(true)
    expect(calls.length).toBeGreaterThan(10)
    expect(JSON.stringify(calls)).not.toContain(KEY)
  })
})
