// OCR of an image file, inside a reader worker (pdf-worker.ts). The bytes are never the file as a
// stranger made it: the core decoded it (memory-safe Rust, under the pixel and allocation limits)
// and wrote a grey PNG. @napi-rs/canvas's native decoders crash the whole process on some inputs
// (a plain TIFF did, from a worker thread), so they only ever see that PNG.
import type { PdfOutput } from './pdf.js'
import { type OcrSettings, recognizePage, tesseractVersion, withinTime } from './ocr.js'

/** Recognizes the text in one picture; boxes are in pixels, origin bottom-left (as PDF points are). */
export async function readImage(png: Uint8Array, settings: OcrSettings, onPage: (page: number, ocr?: boolean) => void): Promise<PdfOutput> {
  const extractor = `ocr.tesseract.js@${tesseractVersion()}/${settings.languages.join('+')}/${settings.dpi}dpi`
  const answer = (blocks: PdfOutput['blocks'], diagnostics: string[]): PdfOutput => ({
    extractor,
    pages: 1,
    pages_without_text: blocks.length > 0 ? [] : [1],
    blocks,
    furniture: [],
    diagnostics,
  })
  const { createCanvas, loadImage } = await import('@napi-rs/canvas')
  const picture = await loadImage(Buffer.from(png.buffer, png.byteOffset, png.byteLength))
  const canvas = createCanvas(picture.width, picture.height)
  canvas.getContext('2d').drawImage(picture, 0, 0)
  onPage(0, true)
  let result: Awaited<ReturnType<typeof recognizePage>> | 'late'
  try {
    result = await withinTime(recognizePage({ canvas, toPdfPoint: (x, y) => [x, picture.height - y] }, settings), settings.page_timeout_ms)
  } catch (error) {
    return {
      ...answer([], []),
      failure: { code: 'E_INVALID_ARGUMENT', message: `OCR could not run: ${error instanceof Error ? error.message : String(error)}` },
    }
  }
  if (result === 'late') return answer([], [`OCR took longer than [ocr] page_timeout_ms = ${settings.page_timeout_ms}; the image is found by its name only`])
  const blocks = result.paragraphs.map((p) => ({ kind: 'paragraph' as const, text: p.text, page: 1, bbox: p.bbox, ocr_confidence: p.confidence }))
  const turned = result.turned !== 0 ? `; read turned ${result.turned}°` : ''
  return answer(blocks, [blocks.length > 0 ? `${blocks.length} paragraph(s) read by OCR, confidence ${result.confidence.toFixed(2)}${turned}` : 'OCR found no text in the image'])
}
