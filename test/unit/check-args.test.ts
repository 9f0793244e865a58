import { defineCommand } from 'citty'
import { describe, expect, it } from 'vitest'
import { checkArgs, closest, editDistance } from '../../ts/cli/check-args.js'

// A command tree shaped like the CLI's: a leaf with fixed positionals, one with a variadic one,
// and a group with subcommands (one loaded lazily).
const init = defineCommand({
  meta: { name: 'init' },
  args: {
    dir: { type: 'positional', required: false, default: '.tychora' },
    profile: { type: 'string', default: 'documents' },
    format: { type: 'string', default: 'text' },
  },
})
const search = defineCommand({
  meta: { name: 'search' },
  args: {
    workspace: { type: 'string', alias: 'w' },
    query: { type: 'positional', required: true, variadic: true },
    'budget-tokens': { type: 'string' },
    graph: { type: 'boolean', default: false },
    verbose: { type: 'boolean', alias: ['v'] },
  },
})
const status = defineCommand({ meta: { name: 'status' }, args: { format: { type: 'string' } } })
const root = defineCommand({
  meta: { name: 'tychora' },
  subCommands: { init, search, manage: () => Promise.resolve(defineCommand({ meta: { name: 'manage' }, subCommands: { status } })) },
})

async function refusal(argv: string[]): Promise<{ code?: string; message?: string } | undefined> {
  try {
    await checkArgs(root, argv)
    return undefined
  } catch (error) {
    return error as { code?: string; message?: string }
  }
}

describe('checkArgs', () => {
  it('accepts what each command declares: names, aliases, --x=value, --no-x, camelCase spellings, -- and grouped short flags', async () => {
    for (const argv of [
      ['init'],
      ['init', 'ws', '--profile', 'code'],
      ['init', '--profile=code', 'ws', '--format', 'json'],
      ['search', '-w', 'ws', 'many', 'words', 'here'],
      ['search', '-wws', 'q'],
      ['search', '-vw', 'ws', 'q'],
      ['search', '--workspace=ws', '--budget-tokens', '100', '--budgetTokens', '5', 'q'],
      ['search', '--no-graph', '--graph=false', '--graph', 'q'],
      ['search', '-w', 'ws', '--', '-foo', '--bar', 'baz'],
      ['search', '--budget-tokens', '-5', 'q'], // a value flag takes the next word, whatever it looks like
      ['search', 'q', '-'], // a lone dash is a word
      ['manage', 'status', '--format', 'json'],
    ]) {
      expect(await refusal(argv), argv.join(' ')).toBeUndefined()
    }
  })

  it('refuses an unknown flag with E_INVALID_ARGUMENT and suggests the closest declared one', async () => {
    const typo = await refusal(['init', '--profil', 'code', 'ws'])
    expect(typo?.code).toBe('E_INVALID_ARGUMENT')
    expect(typo?.message).toContain('did you mean --profile?')
    expect((await refusal(['search', '--budget-tokns=5', 'q']))?.message).toContain('did you mean --budget-tokens?')
    expect((await refusal(['manage', 'status', '--frmat', 'json']))?.message).toContain('did you mean --format?')
    for (const argv of [
      ['search', '--frobnicate', 'q'],
      ['search', '-x', 'q'],
      ['search', '-vx', 'q'], // an unknown letter inside a group
      ['search', '-foo'], // a query starting with - must follow --
      ['search', '--no-budget-tokens', 'q'], // only booleans negate
      ['search', '--no-graph=1', 'q'],
      ['init', '--workspace', 'ws'], // another command's flag
      ['--format', 'json', 'search', 'q'], // flags of the root command
      ['manage', '--format', 'json', 'status'],
    ]) {
      expect((await refusal(argv))?.code, argv.join(' ')).toBe('E_INVALID_ARGUMENT')
    }
  })

  it('refuses surplus positionals unless the last positional is variadic', async () => {
    expect((await refusal(['init', 'ws', 'extra']))?.code).toBe('E_INVALID_ARGUMENT')
    expect((await refusal(['init', '--', 'ws', 'extra']))?.code).toBe('E_INVALID_ARGUMENT')
    expect((await refusal(['manage', 'status', 'extra']))?.code).toBe('E_INVALID_ARGUMENT')
    expect(await refusal(['search', 'a', 'b', '--', 'c', 'd'])).toBeUndefined()
  })

  it('refuses an unknown command with the closest one', async () => {
    const unknown = await refusal(['serch', 'q'])
    expect(unknown?.code).toBe('E_INVALID_ARGUMENT')
    expect(unknown?.message).toContain('did you mean search?')
    expect((await refusal(['manage', 'stats']))?.message).toContain('did you mean status?')
    expect((await refusal(['constructor']))?.code).toBe('E_INVALID_ARGUMENT')
    expect((await refusal(['__proto__']))?.code).toBe('E_INVALID_ARGUMENT')
  })
})

describe('closest', () => {
  it('suggests only near names', () => {
    expect(editDistance('profil', 'profile')).toBe(1)
    expect(editDistance('', 'abc')).toBe(3)
    expect(closest('profil', ['format', 'profile'])).toBe('profile')
    expect(closest('provider', ['split', 'profile', 'out'])).toBe('profile')
    expect(closest('frobnicate', ['format', 'profile'])).toBeUndefined()
    expect(closest('x', ['workspace'])).toBeUndefined()
  })
})
