// Bundles the CLI (dist/cli/main.js and the commands it loads lazily) into dist/bin: one file
// per command instead of ~130 ES modules, and zod without the 40 locale modules it never uses.
// Node resolves and compiles each ES module separately, so on a 2-core machine the unbundled CLI
// spent ~50 ms of a ~180 ms `search` in the module loader. The library (dist/index.js) stays
// unbundled for importers. dist/bin sits at the same depth as dist/engine, so the engine's
// '../native/index.cjs' still finds the addon.
import { chmodSync, readFileSync, rmSync } from 'node:fs'
import { rolldown } from 'rolldown'

// zod and citty load on every command and go in; the other dependencies (servers, providers, the
// file watcher with its addon) load only with the commands that use them and stay packages.
const inline = new Set(['zod', 'citty'])
const packages = Object.keys(JSON.parse(readFileSync('package.json', 'utf8')).dependencies).filter((name) => !inline.has(name))
const external = (id) => /\/native\/index\.cjs$/.test(id) || packages.some((name) => id === name || id.startsWith(`${name}/`))

rmSync('dist/bin', { recursive: true, force: true })
const bundle = await rolldown({
  input: { tychora: 'dist/cli/main.js' },
  platform: 'node',
  external,
  logLevel: 'warn',
})
await bundle.write({ dir: 'dist/bin', format: 'esm', entryFileNames: '[name].js', chunkFileNames: '[name]-[hash].js', sourcemap: false, minify: { compress: true, mangle: false } })
await bundle.close()
chmodSync('dist/bin/tychora.js', 0o755)
