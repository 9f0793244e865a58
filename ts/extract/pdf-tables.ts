// Ruled tables on a PDF page, found the way pdfplumber's "lines" strategy finds them (its
// algorithm, written here because no maintained JavaScript library does this on pdf.js output):
// the page's strokes and rectangle edges are snapped and joined into edges, their crossings are
// the corners, every smallest rectangle whose four sides are drawn is a cell, cells sharing
// corners form a table, and each text item goes to the cell that holds its middle. Tables drawn
// without rules (columns only by alignment) are found in pdf-aligned.ts, from what is left.
import { appendTo, type Rule } from './pdf-graphics.js'

export interface TextItem {
  str: string
  transform: number[]
  width: number
  /** pdf.js's writing direction of the item. */
  dir?: string
}

export interface Cell {
  /** First grid column (0-based) and how many it spans. */
  col: number
  colSpan: number
  text: string
  /** `[x0, y0, x1, y1]` in points, origin bottom-left. */
  bbox: number[]
}

export interface Table {
  rows: Array<{ cells: Cell[]; bbox: number[] }>
  bbox: number[]
  /** The column boundaries (x), to join a table continued on the next page. */
  columns: number[]
  /** The smallest content-stream index of its text: where it sits in reading order. */
  order: number
}

const SNAP = 3
const JOIN = 3
const TOLERANCE = 3

interface Edge {
  id: number
  at: number // y of a horizontal edge, x of a vertical one
  from: number
  to: number
}

/** Snaps parallel rules within SNAP of each other to one line, and joins pieces that touch. */
function edges(rules: Rule[], orientation: 'h' | 'v', first: number): Edge[] {
  const pieces = rules
    .filter((r) => r.orientation === orientation)
    .map((r) => (orientation === 'h' ? { at: (r.y0 + r.y1) / 2, from: r.x0, to: r.x1 } : { at: (r.x0 + r.x1) / 2, from: r.y0, to: r.y1 }))
    .sort((a, b) => a.at - b.at)
  const clusters: Array<typeof pieces> = []
  for (const p of pieces) {
    const last = clusters.at(-1)
    if (last && p.at - last[0]!.at <= SNAP) last.push(p)
    else clusters.push([p])
  }
  const out: Edge[] = []
  for (const cluster of clusters) {
    const at = cluster.reduce((n, p) => n + p.at, 0) / cluster.length
    cluster.sort((a, b) => a.from - b.from)
    let current: Edge | null = null
    for (const p of cluster) {
      if (current && p.from <= current.to + JOIN) current.to = Math.max(current.to, p.to)
      else {
        current = { id: first + out.length, at, from: p.from, to: p.to }
        out.push(current)
      }
    }
  }
  return out.filter((e) => e.to - e.from >= SNAP)
}

/**
 * A table ruled across but open at its sides (no rule down its left or right edge, a common
 * style) still ends where its horizontal rules end: where two or more rules that a vertical rule
 * crosses start (or end) at the same x with no vertical drawn there, that side is closed by an
 * edge from the lowest of them to the highest. Rules no vertical crosses stay what they are
 * (underlines, separators), so a page's lone rules never make a frame.
 */
