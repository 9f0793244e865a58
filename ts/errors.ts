import { z } from 'zod'

/**
 * The stable error-code table shared by the library, CLI, HTTP and MCP surfaces.
 * Adding a code is an API change. The Rust core emits the same strings.
 */
export const ERROR_CODES = {
  E_INVALID_ARGUMENT: { exit: 2, http: 400, meaning: 'bad input' },
  E_NOT_FOUND: { exit: 3, http: 404, meaning: 'no such object' },
  E_CONFLICT: { exit: 4, http: 409, meaning: 'already exists, or stale snapshot' },
  E_LOCKED: { exit: 5, http: 423, meaning: 'workspace owned by another process' },
  E_MIGRATION_REQUIRED: { exit: 6, http: 409, meaning: 'explicit migrate needed' },
  E_CHECKSUM_MISMATCH: { exit: 7, http: 500, meaning: 'migration or artifact integrity failure' },
  E_CORRUPT: { exit: 8, http: 500, meaning: 'derived index damaged; rebuild it' },
  E_UNSUPPORTED_FORMAT: { exit: 2, http: 415, meaning: 'input format not supported' },
  E_LIMIT_EXCEEDED: { exit: 2, http: 413, meaning: 'a size or budget limit was exceeded' },
  E_CANCELLED: { exit: 130, http: 499, meaning: 'the call was cancelled' },
  E_CLOSED: { exit: 1, http: 500, meaning: 'the handle was closed' },
  E_IO: { exit: 1, http: 500, meaning: 'I/O failure' },
  E_INTERNAL: { exit: 1, http: 500, meaning: 'bug, including caught panics' },
  E_UNAUTHORIZED: { exit: 9, http: 401, meaning: 'missing or wrong bearer token' },
  E_FORBIDDEN: { exit: 9, http: 403, meaning: 'request refused: foreign Host or Origin, or not allowed by the workspace' },
  E_PROVIDER: { exit: 12, http: 502, meaning: 'an embedding or rerank provider failed (status, timeout, malformed answer) after its retries' },
  E_BUDGET_EXCEEDED: { exit: 13, http: 402, meaning: 'a job would exceed a configured cap on paid provider use; nothing was sent' },
  E_STORE_UNAVAILABLE: { exit: 14, http: 503, meaning: 'a configured store (the artifact bucket) is unreachable or refused the call, after its retries' },
} as const

export type ErrorCode = keyof typeof ERROR_CODES
export const ErrorCodeSchema = z.enum(Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]])

/** Exit code of a job that finished with some files failing (distinct from every error code). */
export const EXIT_PARTIAL = 10

/** The one error class every surface throws and maps. Tests assert on `code`, never on text. */
export class TychoraError extends Error {
  readonly code: ErrorCode
  readonly details?: Record<string, unknown>

  constructor(code: ErrorCode, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(message, { cause: options.cause })
    this.name = 'TychoraError'
    this.code = code
    if (options.details) this.details = options.details
  }

  toJSON(): { code: ErrorCode; message: string } {
    return { code: this.code, message: this.message }
  }
}

/**
 * A schema's issues as the message of an `E_INVALID_ARGUMENT`: `path: message` per issue, `(root)`
 * for the value itself, joined with `; ` on one line. Every surface words a refused input alike.
 */
export function formatIssues(issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>): string {
  return issues.map((i) => `${i.path.map(String).join('.') || '(root)'}: ${i.message.replace(/\s*\n\s*/g, ' ')}`).join('; ')
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && value in ERROR_CODES
}

/**
 * Any thrown value as a `TychoraError`, so every surface maps failures through one table. Native
 * errors arrive as `[E_NOT_FOUND] …` because napi's async tasks carry only a generic status; it
 * lives here, not in the engine, because the surfaces that map errors must not load the engine.
 */
export function toTychoraError(error: unknown): TychoraError {
  if (error instanceof TychoraError) return error
  const message = error instanceof Error ? error.message : String(error)
  const match = /^\[(E_[A-Z_]+)\] ([\s\S]*)$/.exec(message)
  if (match && isErrorCode(match[1])) return new TychoraError(match[1], match[2] ?? '', { cause: error })
  return new TychoraError('E_INTERNAL', message, { cause: error })
}
