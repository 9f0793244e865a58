import { defineCommand } from 'citty'
import type { PackEntry } from '../../contracts/pack.js'
import { listPacks, resolvePack, showPack, validatePacks } from '../../engine/packs.js'
import { visible } from '../../format/terminal.js'
import { exitState, resolveWorkspace, workspaceArg, writeOut } from '../context.js'

const output = { format: { type: 'string', description: 'text | json', default: 'text' } } as const

/** The workspace when there is one (its packs/ are visible); built-in packs only otherwise. */
async function optionalWorkspace(flag: string | undefined): Promise<string | undefined> {
  try {
    return await resolveWorkspace(flag)
  } catch {
    return undefined
  }
}

function entryLines(e: PackEntry): string[] {
  const head = `${e.name}${e.version ? ` v${e.version}` : ''}  ${e.problems.length > 0 ? 'INVALID' : 'ok'}  (${e.origin})`
  const lines = [head]
  if (e.description) lines.push(`  ${e.description}`)
  if (e.depends.length > 0) lines.push(`  depends on: ${e.depends.join(', ')}`)
  if (e.kinds.length > 0) lines.push(`  defines kinds: ${e.kinds.join(', ')}`)
  for (const p of e.problems) lines.push(`  error: ${p.replaceAll('\n', '\n  ')}`)
  for (const w of e.warnings) lines.push(`  warning: ${w}`)
  return lines
}

function report(entries: PackEntry[], format: string): void {
  if (entries.some((e) => e.problems.length > 0)) exitState.code = 1
  writeOut(format === 'json' ? JSON.stringify(entries, null, 2) : visible(entries.map((e) => entryLines(e).join('\n')).join('\n\n')))
}

const list = defineCommand({
  meta: { name: 'list', description: 'Every pack visible here (built-in, then the workspace’s packs/), each checked and resolved' },
  args: { ...workspaceArg, ...output },
  async run({ args }) {
    report(await listPacks(await optionalWorkspace(args.workspace)), args.format)
  },
})

const validate = defineCommand({
  meta: { name: 'validate', description: 'Check pack files against the published schema and resolve them; exit 1 when any is invalid' },
  args: {
    ...workspaceArg,
    ...output,
    files: { type: 'positional', required: false, description: 'pack.json files (default: every visible pack)' },
  },
  async run({ args }) {
    const files = args._.map(String)
    const dir = await optionalWorkspace(args.workspace)
    report(files.length > 0 ? await validatePacks(files, dir) : await listPacks(dir), args.format)
  },
})

const show = defineCommand({
  meta: { name: 'show', description: 'A pack as written (the workspace’s own first)' },
  args: { ...workspaceArg, name: { type: 'positional', required: true, description: 'Pack name' } },
  async run({ args }) {
    const pack = await showPack(String(args.name), await optionalWorkspace(args.workspace))
    writeOut(visible(`// ${pack.name} (${pack.origin})\n${pack.text}`))
  },
})

const resolved = defineCommand({
  meta: { name: 'resolved', description: 'What the workspace runs with, and where each value came from' },
  args: { ...workspaceArg, ...output, profile: { type: 'string', description: 'Profile (default: the workspace’s default one)' } },
  async run({ args }) {
    const r = await resolvePack(await resolveWorkspace(args.workspace), args.profile)
    if (args.format === 'json') return writeOut(JSON.stringify(r, null, 2))
    const width = Math.min(48, Math.max(...r.values.map((v) => v.path.length)))
    const lines = [`profile ${r.profile}: pack ${r.pack} (engine defaults → ${r.chain.join(' → ')} → workspace.toml)`]
    for (const v of r.values) {
      const value = JSON.stringify(v.value)
      lines.push(`${v.path.padEnd(width)}  ${value.length > 60 ? `${value.slice(0, 57)}...` : value}  ← ${v.origin}`)
    }
    lines.push(
      `fingerprints: ${Object.entries(r.fingerprints)
        .map(([stage, f]) => `${stage} ${f.slice(0, 12)}`)
        .join(', ')}`,
    )
    for (const w of r.warnings) lines.push(`warning: ${w}`)
    writeOut(visible(lines.join('\n')))
  },
})

export default defineCommand({
  meta: { name: 'packs', description: 'Configuration packs: list, show, validate, and the resolved configuration' },
  subCommands: { list, show, validate, resolved },
})
