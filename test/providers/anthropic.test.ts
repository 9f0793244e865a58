import { inspect } from 'node:util'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { DescribeImageRequest } from '../../ts/contracts/provider.js'
import { TychoraError } from '../../ts/errors.js'
import { type AnthropicDescriberOptions, createAnthropicDescriber } from '../../ts/providers/anthropic.js'
import { type FakeAnthropic, startFakeAnthropic } from './fake-anthropic.js'

// Recognisable, so the leak checks can grep for it; the fake server checks it.
const KEY = 'sk-ant-FAKE-tychora-test-key-5d1e77b0c3'

let fake: FakeAnthropic

beforeEach(async () => {
  fake = await startFakeAnthropic({ apiKey: KEY })
})
afterEach(async () => {
  await fake.close()
})

const describer = (options: AnthropicDescriberOptions = {}) => createAnthropicDescriber({ apiKey: KEY, baseUrl: fake.url, timeoutMs: 5_000, ...options })

const PICTURE = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex')
const request: DescribeImageRequest = {
  model: 'claude-test',
  mediaType: 'image/png',
  image: PICTURE,
  prompt: 'Describe this picture.',
  maxTokens: 300,
}

/** The rejection of `promise`: a one-line `TychoraError` with no cause and no key anywhere in it. */
async function failure(promise: Promise<unknown>): Promise<TychoraError> {
  const error = await promise.then(
    () => {
      throw new Error('expected a rejection')
    },
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(TychoraError)
  const t = error as TychoraError
  expect(t.code).toBe('E_PROVIDER')
  expect(t.message).not.toMatch(/\n/)
  expect(t.cause).toBeUndefined()
  expect(inspect(t, { depth: 10 })).not.toContain(KEY)
  expect(JSON.stringify(t.details ?? {})).not.toContain(KEY)
  return t
}

describe('Anthropic image descriptions through the real @anthropic-ai/sdk on a loopback server', () => {
  it('sends the picture as a base64 image block with the prompt, and reads text, model, stop reason and usage', async () => {
    const answer = await describer().describe(request)
    expect(answer).toEqual({
      text: fake.describe('image/png', PICTURE),
      model: 'claude-test-20260101',
      stopReason: 'end_turn',
      inputTokens: 1500,
      outputTokens: 40,
      calls: 1,
    })
    const [sent] = fake.requests
    expect(sent!.path).toBe('/v1/messages')
    // The key travels in one header only, whichever the SDK uses.
    const carriers = [sent!.headers['x-api-key'], sent!.headers.authorization].filter((h) => h !== undefined)
    expect(carriers).toHaveLength(1)
    expect(String(carriers[0])).toContain(KEY)
    expect(sent!.body.model).toBe('claude-test')
    expect(sent!.body.max_tokens).toBe(300)
    const content = sent!.body.messages![0]!.content
    expect(content.map((c) => c.type)).toEqual(['image', 'text'])
    expect(content[0]!.source).toEqual({ type: 'base64', media_type: 'image/png', data: PICTURE.toString('base64') })
    expect(content[1]!.text).toBe('Describe this picture.')
  })

  it('waits out a rate limit the server asks for, and gives up at once when the wait is longer than a minute', async () => {
    fake.fail({ kind: 'status', status: 429, type: 'rate_limit_error', message: 'Number of requests has exceeded your rate limit', retryAfter: '0' })
    const answer = await describer().describe(request)
    expect(answer.calls).toBe(2)
    expect(fake.requests).toHaveLength(2)

    fake.fail({ kind: 'status', status: 429, type: 'rate_limit_error', message: 'Daily quota spent', retryAfter: '3600' }, 3)
    const spent = await failure(describer().describe(request))
    expect(fake.requests).toHaveLength(3)
    expect(spent.message).toBe('anthropic describe failed (model claude-test): HTTP 429 rate_limit_error: Daily quota spent (the provider asks to wait 3600 s; try again later)')
    expect(spent.details).toMatchObject({ provider: 'anthropic', status: 429, retryable: true })
  })

  it('retries overloaded and server errors as many times as allowed, then fails with the status', async () => {
    fake.fail({ kind: 'status', status: 529, type: 'overloaded_error', message: 'Overloaded', retryAfter: '0' }, 3)
    const error = await failure(describer({ maxRetries: 2 }).describe(request))
    expect(fake.requests).toHaveLength(3)
    expect(error.message).toBe('anthropic describe failed (model claude-test): HTTP 529 overloaded_error: Overloaded')
  })

  it('does not retry a bad request, and never repeats a key the server quotes back', async () => {
    fake.fail({ kind: 'status', status: 400, type: 'invalid_request_error', message: 'image: media type not supported' })
    const bad = await failure(describer().describe(request))
    expect(fake.requests).toHaveLength(1)
    expect(bad.message).toBe('anthropic describe failed (model claude-test): HTTP 400 invalid_request_error: image: media type not supported')
    expect(bad.details).toMatchObject({ status: 400, retryable: false })

    fake.fail({ kind: 'echo-key' })
    const echoed = await failure(describer().describe(request))
    expect(echoed.message).toContain('Refused credentials [redacted]')

    const wrongKey = await failure(createAnthropicDescriber({ apiKey: 'sk-ant-wrong', baseUrl: fake.url }).describe(request))
    expect(wrongKey.message).toBe('anthropic describe failed (model claude-test): HTTP 401 authentication_error: invalid x-api-key')
  })

  it('reports a refusal and an empty answer as failures, so nothing is recorded as a description', async () => {
    fake.fail({ kind: 'refusal' })
    const refused = await failure(describer().describe(request))
    expect(refused.message).toMatch(/declined to describe this picture \(stop_reason refusal\); nothing was recorded$/)
    expect(refused.details).toMatchObject({ refusal: true, retryable: false })
    fake.fail({ kind: 'empty' })
    expect((await failure(describer().describe(request))).message).toMatch(/the answer held no text \(stop_reason end_turn\)/)
  })

  it('times out a server that never answers, and says a missing or malformed key before any request', async () => {
    fake.fail({ kind: 'hang' }, 2)
    const slow = await failure(describer({ timeoutMs: 300, maxRetries: 1 }).describe(request))
    expect(slow.message).toBe('anthropic describe failed (model claude-test): timed out')
    const saved = process.env.ANTHROPIC_API_KEY
    delete process.env.ANTHROPIC_API_KEY
    try {
      expect(() => createAnthropicDescriber({ baseUrl: fake.url })).toThrow(/ANTHROPIC_API_KEY is not set/)
      expect(() => createAnthropicDescriber({ apiKey: `${KEY}\n`, baseUrl: fake.url })).toThrow(/ANTHROPIC_API_KEY is malformed/)
    } finally {
      if (saved !== undefined) process.env.ANTHROPIC_API_KEY = saved
    }
  })
})
