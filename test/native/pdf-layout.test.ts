// The PDF layout on real files (shared/data/docs/pdf/docling), checked against docling's expected
// Markdown where it has one: headings told by their face as well as their size, right-to-left
// text in logical order with its ligatures whole, and footnote marks kept apart from their word.
import { copyFile, readFile, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { Workspace } from '../../ts/engine/workspace.js'
import { readPdf } from '../../ts/extract/pdf.js'
import { readPictures } from '../../ts/extract/pdf-pictures.js'
import { ROOT, nativeMissing, scratch } from './_setup.js'

const DOCLING = resolve(ROOT, '../shared/data/docs/pdf/docling')
const PLUMBER = resolve(ROOT, '../shared/data/docs/pdf/pdfplumber')
const words = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []
const expectedHeadings = async (name: string) =>
  (await readFile(join(DOCLING, name.replace(/\.pdf$/, '.expected.md')), 'utf8'))
    .split('\n')
    .filter((l) => /^#{1,6}\s/.test(l))
    .map((l) => words(l).join(' '))

async function unitsOf(files: string[]) {
  const { docs, ws: wsDir } = await scratch()
  for (const f of files) await copyFile(f, join(docs, f.split('/').at(-1)!))
  await Workspace.init(wsDir)
  // The text layer is under test, not the figures pass (which draws chelsea_pdta's 69 figures).
  const config = join(wsDir, 'workspace.toml')
  await writeFile(config, (await readFile(config, 'utf8')).replace('pdf_figures = true', 'pdf_figures = false'))
  const ws = await Workspace.open(wsDir)
  try {
    expect((await ws.add({ paths: [docs] })).status).toBe('succeeded')
    const out = new Map<string, Array<{ unit_type: string; text: string; heading_path: string[] }>>()
    for (const s of (await ws.listSources({ limit: 100 })).sources) {
      const revision = await ws.inspect(`revision:${s.revision_id}`)
      if (revision.type !== 'revision') throw new Error('a revision')
      const extraction = await ws.inspect(`extraction:${revision.extractions.at(-1)!.id}`)
      if (extraction.type !== 'extraction') throw new Error('an extraction')
      out.set(s.path, extraction.units)
    }
    return out
  } finally {
    await ws.close()
  }
}

describe.skipIf(nativeMissing)('PDF layout on real documents', () => {
  it('finds headings set bold, italic or in another face at the body size, and not bold run-ins, bullets or contents lines', async () => {
    const names = ['multi_page.pdf', '2305.03393v1-pg9.pdf', 'amt_handbook_sample.pdf', 'normal_4pages.pdf']
    const units = await unitsOf([...names.map((n) => join(DOCLING, n)), join(PLUMBER, 'federal-register-2020-17221.pdf'), join(PLUMBER, 'chelsea_pdta.pdf')])
    const headingsOf = (name: string) =>
      units
        .get(name)!
        .filter((u) => u.unit_type === 'heading')
        .map((u) => words(u.text).join(' '))
    // Bold at the body's size (multi_page: 12 pt bold over a 12 pt body; the paper: TeX's SFBX).
    expect(headingsOf('multi_page.pdf')).toEqual(await expectedHeadings('multi_page.pdf'))
    expect(headingsOf('2305.03393v1-pg9.pdf')).toEqual(await expectedHeadings('2305.03393v1-pg9.pdf'))
    // Italic lines standing alone at the body's size.
    expect(headingsOf('amt_handbook_sample.pdf')).toEqual(await expectedHeadings('amt_handbook_sample.pdf'))
    // A sans face a point larger than the serif body (KoPubDotum over KoPubBatang).
    const korean = headingsOf('normal_4pages.pdf')
    const expected = await expectedHeadings('normal_4pages.pdf')
    expect(expected.filter((h) => korean.includes(h)).length).toBeGreaterThanOrEqual(15)
    expect(korean.filter((h) => expected.includes(h)).length).toBeGreaterThanOrEqual(0.8 * korean.length)
    // The paragraphs under a bold heading carry it in their heading path.
    const para = units.get('multi_page.pdf')!.find((u) => u.text.startsWith('The origins of word processing'))!
    expect(para.heading_path.at(-1)).toBe('Pre-Digital Era (19th - Early 20th Century)')
    // The Federal Register's bold run-in heads are headings; a bold label followed by its value
    // on the same line ("FOR FURTHER INFORMATION CONTACT: Ian ...") is not.
    const register = headingsOf('federal-register-2020-17221.pdf')
    expect(register).toEqual(expect.arrayContaining(['background', 'comments invited', 'costs of compliance', 'regulatory findings']))
    expect(register.some((h) => h.startsWith('for further information contact'))).toBe(false)
    // Bulleted bold items and a table of contents' dotted entries stay what they are.
    const chelsea = units.get('chelsea_pdta.pdf')!.filter((u) => u.unit_type === 'heading')
    expect(chelsea.some((u) => /^[\ue000-\uf8ff•]/u.test(u.text) || /\.{4,}/.test(u.text))).toBe(false)
  })

  it('reads right-to-left text in logical order with lam-alef ligatures whole, and footnote marks as words of their own', async () => {
    const units = await unitsOf([join(DOCLING, 'right_to_left_01.pdf'), join(DOCLING, 'normal_4pages.pdf')])
    const arabic = units.get('right_to_left_01.pdf')!
    const text = arabic.map((u) => u.text).join('\n')
    // pdf.js reverses a ligature's two letters (المشكالت, اإلنتاجية); the words as written:
    expect(text).toContain('المشكلات')
    expect(text).toContain('الإنتاجية')
    expect(text).not.toMatch(/ا[أإآ]ل/)
    // An Arabic sentence naming R and Python keeps the words apart, in reading order.
    expect(arabic.find((u) => u.unit_type === 'heading')!.text).toBe('تحسين الإنتاجية وحل المشكلات من خلال البرمجة بلغة R و Python')
    const expected = words((await readFile(join(DOCLING, 'right_to_left_01.expected.md'), 'utf8')).replace(/^#+\s*/gm, ''))
    const found = new Set(words(text))
    expect(expected.filter((w) => found.has(w)).length / expected.length).toBeGreaterThan(0.95)
    // Korean footnote marks set small and raised: "상해1)나" is read "상해 1) 나".
    const korean = units
      .get('normal_4pages.pdf')!
      .map((u) => u.text)
      .join('\n')
    expect(korean).toMatch(/상해 1\)/)
    expect(korean).not.toMatch(/상해1\)/)
  })

  it('reads a table ruled across but open at its sides: the outer columns end where its rules end', async () => {
    // normal_4pages p.2: a boxed header row over rows with inner verticals only (no rule down
    // either side); the row labels and the last column are cells, as docling's table has them.
    const rows = (await unitsOf([join(DOCLING, 'normal_4pages.pdf')])).get('normal_4pages.pdf')!.filter((u) => u.unit_type === 'table_row')
    const cells = rows.map((u) => (u as unknown as { document: { cells: Array<{ text: string }> } }).document.cells.map((c) => c.text))
    expect(cells[0]).toEqual(['구분', '개정전', '개정후'])
    expect(cells.map((c) => c[0])).toEqual(['구분', '분류', '분류 기준', '대상 질병', 'U코드'])
    expect(cells[1]).toEqual(['분류', '1군 감염병', '1급 감염병'])
    expect(cells.every((c) => c.length === 3)).toBe(true)
  })

  it('draws a rotated page whole with the matrix that puts its boxes on the picture (the dashboard lays unit boxes over it)', async () => {
    // senate-expenditures: /Rotate 90. Its rows run up the page in PDF points; drawn upright, a
    // row is wide and short, and its box lands on the row's ink.
    const bytes = await readFile(join(PLUMBER, 'senate-expenditures.pdf'))
    const base = { bytes, path: 'senate.pdf', max_pages: 2000, page_timeout_ms: 30_000, worker_memory_mb: 256 }
    const rows = (await readPdf(base)).blocks.filter((b) => b.kind === 'table_row')
    const drawn = await readPdf({ ...base, render: { regions: [{ page: 1, box: [-1e6, -1e6, 1e6, 1e6] }], dpi: 72 } })
    const { width, height, parts, png } = drawn.rendered!
    expect(width).toBeGreaterThan(height) // landscape once drawn
    const [a, b, c, d, e, f] = parts[0]!.transform as [number, number, number, number, number, number]
    const onPicture = ([x0, y0, x1, y1]: number[]) => {
      const corners = [
        [x0!, y0!],
        [x1!, y0!],
        [x0!, y1!],
        [x1!, y1!],
      ].map(([x, y]) => [a * x! + c * y! + e, b * x! + d * y! + f])
      const xs = corners.map((p) => p[0]!)
      const ys = corners.map((p) => p[1]!)
      return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)]
    }
    const { loadImage, createCanvas } = await import('@napi-rs/canvas')
    const picture = await loadImage(Buffer.from(png))
    const canvas = createCanvas(picture.width, picture.height)
    canvas.getContext('2d').drawImage(picture, 0, 0)
    const inked = ([l, t, r, bottom]: number[]) => {
      const pixels = canvas.getContext('2d').getImageData(Math.floor(l!), Math.floor(t!), Math.ceil(r! - l!), Math.ceil(bottom! - t!)).data
      let dark = 0
      for (let i = 0; i < pixels.length; i += 4) if (pixels[i]! < 128) dark++
      return dark / (pixels.length / 4)
    }
    for (const row of rows.slice(-3)) {
      const [l, t, r, bottom] = onPicture(row.bbox)
      expect(r! - l!).toBeGreaterThan(500)
      expect(bottom! - t!).toBeLessThan(20)
      expect(l! >= -1 && t! >= -1 && r! <= width + 1 && bottom! <= height + 1).toBe(true)
      expect(inked([l!, t!, r!, bottom!])).toBeGreaterThan(0.02)
    }
  })

  it('reads a landscape page printed sideways upright, tables drawn without rules and headers set sideways, while prose stays prose', async () => {
    const read = async (dir: string, name: string) => {
      const out = await readPdf({
        bytes: await readFile(join(dir, name)),
        path: name,
        max_pages: 2000,
        page_timeout_ms: 30_000,
        worker_memory_mb: 256,
      })
      expect(out.failure).toBeUndefined()
      return out.blocks
    }
    const cellsOf = (blocks: Awaited<ReturnType<typeof read>>) => blocks.filter((b) => b.kind === 'table_row').map((b) => b.cells!.map((c) => c.text))
    // senate-expenditures: /Rotate 90 over text drawn up the page; rules band its sections only.
    const senate = await read(PLUMBER, 'senate-expenditures.pdf')
    const rows = cellsOf(senate)
    expect(rows[0]).toEqual(['DOCUMENT NO.', 'DATE POSTED', 'PAYEE NAME', 'OBLIGATION/SERVICE DATES START END', 'DESCRIPTION', 'AMOUNT ($)'])
    // pdfplumber's test_text_tolerance: the last row's first five cells.
    expect(rows.at(-1)!.slice(0, 5)).toEqual(['DHAW20190070', '09/09/2019', 'CITIBANK - TRAVEL CBA CARD', '08/12/2019', '08/14/2019'])
    // A description wrapped onto a second line stays in its row's cell.
    expect(rows.at(-1)!.at(-2)).toBe('STAFF TRANSPORTATION AIRFARE FOR C WEIHS WASHINGTON DC TO SPRINGFIELD AND RETURN')
    expect(rows).toHaveLength(33)
    // Boxes stay in the page's own space: the text runs up the page, so a row is narrow in x.
    const last = senate.filter((b) => b.kind === 'table_row').at(-1)!
    expect(last.bbox[2]! - last.bbox[0]!).toBeLessThan(20)
    expect(last.bbox[3]! - last.bbox[1]!).toBeGreaterThan(500)
    // table_mislabeled_as_picture: an answer grid with a two-line header, as docling reads it.
    const grid = cellsOf(await read(DOCLING, 'table_mislabeled_as_picture.pdf'))
    expect(grid[0]!.slice(2)).toEqual(['State funded legal aid', 'CSOs'])
    expect(grid.slice(1).map((r) => r.slice(1))).toEqual(
      ['Persons with disabilities', 'Children', 'Women', 'The elderly', 'Migrants', 'Refugees, asylum seekers, or stateless persons', 'Internally displaced persons'].map((n) => [n, '*', '*']),
    )
    // Column headers set sideways go to the cells they run up (redp5110 p.9), as docling has them.
    const redbook = cellsOf(await read(DOCLING, 'redp5110_sampled.pdf'))
    expect(redbook.find((r) => r[0] === 'User action')).toEqual(['User action', '*JOBCTL', 'QIBM_DB_SECADM', 'QIBM_DB_SQLADM', 'QIBM_DB_SYSMON', 'No Authority'])
    // Pages of prose, code, formulas and two columns hold no table.
    for (const name of ['multi_page.pdf', 'amt_handbook_sample.pdf', 'code_and_formula.pdf', 'picture_classification.pdf', 'right_to_left_01.pdf']) {
      expect(cellsOf(await read(DOCLING, name)), name).toEqual([])
    }
  })

  it("draws one file's figure pages on every worker of the pool: the figures one worker draws, in page order", async () => {
    const bytes = await readFile(join(PLUMBER, 'federal-register-2020-17221.pdf'))
    const pooled = await readPdf({ bytes, path: 'notice.pdf', max_pages: 2000, page_timeout_ms: 30_000, worker_memory_mb: 256, pictures: true })
    const alone = await readPictures(new Uint8Array(bytes), undefined, 2000, () => {})
    expect(pooled.failure).toBeUndefined()
    expect(pooled.pictures!.length).toBe(11)
    const places = (o: typeof pooled) => o.pictures!.map((p) => [p.page, ...p.bbox])
    expect(places(pooled)).toEqual(places(alone))
    expect(pooled.pictures!.map((p) => p.png.subarray(0, 4).toString('hex'))).toEqual(alone.pictures!.map((p) => Buffer.from(p.png).subarray(0, 4).toString('hex')))
    const pages = pooled.pictures!.map((p) => p.page)
    expect(pages).toEqual([...pages].sort((a, b) => a - b))
  })
})