function openSides(hs: Edge[], vs: Edge[]): Edge[] {
  const crossed = hs.filter((h) => vs.some((v) => v.at > h.from + TOLERANCE && v.at < h.to - TOLERANCE && h.at >= v.from - TOLERANCE && h.at <= v.to + TOLERANCE))
  const out: Edge[] = []
  for (const end of ['from', 'to'] as const) {
    const groups: Edge[][] = []
    for (const h of [...crossed].sort((a, b) => a[end] - b[end])) {
      const last = groups.at(-1)
      if (last && h[end] - last[0]![end] <= SNAP) last.push(h)
      else groups.push([h])
    }
    for (const group of groups) {
      if (group.length < 2) continue
      const mean = group.reduce((n, h) => n + h[end], 0) / group.length
      // On the x of a vertical drawn nearby (a boxed header row over open-sided rows): one column edge.
      const at = vs.find((v) => Math.abs(v.at - mean) <= SNAP)?.at ?? mean
      // Only across gaps a drawn vertical also spans: two tables one above the other stay two.
      const ys = group.map((h) => h.at).sort((a, b) => a - b)
      const spanned = (lo: number, hi: number) => vs.some((v) => v.from <= lo + TOLERANCE && v.to >= hi - TOLERANCE && group.some((h) => v.at > h.from && v.at < h.to))
      let from = ys[0]!
      for (let i = 1; i <= ys.length; i++) {
        if (i < ys.length && spanned(ys[i - 1]!, ys[i]!)) continue
        const to = ys[i - 1]!
        const drawn = vs.some((v) => v.at === at && v.from <= from + TOLERANCE && v.to >= to - TOLERANCE)
        if (to > from && !drawn) out.push({ id: vs.length + hs.length + out.length, at, from, to })
        from = ys[i] ?? to
      }
    }
  }
  return out
}

interface Corner {
  x: number
  y: number
  h: Set<number>
  v: Set<number>
}

const key = (x: number, y: number) => `${Math.round(x * 10)},${Math.round(y * 10)}`

