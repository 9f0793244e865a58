// Bundles the CLI (dist/cli/main.js and the commands it loads lazily) into CommonJS chunks in
// dist/cli-bundle (entry tychora-<content hash>.cjs), which dist/bin/tychora.cjs
// (ts/bin/tychora.cts) runs through V8's code cache. A few chunks instead of ~130 ES modules, and
// CommonJS because Node 20 can hand V8 a code cache only for a script compiled through `vm`
// (issue 11: a CLI `search` spent ~50 ms in the ES module loader and compiling). Each lazily
// loaded command is a chunk of its own, so the packages it needs load with it and not before.
// Every name carries its content's hash, which keys the code cache. The library (dist/index.js)
// stays unbundled ES modules for importers. dist/cli-bundle sits at the same depth as
// dist/engine, so the engine's '../native/index.cjs' still finds the addon.
import { readFileSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { rolldown } from 'rolldown'

// zod and citty load on every command and go in; the other dependencies (servers, providers, the
// file watcher with its addon) load only with the commands that use them and stay packages.
const inline = new Set(['zod', 'citty'])
const packages = Object.keys(JSON.parse(readFileSync('package.json', 'utf8')).dependencies).filter((name) => !inline.has(name))
const external = (id) => /\/native\/index\.cjs$/.test(id) || packages.some((name) => id === name || id.startsWith(`${name}/`))

rmSync('dist/cli-bundle', { recursive: true, force: true })
const bundle = await rolldown({
  input: { tychora: 'dist/cli/main.js' },
  platform: 'node',
  external,
  logLevel: 'warn',
})
await bundle.write({
  dir: 'dist/cli-bundle',
  format: 'cjs',
  entryFileNames: '[name]-[hash].cjs',
  chunkFileNames: '[name]-[hash].cjs',
  // A dynamic import() of a package becomes require() (Node 20.19+ requires ES modules): on Node
  // 20 a script run from V8's code cache loses its dynamic-import callback.
  dynamicImportInCjs: false,
  sourcemap: false,
  minify: { compress: true, mangle: false },
})
await bundle.close()

// The launcher runs chunks without a dynamic-import callback: refuse a bundle that needs one.
for (const name of readdirSync('dist/cli-bundle')) {
  if (/(?<![\w$.])import\s*\(/.test(readFileSync(join('dist/cli-bundle', name), 'utf8'))) {
    throw new Error(`dist/cli-bundle/${name} still has a dynamic import(): the launcher cannot run it from the code cache`)
  }
}
