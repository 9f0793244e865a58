import type { z } from 'zod'
import { TychoraError } from '../errors.js'

/**
 * Native results are typed by the generated declarations, and `test/types` checks those against
 * the zod contracts, so production code trusts them. In development and tests (and with
 * `TYCHORA_VALIDATE_OUTPUT=1`) every result is also parsed with its schema, as oxc does: real
 * native output is checked where the suites run, and a production call does not pay for a second
 * walk of every field.
 */
export const VALIDATE_OUTPUT = process.env.NODE_ENV === 'test' || process.env.NODE_ENV === 'development' || process.env.TYCHORA_VALIDATE_OUTPUT === '1'

/**
 * `value` as its contract type; checked against the schema when `VALIDATE_OUTPUT` is on. The
 * value itself is returned, never zod's parsed copy (which drops unknown keys and fills defaults),
 * so what a test sees is what a user gets.
 */
export function checked<S extends z.ZodType>(schema: S, value: z.output<S>): z.output<S> {
  if (!VALIDATE_OUTPUT) return value
  const parsed = schema.safeParse(value)
  if (!parsed.success) throw new TychoraError('E_INTERNAL', `native output does not match its contract: ${parsed.error.message}`)
  return value
}

/**
 * The JSON the query path returns, parsed once, and checked like `checked`. The schema is loaded
 * only to check it: search's result schema is the largest contract, and building it cost a CLI
 * search that never checks it ~4 ms of its start (issue 11).
 */
export async function parseJson<S extends z.ZodType>(schema: () => Promise<S>, json: string): Promise<z.output<S>> {
  const value = JSON.parse(json) as z.output<S>
  return VALIDATE_OUTPUT ? checked(await schema(), value) : value
}
