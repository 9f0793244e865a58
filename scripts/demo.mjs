// The main job on the embedded default: build a workspace from the documents that ship with this
// repository and print cited evidence for a few queries. No server, no key, no network.
import { existsSync, rmSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Workspace, toMarkdown } from '../dist/index.js'

const root = resolve(fileURLToPath(import.meta.url), '../..')
const dir = join(root, '.tychora-demo')
rmSync(dir, { recursive: true, force: true })

const corpus = ['README.md', 'ARCHITECTURE.md', 'AGENTS.md', 'CHANGELOG.md', 'packs', 'test/fixtures/docs'].map((p) => join(root, p)).filter((p) => existsSync(p))

await Workspace.init(dir)
const ws = await Workspace.open(dir)
try {
  const receipt = await ws.add({ paths: corpus })
  console.log(
    `Indexed ${receipt.files.added} files (${(receipt.bytes_read / 1024).toFixed(0)} KiB, ${receipt.units} evidence units, ${receipt.chunks} chunks) into snapshot ${receipt.snapshot_id} in ${receipt.duration_ms.toFixed(0)} ms.\n`,
  )
  const queries = process.argv.slice(2).length > 0 ? [process.argv.slice(2).join(' ')] : ['how is a snapshot published safely after a crash', 'E_LOCKED', 'RFC 9110', 'conditional request with ETag']
  for (const query of queries) {
    const result = await ws.search({ query, limit: 3, budget_tokens: 1200 })
    console.log(`## ${query}\n`)
    console.log(toMarkdown(result))
    console.log()
  }
} finally {
  ws.close()
}
console.log(`Workspace left in ${dir}; try: node dist/bin/tychora.cjs search -w ${dir} "your question"`)
