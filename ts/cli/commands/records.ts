import { defineCommand } from 'citty'
import type { RecordDetail, RecordList } from '../../contracts/records.js'
import { TychoraError } from '../../errors.js'
import { visibleLines } from '../../format/terminal.js'
import { repeatedFlag, workspaceArg, writeOut } from '../context.js'
import { withLocalWorkspace } from '../route.js'

const output = { format: { type: 'string', description: 'text | json', default: 'text' } } as const

/** A record's fields other than its id, on one line: `level=1 chapter=V1 text="…"`. */
function fields(body: Record<string, unknown>, width = 100): string {
  const line = Object.entries(body)
    .filter(([k]) => k !== 'id')
    .map(([k, v]) => `${k}=${typeof v === 'string' ? JSON.stringify(v) : String(v)}`)
    .join(' ')
  return line.length > width ? `${line.slice(0, width - 1)}…` : line
}

function listText(list: RecordList): string {
  const lines = list.records.map((r) => `${r.key}  ${r.kind}/${r.record_type}  ${r.status}  ${r.evidence_count} evidence  ${fields(r.body, 80)}`)
  lines.push(`${list.records.length} of ${list.total} records`)
  return visibleLines(lines)
}

function detailText(r: RecordDetail): string {
  const lines = [`${r.key}  ${r.kind}/${r.record_type}  ${r.status}`, `  ${fields(r.body, 400)}`, `  stated by ${r.evidence.length}:`]
  for (const e of r.evidence) {
    lines.push(`    ${e.citation}${e.json_pointer ? ` ${e.json_pointer}` : ''}  (${e.format}, revision ${e.seq}${e.current ? '' : ', not current'})  ${fields(e.body, 60)}`)
  }
  // Record fields and paths come from the files: their control characters stay out of the terminal.
  return visibleLines(lines)
}

const list = defineCommand({
  meta: { name: 'list', description: 'Structured records (requirements, decisions…) read from the sources, by kind, type and facet' },
  args: {
    ...workspaceArg,
    ...output,
    kind: { type: 'string', description: 'Only records of this kind' },
    type: { type: 'string', description: 'Only records of this type (requirement, decision…)' },
    facet: {
      type: 'string',
      description: "A facet condition on the records’ values, quoted (a bare > or < is a shell redirection): --facet 'level<=2', 'chapter=V1'; repeat for several",
    },
    limit: { type: 'string', description: 'At most this many (default 100, at most 1000)' },
  },
  async run({ args, rawArgs }) {
    const facets = repeatedFlag(rawArgs, 'facet')
    const list = await withLocalWorkspace(args.workspace, (ws) =>
      ws.listRecords({
        ...(args.kind ? { kind: args.kind } : {}),
        ...(args.type ? { record_type: args.type } : {}),
        ...(facets.length > 0 ? { facets } : {}),
        ...(args.limit ? { limit: Number(args.limit) } : {}),
      }),
    )
    writeOut(args.format === 'json' ? JSON.stringify(list, null, 2) : listText(list))
  },
})

const show = defineCommand({
  meta: {
    name: 'show',
    description: 'One record (by key, e.g. V1.2.3) with every unit that states it: file, lines, revision and what it says there',
  },
  args: {
    ...workspaceArg,
    ...output,
    key: { type: 'positional', required: true, description: 'The record’s key' },
    kind: { type: 'string', description: 'Its kind, when several kinds have a record of that key' },
  },
  async run({ args }) {
    const record = await withLocalWorkspace(args.workspace, (ws) => ws.showRecord(String(args.key), args.kind))
    writeOut(args.format === 'json' ? JSON.stringify(record, null, 2) : detailText(record))
  },
})

const review = defineCommand({
  meta: { name: 'review', description: 'A person’s decision on record KEY: accept (reviewed: the verified profile counts it) or reject' },
  args: {
    ...workspaceArg,
    ...output,
    key: { type: 'positional', required: true, description: 'The record’s key' },
    action: { type: 'positional', required: true, description: 'accept | reject' },
    kind: { type: 'string', description: 'Its kind, when several kinds have a record of that key' },
  },
  async run({ args }) {
    const action = String(args.action)
    if (action !== 'accept' && action !== 'reject') throw new TychoraError('E_INVALID_ARGUMENT', 'the action is accept or reject')
    const record = await withLocalWorkspace(args.workspace, (ws) => ws.reviewRecord(String(args.key), action, args.kind ? { kind: args.kind } : {}))
    writeOut(args.format === 'json' ? JSON.stringify(record, null, 2) : detailText(record))
  },
})

export default defineCommand({
  meta: { name: 'records', description: 'Structured records read from sources by their kind’s rules (ASVS requirements, decisions…)' },
  subCommands: { list, show, review },
})
