import { defineCommand } from 'citty'
import { Workspace } from '../../engine/workspace.js'
import { resolveWorkspace, workspaceArg, writeOut } from '../context.js'

export default defineCommand({
  meta: { name: 'inspect', description: 'Show a source, revision, unit, chunk, snapshot, job or segment with its provenance' },
  args: {
    ...workspaceArg,
    id: { type: 'positional', required: true, description: 'source:N | revision:N | unit:N | chunk:N | snapshot:N | job:N | seg_S_C' },
  },
  async run({ args }) {
    const ws = await Workspace.open(resolveWorkspace(args.workspace))
    try {
      writeOut(JSON.stringify(await ws.inspect(String(args.id)), null, 2))
    } finally {
      ws.close()
    }
  },
})
