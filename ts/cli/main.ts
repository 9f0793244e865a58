import { defineCommand, runCommand, showUsage } from 'citty'
import { ZodError, config as zodConfig } from 'zod'
import { ERROR_CODES, TychoraError, formatIssues, toTychoraError } from '../errors.js'
import { oneLine } from '../format/terminal.js'
import { packageVersion } from '../package-root.js'
import { type AnyCommand, checkArgs } from './check-args.js'
import { exitState, takeWorkspaceWarnings } from './context.js'

const lazy = (load: () => Promise<{ default: AnyCommand }>) => () => load().then((m) => m.default)

export const main = defineCommand({
  meta: { name: 'tychora', version: packageVersion(), description: 'Local evidence engine: versioned documents in, cited source evidence out' },
  subCommands: {
    init: lazy(() => import('./commands/init.js')),
    add: lazy(() => import('./commands/add.js')),
    watch: lazy(() => import('./commands/watch.js')),
    search: lazy(() => import('./commands/search.js')),
    inspect: lazy(() => import('./commands/inspect.js')),
    describe: lazy(() => import('./commands/describe.js')),
    manage: lazy(() => import('./commands/manage.js')),
    index: lazy(() => import('./commands/summaries.js')),
    packs: lazy(() => import('./commands/packs.js')),
    records: lazy(() => import('./commands/records.js')),
    relations: lazy(() => import('./commands/relations.js')),
    knowledge: lazy(() => import('./commands/knowledge.js')),
    review: lazy(() => import('./commands/knowledge.js').then((m) => ({ default: m.review }))),
    migrate: lazy(() => import('./commands/knowledge.js').then((m) => ({ default: m.migrate }))),
    eval: lazy(() => import('./commands/eval.js')),
    serve: lazy(() => import('./commands/serve.js')),
    dashboard: lazy(() => import('./commands/dashboard.js')),
    mcp: lazy(() => import('./commands/mcp.js')),
  },
})

/** Resolves the (sub)command a help request is about, for showUsage. */
async function resolveForHelp(argv: string[]): Promise<[AnyCommand, AnyCommand | undefined]> {
  let cmd: AnyCommand = main
  let parent: AnyCommand | undefined
  for (const arg of argv) {
    const subs = (typeof cmd.subCommands === 'function' ? await cmd.subCommands() : await cmd.subCommands) as Record<string, unknown> | undefined
    const next = subs?.[arg]
    if (!next) break
    parent = cmd
    cmd = typeof next === 'function' ? await (next as () => Promise<AnyCommand>)() : (next as AnyCommand)
  }
  return [cmd, parent]
}

/** The words before `--`: only they can be flags. */
function flagWords(argv: string[]): string[] {
  const end = argv.indexOf('--')
  return end === -1 ? argv : argv.slice(0, end)
}

/** Any failure as a coded error: citty's usage errors and stray schema failures are bad input, not bugs. */
function asTychoraError(caught: unknown): TychoraError {
  if (caught instanceof Error && caught.name === 'CLIError') return new TychoraError('E_INVALID_ARGUMENT', caught.message)
  if (caught instanceof ZodError) return new TychoraError('E_INVALID_ARGUMENT', formatIssues(caught.issues), { cause: caught })
  return toTychoraError(caught)
}

/** Commands that run until stopped. */
const LONG_RUNNING = new Set(['serve', 'mcp', 'watch'])

/** Warnings about the workspace that the command's output did not carry: on stderr, not lost. */
function warnLeftovers(): void {
  for (const warning of takeWorkspaceWarnings()) process.stderr.write(`tychora: ${oneLine(warning)}\n`)
}

/** Runs the CLI and owns its exit code (the table in errors.ts), instead of citty's exit 1 for all. */
export async function run(argv: string[]): Promise<number> {
  const flags = flagWords(argv)
  const json = flags.includes('--format=json') || (flags.includes('--format') && flags[flags.indexOf('--format') + 1] === 'json')
  if (argv.length === 0 || flags.includes('--help') || flags.includes('-h')) {
    await showUsage(...(await resolveForHelp(flags.filter((a) => !a.startsWith('-')))))
    return 0
  }
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')) {
    process.stdout.write(`${packageVersion()}\n`)
    return 0
  }
  // A one-shot command validates a handful of objects: zod's compiled fast path (generated code,
  // compiled again by every process) cost a CLI search's first parse ~1.2 ms more than it saves.
  // The daemon, the stdio MCP server and the watcher parse for as long as they run, and keep it.
  if (!LONG_RUNNING.has(argv[0] ?? '')) zodConfig({ jitless: true })
  let usage = true
  try {
    await checkArgs(main, argv)
    usage = false
    await runCommand(main, { rawArgs: argv })
    warnLeftovers()
    return exitState.code
  } catch (caught) {
    warnLeftovers()
    usage ||= caught instanceof Error && caught.name === 'CLIError'
    const error = asTychoraError(caught)
    if (json) process.stderr.write(`${JSON.stringify(error.toJSON())}\n`)
    else {
      process.stderr.write(`error[${error.code}]: ${oneLine(error.message)}\n`)
      if (usage) process.stderr.write('run `tychora --help` for usage\n')
    }
    return ERROR_CODES[error.code].exit
  }
}
