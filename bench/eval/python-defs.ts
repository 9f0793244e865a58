import { execFile } from 'node:child_process'
import { promisify } from 'node:util'

/** A function or method of a Python file, named as SWE-bench gold functions are (`Class.method`). */
export interface PythonDef {
  name: string
  start: number
  end: number
}

// An independent parser (CPython's ast) gives the evaluation its own notion of "function", so the
// lexical baseline's plain line ranges and the code profile's symbol paths are judged against the
// same definitions. Functions nested in functions belong to their outer function (that is where a
// gold annotation puts them). Files CPython cannot parse (Python 2 syntax in old checkouts) fall
// back to an indentation split, the derivation the README's FTS5 function baseline used.
/**
 * Python that names each function of a file's source: `by_ast(src)` (CPython's ast, decorators
 * included, nested functions inside their class path) and `by_indent(src)` for a file ast cannot
 * parse. Shared with the dev-set builders (bench/code/swe-issue-set.mjs), which add their own driver.
 */
export const DEFINITIONS_PY = String.raw`
import ast, json, re, sys
HEAD = re.compile(r'^(\s*)(?:async\s+def|def|class)\s+(\w+)')
def by_ast(src):
    out = []
    def walk(body, prefix):
        for node in body:
            if isinstance(node, ast.ClassDef):
                walk(node.body, prefix + [node.name])
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = min([node.lineno] + [d.lineno for d in node.decorator_list])
                out.append({'name': '.'.join(prefix + [node.name]), 'start': start, 'end': node.end_lineno})
    walk(ast.parse(src).body, [])
    return out
def by_indent(src):
    lines = src.split('\n')
    out, stack = [], []
    def close(upto, indent):
        while stack and stack[-1][0] >= indent:
            ind, kind, name, start = stack.pop()
            if kind == 'def' and not any(k == 'def' for _, k, _, _ in stack):
                out.append({'name': '.'.join([n for _, _, n, _ in stack] + [name]), 'start': start, 'end': upto})
    last = 0
    for i, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith('#'):
            continue
        indent = len(line) - len(line.lstrip())
        close(last, indent)
        m = HEAD.match(line)
        if m:
            stack.append((indent, 'class' if line.lstrip().startswith('class') else 'def', m.group(2), i))
        last = i
    close(last, -1)
    return sorted(out, key=lambda d: d['start'])
`

const SCRIPT = String.raw`${DEFINITIONS_PY}
root = sys.argv[1]
result = {}
for rel in sys.stdin.read().split('\n'):
    if not rel:
        continue
    try:
        src = open(root + '/' + rel, encoding='utf-8', errors='replace').read()
    except OSError:
        continue
    try:
        result[rel] = by_ast(src)
    except (SyntaxError, ValueError):
        result[rel] = by_indent(src)
json.dump(result, sys.stdout)
`

/** Definitions of the given repo-relative `.py` files under `root`, by file. */
export async function pythonDefinitions(root: string, files: string[]): Promise<Map<string, PythonDef[]>> {
  const run = promisify(execFile)
  const child = run('python3', ['-c', SCRIPT, root], { maxBuffer: 256 * 1024 * 1024 })
  child.child.stdin?.end(files.join('\n'))
  const { stdout } = await child
  return new Map(Object.entries(JSON.parse(stdout) as Record<string, PythonDef[]>))
}

/** Functions overlapping lines [start, end] of a file, in source order. */
export function functionsCovering(defs: PythonDef[] | undefined, start: number, end: number): string[] {
  if (!defs) return []
  // Methods are nested in their class's span; only the innermost function matters, and the walk
  // emits no class entries, so overlap alone is enough.
  return defs.filter((d) => d.start <= end && d.end >= start).map((d) => d.name)
}

/**
 * The gold form of a code-profile symbol path: `Class.method.inner` → the longest prefix that is a
 * function of the file (`Class.method`); a class or module alone is no function.
 */
export function asFunction(defs: PythonDef[] | undefined, symbols: string[]): string | undefined {
  if (symbols.length === 0) return undefined
  if (!defs) return symbols.join('.')
  const names = new Set(defs.map((d) => d.name))
  for (let n = symbols.length; n > 0; n--) {
    const name = symbols.slice(0, n).join('.')
    if (names.has(name)) return name
  }
  return undefined
}
