// A workspace whose artifacts live in an S3 bucket (a real SeaweedFS on loopback): what reads
// artifacts from TypeScript — a PDF region drawn, a whole page drawn for the dashboard, a cited
// chunk shown in its file — reads them through the workspace from the bucket, and nothing is kept
// under the workspace's own artifacts folder.
import { copyFile, mkdir, readFile, readdir, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Workspace } from '../../ts/engine/workspace.js'
import { type Seaweed, startSeaweed, weedMissing } from '../support/seaweed.js'
import { ROOT, nativeMissing, scratch } from './_setup.js'

describe.skipIf(nativeMissing || weedMissing)('artifacts in an S3 bucket', () => {
  let server: Seaweed
  const saved: Record<string, string | undefined> = {}
  beforeAll(async () => {
    server = await startSeaweed()
    for (const [k, v] of Object.entries(server.env)) {
      saved[k] = process.env[k]
      process.env[k] = v
    }
  }, 90_000)
  afterAll(async () => {
    for (const [k, v] of Object.entries(saved)) v === undefined ? delete process.env[k] : (process.env[k] = v)
    await server?.stop()
  })

  it('draws, renders and shows files whose bytes are only in the bucket', async () => {
    const { dir, ws: wsDir } = await scratch()
    const docs = join(dir, 'bucketed')
    await mkdir(docs)
    await copyFile(resolve(ROOT, '../shared/data/docs/pdf/docling/2305.03393v1-pg9.pdf'), join(docs, 'paper.pdf'))
    await writeFile(join(docs, 'notes.md'), '# Notes\n\nOne.\n\nTwo.\n\nThe bucket keeps the glacier notes.\n\nThree.\n')
    await Workspace.init(wsDir)
    await writeFile(join(wsDir, 'workspace.toml'), (await readFile(join(wsDir, 'workspace.toml'), 'utf8')) + server.toml('ts'))
    const ws = await Workspace.open(wsDir)
    try {
      expect((await ws.add({ paths: [docs] })).status).toBe('succeeded')
      expect(
        await readdir(join(wsDir, 'artifacts')).then(
          (e) => e.filter((n) => n !== '.gitkeep'),
          () => [],
        ),
      ).toEqual([])
      // A PDF citation's region, and the whole page, drawn from the bytes in the bucket.
      const hit = (await ws.search({ query: 'table structure recognition', limit: 5 })).segments.find((s) => s.source.path === 'paper.pdf')!
      const drawn = await ws.render(hit.id, { dpi: 72 })
      expect(drawn.png.subarray(1, 4).toString('latin1')).toBe('PNG')
      const page = await ws.renderPage(hit.revision.revision_id, 1, 48)
      expect(page.png.subarray(1, 4).toString('latin1')).toBe('PNG')
      expect(page.transform).toHaveLength(6)
      // A cited chunk shown among its neighbours, read from the bucket.
      const note = (await ws.search({ query: 'glacier notes bucket', limit: 3 })).segments[0]!
      const chunkId = Number(((await ws.inspect(note.id)) as { id: number }).id)
      const context = await ws.fileContext(chunkId, 2)
      expect(context.lines.join('\n')).toContain('The bucket keeps the glacier notes.')
      expect(await ws.readArtifact(note.revision.sha256)).toEqual(await readFile(join(docs, 'notes.md')))
      await expect(ws.readArtifact('0'.repeat(64))).rejects.toMatchObject({ code: 'E_NOT_FOUND' })
      await expect(ws.readArtifact('../x')).rejects.toMatchObject({ code: 'E_INVALID_ARGUMENT' })
    } finally {
      ws.close()
    }
  }, 120_000)
})
