import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { extname, join, relative, sep } from 'node:path'
import { packageRoot } from '../../package-root.js'

/**
 * The policy on every dashboard response: scripts and styles from this origin only (no inline
 * script or style element, no remote origin), images from here or drawn in the page, calls to
 * this origin only, no frames, no plugins, forms post nowhere else.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

/** Headers on every dashboard response besides its content type. */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
}

export interface Asset {
  body: Uint8Array<ArrayBuffer>
  type: string
  /** Content-hashed file names (under assets/) never change: cache them for good. */
  immutable: boolean
}

/**
 * The built dashboard (`npm run build:ui` writes `dist/dashboard`), read once into memory: a
 * request is answered from this table by exact path, so no request path ever reaches the file
 * system. `undefined` when the bundle is missing (a checkout that has not built it).
 */
export function loadAssets(dir: string | undefined = defaultDir()): Map<string, Asset> | undefined {
  if (!dir || !existsSync(join(dir, 'index.html'))) return undefined
  const assets = new Map<string, Asset>()
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const path = join(d, name)
      if (statSync(path).isDirectory()) walk(path)
      else {
        const url = `/${relative(dir, path).split(sep).join('/')}`
        assets.set(url, { body: new Uint8Array(readFileSync(path)), type: TYPES[extname(name)] ?? 'application/octet-stream', immutable: url.startsWith('/assets/') })
      }
    }
  }
  walk(dir)
  return assets
}

function defaultDir(): string | undefined {
  const root = packageRoot()
  return root ? join(root, 'dist', 'dashboard') : undefined
}
