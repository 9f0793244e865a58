import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

let found: { root: string; version: string } | null | undefined

/**
 * The installed package's root and version, found by walking up from this module to the first
 * package.json named `tychora`. A fixed `../..` would break: the same code runs from ts/ (tests),
 * dist/ (the library) and dist/bin/ (the bundled CLI), at different depths.
 */
function locate(): { root: string; version: string } | null {
  if (found !== undefined) return found
  found = null
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json')
    if (existsSync(manifest)) {
      try {
        const parsed = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown; version?: unknown }
        if (parsed.name === 'tychora' && typeof parsed.version === 'string') {
          found = { root: dir, version: parsed.version }
          break
        }
      } catch {
        // An unreadable manifest on the way up is not ours; keep walking.
      }
    }
    if (dirname(dir) === dir) break
  }
  return found
}

/** The package root (the folder holding its package.json), or null when it cannot be found. */
export const packageRoot = (): string | null => locate()?.root ?? null

/** The package's version, or 0.0.0 when its manifest cannot be found. */
export const packageVersion = (): string => locate()?.version ?? '0.0.0'
