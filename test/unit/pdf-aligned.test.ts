// The two layout steps that need no PDF to check: the upright frame a page's text is laid out in
// (pdf-orient.ts) and tables drawn without rules (pdf-aligned.ts), on items shaped as pdf.js
// gives them (the real files are read in test/native/pdf-layout.test.ts).
import { describe, expect, it } from 'vitest'
import { findAlignedTables } from '../../ts/extract/pdf-aligned.js'
import { frameFor, uprightFrame } from '../../ts/extract/pdf-orient.js'
import type { Item } from '../../ts/extract/pdf-layout.js'

const SIZE = 8
/** An item as pdf.js gives it: `width` along the text, half an em a character. */
const item = (str: string, x: number, y: number): Item => ({
  str,
  transform: [SIZE, 0, 0, SIZE, x, y],
  width: 0.5 * SIZE * str.length,
  height: SIZE,
  hasEOL: false,
})

describe('the upright frame', () => {
  it('turns text drawn a quarter turn upright and its boxes back into page space', () => {
    const view = [0, 0, 612, 792]
    // Text running up the page (a landscape table on a portrait page with /Rotate 90).
    const sideways: Item = { str: 'DHAW20190001', transform: [0, 5, -5, 0, 108.7, 77.7], width: 38.5, height: 5, hasEOL: false }
    const frame = uprightFrame([sideways, { ...sideways, str: 'x' }], view)
    expect(frame.turn).toBe(1)
    expect([frame.width, frame.height]).toEqual([792, 612])
    const upright = frame.item(sideways)
    expect(upright.transform.map((v) => Math.round(v * 10) / 10)).toEqual([5, 0, 0, 5, 77.7, 503.3])
    // A box in the frame goes back to the page box it came from.
    expect(frame.toPage([77.7, 503.3, 116.2, 508.3])).toEqual([103.7, 77.7, 108.7, 116.2])
    // A horizontal rule in the frame was a vertical one on the page.
    expect(frame.rule({ orientation: 'v', x0: 100, y0: 50, x1: 100.5, y1: 500 }).orientation).toBe('h')
  })

  it('maps every box back to itself for each quarter turn, on a page whose box does not start at 0', () => {
    const view = [18, 36, 630, 828]
    for (const turn of [0, 1, 2, 3]) {
      const frame = frameFor(turn, view)
      const box = [120, 200, 180.5, 212]
      const it0 = item('x', box[0]!, box[1]!)
      // The item's origin lies inside the frame's page.
      const [, , , , x, y] = frame.item(it0).transform
      expect(x).toBeGreaterThanOrEqual(-0.01)
      expect(y).toBeGreaterThanOrEqual(-0.01)
      expect(x).toBeLessThanOrEqual(frame.width + 0.01)
      expect(y).toBeLessThanOrEqual(frame.height + 0.01)
      // Page box → frame box → page box.
      const corners = [frame.item(item('x', box[0]!, box[1]!)).transform, frame.item(item('x', box[2]!, box[3]!)).transform]
      const inFrame = [Math.min(corners[0]![4]!, corners[1]![4]!), Math.min(corners[0]![5]!, corners[1]![5]!), Math.max(corners[0]![4]!, corners[1]![4]!), Math.max(corners[0]![5]!, corners[1]![5]!)]
      expect(frame.toPage(inFrame)).toEqual(box)
    }
  })

  it('keeps the page frame when no turn holds most of the characters', () => {
    const up = (s: string): Item => ({ ...item(s, 10, 10), transform: [0, SIZE, -SIZE, 0, 10, 10] })
    expect(uprightFrame([up('abcd'), item('abcd', 10, 10)], [0, 0, 612, 792]).turn).toBe(0)
    expect(uprightFrame([], [0, 0, 612, 792]).turn).toBe(0)
  })
})

describe('tables drawn without rules', () => {
  // Three columns at x = 50, 200, 350; rows 12 pt apart, drawn row by row.
  const row = (y: number, a: string, b: string, c: string) => [item(a, 50, y), item(b, 200, y), item(c, 350, y)]

  it('finds the columns by alignment, a header of fewer cells above, and wrapped cells as part of their row', () => {
    const items = [
      item('Amount', 350, 712),
      item('Payee', 200, 724),
      item('paid', 350, 700),
      ...row(688, 'D-1', 'CITIBANK', '920.68'),
      item('airfare to Kansas City', 200, 676),
      ...row(664, 'D-2', 'CITIBANK', '907.96'),
      ...row(652, 'D-3', 'AMTRAK', '618.00'),
      item('train fare', 200, 640),
    ]
    const { tables, used } = findAlignedTables(items)
    expect(tables).toHaveLength(1)
    const cells = tables[0]!.rows.map((r) => r.cells.map((c) => c.text))
    expect(cells).toEqual([
      ['', 'Payee', 'Amount paid'],
      ['D-1', 'CITIBANK airfare to Kansas City', '920.68'],
      ['D-2', 'CITIBANK', '907.96'],
      ['D-3', 'AMTRAK train fare', '618.00'],
    ])
    expect(used.size).toBe(items.length)
    // Each cell's box is its column by its row.
    const first = tables[0]!.rows[1]!.cells[0]!
    expect(first.bbox[0]).toBe(50)
    expect(first.bbox[1]).toBeLessThan(688)
    expect(first.bbox[3]).toBeGreaterThan(688)
  })

  it('ends the table at a line of prose across its columns, and leaves prose alone', () => {
    const prose = (y: number) => item('This paragraph runs across the page as prose does and', 50, y)
    const items = [...row(700, 'a', 'b', 'c'), ...row(688, 'd', 'e', 'f'), ...row(676, 'g', 'h', 'i'), prose(664), prose(652)]
    const { tables, used } = findAlignedTables(items)
    expect(tables).toHaveLength(1)
    expect(tables[0]!.rows).toHaveLength(3)
    expect(used.has(9) || used.has(10)).toBe(false)
    // Lines of words with word spaces, and a two-column page, are no table.
    const spaced = (y: number, ws: string[]) => {
      let x = 50
      return ws.map((w) => {
        const it = item(w, x, y)
        x += it.width + 0.3 * SIZE
        return it
      })
    }
    const words = [0, 1, 2, 3, 4].flatMap((k) => spaced(700 - 12 * k, ['one', 'two', 'three', 'four', 'five', 'six']))
    expect(findAlignedTables(words).tables).toHaveLength(0)
    const columns = [0, 1, 2, 3, 4].flatMap((k) => [item('left column text of a page', 50, 700 - 12 * k), item('right column text of it', 320, 700 - 12 * k)])
    expect(findAlignedTables(columns).tables).toHaveLength(0)
  })

  it('bounds what hostile positions cost: far-flung or non-finite items find no table and throw nothing', () => {
    const far = [0, 1, 2].flatMap((k) => [item('a', 50, 700 - 12 * k), item('b', 200, 700 - 12 * k), item('c', 1e12, 700 - 12 * k)])
    expect(findAlignedTables(far).tables).toHaveLength(0)
    const broken = [0, 1, 2].flatMap((k) => [item('a', Number.NaN, 700 - 12 * k), item('b', Number.POSITIVE_INFINITY, 700 - 12 * k), item('c', 350, Number.NaN)])
    expect(findAlignedTables(broken).tables).toHaveLength(0)
  })

  it('needs three rows: two aligned lines are not a table', () => {
    expect(findAlignedTables([...row(700, 'a', 'b', 'c'), ...row(688, 'd', 'e', 'f')]).tables).toHaveLength(0)
  })
})
