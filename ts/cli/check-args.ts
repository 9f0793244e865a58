import type { ArgDef, ArgsDef, CommandDef } from 'citty'
import { TychoraError } from '../errors.js'

/** Any command, whatever arguments it declares: citty's `CommandDef` is invariant in them. */
// biome-ignore lint/suspicious/noExplicitAny: the one place the CLI names a command of unknown arguments
export type AnyCommand = CommandDef<any>

/**
 * citty accepts any flag and any number of positionals, so a typo (`--profil code`) silently
 * turned into a different command. This refuses, before citty runs, every word a command does not
 * declare in its `args`, the same way for every command.
 *
 * What a command accepts: its flags by name (and the camelCase/kebab-case spellings citty also
 * reads), their aliases (`-w`; single-letter aliases may be grouped or take a glued value, as
 * node's parseArgs allows), `--no-x` for a boolean `x`, `--flag=value`; and as many positionals
 * as it declares, unless its last positional is declared `variadic: true` (`search QUERY...`),
 * which takes the remaining words. After `--` every word is a positional. `--help` and `-h` never
 * get here (main answers them first).
 */
export async function checkArgs(root: AnyCommand, argv: string[]): Promise<void> {
  let cmd = root
  let words = argv
  let path = [await commandName(root)]
  for (;;) {
    const defs = ((await resolve(cmd.args)) ?? {}) as ArgsDef
    const subCommands = await resolve(cmd.subCommands)
    if (subCommands && Object.keys(subCommands).length > 0) {
      // A command with subcommands: its own flags, then the subcommand's name (citty's rule).
      const { positionals, first } = scan(words, defs, true)
      const name = positionals[0]
      if (name === undefined) return // citty reports the missing command
      // Own names only: `constructor` or `__proto__` must not resolve to Object's.
      const next = Object.hasOwn(subCommands, name) ? subCommands[name] : await byAlias(subCommands, name)
      if (!next) {
        const hint = closest(name, Object.keys(subCommands))
        throw new TychoraError('E_INVALID_ARGUMENT', `unknown command ${name}${hint ? `; did you mean ${hint}?` : ''}`)
      }
      cmd = (await resolve(next)) as AnyCommand
      words = words.slice(first + 1)
      path = [...path, name]
      continue
    }
    const declared = Object.entries(defs).filter(([, d]) => d.type === 'positional')
    const { positionals } = scan(words, defs, false)
    const variadic = (declared.at(-1)?.[1] as { variadic?: boolean } | undefined)?.variadic === true
    if (!variadic && positionals.length > declared.length) {
      const usage = ([n, d]: [string, ArgDef]) => (d.required !== false && d.default === undefined ? n.toUpperCase() : `[${n.toUpperCase()}]`)
      const takes = declared.length === 0 ? 'no arguments' : declared.map(usage).join(' ')
      throw new TychoraError('E_INVALID_ARGUMENT', `unexpected argument ${positionals[declared.length]}; ${path.join(' ')} takes ${takes}`)
    }
    return
  }
}

type Kind = 'value' | 'switch'

/** Words that name a flag of `defs`: long spellings without `--`, single letters without `-`. */
function flagTable(defs: ArgsDef): { long: Map<string, Kind>; short: Map<string, Kind>; negations: Set<string>; names: string[] } {
  const long = new Map<string, Kind>()
  const negations = new Set<string>()
  const short = new Map<string, Kind>()
  const names: string[] = []
  for (const [name, def] of Object.entries(defs) as Array<[string, ArgDef]>) {
    if (def.type === 'positional') continue
    // Strings and enums take a value; booleans (and untyped flags, as citty parses them) do not.
    const kind: Kind = def.type === 'string' || def.type === 'enum' ? 'value' : 'switch'
    names.push(name)
    for (const spelling of [name, camel(name), kebab(name)]) long.set(spelling, kind)
    const aliases = 'alias' in def && def.alias !== undefined ? (Array.isArray(def.alias) ? def.alias : [def.alias]) : []
    for (const alias of aliases) {
      long.set(alias, kind)
      if (alias.length === 1) short.set(alias, kind)
    }
    if (def.type === 'boolean') negations.add(`no-${name}`)
  }
  return { long, short, negations, names }
}

/**
 * Walks `words` as citty will parse them, throwing at the first flag `defs` does not declare.
 * Returns the positionals (all of them, or only the first when `untilPositional`) and the index
 * of the first one.
 */
function scan(words: string[], defs: ArgsDef, untilPositional: boolean): { positionals: string[]; first: number } {
  const table = flagTable(defs)
  const positionals: string[] = []
  let first = -1
  for (let i = 0; i < words.length; i++) {
    const word = words[i] as string
    if (word === '--') {
      // A command with subcommands takes none after `--` (citty's rule); a leaf takes them all.
      if (!untilPositional) positionals.push(...words.slice(i + 1))
      break
    }
    if (word.startsWith('--')) {
      const eq = word.indexOf('=')
      const name = word.slice(2, eq === -1 ? undefined : eq)
      if (eq === -1 && table.negations.has(name)) continue
      const kind = table.long.get(name)
      if (kind === undefined) throw unknownOption(`--${name}`, table)
      if (kind === 'value' && eq === -1) i++ // its value is the next word, whatever it looks like
      continue
    }
    if (word.startsWith('-') && word.length > 1) {
      // A group of single-letter flags (`-w DIR`, `-wDIR`); the first one taking a value ends it.
      for (let j = 1; j < word.length; j++) {
        const kind = table.short.get(word[j] as string)
        if (kind === undefined) throw unknownOption(word, table)
        if (kind === 'value') {
          if (j === word.length - 1) i++
          break
        }
      }
      continue
    }
    if (first === -1) first = i
    positionals.push(word)
    if (untilPositional) break
  }
  return { positionals, first }
}

function unknownOption(word: string, table: { names: string[] }): TychoraError {
  const hint = closest(word.replace(/^-+/, ''), table.names)
  return new TychoraError('E_INVALID_ARGUMENT', hint ? `unknown option ${word}; did you mean --${hint}?` : `unknown option ${word} (an argument that starts with - goes after --)`)
}

/**
 * The candidate nearest to `word` by edit distance, when it is near enough to be the intended one:
 * within a third of the word's length, and never further than 2 edits for short words.
 */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined
  let bestDistance = Math.max(2, Math.ceil(word.length / 3)) + 1
  for (const candidate of candidates) {
    const d = editDistance(word.toLowerCase(), candidate.toLowerCase())
    if (d < bestDistance) {
      best = candidate
      bestDistance = d
    }
  }
  return best
}

/** Levenshtein distance (insertions, deletions, substitutions), one row at a time. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min((previous[j] as number) + 1, (row[j - 1] as number) + 1, (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = row
  }
  return previous[b.length] as number
}

const camel = (name: string) => name.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase())
const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)

/** A subcommand by one of its `meta.alias` names, as citty finds it. */
async function byAlias(subCommands: Record<string, unknown>, name: string): Promise<unknown> {
  for (const sub of Object.values(subCommands)) {
    const cmd = (await resolve(sub)) as AnyCommand | undefined
    const alias = (await resolve(cmd?.meta))?.alias
    if ((Array.isArray(alias) ? alias : [alias]).includes(name)) return cmd
  }
  return undefined
}

async function commandName(cmd: AnyCommand): Promise<string> {
  return (await resolve(cmd.meta))?.name ?? 'tychora'
}

async function resolve<T>(value: T | Promise<T> | (() => T | Promise<T>) | undefined): Promise<T | undefined> {
  return typeof value === 'function' ? await (value as () => T | Promise<T>)() : await value
}
