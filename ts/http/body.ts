import type { H3Event } from 'h3'
import { limitRequestBody } from 'srvx/body-limit'
import type { z } from 'zod'
import { TychoraError } from '../errors.js'

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024

export function tooLarge(limit: number): TychoraError {
  return new TychoraError('E_LIMIT_EXCEEDED', `request body exceeds ${limit} bytes`)
}

/**
 * The request with its body capped at `limit` bytes: an honest Content-Length over the limit is
 * refused before anything is read, and the bytes actually read are counted as they stream (a
 * short or missing Content-Length cannot smuggle more). `overflowed()` tells whether a read hit
 * the cap, for consumers (the MCP handler) that catch read errors themselves.
 */
export function limitedRequest(event: H3Event, limit: number): { request: Request; overflowed: () => boolean } {
  const declared = event.req.headers.get('content-length')
  if (declared !== null) {
    const length = Number(declared)
    if (!Number.isSafeInteger(length) || length < 0) throw new TychoraError('E_INVALID_ARGUMENT', 'invalid Content-Length')
    if (length > limit) throw tooLarge(limit)
  }
  let overflow = false
  const request = limitRequestBody(event.req, limit, {
    createError: () => {
      overflow = true
      return tooLarge(limit)
    },
  })
  return { request, overflowed: () => overflow }
}

/** Reads a JSON body within `limit` bytes; malformed or empty JSON is E_INVALID_ARGUMENT. */
export async function readJson(event: H3Event, limit: number): Promise<unknown> {
  const { request, overflowed } = limitedRequest(event, limit)
  let text: string
  try {
    text = await request.text()
  } catch (error) {
    if (overflowed()) throw tooLarge(limit)
    throw findTychora(error) ?? new TychoraError('E_INVALID_ARGUMENT', 'could not read the request body', { cause: error })
  }
  if (text.trim() === '') throw new TychoraError('E_INVALID_ARGUMENT', 'request body must be a JSON document')
  try {
    return JSON.parse(text) as unknown
  } catch (error) {
    throw new TychoraError('E_INVALID_ARGUMENT', `malformed JSON: ${(error as Error).message}`)
  }
}

function findTychora(error: unknown): TychoraError | undefined {
  for (let e = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof TychoraError) return e
  }
  return undefined
}

/** Validates with a zod schema; a failure is E_INVALID_ARGUMENT naming each issue. */
export function validate<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(value)
  if (parsed.success) return parsed.data
  const issues = parsed.error.issues.map((i) => `${i.path.map(String).join('.') || '(root)'}: ${i.message}`).join('; ')
  throw new TychoraError('E_INVALID_ARGUMENT', `invalid ${what}: ${issues}`)
}
