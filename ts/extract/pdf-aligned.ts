// Tables drawn without rules: columns shown only by alignment (a spending report, a survey's
// answer grid). pdfplumber's "text" strategy finds them by words lining up, and so finds columns
// in any page of prose; this detector is narrower, so that prose stays prose:
// - a row is a line of the content stream cut by wide gaps (GAP em) into three or more pieces;
// - a table is three or more such rows close together, with at most two other lines between them;
// - its columns are the x ranges its rows cover, split where (almost) none of them has text
//   (a header over two columns does not join them: it spans them);
// - a line with fewer pieces is part of the table only if each piece stays in one column: a
//   wrapped cell continues the row above it, a line with text in the first column starts a row;
//   a line of prose across the columns ends the table.
import { sizeOf } from './pdf-layout.js'
import type { Cell, Table, TextItem } from './pdf-tables.js'
import { cellText } from './pdf-tables.js'

/** A gap this many em wide (in the line's size) parts two cells; a word space is a quarter em. */
const GAP = 1.0
const MIN_ROWS = 3
const MIN_COLUMNS = 3
/** Lines between two rows that may belong to them (wrapped cells). */
const MAX_BETWEEN = 3
const MAX_WIDTH = 14_400

interface Piece {
  x0: number
  x1: number
  items: number[]
}

interface Row {
  y: number
  size: number
  pieces: Piece[]
  items: number[]
}

const xOf = (i: TextItem) => i.transform[4] ?? 0
const yOf = (i: TextItem) => i.transform[5] ?? 0

/** Items in content order into lines: consecutive items on one baseline, in any x order. */
function rowsOf(items: TextItem[]): Row[] {
  const out: Row[] = []
  let current: { y: number; size: number; items: number[] } | null = null
  const close = () => {
    if (current) out.push(cut(current, items))
  }
  items.forEach((item, i) => {
    // A hostile file's positions can be anything: only finite ones are laid out here.
    if (item.str.trim() === '' || !Number.isFinite(xOf(item) + yOf(item) + item.width + sizeOf(item.transform))) return
    const size = sizeOf(item.transform)
    if (current && Math.abs(yOf(item) - current.y) < 0.5 * Math.max(size, current.size)) current.items.push(i)
    else {
      close()
      current = { y: yOf(item), size, items: [i] }
    }
  })
  close()
  return out
}

function cut(line: { y: number; items: number[] }, items: TextItem[]): Row {
  const sorted = [...line.items].sort((a, b) => xOf(items[a]!) - xOf(items[b]!))
  const sizes = sorted.map((i) => sizeOf(items[i]!.transform)).sort((a, b) => a - b)
  const size = sizes[Math.floor(sizes.length / 2)]!
  const pieces: Piece[] = []
  for (const i of sorted) {
    const item = items[i]!
    const last = pieces.at(-1)
    if (last && xOf(item) - last.x1 < GAP * size) {
      last.x1 = Math.max(last.x1, xOf(item) + item.width)
      last.items.push(i)
    } else pieces.push({ x0: xOf(item), x1: xOf(item) + item.width, items: [i] })
  }
  return { y: line.y, size, pieces, items: line.items }
}

/** Column ranges: where the rows' pieces lie, split by gaps at least half an em wide that (almost) no row crosses. */
function columnsOf(rows: Row[]): Array<[number, number]> {
  const lo = Math.floor(Math.min(...rows.flatMap((r) => r.pieces.map((p) => p.x0))))
  const hi = Math.ceil(Math.max(...rows.flatMap((r) => r.pieces.map((p) => p.x1))))
  // Wider than any page can be (PDF's limit is 14,400 points): no columns to find.
  if (!(hi - lo <= MAX_WIDTH)) return []
  const cover = new Array<number>(hi - lo + 1).fill(0)
  for (const r of rows) for (const p of r.pieces) for (let x = Math.ceil(p.x0); x <= Math.floor(p.x1); x++) cover[x - lo]!++
  const allowed = Math.floor(0.1 * rows.length)
  const minGap = Math.max(2, 0.5 * Math.min(...rows.map((r) => r.size)))
  const out: Array<[number, number]> = []
  let start: number | null = null
  let gapFrom: number | null = null
  for (let x = lo; x <= hi; x++) {
    const filled = cover[x - lo]! > allowed
    if (filled) {
      if (start === null) start = x
      else if (gapFrom !== null && x - gapFrom < minGap) {
        // A narrow gap: still the same column.
      } else if (gapFrom !== null) {
        out.push([start, gapFrom])
        start = x
      }
      gapFrom = null
    } else if (start !== null && gapFrom === null) gapFrom = x
  }
  if (start !== null) out.push([start, gapFrom ?? hi])
  return out
}

