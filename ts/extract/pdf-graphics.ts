// What a page draws, read from pdf.js's operator list: where each run of text starts and how it is
// painted (render mode, fill colour, fill alpha), the filled areas behind it, the images, and the
// straight horizontal and vertical strokes and rectangle edges that rule tables. pdf.js's text
// content has positions but not paint, so text that is drawn but never seen (an injection a
// person reading the page cannot see) can only be told apart here.
//
// The walk follows the PDF graphics state the way pdf.js's canvas does (save/restore, cm, form
// XObjects; BT, Tm, Td, TD, T*, TL, Tf, Tc, Tw, Tz, Ts), but draws nothing.

type Matrix = [number, number, number, number, number, number]

/** Appends `value` to the list under `key` (grouping without copying the list each time). */
export function appendTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key)
  if (list) list.push(value)
  else map.set(key, [value])
}

export interface TextRun {
  text: string
  /** Origin in page space (points, origin bottom-left). */
  x: number
  y: number
  /** Type size in page space. */
  size: number
  /** Why a reader cannot see it, or null. */
  hidden: string | null
}

export interface Box {
  x0: number
  y0: number
  x1: number
  y1: number
}

/** A straight axis-aligned line in page space: a stroke, or a rectangle's edge. */
export interface Rule extends Box {
  orientation: 'h' | 'v'
}

export interface PageGraphics {
  runs: TextRun[]
  rules: Rule[]
  images: Box[]
  /**
   * Right-to-left words as pdf.js's text content spells them, to their right spelling, for words
   * that hold a ligature glyph (lam-alef): pdf.js joins the glyphs' letters and then reverses the
   * characters, so a ligature's two letters come out swapped. Here the glyphs are reversed instead.
   */
  rtlWords: Map<string, string>
}

interface OperatorList {
  fnArray: number[]
  argsArray: unknown[]
}

/** A glyph of Arabic or Hebrew letters (and their presentation forms). */
const RTL_LETTERS = /^[\u0590-\u05ff\u0600-\u06ff\u0750-\u077f\ufb1d-\ufdff\ufe70-\ufeff]+$/

const IDENTITY: Matrix = [1, 0, 0, 1, 0, 0]
const multiply = (m: Matrix, n: Matrix): Matrix => [
  m[0] * n[0] + m[1] * n[2],
  m[0] * n[1] + m[1] * n[3],
  m[2] * n[0] + m[3] * n[2],
  m[2] * n[1] + m[3] * n[3],
  m[4] * n[0] + m[5] * n[2] + n[4],
  m[4] * n[1] + m[5] * n[3] + n[5],
]
const apply = (m: Matrix, x: number, y: number): [number, number] => [m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]]
const isMatrix = (v: unknown): v is Matrix =>
  (Array.isArray(v) || ArrayBuffer.isView(v)) && (v as ArrayLike<unknown>).length === 6 && Array.from(v as ArrayLike<unknown>).every((n) => typeof n === 'number')
const matrix = (v: unknown): Matrix => Array.from(v as ArrayLike<number>) as Matrix

/** `#rrggbb` to its luminance-weighted channels, 0–255. */
const rgb = (hex: string): [number, number, number] | null => {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex)
  return m ? [parseInt(m[1]!, 16), parseInt(m[2]!, 16), parseInt(m[3]!, 16)] : null
}
/** Two colours a reader cannot tell apart on the page (each channel within 8 of 255). */
const indistinct = (a: string, b: string) => {
  const [p, q] = [rgb(a), rgb(b)]
  return p !== null && q !== null && p.every((v, i) => Math.abs(v - q[i]!) <= 8)
}

interface State {
  ctm: Matrix
  fill: string
  fillAlpha: number
  mode: number
  fontSize: number
  leading: number
  charSpacing: number
  wordSpacing: number
  hScale: number
  rise: number
}

