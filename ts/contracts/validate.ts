import type { z } from 'zod'
import { TychoraError, formatIssues } from '../errors.js'

/**
 * Requests are validated once, by the surface that received them (the library call, the HTTP
 * route, the MCP tool, the CLI). What that surface validated is remembered here by identity, so
 * the engine below does not parse the same object again: a search over HTTP is checked once.
 */
const validated = new WeakSet<object>()

/** Parses `value` with `schema`; a failure is `E_INVALID_ARGUMENT` with the one-line issue list. */
export function validate<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const parsed = schema.safeParse(value)
  if (!parsed.success) throw new TychoraError('E_INVALID_ARGUMENT', formatIssues(parsed.error.issues))
  if (typeof parsed.data === 'object' && parsed.data !== null) validated.add(parsed.data)
  return parsed.data
}

/** `value` as validated by a surface, or validated now if it was not. */
export function ensureValid<S extends z.ZodType>(schema: S, value: z.input<S>): z.output<S> {
  return typeof value === 'object' && value !== null && validated.has(value) ? (value as z.output<S>) : validate(schema, value)
}
