import { HTTPError } from 'h3'
import { z } from 'zod'
import { ERROR_CODES, type ErrorCode, ErrorCodeSchema, TychoraError, toTychoraError } from '../errors.js'

/** The body of every error response: the stable code of `ts/errors.ts` and a message. */
export const ErrorBodySchema = z
  .object({
    code: ErrorCodeSchema.describe('Stable error code; the HTTP status follows from it'),
    message: z.string().describe('What went wrong ("internal error" for E_INTERNAL, whose details stay in the server log)'),
  })
  .describe('Error')

export type ErrorBody = z.infer<typeof ErrorBodySchema>

/** Headers on every response: JSON, never cached, never sniffed. */
export const BASE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'application/json; charset=utf-8',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { ...BASE_HEADERS, ...headers } })
}

/** Statuses h3 itself produces (no route, malformed URL, a srvx body limit) mapped onto the code table. */
const STATUS_CODES: Record<number, ErrorCode> = {
  400: 'E_INVALID_ARGUMENT',
  401: 'E_UNAUTHORIZED',
  403: 'E_FORBIDDEN',
  404: 'E_NOT_FOUND',
  405: 'E_NOT_FOUND',
  413: 'E_LIMIT_EXCEEDED',
  415: 'E_UNSUPPORTED_FORMAT',
}

/**
 * The one place an error thrown anywhere in the app (a guard, a route, the engine, h3) becomes a
 * response. h3 wraps errors it did not create in an `HTTPError` whose `cause` is the original.
 */
export function toTychora(error: unknown): TychoraError {
  if (error instanceof TychoraError) return error
  if (HTTPError.isError(error)) {
    const cause = error.cause
    if (cause instanceof TychoraError) return cause
    if (cause instanceof Error && !HTTPError.isError(cause) && error.unhandled) return toTychoraError(cause)
    const code = STATUS_CODES[error.status]
    if (code) return new TychoraError(code, error.unhandled ? code : error.message, { cause: error })
    return new TychoraError('E_INTERNAL', error.message, { cause: error })
  }
  return toTychoraError(error)
}

export function errorResponse(error: unknown): Response {
  const tychora = toTychora(error)
  const { code } = tychora
  // Details of internal errors stay in the server log; the caller sees only the code.
  if (code === 'E_INTERNAL') console.error('[tychora http] internal error:', tychora.cause ?? tychora)
  const body: ErrorBody = { code, message: code === 'E_INTERNAL' ? 'internal error' : tychora.message }
  const headers: Record<string, string> = {}
  if (code === 'E_UNAUTHORIZED') headers['www-authenticate'] = 'Bearer realm="tychora"'
  // The rest of an oversize body is never read: end the connection rather than keep it alive.
  if (code === 'E_LIMIT_EXCEEDED') headers.connection = 'close'
  return json(ERROR_CODES[code].http, body, headers)
}
