import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { QueryResultSchema } from '../../ts/contracts/result.js'
import { Workspace } from '../../ts/engine/workspace.js'
import { TychoraError } from '../../ts/errors.js'
import { nativeMissing, scratch } from './_setup.js'

describe.skipIf(nativeMissing)('library: workspace, add, search, citations', () => {
  it('returns cited evidence whose locator slices the original bytes', async () => {
    const { docs, ws: dir } = await scratch()
    await Workspace.init(dir)
    const ws = await Workspace.open(dir)
    try {
      const events: string[] = []
      const receipt = await ws.add({ paths: [docs] }, { onProgress: (p) => events.push(p.phase) })
      expect(receipt.status).toBe('succeeded')
      expect(receipt.files.added).toBe(3)
      expect(events).toContain('index')

      const result = await ws.search({ query: 'conditional request revalidates stale response', limit: 3 })
      expect(QueryResultSchema.safeParse(result).success).toBe(true)
      const top = result.segments[0]!
      expect(top.source.path).toBe('http-caching.md')
      expect(top.locator.heading_path).toEqual(['HTTP caching notes', 'Validation'])
      const bytes = await readFile(join(docs, 'http-caching.md'))
      expect(bytes.subarray(top.locator.byte_start, top.locator.byte_end).toString()).toBe(top.text)
      expect(top.citation).toBe(`http-caching.md:${top.locator.line_start}-${top.locator.line_end}`)
      expect(result.citations[0]!.sha256).toBe(top.revision.sha256)

      // The exact channel: a JSON id finds its record, cited by JSON pointer.
      const exact = await ws.search({ query: 'TERM-REVISION' })
      expect(exact.segments[0]!.locator.json_pointer).toBe('/1')
      expect(exact.segments[0]!.channels.find((c) => c.channel === 'exact')?.rank).toBe(1)

      // Filters apply before ranking: a kind filter leaves only that kind (a source with no kind: its format).
      const textOnly = await ws.search({ query: 'symbolic links root', kinds: ['text'] })
      expect(textOnly.segments.every((s) => s.source.kind === null && s.source.format === 'text')).toBe(true)
      expect(textOnly.segments.length).toBeGreaterThan(0)

      // The budget counts the rendered output.
      const tight = await ws.search({ query: 'cache response', budget_tokens: 60 })
      expect(tight.budget_contract.used_tokens).toBeLessThanOrEqual(60)
      expect(tight.budget_contract.truncated).toBe(true)

      const inspected = await ws.inspect(top.id)
      expect(inspected.type).toBe('chunk')
      const status = await ws.status()
      expect(status.counts.query_runs).toBe(4)
    } finally {
      ws.close()
    }
  })

  it('maps errors to stable codes', async () => {
    const { dir, ws: wsDir } = await scratch()
    await expect(Workspace.open(join(dir, 'nope'))).rejects.toMatchObject({ code: 'E_NOT_FOUND' })
    await Workspace.init(wsDir)
    await expect(Workspace.init(wsDir)).rejects.toMatchObject({ code: 'E_CONFLICT' })
    const ws = await Workspace.open(wsDir)
    const second = await Workspace.open(wsDir).catch((e: unknown) => e)
    expect(second).toBeInstanceOf(TychoraError)
    expect((second as TychoraError).code).toBe('E_LOCKED')
    expect((second as TychoraError).message).toContain(String(process.pid))
    await expect(ws.search({ query: 'x', snapshot_id: 42 })).rejects.toMatchObject({ code: 'E_NOT_FOUND' })
    await expect(ws.search({ query: 'x', collections: ['missing'] })).rejects.toMatchObject({ code: 'E_NOT_FOUND' })
    await expect(ws.search({ query: '' })).rejects.toMatchObject({ code: 'E_INVALID_ARGUMENT' })
    await expect(ws.inspect('bogus')).rejects.toMatchObject({ code: 'E_INVALID_ARGUMENT' })
    ws.close()
    ws.close()
    await expect(ws.search({ query: 'x' })).rejects.toMatchObject({ code: 'E_CLOSED' })
    // After close the lock is free again.
    const reopened = await Workspace.open(wsDir)
    reopened.close()
  })

  it('concurrent searches run while an add is in flight', async () => {
    const { docs, ws: dir } = await scratch()
    await Workspace.init(dir)
    const ws = await Workspace.open(dir)
    try {
      await ws.add({ paths: [docs] })
      for (let i = 0; i < 40; i++) await writeFile(join(docs, `extra-${i}.md`), `# Extra ${i}\n\nfreshness lifetime note ${i}\n`)
      const adding = ws.add({ paths: [docs] })
      const searches = await Promise.all(Array.from({ length: 16 }, () => ws.search({ query: 'freshness lifetime' })))
      expect(searches.every((r) => r.segments.length > 0)).toBe(true)
      const receipt = await adding
      expect(receipt.files.added).toBe(40)
    } finally {
      ws.close()
    }
  })
})
