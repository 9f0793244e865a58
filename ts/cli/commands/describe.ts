import { defineCommand } from 'citty'
import { TychoraError } from '../../errors.js'
import { imageDescriber } from '../../service/providers.js'
import { workspaceArg, writeOut } from '../context.js'
import { withLocalWorkspace } from '../route.js'

const asset = defineCommand({
  meta: {
    name: 'asset',
    description:
      'Have the vision model [descriptions] names describe one picture (an image file, a DOCX picture or a PDF figure, by the sha256 inspect lists under assets). Only collections [descriptions] lists may upload; the description is kept unreviewed and is never cited as the source',
  },
  args: {
    ...workspaceArg,
    sha256: { type: 'positional', required: true, description: "The asset's sha256, or its first 12 or more hex digits" },
    'dry-run': { type: 'boolean', description: 'Check the picture and show what would be sent; send nothing' },
  },
  async run({ args }) {
    await withLocalWorkspace(args.workspace, async (ws) => {
      const report = await ws.describe(String(args.sha256), args['dry-run'] ? undefined : imageDescriber(), { dryRun: Boolean(args['dry-run']) })
      writeOut(JSON.stringify(report, null, 2))
    })
  },
})

const STATUSES = ['accepted', 'rejected', 'unreviewed'] as const

const review = defineCommand({
  meta: { name: 'review', description: "Record a person's review of a description: accepted, rejected or unreviewed" },
  args: {
    ...workspaceArg,
    id: { type: 'positional', required: true, description: 'The description id' },
    status: { type: 'positional', required: true, description: 'accepted | rejected | unreviewed' },
    note: { type: 'string', description: 'Why (kept with the review)' },
  },
  async run({ args }) {
    const id = Number(args.id)
    if (!Number.isInteger(id) || id <= 0) throw new TychoraError('E_INVALID_ARGUMENT', 'the description id is a positive integer')
    const status = String(args.status)
    if (!(STATUSES as readonly string[]).includes(status)) throw new TychoraError('E_INVALID_ARGUMENT', 'the status is accepted, rejected or unreviewed')
    await withLocalWorkspace(args.workspace, async (ws) => {
      writeOut(JSON.stringify(await ws.reviewDescription(id, status as (typeof STATUSES)[number], args.note === undefined ? undefined : String(args.note)), null, 2))
    })
  },
})

export default defineCommand({
  meta: {
    name: 'describe',
    description: 'Descriptions of pictures by a vision model (opt-in, [descriptions] in workspace.toml): describe asset SHA, describe review ID STATUS',
  },
  subCommands: { asset, review },
})
