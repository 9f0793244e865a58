import { defineCommand } from 'citty'
import { runStdio } from '../../daemon/stdio.js'
import { resolveWorkspace, workspaceArg } from '../context.js'

export default defineCommand({
  meta: {
    name: 'mcp',
    description: 'Serve the workspace to an MCP client over stdio (stdout carries only the protocol; logs go to stderr)',
  },
  args: { ...workspaceArg },
  async run({ args }) {
    // Resolves when the session ends, so the CLI sets its exit code only then.
    await runStdio(await resolveWorkspace(args.workspace))
  },
})
