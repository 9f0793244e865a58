import { resolve } from 'node:path'
import { defineCommand } from 'citty'
import type { Receipt } from '../../contracts/ingest.js'
import { visible } from '../../format/terminal.js'
import { Watcher } from '../../service/watch.js'
import { debounceMs, resolveWorkspace, workspaceArg, writeOut } from '../context.js'
import { withTarget } from '../route.js'

export default defineCommand({
  meta: {
    name: 'watch',
    description: 'Keep PATHs in sync from file events: each debounced batch of stable files is one add job (through the daemon when one serves the workspace); Ctrl-C stops',
  },
  args: {
    ...workspaceArg,
    paths: { type: 'positional', required: false, variadic: true, description: 'Files or directories to watch (default: the current directory)' },
    collection: { type: 'string', description: 'Collection the changes are added to, as with add (default "default"): the one the paths were added to' },
    'debounce-ms': { type: 'string', description: 'Quiet time after the last event before a batch (default 300)' },
    format: { type: 'string', description: 'text | json (one receipt per line)', default: 'text' },
  },
  async run({ args }) {
    const dir = await resolveWorkspace(args.workspace)
    const paths = (args.paths === undefined ? [process.cwd()] : [String(args.paths), ...args._.slice(1).map(String)]).map((p) => resolve(p))
    await withTarget(dir, async (target) => {
      const sync = async (targets: string[]): Promise<Receipt> => {
        const request = { paths: targets, ...(args.collection ? { collection: args.collection } : {}) }
        if (target.mode === 'local') return target.workspace.add(request)
        const job = await target.client.addSource(request)
        for (;;) {
          const status = await target.client.jobStatus(job.job_id)
          if (status.receipt) return status.receipt
          if (status.status === 'failed' || status.status === 'interrupted') throw new Error(`job ${job.job_id} ${status.status}: ${status.error ?? ''}`)
          await new Promise((r) => setTimeout(r, 100))
        }
      }
      const report = (receipt: Receipt) => {
        if (args.format === 'json') return writeOut(JSON.stringify(receipt))
        const f = receipt.files
        writeOut(visible(`job ${receipt.job_id} ${receipt.status}: ${f.added} added, ${f.changed} changed, ${f.removed} removed, ${f.unchanged} unchanged${receipt.published ? ` · snapshot ${receipt.snapshot_id}` : ''}`))
      }
      const watcher = new Watcher(paths, sync, {
        debounceMs: debounceMs(args['debounce-ms']),
        ignore: [dir],
        onBatch: (_batch, receipt) => {
          report(receipt as Receipt)
          if (target.mode === 'local') void target.workspace.maintain().catch(() => undefined)
        },
        onError: (error) => process.stderr.write(visible(`watch: ${error instanceof Error ? error.message : String(error)}\n`)),
      })
      // Subscribed before the first sync, so no change made after it is missed (one made during it
      // is synced again in the next batch).
      await watcher.start()
      report(await sync(paths))
      if (target.mode === 'local') await target.workspace.maintain().catch(() => undefined)
      if (args.format !== 'json') process.stderr.write(visible(`watching ${paths.join(', ')} (Ctrl-C stops)\n`))
      await new Promise<void>((done) => {
        const stop = () => {
          void watcher.stop().then(done)
        }
        process.once('SIGINT', stop)
        process.once('SIGTERM', stop)
      })
    })
  },
})
