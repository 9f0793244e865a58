#!/usr/bin/env node
import { type CommandDef, defineCommand, runCommand, showUsage } from 'citty'
import { ERROR_CODES, TychoraError } from '../errors.js'
import { toTychoraError } from '../engine/call-native.js'
import { exitState } from './context.js'

const lazy = (load: () => Promise<{ default: CommandDef<any> }>) => () => load().then((m) => m.default)

export const main = defineCommand({
  meta: { name: 'tychora', version: '0.1.0', description: 'Local evidence engine: versioned documents in, cited source evidence out' },
  subCommands: {
    init: lazy(() => import('./commands/init.js')),
    add: lazy(() => import('./commands/add.js')),
    search: lazy(() => import('./commands/search.js')),
    inspect: lazy(() => import('./commands/inspect.js')),
    manage: lazy(() => import('./commands/manage.js')),
    eval: lazy(() => import('./commands/eval.js')),
    serve: lazy(() => import('./commands/serve.js')),
    mcp: lazy(() => import('./commands/mcp.js')),
  },
})

/** Resolves the (sub)command a help request is about, for showUsage. */
async function resolveForHelp(argv: string[]): Promise<[CommandDef<any>, CommandDef<any> | undefined]> {
  let cmd: CommandDef<any> = main
  let parent: CommandDef<any> | undefined
  for (const arg of argv) {
    const subs = (typeof cmd.subCommands === 'function' ? await cmd.subCommands() : await cmd.subCommands) as Record<string, unknown> | undefined
    const next = subs?.[arg]
    if (!next) break
    parent = cmd
    cmd = typeof next === 'function' ? await (next as () => Promise<CommandDef<any>>)() : (next as CommandDef<any>)
  }
  return [cmd, parent]
}

/** Runs the CLI and owns its exit code (the table in errors.ts), instead of citty's exit 1 for all. */
async function run(argv: string[]): Promise<number> {
  const json = argv.includes('--format') && argv[argv.indexOf('--format') + 1] === 'json'
  if (argv.length === 0 || argv.includes('--help') || argv.includes('-h')) {
    await showUsage(...(await resolveForHelp(argv.filter((a) => !a.startsWith('-')))))
    return 0
  }
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')) {
    process.stdout.write('0.1.0\n')
    return 0
  }
  try {
    await runCommand(main, { rawArgs: argv })
    return exitState.code
  } catch (caught) {
    const citty = caught as { code?: string; name?: string }
    const error = citty.name === 'CLIError' ? new TychoraError('E_INVALID_ARGUMENT', (caught as Error).message) : toTychoraError(caught)
    if (json) process.stderr.write(`${JSON.stringify(error.toJSON())}\n`)
    else process.stderr.write(`error[${error.code}]: ${error.message}\n`)
    if (citty.name === 'CLIError') process.stderr.write('run `tychora --help` for usage\n')
    return ERROR_CODES[error.code].exit
  }
}

process.exitCode = await run(process.argv.slice(2))