/** Finds the ruled tables of a page and the indices of the items they took. */
export function findTables(rules: Rule[], items: TextItem[]): { tables: Table[]; used: Set<number> } {
  const used = new Set<number>()
  const hs = edges(rules, 'h', 0)
  const vs = [...edges(rules, 'v', hs.length)]
  if (hs.length < 2 || vs.length < 1) return { tables: [], used }
  vs.push(...openSides(hs, vs))
  if (vs.length < 2) return { tables: [], used }
  const corners = new Map<string, Corner>()
  for (const h of hs) {
    for (const v of vs) {
      if (v.at < h.from - TOLERANCE || v.at > h.to + TOLERANCE || h.at < v.from - TOLERANCE || h.at > v.to + TOLERANCE) continue
      const k = key(v.at, h.at)
      const c = corners.get(k) ?? { x: v.at, y: h.at, h: new Set(), v: new Set() }
      c.h.add(h.id)
      c.v.add(v.id)
      corners.set(k, c)
    }
  }
  const shares = (a: Set<number>, b: Set<number>) => [...a].some((id) => b.has(id))
  // Corners by column (same x) and by row (same y), for the nearest one below and to the right.
  const byX = new Map<number, Corner[]>()
  const byY = new Map<number, Corner[]>()
  for (const c of corners.values()) {
    appendTo(byX, Math.round(c.x * 10), c)
    appendTo(byY, Math.round(c.y * 10), c)
  }
  const cells: Array<{ x0: number; y0: number; x1: number; y1: number }> = []
  for (const c of corners.values()) {
    // PDF space: y grows upward, so "below" is a smaller y.
    const below = (byX.get(Math.round(c.x * 10)) ?? []).filter((o) => o.y < c.y && shares(o.v, c.v)).sort((a, b) => b.y - a.y)
    const right = (byY.get(Math.round(c.y * 10)) ?? []).filter((o) => o.x > c.x && shares(o.h, c.h)).sort((a, b) => a.x - b.x)
    found: for (const b of below) {
      for (const r of right) {
        const opposite = corners.get(key(r.x, b.y))
        if (opposite && shares(opposite.v, r.v) && shares(opposite.h, b.h)) {
          cells.push({ x0: c.x, y0: b.y, x1: r.x, y1: c.y })
          break found
        }
      }
    }
  }
  if (cells.length < 2) return { tables: [], used }

  // Cells that share a corner are one table.
  const parent = cells.map((_, i) => i)
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i]!)))
  const owner = new Map<string, number>()
  cells.forEach((cell, i) => {
    for (const k of [key(cell.x0, cell.y0), key(cell.x0, cell.y1), key(cell.x1, cell.y0), key(cell.x1, cell.y1)]) {
      const j = owner.get(k)
      if (j === undefined) owner.set(k, i)
      else parent[find(i)] = find(j)
    }
  })
  const groups = new Map<number, typeof cells>()
  for (const [i, cell] of cells.entries()) appendTo(groups, find(i), cell)

  // An item's middle, along its own direction: a column header set sideways runs up its cell.
  const centre = items.map((it) => {
    const [a = 1, b = 0, c = 0, d = 1, x = 0, y = 0] = it.transform
    const along = Math.hypot(a, b) || 1
    const size = Math.hypot(c, d) || 1
    return { x: x + ((a / along) * it.width) / 2 + c / 3, y: y + ((b / along) * it.width) / 2 + (d / size) * (size / 3) }
  })
  // Items by the height of their middle, so that a cell looks only at those level with it.
  const byHeight = centre.map((_, i) => i).sort((a, b) => centre[a]!.y - centre[b]!.y)
  const firstAtOrAbove = (y: number) => {
    let [lo, hi] = [0, byHeight.length]
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (centre[byHeight[mid]!]!.y < y) lo = mid + 1
      else hi = mid
    }
    return lo
  }
  const tables: Table[] = []
  for (const group of groups.values()) {
    const columns = [...new Set(group.flatMap((c) => [Math.round(c.x0 * 10), Math.round(c.x1 * 10)]))].sort((a, b) => a - b)
    const tops = [...new Set(group.map((c) => Math.round(c.y1 * 10)))].sort((a, b) => b - a)
    // One column or one row is a frame around text, not a table.
    if (columns.length < 3 || tops.length < 2) continue
    let order = Number.POSITIVE_INFINITY
    const groupItems: number[] = []
    const rows: Table['rows'] = []
    for (const top of tops) {
      const rowCells = group.filter((c) => Math.round(c.y1 * 10) === top).sort((a, b) => a.x0 - b.x0)
      const inside = rowCells.map((c) => {
        const mine: number[] = []
        for (let k = firstAtOrAbove(c.y0); k < byHeight.length && centre[byHeight[k]!]!.y <= c.y1; k++) {
          const i = byHeight[k]!
          const p = centre[i]!
          if (!used.has(i) && p.x >= c.x0 && p.x <= c.x1) mine.push(i)
        }
        // In content order, as the cell's text is read.
        mine.sort((a, b) => a - b)
        for (const i of mine) {
          used.add(i)
          groupItems.push(i)
          order = Math.min(order, i)
        }
        return mine
      })
      for (const lines of implicitRows(
        rowCells.length,
        inside.map((mine) => mine.map((i) => items[i]!)),
      )) {
        rows.push({
          cells: rowCells.map((c, k) => {
            const col = columns.indexOf(Math.round(c.x0 * 10))
            return {
              col,
              colSpan: Math.max(1, columns.indexOf(Math.round(c.x1 * 10)) - col),
              text: cellText(lines[k]!),
              bbox: [c.x0, lines.y0 ?? c.y0, c.x1, lines.y1 ?? c.y1].map((v) => Math.round(v * 100) / 100),
            }
          }),
          bbox: [Math.min(...rowCells.map((c) => c.x0)), lines.y0 ?? Math.min(...rowCells.map((c) => c.y0)), Math.max(...rowCells.map((c) => c.x1)), lines.y1 ?? top / 10].map(
            (v) => Math.round(v * 100) / 100,
          ),
        })
      }
    }
    // A grid whose text sits in one row, or never in two cells of a row, is a frame (a boxed
    // paragraph, a code listing, a page border), not a table.
    const filled = rows.filter((r) => r.cells.some((c) => c.text !== ''))
    // Most of its text in cells across most of its columns: bands ruled across a layout (a
    // report's sections), not a grid; its text is left to the rest of the page (and to tables
    // drawn without rules).
    const chars = (c: Cell) => c.text.replace(/\s/g, '').length
    const total = filled.reduce((n, r) => n + r.cells.reduce((m, c) => m + chars(c), 0), 0)
    const grid = columns.length - 1
    const banded = filled.reduce((n, r) => n + r.cells.reduce((m, c) => m + (c.colSpan >= Math.max(2, grid / 2) ? chars(c) : 0), 0), 0)
    if (filled.length < 2 || !filled.some((r) => r.cells.filter((c) => c.text !== '').length >= 2) || banded * 2 > total) {
      for (const mine of groupItems) used.delete(mine)
      continue
    }
    // A right-to-left table is read from its rightmost column.
    if (groupItems.filter((i) => items[i]!.dir === 'rtl').length * 2 > groupItems.length) for (const r of filled) r.cells.reverse()
    tables.push({
      rows: filled,
      bbox: [columns[0]! / 10, Math.min(...group.map((c) => c.y0)), columns.at(-1)! / 10, tops[0]! / 10].map((v) => Math.round(v * 100) / 100),
      columns: columns.map((c) => c / 10),
      order: Number.isFinite(order) ? order : items.length,
    })
  }
  tables.sort((a, b) => a.order - b.order)
  return { tables, used }
}

