// What pdf.js asks of the platform, answered for passes that read a PDF without drawing it.
//
// pdf.js does two costly things on behalf of a canvas that a pass which only reads positions
// never uses: with font faces disabled it builds an outline of every glyph it meets (a quarter to
// a third of reading some files), and it decodes every image to pixels (its own JavaScript JPEG
// decoder: most of finding where a file's figures are). Both have a documented way round in a
// browser — the page's font set, and the WebCodecs `ImageDecoder` — which Node lacks. Here a font
// set keeps nothing, and an `ImageDecoder` answers JPEGs with a placeholder while placements are
// read, and refuses while pages are drawn, so pdf.js decodes those itself as it always has.

let placementsOnly = false

/** A picture pdf.js is handed instead of decoding a JPEG whose placement is all that is read. */
const PLACEHOLDER = Object.freeze({ placeholder: true })

class PlacementDecoder {
  static isTypeSupported(type: string): Promise<boolean> {
    return Promise.resolve(type === 'image/jpeg')
  }
  async decode(): Promise<{ image: unknown }> {
    if (!placementsOnly) throw new Error('pixels are decoded by pdf.js')
    return { image: PLACEHOLDER }
  }
  close(): void {}
}

class UndrawnFontFace {
  readonly loaded: Promise<unknown>
  constructor(readonly family: string) {
    this.loaded = Promise.resolve(this)
  }
  load(): Promise<unknown> {
    return this.loaded
  }
}

// pdf.js reads whether the platform has an ImageDecoder once, when its worker module loads: this
// module is imported before pdf.js is.
const platform = globalThis as { ImageDecoder?: unknown; FontFace?: unknown }
platform.ImageDecoder ??= PlacementDecoder
platform.FontFace ??= UndrawnFontFace

/** `getDocument` options for a document whose pages are never drawn. */
export function undrawnDocument(): { disableFontFace: false; ownerDocument: Document; isImageDecoderSupported: true } {
  return { disableFontFace: false, ownerDocument: { fonts: { add() {}, delete() {} } } as unknown as Document, isImageDecoderSupported: true }
}

/** `getDocument` options for a document whose pages are drawn (OCR, figures, a cited region). */
export const drawnDocument = { disableFontFace: true, isImageDecoderSupported: true } as const

/**
 * Runs `read` with JPEGs left undecoded (their placement in the operator list is kept; their pixels
 * are a placeholder). Only for a document opened with `undrawnDocument()` and never drawn: pdf.js
 * caches what it decoded per document.
 */
export async function withPlacementsOnly<T>(read: () => Promise<T>): Promise<T> {
  placementsOnly = true
  try {
    return await read()
  } finally {
    placementsOnly = false
  }
}
