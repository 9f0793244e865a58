import { resolve } from 'node:path'
import { defineCommand } from 'citty'
import type { Receipt } from '../../contracts/ingest.js'
import { TychoraError } from '../../errors.js'
import { oneLine, visible } from '../../format/terminal.js'
import { Watcher } from '../../service/watch.js'
import { debounceMs, resolveWorkspace, workspaceArg, writeOut } from '../context.js'
import { withServedTarget } from '../route.js'

export default defineCommand({
  meta: {
    name: 'watch',
    description:
      'Keep PATHs in sync from file events: each debounced batch of stable files is one add job, through the daemon that serves the workspace, or one this command runs on a free loopback port (other commands go through it meanwhile); Ctrl-C stops',
  },
  args: {
    ...workspaceArg,
    paths: { type: 'positional', required: false, variadic: true, description: 'Files or directories to watch (default: the current directory)' },
    collection: {
      type: 'string',
      description: 'Collection the changes are added to, as with add (default "default"): the one the paths were added to',
    },
    'debounce-ms': { type: 'string', description: 'Quiet time after the last event before a batch (default 300)' },
    format: { type: 'string', description: 'text | json (one receipt per line)', default: 'text' },
  },
  async run({ args }) {
    const dir = await resolveWorkspace(args.workspace)
    const paths = (args.paths === undefined ? [process.cwd()] : [String(args.paths), ...args._.slice(1).map(String)]).map((p) => resolve(p))
    // Armed before anything starts: a Ctrl-C during the first sync still stops the daemon cleanly.
    const stopped = new Promise<void>((done) => {
      process.once('SIGINT', () => done())
      process.once('SIGTERM', () => done())
    })
    // Through the daemon that serves the workspace, or one this command runs: either way each
    // batch is a job on the workspace's single writer and other commands keep working.
    await withServedTarget(dir, async (client, served) => {
      if (served.own) process.stderr.write(visible(`serving ${served.dir} at ${served.url} (pid ${process.pid}) while watching: other tychora commands go through it\n`))
      const sync = async (targets: string[]): Promise<Receipt> => {
        const job = await client.addSource({ paths: targets, ...(args.collection ? { collection: args.collection } : {}) })
        for (;;) {
          const status = await client.jobStatus(job.job_id)
          if (status.receipt) return status.receipt
          if (status.status === 'cancelled') throw new TychoraError('E_CONFLICT', `job ${job.job_id} ${status.error ?? 'cancelled'} before it ran`)
          if (status.status === 'failed' || status.status === 'interrupted') throw new TychoraError('E_INTERNAL', `job ${job.job_id} ${status.status}: ${status.error ?? ''}`)
          await new Promise((r) => setTimeout(r, 100))
        }
      }
      const report = (receipt: Receipt) => {
        if (args.format === 'json') return writeOut(JSON.stringify(receipt))
        const f = receipt.files
        writeOut(
          visible(
            `job ${receipt.job_id} ${receipt.status}: ${f.added} added, ${f.changed} changed, ${f.removed} removed, ${f.unchanged} unchanged${receipt.published ? ` · snapshot ${receipt.snapshot_id}` : ''}`,
          ),
        )
      }
      const watcher = new Watcher(paths, sync, {
        debounceMs: debounceMs(args['debounce-ms']),
        ignore: [dir],
        onBatch: (_batch, receipt) => report(receipt as Receipt),
        onError: (error) => process.stderr.write(`${oneLine(`watch: ${error instanceof Error ? error.message : String(error)}`)}\n`),
      })
      // Subscribed before the first sync, so no change made after it is missed (one made during it
      // is synced again in the next batch).
      await watcher.start()
      try {
        const first = await Promise.race([sync(paths), stopped.then(() => undefined)])
        if (first) {
          report(first)
          if (args.format !== 'json') process.stderr.write(visible(`watching ${paths.join(', ')} (Ctrl-C stops)\n`))
          await stopped
        }
      } finally {
        await watcher.stop()
      }
    })
  },
})