type RowLines = TextItem[][] & { y0?: number; y1?: number }

/**
 * A ruled row often holds several rows of data with no rule between them (every fifth line
 * ruled, or none): when three in four of its filled cells have a line at each of the same baselines, each
 * baseline is a row of its own. A header whose cells wrap onto lines that do not line up across
 * the row stays one row.
 */
function implicitRows(cells: number, items: TextItem[][]): RowLines[] {
  const whole: RowLines = items
  const baselines: number[] = []
  for (const y of items
    .flat()
    .map((i) => i.transform[5] ?? 0)
    .sort((a, b) => b - a)) {
    if (baselines.length === 0 || baselines.at(-1)! - y > 2) baselines.push(y)
  }
  const filled = items.filter((c) => c.length > 0).length
  if (baselines.length < 2 || filled < 2) return [whole]
  const at = (i: TextItem) => baselines.findIndex((b) => Math.abs(b - (i.transform[5] ?? 0)) <= 2 || b - (i.transform[5] ?? 0) <= 2)
  const perLine = baselines.map((_, k) => items.filter((c) => c.some((i) => at(i) === k)).length)
  if (perLine.some((n) => n < Math.max(2, Math.ceil(0.75 * filled)))) return [whole]
  return baselines.map((b, k) => {
    const lines: RowLines = Array.from({ length: cells }, (_, c) => items[c]!.filter((i) => at(i) === k))
    const size = Math.max(1, ...lines.flat().map((i) => Math.hypot(i.transform[2] ?? 0, i.transform[3] ?? 0)))
    lines.y0 = b - 0.3 * size
    lines.y1 = b + size
    return lines
  })
}

/**
 * A cell's items as text: lines top to bottom, each line's items in reading order (right to left
 * when most of them are right-to-left script), joined with a space only where there is a gap (an
 * item can be part of a word).
 */
export function cellText(items: TextItem[]): string {
  const rtl = items.filter((i) => i.dir === 'rtl').length * 2 > items.length
  const rows: TextItem[][] = []
  for (const item of [...items].sort((a, b) => (b.transform[5] ?? 0) - (a.transform[5] ?? 0))) {
    const row = rows.at(-1)
    if (row && Math.abs((row[0]!.transform[5] ?? 0) - (item.transform[5] ?? 0)) <= 2) row.push(item)
    else rows.push([item])
  }
  return rows
    .map((row) => {
      row.sort((a, b) => (rtl ? -1 : 1) * ((a.transform[4] ?? 0) - (b.transform[4] ?? 0)))
      let text = ''
      let edge: number | null = null
      for (const item of row) {
        const x = item.transform[4] ?? 0
        const size = Math.hypot(item.transform[2] ?? 0, item.transform[3] ?? 0) || 1
        const gap = edge === null ? 0 : rtl ? edge - (x + item.width) : x - edge
        if (edge !== null && gap > 0.15 * size && !text.endsWith(' ')) text += ' '
        text += item.str
        edge = rtl ? x : x + item.width
      }
      return text
    })
    .join(' ')
    .replace(/\s+/g, ' ')
    .trim()
}
