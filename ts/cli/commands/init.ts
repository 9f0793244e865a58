import { defineCommand } from 'citty'
import { Workspace } from '../../engine/workspace.js'
import { writeOut } from '../context.js'

export default defineCommand({
  meta: { name: 'init', description: 'Create a workspace (default ./.tychora)' },
  args: {
    dir: { type: 'positional', required: false, description: 'Workspace directory', default: '.tychora' },
    format: { type: 'string', description: 'text | json', default: 'text' },
  },
  async run({ args }) {
    const report = await Workspace.init(args.dir)
    if (args.format === 'json') return writeOut(JSON.stringify(report, null, 2))
    writeOut(`Initialised workspace ${report.dir} (schema ${report.schema_version})\n  ${report.created.join('\n  ')}`)
  },
})
