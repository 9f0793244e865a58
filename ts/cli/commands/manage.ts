import { defineCommand } from 'citty'
import { Workspace } from '../../engine/workspace.js'
import { visible } from '../../format/terminal.js'
import { exitState, resolveWorkspace, workspaceArg, writeOut } from '../context.js'
import { withLocalWorkspace } from '../route.js'

function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(2)} MB`
}

const status = defineCommand({
  meta: { name: 'status', description: 'Counts, sizes and the current snapshot' },
  args: { ...workspaceArg, format: { type: 'string', description: 'text | json', default: 'text' } },
  async run({ args }) {
    await withLocalWorkspace(args.workspace, async (ws) => {
      const s = await ws.status()
      if (args.format === 'json') return writeOut(JSON.stringify(s, null, 2))
      const snap = s.current_snapshot
      writeOut(
        visible([
          `workspace ${s.dir} (schema ${s.schema_version}, engine ${s.engine_version}, profile ${s.profile})`,
          snap ? `current snapshot ${snap.id}: ${snap.sources} sources, ${snap.chunks} chunks` : 'no published snapshot yet',
          `collections: ${s.collections.map((c) => `${c.name} (${c.active_sources})`).join(', ')}`,
          `counts: ${Object.entries(s.counts).map(([k, v]) => `${k} ${v}`).join(', ')}`,
          `bytes: corpus ${mb(s.bytes.corpus)}, artifacts ${mb(s.bytes.artifacts)}, indexes ${mb(s.bytes.indexes)}`,
        ].join('\n')),
      )
    })
  },
})

const verify = defineCommand({
  meta: { name: 'verify', description: 'Re-hash every artifact and check snapshots against their indexes' },
  args: { ...workspaceArg, format: { type: 'string', description: 'text | json', default: 'text' } },
  async run({ args }) {
    await withLocalWorkspace(args.workspace, async (ws) => {
      const report = await ws.verify()
      if (args.format === 'json') writeOut(JSON.stringify(report, null, 2))
      else {
        writeOut(`${report.ok ? 'ok' : 'PROBLEMS'}: ${report.artifacts_checked} artifacts re-hashed, ${report.references_checked} references and ${report.snapshots_checked} snapshots checked`)
        for (const p of report.problems) writeOut(visible(`  ${p.code} ${p.object}: ${p.message}`))
      }
      if (!report.ok) exitState.code = 8
    })
  },
})

const rebuild = defineCommand({
  meta: { name: 'rebuild', description: "Rewrite damaged vector files from the vector records; republish the current snapshot when its indexes are stale (embeddings turned on or changed)" },
  args: { ...workspaceArg, format: { type: 'string', description: 'text | json', default: 'text' } },
  async run({ args }) {
    await withLocalWorkspace(args.workspace, async (ws) => {
      const r = await ws.rebuild()
      if (args.format === 'json') return writeOut(JSON.stringify(r, null, 2))
      const lines = [
        `job ${r.job_id}: ${r.repaired.length} vector file(s) rewritten from the records${r.repaired.map((g) => `\n  snapshot ${g.snapshot_id}: ${g.generation}`).join('')}`,
        r.republished ? `republished as snapshot ${r.snapshot_id}: ${r.reason}` : `current snapshot ${r.snapshot_id} kept: ${r.reason}`,
      ]
      if (r.embedding) lines.push(`embedded ${r.embedding.embedded} of ${r.embedding.inputs} inputs (${r.embedding.tokens_embedded} tokens)`)
      writeOut(visible(lines.join('\n')))
    })
  },
})

const migrate = defineCommand({
  meta: { name: 'migrate', description: 'Apply pending schema migrations (never done implicitly)' },
  args: { dir: { type: 'positional', required: false, description: 'Workspace directory' }, ...workspaceArg },
  async run({ args }) {
    const dir = resolveWorkspace(args.dir ?? args.workspace)
    const applied = await Workspace.migrate(dir)
    writeOut(applied.length > 0 ? `applied migrations ${applied.join(', ')} to ${dir}` : `${dir} is up to date`)
  },
})

export default defineCommand({
  meta: { name: 'manage', description: 'Workspace administration: status, verify, rebuild, migrate' },
  subCommands: { status, verify, rebuild, migrate },
})
