// The layout of a PDF page's text, from pdf.js's positioned items: items into lines (by
// baseline, rightward or, in right-to-left scripts, leftward), lines into blocks (by the gap the
// document's line pitch allows, size, indentation and face), and which blocks are headings (by
// size above the body's, or by a face apart from the body's: bold, italic, another family).

export interface Item {
  str: string
  transform: number[]
  width: number
  height: number
  hasEOL: boolean
  /** pdf.js's writing direction of the item: right-to-left items continue leftward. */
  dir?: string
  fontName?: string
  /** Set in a bold (or italic) face: from the embedded font's name, the only place PDFs say it. */
  bold?: boolean
  italic?: boolean
  /** The font's name without its subset tag. */
  face?: string
}

export interface Line {
  text: string
  x0: number
  x1: number
  y: number
  size: number
  /** Its first item's place in the page's content stream: reading order. */
  order: number
  /** Characters set in a bold and in an italic face, of `chars`. */
  bold: number
  italic: number
  chars: number
  rtl: boolean
  /** The largest size of its items that hold letters (a big checkbox glyph does not make a heading). */
  letterSize: number
  /** The face of its first item that holds letters. */
  face: string
}

export interface Block {
  lines: Line[]
  page: number
}

export const sizeOf = (t: number[]) => Math.hypot(t[2] ?? 0, t[3] ?? 0) || Math.abs(t[3] ?? 0) || 1

/**
 * Items to lines: an item on the same baseline continuing the line joins it — rightward, or
 * leftward where the text runs right to left (Arabic, Hebrew: pdf.js gives such items in logical
 * order, each one left of the one before).
 */
export function lines(items: Item[], order: (i: number) => number = (i) => i): Line[] {
  const out: Line[] = []
  let current: Line | null = null
  let ended = false
  let lastRtl = false
  let lastRaised = false
  for (const [at, item] of items.entries()) {
    const t = item.transform
    const [x, y] = [t[4] ?? 0, t[5] ?? 0]
    const size = sizeOf(t)
    if (item.str.trim() === '') {
      if (item.hasEOL) ended = true
      if (current && item.str.length > 0 && !current.text.endsWith(' ')) current.text += ' '
      continue
    }
    const rtl = item.dir === 'rtl'
    const baseline = current !== null && !ended && Math.abs(y - current.y) < 0.5 * Math.max(size, current.size)
    const rightward = baseline && x >= current!.x1 - size
    const leftward = baseline && !rightward && (rtl || current!.rtl) && x + item.width <= current!.x0 + size
    const chars = item.str.replace(/\s/g, '').length
    if (current && (rightward || leftward)) {
      const gap = rightward ? x - current.x1 : current.x0 - (x + item.width)
      // Leftward, a change between right-to-left and left-to-right text (an Arabic sentence
      // naming "Python") is a word boundary even where the runs touch.
      const turn = leftward && (item.dir === 'rtl') !== lastRtl
      // A footnote mark set small and raised ("risk¹" drawn as "risk" + "1)") is a word of its own.
      const raised = size < 0.85 * current.size && y > current.y + 0.2 * current.size
      if ((gap > 0.15 * size || turn || raised !== lastRaised) && !current.text.endsWith(' ')) current.text += ' '
      lastRaised = raised
      current.text += item.str
      current.x0 = Math.min(current.x0, x)
      current.x1 = Math.max(current.x1, x + item.width)
      current.size = Math.max(current.size, size)
      current.rtl ||= rtl
      if (/\p{L}/u.test(item.str)) {
        current.letterSize = Math.max(current.letterSize, size)
        current.face ||= item.face ?? ''
      }
    } else {
      if (current) out.push(current)
      lastRaised = false
      current = {
        text: item.str,
        x0: x,
        x1: x + item.width,
        y,
        size,
        order: order(at),
        bold: 0,
        italic: 0,
        chars: 0,
        rtl,
        letterSize: /\p{L}/u.test(item.str) ? size : 0,
        face: /\p{L}/u.test(item.str) ? (item.face ?? '') : '',
      }
    }
    current.chars += chars
    if (item.bold) current.bold += chars
    if (item.italic) current.italic += chars
    ended = item.hasEOL
    lastRtl = rtl
  }
  if (current) out.push(current)
  return out.map((l) => ({ ...l, text: mendRtl(l.text.replace(/\s+/g, ' ').trim(), l.rtl) })).filter((l) => l.text.length > 0)
}