/** The columns a piece lies in: the first and the last it overlaps by more than a little. */
function span(p: Piece, columns: Array<[number, number]>, size: number): [number, number] {
  // Overlapping a column by more than an em, or half the piece's or the column's width.
  const hit = columns.flatMap(([a, b], k) => (Math.min(b, p.x1) - Math.max(a, p.x0) > Math.min(size, 0.5 * (p.x1 - p.x0), 0.5 * (b - a)) ? [k] : []))
  if (hit.length === 0) {
    // A piece in a gap (a short mark): the nearest column.
    const mid = (p.x0 + p.x1) / 2
    let best = 0
    columns.forEach(([a, b], k) => {
      const d = Math.min(Math.abs(mid - a), Math.abs(mid - b))
      const bd = Math.min(Math.abs(mid - columns[best]![0]), Math.abs(mid - columns[best]![1]))
      if (d < bd) best = k
    })
    return [best, best]
  }
  return [hit[0]!, hit.at(-1)!]
}

/** Finds tables drawn without rules among a page's items (in content order) and the items they took. */
export function findAlignedTables(items: TextItem[]): { tables: Table[]; used: Set<number> } {
  const used = new Set<number>()
  const tables: Table[] = []
  const rows = rowsOf(items)
  const isRow = (r: Row) => r.pieces.length >= MIN_COLUMNS
  let i = 0
  while (i < rows.length) {
    if (!isRow(rows[i]!)) {
      i++
      continue
    }
    // A run: rows going down the page close together, with at most MAX_BETWEEN other lines
    // between two of them; those lie below the row before them, in any order (a header's
    // wrapped cells are often drawn bottom line first).
    let end = i
    let lowest = rows[i]!.y
    let between = 0
    let k = i + 1
    for (; k < rows.length; k++) {
      const r = rows[k]!
      const size = Math.max(r.size, rows[end]!.size)
      const above = isRow(r) ? lowest : rows[end]!.y
      if (r.y > above - 0.3 * size || lowest - r.y > 4 * size) break
      if (isRow(r)) {
        end = k
        between = 0
      } else if (++between > MAX_BETWEEN) break
      lowest = Math.min(lowest, r.y)
    }
    const found = tableOf(rows, i, end, k - 1, items)
    if (found) {
      tables.push(found.table)
      for (const n of found.items) used.add(n)
      i = found.next
    } else i = end + 1
  }
  return { tables, used }
}

