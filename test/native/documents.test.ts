import { copyFile, mkdir, readFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { EvidenceSchema } from '../../ts/contracts/evidence.js'
import { QueryResultSchema } from '../../ts/contracts/result.js'
import { Workspace } from '../../ts/engine/workspace.js'
import { ROOT, cli, nativeMissing, scratch } from './_setup.js'

const ASVS = resolve(ROOT, '../shared/data/docs/owasp-asvs-5.0/OWASP_Application_Security_Verification_Standard_5.0.0_en.docx')

describe.skipIf(nativeMissing)('Word documents through the library and the CLI', () => {
  it('cites a DOCX by its own places, and the locator slices the derived text', async () => {
    const { dir, ws: wsDir } = await scratch()
    const docs = join(dir, 'standards')
    await mkdir(docs)
    await copyFile(ASVS, join(docs, 'asvs.docx'))
    await Workspace.init(wsDir)
    const ws = await Workspace.open(wsDir)
    try {
      const receipt = await ws.add({ paths: [docs] })
      expect(receipt.status).toBe('succeeded')
      const result = await ws.search({ query: 'dynamically building JavaScript content JSON injection output encoding', limit: 5 })
      expect(QueryResultSchema.safeParse(result).success).toBe(true)
      const hit = result.segments.find((s) => s.text.includes('1.2.3'))!
      expect(hit.source.kind).toBe('docx')
      expect(hit.citation).toMatch(/^asvs\.docx (¶\d+|table \d+ rows? \d+)/)
      expect(hit.locator.document?.first.part).toBe('body')
      expect(hit.locator.heading_path.at(-1)).toMatch(/^V1\.2 /)

      const revision = await ws.inspect(`revision:${hit.revision.revision_id}`)
      if (revision.type !== 'revision') throw new Error('a revision')
      const brief = revision.extractions[0]!.document!
      const derived = await readFile(join(wsDir, 'artifacts/sha256', brief.derived_sha256.slice(0, 2), brief.derived_sha256))
      expect(derived.subarray(hit.locator.byte_start, hit.locator.byte_end).toString()).toBe(hit.text)

      // Every unit of the parse, in order, with a row's cells.
      const extraction = await ws.inspect(`extraction:${revision.extractions[0]!.id}`)
      expect(EvidenceSchema.safeParse(extraction).success).toBe(true)
      if (extraction.type !== 'extraction') throw new Error('an extraction')
      const row = extraction.units.find((u) => u.unit_type === 'table_row' && u.text.includes('1.2.3'))!
      expect(row.document!.cells.some((c) => c.text.includes('1.2.3'))).toBe(true)
      expect(extraction.units.filter((u) => u.unit_type === 'heading').length).toBeGreaterThan(50)
    } finally {
      await ws.close()
    }
  })

  it('reports a file whose extension lies, and keeps going', async () => {
    const { dir, docs, ws } = await scratch()
    await copyFile(resolve(ROOT, '../shared/data/docs/pdf/docling/2305.03393v1-pg9.pdf'), join(docs, 'report.docx'))
    expect((await cli(['init', ws])).code).toBe(0)
    const add = await cli(['add', docs, '-w', ws])
    expect(add.stdout + add.stderr).toMatch(/report\.docx.*named as a DOCX but its bytes are a PDF/)
    const search = await cli(['search', 'conditional request revalidates stale response', '-w', ws, '--format', 'json'], { cwd: dir })
    expect(JSON.parse(search.stdout).segments.length).toBeGreaterThan(0)
  })
})