/**
 * pdf.js maps a lam-alef ligature glyph to its two letters before reversing a right-to-left run,
 * so the pair comes out reversed: alef, hamza-alef, lam ("اإل") for lam, hamza-alef ("الإ").
 * Two alefs in a row do not occur in Arabic words, so that order is mended wherever it appears.
 * (The plain lam-alef reversed reads as alef-lam, a common pair, and cannot be told apart.)
 */
const mendRtl = (text: string, rtl: boolean) => (rtl ? text.replace(/ا([أإآ])ل/g, 'ال$1') : text)

/** Most of a line's characters are set bold (a run-in bold phrase is not). */
const boldLine = (l: Line) => l.chars > 0 && l.bold >= 0.97 * l.chars

const italicLine = (l: Line) => l.chars > 0 && l.italic >= 0.97 * l.chars && l.bold < 0.5 * l.chars

/**
 * The document's usual distance between a paragraph's lines, over their size (1.2 in most Latin
 * typesetting; 1.6 and more in Korean and Japanese, where lines are set wide apart).
 */
export function linePitch(pages: Line[][]): number {
  const ratios = new Map<number, number>()
  for (const ls of pages) {
    for (let i = 1; i < ls.length; i++) {
      const [a, b] = [ls[i - 1]!, ls[i]!]
      const gap = a.y - b.y
      if (Math.abs(a.size - b.size) > 0.5 || Math.abs(a.x0 - b.x0) > 2 * a.size || gap < 0.9 * a.size || gap > 3 * a.size) continue
      const r = Math.round((gap / a.size) * 20) / 20
      ratios.set(r, (ratios.get(r) ?? 0) + b.text.length)
    }
  }
  return [...ratios.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 1.2
}

/**
 * Lines to blocks: a new block at a gap wider than the document's line pitch allows (1.6 lines at
 * least), a size change, or a jump across.
 */
export function blocks(pageLines: Line[], page: number, pitch = 1.2): Block[] {
  const wide = Math.max(1.6, 1.25 * pitch)
  const out: Block[] = []
  let current: Block | null = null
  let prev: Line | null = null
  for (const line of pageLines) {
    const size = Math.max(line.size, prev?.size ?? 0)
    const gap = prev ? prev.y - line.y : 0
    const newBlock =
      !current ||
      !prev ||
      gap > wide * size ||
      gap < -0.5 * size || // moved up: a new column or a float
      Math.abs(line.size - prev.size) > 0.9 ||
      Math.abs(line.x0 - prev.x0) > 12 * size ||
      // A line wholly in bold (or italic) after one that is not, or the reverse: a heading set in
      // the body's size stands apart from the paragraph it heads.
      boldLine(line) !== boldLine(prev) ||
      italicLine(line) !== italicLine(prev)
    if (newBlock || !current) {
      current = { lines: [line], page }
      out.push(current)
    } else current.lines.push(line)
    prev = line
  }
  return out
}

/** Joins a block's lines, mending words hyphenated across a line break. */
export function blockText(block: Block): string {
  let text = ''
  for (const line of block.lines) {
    if (text.endsWith('-') && /^[a-z]/.test(line.text)) text = text.slice(0, -1) + line.text
    else text = text ? `${text} ${line.text}` : line.text
  }
  return text
}

/**
 * Bold and italic from a font's name (`ABCDEF+Calibri-Bold`, `TimesNewRomanPS-BoldItalicMT`, TeX's
 * `CMBX10`/`SFBX1000`): PDFs carry a face's weight reliably nowhere else.
 */
const BOLD_FACE = /bold|black|heavy|demi|semibd|[-,]bd\b|\+?(cm|sf|ec|lm\w*)bx/i
/** `MyriadBd`, `HelveticaNeueBd`: a weight abbreviated after the family name. */
const BOLD_SUFFIX = /[a-z](Bd|Blk|Hv)([A-Z]|\b)/
const ITALIC_FACE = /italic|oblique|[-,]it\b|\+?(cm|sf|ec|lm\w*)(ti|sl)\d/i
export function faceOf(objs: { has(id: string): boolean; get(id: string): unknown }, fontName: string | undefined): { bold: boolean; italic: boolean; face: string } {
  if (!fontName || !objs.has(fontName)) return { bold: false, italic: false, face: '' }
  const name = String((objs.get(fontName) as { name?: unknown } | null)?.name ?? '')
  return { bold: BOLD_FACE.test(name) || BOLD_SUFFIX.test(name), italic: ITALIC_FACE.test(name), face: name.replace(/^[A-Z]{6}\+/, '') }
}

/** Characters a document sets in each size and face: what its body looks like. */
export class FaceCount {
  readonly bySize = new Map<number, number>()
  readonly byFace = new Map<string, number>()
  all = 0
  bold = 0
  italic = 0

  add(items: Item[]): void {
    for (const item of items) {
      const n = item.str.replace(/\s/g, '').length
      if (n === 0 || !/\p{L}/u.test(item.str)) continue
      const size = Math.round(sizeOf(item.transform) * 2) / 2
      this.bySize.set(size, (this.bySize.get(size) ?? 0) + n)
      const face = `${size} ${item.face ?? ''}`
      this.byFace.set(face, (this.byFace.get(face) ?? 0) + n)
      this.all += n
      if (item.bold) this.bold += n
      if (item.italic) this.italic += n
    }
  }
}

const sizeOfBlock = (b: Block) => Math.max(...b.lines.map((l) => l.letterSize))

/**
 * The heading level of a block (1 = the largest size), or null for a block that is not one.
 * The body size is the size most characters are set in; larger, short blocks are headings. So is
 * a short block a little larger than the body in another face (a sans heading over a serif
 * body), or one wholly in bold (or a line wholly in italic) at the body's size — where bold is the
 * exception in the document, not its body face — standing apart and not ending as a sentence does.
 */
export function headingRule(faces: FaceCount, blocks: Block[]): (b: Block) => number | null {
  const body = [...faces.bySize.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 10
  const bodyFace =
    [...faces.byFace.entries()]
      .filter(([k]) => k.startsWith(`${body} `))
      .sort((a, b) => b[1] - a[1])[0]?.[0]
      .slice(`${body} `.length) ?? ''
  const otherFace = (b: Block) => bodyFace !== '' && sizeOfBlock(b) >= body * 1.05 && b.lines.length <= 2 && b.lines.every((l) => l.face !== '' && l.face !== bodyFace)
  const emphasised = (b: Block, text: string) =>
    sizeOfBlock(b) >= body * 0.95 &&
    text.length <= 150 &&
    !/[.,;:!?]$/.test(text) &&
    !/\.{4,}|…{2,}/.test(text) && // a table of contents' entry
    !/^[\ue000-\uf8ff•·▪‣◦●○■□]/u.test(text) && // a bulleted item set in bold
    (otherFace(b) ||
      (faces.bold < 0.3 * faces.all && b.lines.length <= 2 && b.lines.every(boldLine)) ||
      (faces.italic < 0.3 * faces.all && b.lines.length === 1 && italicLine(b.lines[0]!) && text.length <= 80 && /^[\p{Lu}\p{N}]/u.test(text)))
  const isHeading = (b: Block) => {
    const text = blockText(b)
    if (!/\p{L}/u.test(text)) return false
    return (sizeOfBlock(b) >= body * 1.15 && text.length <= 200 && b.lines.length <= 3) || emphasised(b, text)
  }
  const sizes = [...new Set(blocks.filter(isHeading).map((b) => Math.round(sizeOfBlock(b) * 2) / 2))].sort((a, b) => b - a)
  return (b) => (isHeading(b) ? Math.min(6, sizes.indexOf(Math.round(sizeOfBlock(b) * 2) / 2) + 1) : null)
}
