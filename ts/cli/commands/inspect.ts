import { writeFile } from 'node:fs/promises'
import { defineCommand } from 'citty'
import { folderArtifacts } from '../../engine/artifact-reader.js'
import { renderEvidence } from '../../engine/render.js'
import { TychoraError } from '../../errors.js'
import { symbolToMarkdown } from '../../format/symbol.js'
import { resolveWorkspace, workspaceArg, writeOut } from '../context.js'
import { withLocalWorkspace, withTarget } from '../route.js'

export default defineCommand({
  meta: {
    name: 'inspect',
    description:
      'Show a source, revision, extraction (every unit of a parse), unit, chunk, snapshot, job or segment with its provenance; `inspect symbol NAME` for a code symbol; `inspect run RUN_ID` for a recorded query run',
  },
  args: {
    ...workspaceArg,
    id: {
      type: 'positional',
      required: true,
      description: 'source:N | revision:N | extraction:N | unit:N | chunk:N | snapshot:N | job:N | seg_S_C | symbol | run',
    },
    name: {
      type: 'positional',
      required: false,
      description: 'With `symbol`: the symbol name (parse_args, Workspace.search, pkg.mod.Class.method); with `run`: the run id (qr_…)',
    },
    repo: { type: 'string', description: 'With `symbol`: only definitions from the repository (capture root) whose path ends with this' },
    snapshot: { type: 'string', description: 'With `symbol`: pin a published snapshot id' },
    format: { type: 'string', description: 'With `symbol`: md | json (default md)', default: 'md' },
    render: {
      type: 'string',
      description: 'With a unit, chunk or segment of a PDF: draw the page regions it covers to this PNG file (every page it runs over, stacked top to bottom)',
    },
    dpi: { type: 'string', description: 'With --render: resolution, 72 to 600 (default 144)' },
    page: { type: 'string', description: 'With --render: draw only this page of the evidence' },
  },
  async run({ args }) {
    if (args.id === 'run') {
      if (!args.name) throw new TychoraError('E_INVALID_ARGUMENT', 'usage: tychora inspect run RUN_ID')
      // The recorded request, applied scope, snapshot, results and trace of a query run.
      await withLocalWorkspace(args.workspace, async (ws) => writeOut(JSON.stringify(await ws.inspectRun(String(args.name)), null, 2)))
      return
    }
    if (args.page !== undefined && args.render === undefined) throw new TychoraError('E_INVALID_ARGUMENT', '--page goes with --render FILE.png')
    if (args.render !== undefined) {
      const out = String(args.render)
      const dpi = args.dpi === undefined ? undefined : Number(args.dpi)
      const page = args.page === undefined ? undefined : Number(args.page)
      if (page !== undefined && !(Number.isInteger(page) && page >= 1)) throw new TychoraError('E_INVALID_ARGUMENT', '--page must be a page number (1 or more)')
      await withTarget(args.workspace, async (target) => {
        // The workspace reads its artifacts wherever it keeps them; beside a daemon, from the folder.
        const read = target.mode === 'local' ? (sha256: string) => target.workspace.readArtifact(sha256) : folderArtifacts(await resolveWorkspace(args.workspace))
        const drawn = await renderEvidence(read, await target.client.getEvidence(String(args.id)), {
          ...(dpi === undefined ? {} : { dpi }),
          ...(page === undefined ? {} : { page }),
        })
        await writeFile(out, drawn.png)
        const { png: _png, ...about } = drawn
        writeOut(JSON.stringify({ written: out, bytes: drawn.png.length, ...about }, null, 2))
      })
      return
    }
    if (args.id !== 'symbol') {
      await withTarget(args.workspace, async ({ client }) => writeOut(JSON.stringify(await client.getEvidence(String(args.id)), null, 2)))
      return
    }
    if (!args.name) throw new TychoraError('E_INVALID_ARGUMENT', 'usage: tychora inspect symbol NAME [--repo DIR]')
    if (args.format !== 'md' && args.format !== 'json') throw new TychoraError('E_INVALID_ARGUMENT', '--format must be md or json')
    const snapshot = args.snapshot === undefined ? undefined : Number(args.snapshot)
    if (snapshot !== undefined && !Number.isInteger(snapshot)) throw new TychoraError('E_INVALID_ARGUMENT', '--snapshot must be an integer')
    await withTarget(args.workspace, async ({ client }) => {
      const report = await client.inspectSymbol({
        name: String(args.name),
        ...(args.repo ? { repo: String(args.repo) } : {}),
        ...(snapshot === undefined ? {} : { snapshot_id: snapshot }),
      })
      writeOut(args.format === 'json' ? JSON.stringify(report, null, 2) : symbolToMarkdown(report))
    })
  },
})
