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
