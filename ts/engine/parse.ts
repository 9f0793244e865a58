import type { z } from 'zod'
import { TychoraError } from '../errors.js'

/**
 * Parses native JSON output with its zod contract. A mismatch is a bug on our side (the Rust
 * serializer and the schema disagree), so it surfaces as E_INTERNAL rather than bad data.
 */
export function parseWith<S extends z.ZodType>(schema: S, input: string | unknown): z.infer<S> {
  const value = typeof input === 'string' ? JSON.parse(input) : input
  const parsed = schema.safeParse(value)
  if (!parsed.success) {
    throw new TychoraError('E_INTERNAL', `native output does not match its contract: ${parsed.error.message}`)
  }
  return parsed.data
}

/**
 * Validation of hot-path output (query results) runs in development and tests only, as oxc does:
 * the contract is enforced where it is checked (test suites parse real native output), and a
 * production query does not pay for a second walk of every segment.
 */
export const VALIDATE_HOT_OUTPUT =
  process.env.NODE_ENV === 'test' || process.env.NODE_ENV === 'development' || process.env.TYCHORA_VALIDATE_OUTPUT === '1'

export function parseHot<S extends z.ZodType>(schema: S, input: string | unknown): z.infer<S> {
  if (VALIDATE_HOT_OUTPUT) return parseWith(schema, input)
  return (typeof input === 'string' ? JSON.parse(input) : input) as z.infer<S>
}
