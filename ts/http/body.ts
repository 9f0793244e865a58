import type { H3Event } from 'h3'
import { limitRequestBody } from 'srvx/body-limit'
import type { z } from 'zod'
import { validate as validateOnce } from '../contracts/validate.js'
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

/**
 * A JSON body must say so: `Content-Type: application/json` (or a `+json` type). A browser sends
 * `text/plain`, form and multipart bodies cross-origin without a CORS preflight, so accepting them
 * as JSON would let any web page post to the API; those are E_UNSUPPORTED_FORMAT (415).
 */
export function requireJsonType(event: H3Event): void {
  const type = event.req.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase() ?? ''
  if (type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type)) return
  throw new TychoraError('E_UNSUPPORTED_FORMAT', `request body must be sent as Content-Type: application/json, not ${type || 'no Content-Type'}`)
}

/** Reads a JSON body within `limit` bytes; malformed or empty JSON is E_INVALID_ARGUMENT. */
export async function readJson(event: H3Event, limit: number): Promise<unknown> {
  requireJsonType(event)
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

/**
 * Validates with a zod schema through the one validation of `contracts/validate.ts` (so the
 * engine does not parse the request again); a failure is E_INVALID_ARGUMENT with the same
 * one-line message the library and the CLI give. Path and query parameters say which they were.
 */
export function validate<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  try {
    return validateOnce(schema, value)
  } catch (error) {
    if (what === 'request body' || !(error instanceof TychoraError)) throw error
    throw new TychoraError('E_INVALID_ARGUMENT', `invalid ${what}: ${error.message}`)
  }
}
