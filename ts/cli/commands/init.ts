import { defineCommand } from 'citty'
import { Workspace } from '../../engine/workspace.js'
import { TychoraError } from '../../errors.js'
import { writeOut } from '../context.js'

export default defineCommand({
  meta: { name: 'init', description: 'Create a workspace (default ./.tychora)' },
  args: {
    dir: { type: 'positional', required: false, description: 'Workspace directory', default: '.tychora' },
    profile: {
      type: 'string',
      description: 'documents (default) | code (repositories: tree-sitter symbols, identifier sub-tokens) | verified (documents; records count once reviewed)',
      default: 'documents',
    },
    embeddings: {
      type: 'string',
      description: 'Turn on the text (dense) channel: local (a model directory, offline) | voyage (network, VOYAGE_API_KEY)',
    },
    format: { type: 'string', description: 'text | json', default: 'text' },
  },
  async run({ args }) {
    if (args.profile !== 'documents' && args.profile !== 'code' && args.profile !== 'verified')
      throw new TychoraError('E_INVALID_ARGUMENT', `--profile must be documents, code or verified, got ${args.profile}`)
    if (args.embeddings !== undefined && args.embeddings !== 'local' && args.embeddings !== 'voyage') {
      throw new TychoraError('E_INVALID_ARGUMENT', `--embeddings must be local or voyage, got ${args.embeddings}`)
    }
    const report = await Workspace.init(args.dir, { profile: args.profile, ...(args.embeddings ? { embeddings: args.embeddings } : {}) })
    if (args.format === 'json') return writeOut(JSON.stringify(report, null, 2))
    writeOut(`Initialised workspace ${report.dir} (schema ${report.schema_version})\n  ${report.created.join('\n  ')}`)
  },
})
