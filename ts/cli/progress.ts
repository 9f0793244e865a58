import type { Progress } from '../contracts/ingest.js'

/** A one-line progress bar on a TTY (stderr); silent otherwise, so pipes and CI logs stay clean. */
export function createProgress(stream: NodeJS.WriteStream = process.stderr): { update(p: Progress): void; done(): void } {
  if (!stream.isTTY) return { update() {}, done() {} }
  let last = 0
  return {
    update(p) {
      const now = Date.now()
      if (now - last < 80 && p.done !== p.total) return
      last = now
      const width = 28
      const ratio = p.total > 0 ? Math.min(1, p.done / p.total) : 0
      const filled = Math.round(ratio * width)
      stream.write(`\r${p.phase.padEnd(8)} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${p.done}/${p.total}\x1b[K`)
    },
    done() {
      stream.write('\r\x1b[K')
    },
  }
}
