import { createCanvas } from '@napi-rs/canvas'
import { afterEach, describe, expect, it } from 'vitest'
import { dropRecognizer, recognizePage, withinTime } from '../../ts/extract/ocr.js'

/** A white page with one word: read with low confidence upright, so the reader tries it turned. */
function page() {
  const canvas = createCanvas(600, 200)
  const ctx = canvas.getContext('2d')
  ctx.fillStyle = 'white'
  ctx.fillRect(0, 0, 600, 200)
  ctx.fillStyle = 'black'
  ctx.font = '14px sans-serif'
  ctx.fillText('ok', 280, 100)
  return { canvas, toPdfPoint: (x: number, y: number) => [x, 200 - y] }
}

const settings = { languages: ['eng'], dpi: 300, page_timeout_ms: 60_000 }

describe('OCR past its time', () => {
  afterEach(() => dropRecognizer())

  it('stops the page it abandoned without an uncaught error or rejection, and the next page reads with a fresh recognizer', async () => {
    const uncaught: unknown[] = []
    const onError = (error: unknown) => uncaught.push(error)
    process.on('uncaughtException', onError)
    process.on('unhandledRejection', onError)
    try {
      // Late at once: the recognizer is stopped while the page is still being read.
      expect(await withinTime(recognizePage(page(), settings), 1)).toBe('late')
      // The abandoned page runs on; a terminated tesseract.js worker asked for another turn used to
      // fail outside any promise the reader awaits (and kill the reader worker it ran in).
      await new Promise((resolve) => setTimeout(resolve, 4000))
      expect(uncaught).toEqual([])
      const next = await withinTime(recognizePage(page(), settings), 60_000)
      expect(next).not.toBe('late')
      expect(next === 'late' ? -1 : next.confidence).toBeGreaterThanOrEqual(0)
    } finally {
      process.off('uncaughtException', onError)
      process.off('unhandledRejection', onError)
    }
  }, 90_000)
})
