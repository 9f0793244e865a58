// One worker thread of the parse-throughput benchmark (bench/code/parse-throughput.mjs): parses its
// share of the files with either the `tree-sitter` Node binding ('node') or web-tree-sitter
// ('wasm'): parse only, or (`walk`) parse and then visit every node through a TreeCursor reading its
// type and byte range, the least work any extractor does. The files arrive once in workerData, so a
// timed run touches only strings already in this thread's memory, as tychora-bench's `analyze-sources` does.
import { createRequire } from 'node:module'
import { parentPort, workerData } from 'node:worker_threads'

const require = createRequire(import.meta.url)
const { runtime, files, grammars, walk } = workerData

/** Pre-order walk of every node; returns the node count so the work cannot be optimised away. */
function visit(tree) {
  const cursor = tree.walk()
  let nodes = 0
  let bytes = 0
  for (;;) {
    nodes += cursor.nodeType.length > 0 ? 1 : 0
    bytes += cursor.endIndex - cursor.startIndex
    if (cursor.gotoFirstChild()) continue
    while (!cursor.gotoNextSibling()) {
      if (!cursor.gotoParent()) {
        cursor.delete?.()
        return nodes + (bytes & 1)
      }
    }
  }
}

/** Absolute wall-clock milliseconds, comparable across threads (each has its own timeOrigin). */
const now = () => performance.timeOrigin + performance.now()

/** A parse function `(path, source) => hasError` for the Node binding; trees are left to the GC
 *  (the binding has no explicit delete). */
function nodeParser() {
  const Parser = require('tree-sitter')
  const languages = {
    python: require('tree-sitter-python'),
    javascript: require('tree-sitter-javascript'),
    typescript: require('tree-sitter-typescript').typescript,
    tsx: require('tree-sitter-typescript').tsx,
  }
  const parser = new Parser()
  let current = null
  return (grammar, source) => {
    if (grammar !== current) {
      parser.setLanguage(languages[grammar])
      current = grammar
    }
    const tree = parser.parse(source)
    if (walk) visit(tree)
    return tree.rootNode.hasError
  }
}

/** The same for web-tree-sitter, loading each grammar's .wasm; every tree is deleted right after
 *  use so the WASM heap stays flat across runs. */
async function wasmParser() {
  const { Parser, Language } = await import('web-tree-sitter')
  await Parser.init()
  const languages = {}
  for (const [grammar, wasmPath] of Object.entries(grammars)) languages[grammar] = await Language.load(wasmPath)
  const parser = new Parser()
  let current = null
  return (grammar, source) => {
    if (grammar !== current) {
      parser.setLanguage(languages[grammar])
      current = grammar
    }
    const tree = parser.parse(source)
    if (walk) visit(tree)
    const hasError = tree.rootNode.hasError
    tree.delete()
    return hasError
  }
}

const parse = runtime === 'wasm' ? await wasmParser() : nodeParser()

parentPort.on('message', (msg) => {
  if (msg !== 'run') return
  const start = now()
  let errors = 0
  for (const [grammar, source] of files) if (parse(grammar, source)) errors++
  const end = now()
  parentPort.postMessage({ start, end, errors })
})
parentPort.postMessage('ready')
