import { defineCommand } from 'citty'
import { workspaceArg, writeOut } from '../context.js'
import { withTarget } from '../route.js'

export default defineCommand({
  meta: { name: 'inspect', description: 'Show a source, revision, unit, chunk, snapshot, job or segment with its provenance' },
  args: {
    ...workspaceArg,
    id: { type: 'positional', required: true, description: 'source:N | revision:N | unit:N | chunk:N | snapshot:N | job:N | seg_S_C' },
  },
  async run({ args }) {
    await withTarget(args.workspace, async ({ client }) => writeOut(JSON.stringify(await client.getEvidence(String(args.id)), null, 2)))
  },
})
