import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vite'

// The owner's dashboard, built into dist/dashboard and served by the daemon (ts/http/dashboard).
// No inline script (the page's CSP has no 'unsafe-inline'): the module preload polyfill, which
// Vite would inline, is off, and every asset is a file under assets/ with a content hash.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  publicDir: false,
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../../dist/dashboard', import.meta.url)),
    emptyOutDir: true,
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: false,
  },
})