function tableOf(rows: Row[], first: number, lastRow: number, last: number, items: TextItem[]): { table: Table; items: number[]; next: number } | null {
  const body = rows.slice(first, lastRow + 1).filter((r) => r.pieces.length >= MIN_COLUMNS)
  if (body.length < MIN_ROWS) return null
  const columns = columnsOf(body)
  if (columns.length < MIN_COLUMNS) return null
  // Each piece's columns, worked out once.
  const spans = new Map<Piece, [number, number]>()
  const spanOf = (p: Piece, r: Row) => {
    let s = spans.get(p)
    if (!s) spans.set(p, (s = span(p, columns, r.size)))
    return s
  }
  const fits = (r: Row) => r.pieces.every((p) => spanOf(p, r)[0] === spanOf(p, r)[1])
  // The lines of the table: its rows, lines between them that stay in their columns (a line of
  // prose across the columns ends the table), and a header of fewer cells just above the first row.
  let end = first
  for (let k = first + 1; k <= last; k++) {
    if (rows[k]!.pieces.length < MIN_COLUMNS && !fits(rows[k]!)) break
    end = k
  }
  // A last line alone in the first column is what follows the table (a note, a source), not a row.
  const firstColumnOnly = (r: Row) => r.pieces.length === 1 && spanOf(r.pieces[0]!, r)[0] === 0
  while (end > first && rows[end]!.pieces.length < MIN_COLUMNS && firstColumnOnly(rows[end]!)) end--
  // A header of fewer cells: up to MAX_BETWEEN lines just before the first row in the content
  // stream, above it and close (in any order: wrapped header cells), each in one column, together
  // in two columns or more.
  let start = first
  let top = rows[first]!.y
  for (let k = first - 1; k >= Math.max(0, first - MAX_BETWEEN); k--) {
    const r = rows[k]!
    if (r.y <= rows[first]!.y + 0.3 * r.size || r.y - top > 4 * r.size || !fits(r) || !within(r, columns)) break
    start = k
    top = Math.max(top, r.y)
  }
  const headerColumns = new Set(rows.slice(start, first).flatMap((r) => r.pieces.map((p) => spanOf(p, r)[0])))
  if (headerColumns.size < 2) start = first
  const lines = rows.slice(start, end + 1)
  const kept = lines.filter((r) => r.pieces.length >= MIN_COLUMNS)
  if (kept.length < MIN_ROWS) return null
  // Enough of a grid: three rows with text in three columns.
  const filledRows = kept.filter((r) => new Set(r.pieces.map((p) => spanOf(p, r)[0])).size >= MIN_COLUMNS)
  if (filledRows.length < MIN_ROWS) return null

  type Built = { pieces: Array<{ from: number; to: number; items: number[] }>; y0: number; y1: number }
  const built: Built[] = []
  lines.forEach((r, n) => {
    const at = start + n
    const placed = r.pieces.map((p) => {
      const [from, to] = spanOf(p, r)
      return { from, to, items: p.items }
    })
    const y0 = r.y - 0.3 * r.size
    const y1 = r.y + r.size
    // Header lines above the first row are one row; below it, a line of three or more cells, or
    // with text in the first column, starts a row, and any other continues the row above (a wrapped cell).
    const startsRow = at === start || at === first || (at > first && (r.pieces.length >= MIN_COLUMNS || placed.some((p) => p.from === 0)))
    if (startsRow) built.push({ pieces: placed, y0, y1 })
    else {
      const row = built.at(-1)!
      row.pieces.push(...placed)
      row.y0 = Math.min(row.y0, y0)
      row.y1 = Math.max(row.y1, y1)
    }
  })

  const taken = lines.flatMap((r) => r.items)
  const rtl = taken.filter((i) => items[i]!.dir === 'rtl').length * 2 > taken.length
  const round = (v: number) => Math.round(v * 100) / 100
  const tableRows: Table['rows'] = built.map((row) => {
    const cells: Cell[] = []
    for (let c = 0; c < columns.length; ) {
      const mine = row.pieces.filter((p) => p.from === c)
      const to = Math.max(c, ...mine.map((p) => p.to))
      const owned = mine.flatMap((p) => p.items)
      cells.push({
        col: c,
        colSpan: to - c + 1,
        text: cellText(owned.map((i) => items[i]!)),
        bbox: [columns[c]![0], row.y0, columns[to]![1], row.y1].map(round),
      })
      c = to + 1
    }
    // Pieces that start inside a cell spanning them join it.
    for (const p of row.pieces) {
      const cell = cells.find((x) => x.col < p.from && x.col + x.colSpan > p.from)
      if (cell) cell.text = [cell.text, cellText(p.items.map((i) => items[i]!))].filter(Boolean).join(' ')
    }
    if (rtl) cells.reverse()
    return { cells, bbox: [columns[0]![0], row.y0, columns.at(-1)![1], row.y1].map(round) }
  })
  const table: Table = {
    rows: tableRows,
    bbox: [columns[0]![0], Math.min(...built.map((r) => r.y0)), columns.at(-1)![1], Math.max(...built.map((r) => r.y1))].map(round),
    columns: [columns[0]![0], ...columns.slice(1).map(([a]) => a), columns.at(-1)![1]],
    order: Math.min(...taken),
  }
  return { table, items: taken, next: end + 1 }
}

/** Every piece of the line lies within the columns' outer edges. */
const within = (r: Row, columns: Array<[number, number]>) => r.pieces.every((p) => p.x0 >= columns[0]![0] - r.size && p.x1 <= columns.at(-1)![1] + r.size)
