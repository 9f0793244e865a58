import { describe, expect, it } from 'vitest'
import { photographic } from '../../ts/extract/pdf-pictures.js'

/** RGBA pixels from a function of (x, y) giving [r, g, b]. */
function pixels(width: number, height: number, colour: (x: number, y: number) => [number, number, number]): Uint8ClampedArray {
  const data = new Uint8ClampedArray(width * height * 4)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const [r, g, b] = colour(x, y)
      data.set([r, g, b, 255], (y * width + x) * 4)
    }
  }
  return data
}

describe('how a PDF figure is kept: JPEG for a photograph, PNG for the rest', () => {
  it('keeps a chart (a few flat colours, anti-aliased edges included) as PNG', () => {
    // White background, three bars, a grey axis, and a ramp of edge shades along each bar.
    const chart = pixels(400, 300, (x, y) => {
      if (y === 280) return [90, 90, 90]
      const bar = Math.floor(x / 100)
      const top = 60 + bar * 60
      if (x % 100 < 60 && y > top && y < 280) return bar === 0 ? [30, 120, 200] : bar === 1 ? [220, 80, 40] : [60, 170, 90]
      if (x % 100 === 60 && y > top && y < 280) return [200 + (y % 50), 200 + (y % 50), 255]
      return [255, 255, 255]
    })
    expect(photographic(chart, 400, 300)).toBe(false)
  })

  it('keeps a photograph as JPEG, a greyscale one too', () => {
    let seed = 7
    const noise = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % 40) - 20
    const colour = pixels(320, 240, (x, y) => [Math.min(255, Math.max(0, (x * 255) / 320 + noise())), Math.min(255, Math.max(0, (y * 255) / 240 + noise())), 128 + noise()])
    expect(photographic(colour, 320, 240)).toBe(true)
    const grey = pixels(320, 240, (x, y) => {
      const v = Math.min(255, Math.max(0, ((x + y) * 255) / 560 + noise()))
      return [v, v, v]
    })
    expect(photographic(grey, 320, 240)).toBe(true)
  })
})
