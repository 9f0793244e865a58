import { createHash, timingSafeEqual } from 'node:crypto'

/**
 * Constant-time bearer-token comparison, shared by the HTTP and MCP surfaces. Both sides are
 * hashed first so the compared buffers always have equal length (timingSafeEqual requires it) and
 * the comparison time does not depend on where they differ.
 */
export function tokenEquals(given: string, expected: string | undefined): boolean {
  if (expected === undefined || expected.length === 0) return false
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest()
  return timingSafeEqual(digest(given), digest(expected))
}
