import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { open, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLI, cli, nativeMissing, scratch } from './_setup.js'

interface Receipt {
  job_id: number
  files: { added: number; changed: number; removed: number; unchanged: number }
  changed: string[]
  snapshot_id: number | null
}

/** The watcher's receipts (one JSON line each), as they arrive. */
function receipts(child: ChildProcessWithoutNullStreams) {
  const seen: Receipt[] = []
  let buffer = ''
  child.stdout.on('data', (d) => {
    buffer += d
    const lines = buffer.split('\n')
    buffer = lines.pop() ?? ''
    for (const line of lines) if (line.trim()) seen.push(JSON.parse(line) as Receipt)
  })
  return {
    seen,
    async until(predicate: (r: Receipt) => boolean, timeoutMs = 20_000): Promise<Receipt> {
      const start = Date.now()
      for (;;) {
        const hit = seen.find(predicate)
        if (hit) return hit
        if (Date.now() - start > timeoutMs) throw new Error(`no such receipt; seen ${JSON.stringify(seen)}`)
        await new Promise((r) => setTimeout(r, 50))
      }
    },
  }
}

async function search(ws: string, query: string): Promise<Array<{ path: string; text: string }>> {
  const r = JSON.parse((await cli(['search', '-w', ws, query, '--format', 'json', '--limit', '200', '--max-per-source', '0'])).stdout)
  return r.segments.map((s: { source: { path: string }; text: string }) => ({ path: s.source.path, text: s.text }))
}

describe.skipIf(nativeMissing)('tychora watch', () => {
  it('syncs rename-over saves, partial writes, bursts (coalesced) and deletions, and stops on SIGINT', { timeout: 90_000 }, async () => {
    const { docs, ws } = await scratch()
    await cli(['init', ws])
    const child = spawn(process.execPath, [CLI, 'watch', docs, '-w', ws, '--debounce-ms', '150', '--format', 'json'])
    const out = receipts(child)
    await out.until((r) => r.files.added === 3)

    // An editor's save: write a temp file beside it, then rename over the original.
    await writeFile(join(docs, '.http-caching.md.swp'), 'scratch')
    await writeFile(join(docs, 'http-caching.md.tmp'), '# Caching\n\nStale-while-revalidate serves a stored response while it refreshes.\n')
    await rename(join(docs, 'http-caching.md.tmp'), join(docs, 'http-caching.md'))
    await out.until((r) => r.files.changed === 1)

    // A slow writer: four appends to one open file, 10 ms apart, inside the watcher's quiet time
    // (150 ms) and its stable check (200 ms); only the finished file is captured: no later
    // receipt changes it (checked once the watcher stops), and its text is whole.
    const chunks = ['# Slow\n\n', 'The first half of a sentence ', 'and its second half, ', 'ending with the word zeppelin.\n']
    const writer = await open(join(docs, 'slow.md'), 'w')
    for (const chunk of chunks) {
      await writer.write(chunk)
      await new Promise((r) => setTimeout(r, 10))
    }
    await writer.close()
    await out.until((r) => r.files.added === 1)

    // A burst of 60 files: coalesced into a few jobs, not 60.
    const before = out.seen.length
    await Promise.all(Array.from({ length: 60 }, (_, i) => writeFile(join(docs, `burst-${i}.md`), `# Burst ${i}\n\nQuokka census entry ${i}.\n`)))
    const added = () => out.seen.slice(before).reduce((n, r) => n + r.files.added, 0)
    const deadline = Date.now() + 30_000
    while (added() < 60 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
    expect(added()).toBe(60)
    const jobs = out.seen.length - before
    expect(jobs).toBeLessThanOrEqual(6)

    // A deletion syncs the directory, which records the removal.
    await rm(join(docs, 'burst-0.md'))
    await out.until((r) => r.files.removed === 1)

    child.kill('SIGINT')
    const code = await new Promise((r) => child.on('close', r))
    expect(code).toBe(0)
    expect(
      out.seen.some((r) => r.changed.includes('slow.md')),
      'slow.md was never captured half-written',
    ).toBe(false)
    // The watcher held the workspace; now it is free to read.
    expect((await search(ws, 'stale-while-revalidate refreshes')).map((s) => s.path)).toContain('http-caching.md')
    const slow = await search(ws, 'first half of a sentence')
    expect(slow[0]?.path).toBe('slow.md')
    expect(slow[0]?.text).toContain('zeppelin')
    expect((await search(ws, 'quokka census')).length).toBe(59)
  })

  it('adds to the collection it is given, so a tree added to one is not duplicated into the default', { timeout: 60_000 }, async () => {
    const { docs, ws } = await scratch()
    await cli(['init', ws])
    expect((await cli(['add', '-w', ws, '--collection', 'notes', docs])).code).toBe(0)
    const child = spawn(process.execPath, [CLI, 'watch', docs, '-w', ws, '--collection', 'notes', '--debounce-ms', '100', '--format', 'json'])
    const out = receipts(child)
    await out.until((r) => r.files.unchanged === 3)
    await writeFile(join(docs, 'tides.md'), '# Tides\n\nA tide gauge reading at the harbour.\n')
    await out.until((r) => r.files.added === 1)
    child.kill('SIGINT')
    expect(await new Promise((r) => child.on('close', r))).toBe(0)
    const status = JSON.parse((await cli(['manage', 'status', '-w', ws, '--format', 'json'])).stdout)
    expect(Object.fromEntries(status.collections.map((c: { name: string; active_sources: number }) => [c.name, c.active_sources]))).toEqual({
      default: 0,
      notes: 4,
    })
  })
})
