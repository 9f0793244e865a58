// Copies the napi loader, its types and any locally built .node into dist/native, where the
// compiled engine (dist/engine/native.js) loads '../native/index.cjs' from.
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs'
import { join } from 'node:path'

const from = 'ts/native'
const to = 'dist/native'
mkdirSync(to, { recursive: true })
for (const name of readdirSync(from)) {
  if (/\.(cjs|d\.cts|node)$/.test(name)) copyFileSync(join(from, name), join(to, name))
}
