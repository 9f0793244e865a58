// The frame a page's text is read in. A landscape table is often printed on a portrait page turned
// a quarter (`/Rotate 90` with the text drawn sideways, so that a viewer shows it upright); laid
// out in the page's own axes, each of its words would be a line of its own. The layout therefore
// runs where most of the page's characters are upright, and every box it finds is turned back
// into the page's own space (PDF points, origin bottom-left), where locators live.
import type { Box, Rule } from './pdf-graphics.js'
import type { Item } from './pdf-layout.js'

export interface Frame {
  /** Quarter turns (counter-clockwise) of the text's direction in page space: 0 to 3. */
  turn: number
  /** The page's size in this frame. */
  width: number
  height: number
  item(item: Item): Item
  rule(rule: Rule): Rule
  /** A box `[x0, y0, x1, y1]` of this frame in page space. */
  toPage(bbox: number[]): number[]
}

const COS = [1, 0, -1, 0]
const SIN = [0, 1, 0, -1]

/**
 * The frame where most of the page's characters read left to right, upright. A page whose text
 * is mostly unturned (the common case, and a page turned by `/Rotate` alone) keeps its own.
 */
export function uprightFrame(items: Item[], view: number[]): Frame {
  const chars = [0, 0, 0, 0]
  for (const item of items) {
    const n = item.str.replace(/\s/g, '').length
    if (n === 0) continue
    const [a = 1, b = 0] = item.transform
    const q = ((Math.round(Math.atan2(b, a) / (Math.PI / 2)) % 4) + 4) % 4
    chars[q]! += n
  }
  const total = chars.reduce((s, n) => s + n, 0)
  const best = chars.indexOf(Math.max(...chars))
  const turn = total > 0 && chars[best]! * 2 > total ? best : 0
  return frameFor(turn, view)
}

export function frameFor(turn: number, view: number[]): Frame {
  const [vx0 = 0, vy0 = 0, vx1 = 612, vy1 = 792] = view
  if (turn === 0) {
    const same = (b: number[]) => b
    return { turn, width: vx1 - vx0, height: vy1 - vy0, item: (i) => i, rule: (r) => r, toPage: same }
  }
  const c = COS[turn]!
  const s = SIN[turn]!
  // Turning the text back by its own angle: p' = A p, A = [[c, s], [-s, c]].
  const turned = (x: number, y: number): [number, number] => [c * x + s * y, -s * x + c * y]
  const corners = [turned(vx0, vy0), turned(vx1, vy0), turned(vx0, vy1), turned(vx1, vy1)]
  const minX = Math.min(...corners.map((p) => p[0]))
  const minY = Math.min(...corners.map((p) => p[1]))
  const width = Math.max(...corners.map((p) => p[0])) - minX
  const height = Math.max(...corners.map((p) => p[1])) - minY
  const point = (x: number, y: number): [number, number] => {
    const [u, v] = turned(x, y)
    return [u - minX, v - minY]
  }
  // The inverse: A is a rotation, so its inverse is its transpose.
  const back = (u: number, v: number): [number, number] => {
    const [x, y] = [u + minX, v + minY]
    return [c * x - s * y, s * x + c * y]
  }
  const box = (b: Box, map: (x: number, y: number) => [number, number]): Box => {
    const [p, q] = [map(b.x0, b.y0), map(b.x1, b.y1)]
    return { x0: Math.min(p[0], q[0]), y0: Math.min(p[1], q[1]), x1: Math.max(p[0], q[0]), y1: Math.max(p[1], q[1]) }
  }
  return {
    turn,
    width,
    height,
    item(item) {
      const [a = 1, b = 0, cc = 0, d = 1, e = 0, f = 0] = item.transform
      const [a2, b2] = turned(a, b)
      const [c2, d2] = turned(cc, d)
      const [e2, f2] = point(e, f)
      return { ...item, transform: [a2, b2, c2, d2, e2, f2] }
    },
    rule(rule) {
      const flipped = turn % 2 === 1 ? (rule.orientation === 'h' ? 'v' : 'h') : rule.orientation
      return { ...rule, ...box(rule, point), orientation: flipped }
    },
    toPage(bbox) {
      const [x0 = 0, y0 = 0, x1 = 0, y1 = 0] = bbox
      const b = box({ x0, y0, x1, y1 }, back)
      return [b.x0, b.y0, b.x1, b.y1].map((v) => Math.round(v * 100) / 100)
    },
  }
}
