// pdf.js for the reader threads. Its legacy build (the one that runs on Node 20) carries core-js
// polyfills, and core-js replaces `Array.prototype.push` on V8s that fail an edge of the spec
// (pushing past a length of 2^32) and `JSON.parse` with a parser written in JavaScript (for a
// proposal pdf.js does not use). Every push in the thread, pdf.js's and the layout's, then runs
// through JavaScript: 1.4 s of 12.5 s reading the bench corpus in one thread. No array here comes
// near that edge, so the native methods are put back once pdf.js and its worker half have loaded.
import './pdf-undrawn.js'
import type { Canvas } from '@napi-rs/canvas'
import type { RenderParameters } from 'pdfjs-dist/types/src/display/api.js'

type Pdfjs = typeof import('pdfjs-dist/legacy/build/pdf.mjs')

const nativePush = Array.prototype.push
const nativeParse = JSON.parse
let loading: Promise<Pdfjs> | null = null

export function loadPdfjs(): Promise<Pdfjs> {
  loading ??= (async () => {
    const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs')
    // The half pdf.js's fake worker would import at the first document: it sets
    // `globalThis.pdfjsWorker`, which pdf.js then uses, and brings polyfills of its own.
    // @ts-expect-error the worker module ships no types
    await import('pdfjs-dist/legacy/build/pdf.worker.mjs')
    Object.defineProperty(Array.prototype, 'push', { value: nativePush, writable: true, configurable: true, enumerable: false })
    JSON.parse = nativeParse
    return pdfjs
  })()
  return loading
}

/**
 * A canvas of @napi-rs/canvas as pdf.js's render parameters: pdf.js draws on that package in Node
 * (its own canvas factory uses it), but types its parameters with the DOM's canvas, so the one
 * cast lives here.
 */
export function onCanvas(canvas: Canvas): Pick<RenderParameters, 'canvas' | 'canvasContext'> {
  return {
    canvas: canvas as unknown as RenderParameters['canvas'],
    canvasContext: canvas.getContext('2d') as unknown as RenderParameters['canvasContext'],
  }
}
