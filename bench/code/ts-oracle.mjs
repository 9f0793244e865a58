// TypeScript/JavaScript oracle for the resolver-agreement bench: the TypeScript compiler's own
// LanguageService ("go to definition"), over every source file of the analysed tree.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative, resolve, sep } from 'node:path'

const require = createRequire(import.meta.url)
export const ts = require('typescript')

const SOURCE = /\.(ts|tsx|js|jsx|mjs|cjs|mts|cts)$/

function listSources(dir, out = []) {
  for (const entry of readdirSync(dir)) {
    if (entry === 'node_modules' || entry.startsWith('.')) continue
    const path = join(dir, entry)
    if (statSync(path).isDirectory()) listSources(path, out)
    else if (SOURCE.test(entry)) out.push(path)
  }
  return out
}

/**
 * The package's own tsconfig when it has one (rxjs maps `rxjs/*` onto its sources with `paths`),
 * else defaults that let plain JS resolve; allowJs either way so .js files join the program.
 */
function compilerOptions(tsconfig) {
  const base = { allowJs: true, checkJs: false, noEmit: true, skipLibCheck: true }
  if (!tsconfig) return { ...base, target: ts.ScriptTarget.ESNext, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Node10 }
  const read = ts.readConfigFile(tsconfig, ts.sys.readFile)
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, dirname(tsconfig))
  // Emit-only settings (incremental, outDir) are irrelevant here and incremental needs a build info path.
  return { ...parsed.options, ...base, incremental: false, composite: false }
}

/** Builds the service once; `definitions(rel, byte)` answers one site. */
export function createTsOracle(root, tsconfig) {
  root = resolve(root)
  const files = listSources(root)
  const texts = new Map()
  const read = (f) => {
    if (!texts.has(f)) texts.set(f, existsSync(f) ? readFileSync(f, 'utf8') : undefined)
    return texts.get(f)
  }
  const options = compilerOptions(tsconfig)
  const host = {
    getScriptFileNames: () => files,
    getScriptVersion: () => '1',
    getScriptSnapshot: (f) => {
      const text = read(f)
      return text === undefined ? undefined : ts.ScriptSnapshot.fromString(text)
    },
    getCurrentDirectory: () => root,
    getCompilationSettings: () => options,
    getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
    fileExists: ts.sys.fileExists,
    readFile: ts.sys.readFile,
    readDirectory: ts.sys.readDirectory,
    directoryExists: ts.sys.directoryExists,
    getDirectories: ts.sys.getDirectories,
  }
  const service = ts.createLanguageService(host, ts.createDocumentRegistry())
  const bytes = new Map()
  const bytesOf = (f) => {
    if (!bytes.has(f)) bytes.set(f, Buffer.from(read(f), 'utf8'))
    return bytes.get(f)
  }

  return {
    definitions(rel, byte) {
      const file = join(root, rel)
      // The service counts UTF-16 code units; our sites are UTF-8 byte offsets.
      const position = bytesOf(file).subarray(0, byte).toString('utf8').length
      const defs = service.getDefinitionAtPosition(file, position) ?? []
      return defs.flatMap((d) => followAlias(service, d)).map((d) => describe(d, root, read))
    },
  }
}

/**
 * "Go to definition" stops at some import aliases (`import * as ops from './operators'` answers the
 * import line). Both oracles are meant to follow imports, so follow those through the type checker.
 */
function followAlias(service, def) {
  if (def.kind !== 'alias') return [def]
  const program = service.getProgram()
  const file = program.getSourceFile(def.fileName)
  const node = file && deepestNodeAt(file, def.textSpan.start)
  const checker = program.getTypeChecker()
  const symbol = node && checker.getSymbolAtLocation(node)
  if (!symbol || !(symbol.flags & ts.SymbolFlags.Alias)) return [def]
  const target = checker.getAliasedSymbol(symbol)
  const decls = target.declarations ?? []
  if (decls.length === 0) return [def]
  return decls.map((decl) => {
    const isModule = ts.isSourceFile(decl)
    const at = isModule ? decl : (decl.name ?? decl)
    return {
      fileName: decl.getSourceFile().fileName,
      textSpan: { start: isModule ? 0 : at.getStart(), length: 0 },
      kind: isModule ? 'module' : ts.SyntaxKind[decl.kind],
      name: isModule ? decl.fileName : target.name,
    }
  })
}

function deepestNodeAt(node, pos) {
  for (const child of node.getChildren()) {
    if (child.getStart() <= pos && pos < child.getEnd()) return deepestNodeAt(child, pos)
  }
  return node
}

function describe(def, root, read) {
  const abs = resolve(def.fileName)
  const inside = abs.startsWith(root + sep)
  const text = read(abs) ?? ''
  const before = text.slice(0, def.textSpan.start)
  return {
    path: inside ? relative(root, abs).split(sep).join('/') : null,
    abs,
    line: before.split('\n').length,
    byte: Buffer.byteLength(before, 'utf8'),
    // A module definition is named by its quoted specifier ("./x"); strip the quotes.
    name: def.kind === 'constructor' ? 'constructor' : def.name.replace(/^["']|["']$/g, ''),
    type: def.kind,
  }
}