/** Reads one page's operator list. `OPS` is pdf.js's operator table. */
export function readGraphics(list: OperatorList, OPS: Record<string, number>, pageBox: Box): PageGraphics {
  const runs: TextRun[] = []
  const rules: Rule[] = []
  const images: Box[] = []
  const rtlWords = new Map<string, string>()
  // Filled areas and images in drawing order, to know what is behind a run when it is drawn (an
  // image's colour is unknown: text over one is never judged by colour).
  const fills: Array<Box & { color: string }> = []
  const stack: State[] = []
  let s: State = {
    ctm: IDENTITY,
    fill: '#000000',
    fillAlpha: 1,
    mode: 0,
    fontSize: 0,
    leading: 0,
    charSpacing: 0,
    wordSpacing: 0,
    hScale: 1,
    rise: 0,
  }
  let tm: Matrix = IDENTITY
  let tlm: Matrix = IDENTITY

  const boxOf = (m: Matrix, x0: number, y0: number, x1: number, y1: number): Box => {
    const pts = [apply(m, x0, y0), apply(m, x1, y0), apply(m, x0, y1), apply(m, x1, y1)]
    const xs = pts.map((p) => p[0])
    const ys = pts.map((p) => p[1])
    return { x0: Math.min(...xs), y0: Math.min(...ys), x1: Math.max(...xs), y1: Math.max(...ys) }
  }
  const moveText = (x: number, y: number) => {
    tlm = multiply([1, 0, 0, 1, x, y], tlm)
    tm = tlm
  }
  const background = (x: number, y: number) => {
    for (let i = fills.length - 1; i >= 0; i--) {
      const f = fills[i]!
      if (x >= f.x0 && x <= f.x1 && y >= f.y0 && y <= f.y1) return f.color
    }
    return '#ffffff'
  }
  const why = (x: number, y: number): string | null => {
    if (s.mode === 3 || s.mode === 7) return 'invisible render mode'
    if (s.fillAlpha === 0 && s.mode !== 1 && s.mode !== 5) return 'fully transparent'
    if ((s.mode === 0 || s.mode === 4) && indistinct(s.fill, background(x, y))) return 'same colour as its background'
    return null
  }
  const showText = (glyphs: unknown[]) => {
    const trm = multiply(multiply([s.fontSize * s.hScale, 0, 0, s.fontSize, 0, s.rise], tm), s.ctm)
    const [x, y] = [trm[4], trm[5]]
    let text = ''
    let advance = 0
    let word: string[] = []
    const endWord = () => {
      if (word.length > 1 && word.some((u) => u.length > 1) && word.every((u) => RTL_LETTERS.test(u))) {
        const right = [...word].reverse().join('')
        rtlWords.set([...word.join('')].reverse().join(''), right)
      }
      word = []
    }
    for (const g of glyphs) {
      if (typeof g === 'number') {
        advance -= g * 0.001 * s.fontSize
        continue
      }
      const glyph = g as { unicode?: string; width?: number; isSpace?: boolean } | null
      if (!glyph) continue
      const unicode = glyph.unicode ?? ''
      if (glyph.isSpace || unicode.trim() === '') endWord()
      else word.push(unicode)
      text += unicode
      advance += (glyph.width ?? 0) * 0.001 * s.fontSize + s.charSpacing + (glyph.isSpace ? s.wordSpacing : 0)
    }
    endWord()
    tm = multiply([1, 0, 0, 1, advance * s.hScale, 0], tm)
    if (text.trim() === '') return
    runs.push({ text, x, y, size: Math.hypot(trm[2], trm[3]), hidden: why(x, y) })
  }
  const paths = (paint: number, buffer: ArrayLike<number> | null, minMax: ArrayLike<number> | null) => {
    const filled = paint !== OPS.stroke && paint !== OPS.closeStroke && paint !== OPS.endPath
    const stroked = paint !== OPS.fill && paint !== OPS.eoFill && paint !== OPS.endPath
    if (filled && minMax && minMax.length === 4 && s.fillAlpha > 0) {
      fills.push({ ...boxOf(s.ctm, minMax[0]!, minMax[1]!, minMax[2]!, minMax[3]!), color: s.fill })
    }
    if (!buffer || (!filled && !stroked)) return
    // moveTo 0, lineTo 1, curveTo 2, quadraticCurveTo 3, closePath 4 (pdf.js's DrawOPS).
    let start: [number, number] | null = null
    let at: [number, number] | null = null
    const segment = (a: [number, number], b: [number, number]) => {
      const [p, q] = [apply(s.ctm, ...a), apply(s.ctm, ...b)]
      const [dx, dy] = [Math.abs(p[0] - q[0]), Math.abs(p[1] - q[1])]
      const box = { x0: Math.min(p[0], q[0]), y0: Math.min(p[1], q[1]), x1: Math.max(p[0], q[0]), y1: Math.max(p[1], q[1]) }
      if (dy < 1 && dx >= 2) rules.push({ ...box, orientation: 'h' })
      else if (dx < 1 && dy >= 2) rules.push({ ...box, orientation: 'v' })
    }
    for (let i = 0; i < buffer.length; ) {
      const op = buffer[i]!
      if (op === 0) {
        start = at = [buffer[i + 1]!, buffer[i + 2]!]
        i += 3
      } else if (op === 1) {
        const to: [number, number] = [buffer[i + 1]!, buffer[i + 2]!]
        if (at) segment(at, to)
        at = to
        i += 3
      } else if (op === 2) {
        at = [buffer[i + 5]!, buffer[i + 6]!]
        i += 7
      } else if (op === 3) {
        at = [buffer[i + 3]!, buffer[i + 4]!]
        i += 5
      } else {
        if (at && start) segment(at, start)
        at = start
        i += 1
      }
    }
    // A thin filled rectangle is a rule drawn as a fill (how most office suites draw borders).
    if (filled && minMax && minMax.length === 4) {
      const b = boxOf(s.ctm, minMax[0]!, minMax[1]!, minMax[2]!, minMax[3]!)
      if (b.y1 - b.y0 < 2 && b.x1 - b.x0 >= 2) rules.push({ ...b, orientation: 'h' })
      else if (b.x1 - b.x0 < 2 && b.y1 - b.y0 >= 2) rules.push({ ...b, orientation: 'v' })
    }
  }

  list.fnArray.forEach((fn, i) => {
    const args = (list.argsArray[i] ?? []) as unknown[]
    switch (fn) {
      case OPS.save:
        stack.push({ ...s })
        break
      case OPS.restore:
        s = stack.pop() ?? s
        break
      case OPS.transform:
        if (isMatrix(args)) s.ctm = multiply(matrix(args), s.ctm)
        break
      case OPS.paintFormXObjectBegin:
        stack.push({ ...s })
        if (isMatrix(args[0])) s.ctm = multiply(matrix(args[0]), s.ctm)
        break
      case OPS.paintFormXObjectEnd:
        s = stack.pop() ?? s
        break
      case OPS.beginText:
        tm = tlm = IDENTITY
        break
      case OPS.setTextMatrix:
        if (isMatrix(args[0])) tm = tlm = matrix(args[0])
        else if (isMatrix(args)) tm = tlm = matrix(args)
        break
      case OPS.moveText:
        moveText(Number(args[0]) || 0, Number(args[1]) || 0)
        break
      case OPS.setLeadingMoveText:
        s.leading = -(Number(args[1]) || 0)
        moveText(Number(args[0]) || 0, Number(args[1]) || 0)
        break
      case OPS.nextLine:
        moveText(0, -s.leading)
        break
      case OPS.setLeading:
        s.leading = Number(args[0]) || 0
        break
      case OPS.setFont:
        s.fontSize = Number(args[1]) || 0
        break
      case OPS.setCharSpacing:
        s.charSpacing = Number(args[0]) || 0
        break
      case OPS.setWordSpacing:
        s.wordSpacing = Number(args[0]) || 0
        break
      case OPS.setHScale:
        s.hScale = (Number(args[0]) || 100) / 100
        break
      case OPS.setTextRise:
        s.rise = Number(args[0]) || 0
        break
      case OPS.setTextRenderingMode:
        s.mode = Number(args[0]) || 0
        break
      case OPS.setFillRGBColor:
        s.fill = typeof args[0] === 'string' ? args[0] : s.fill
        break
      case OPS.setFillColorN:
        // A pattern or an unconverted colour space: not a colour to compare.
        s.fill = typeof args[0] === 'string' ? args[0] : 'pattern'
        break
      case OPS.setGState:
        for (const entry of (args[0] ?? []) as unknown[]) {
          if (Array.isArray(entry) && entry[0] === 'ca' && typeof entry[1] === 'number') s.fillAlpha = entry[1]
        }
        break
      case OPS.showText:
      case OPS.showSpacedText:
        if (Array.isArray(args[0])) showText(args[0])
        break
      case OPS.constructPath:
        paths(Number(args[0]), Array.isArray(args[1]) ? ((args[1][0] ?? null) as ArrayLike<number> | null) : null, (args[2] ?? null) as ArrayLike<number> | null)
        break
      case OPS.paintImageXObject:
      case OPS.paintInlineImageXObject:
      case OPS.paintImageMaskXObject:
        images.push(boxOf(s.ctm, 0, 0, 1, 1))
        fills.push({ ...images.at(-1)!, color: 'image' })
        break
      default:
    }
  })
  // Invisible text over a picture of the page is how scanners store OCR: it is the page's text.
  const overImage = (r: TextRun) => images.some((b) => r.x >= b.x0 - 2 && r.x <= b.x1 + 2 && r.y >= b.y0 - 2 && r.y <= b.y1 + 2)
  for (const r of runs) {
    if (r.hidden === 'invisible render mode' && overImage(r)) r.hidden = null
    else if (r.hidden === null && (r.x < pageBox.x0 - 1 || r.x > pageBox.x1 + 1 || r.y < pageBox.y0 - 1 || r.y > pageBox.y1 + 1)) r.hidden = 'outside the page'
    else if (r.hidden === null && r.size > 0 && r.size < 1) r.hidden = 'type under 1 pt'
  }
  return { runs, rules, images, rtlWords }
}
