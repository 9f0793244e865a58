import { defineCommand } from 'citty'
import type { RelationAssertion } from '../../contracts/relations.js'
import { TychoraError } from '../../errors.js'
import { visibleLines } from '../../format/terminal.js'
import { workspaceArg, writeOut } from '../context.js'
import { withLocalWorkspace } from '../route.js'

const output = { format: { type: 'string', description: 'text | json', default: 'text' } } as const

function line(a: RelationAssertion): string {
  const support = a.support ? `  ← ${a.support}` : ''
  const note = a.note ? `  “${a.note}”` : ''
  return `#${a.id}  ${a.from_key} ${a.relation} ${a.to_key}  [${a.method}, ${a.status}, by ${a.actor}]${support}${note}`
}

/** Keys, notes and paths come from files and people: their control characters and line breaks stay out of the terminal. */
function print(assertions: RelationAssertion[], format: string): void {
  writeOut(format === 'json' ? JSON.stringify(assertions, null, 2) : visibleLines(assertions.length === 0 ? ['no relation assertions'] : assertions.map(line)))
}

const list = defineCommand({
  meta: { name: 'list', description: 'Relation assertions (parsed, declared, proposed) with their status and supporting evidence' },
  args: {
    ...workspaceArg,
    ...output,
    key: { type: 'string', description: 'Only assertions with this key at either end (RFC 3986, V1.2.3)' },
    relation: { type: 'string', description: 'Only this relation type' },
    status: { type: 'string', description: 'proposed | accepted | rejected' },
  },
  async run({ args }) {
    const status = args.status
    if (status !== undefined && !['proposed', 'accepted', 'rejected'].includes(status)) throw new TychoraError('E_INVALID_ARGUMENT', '--status must be proposed, accepted or rejected')
    const found = await withLocalWorkspace(args.workspace, (ws) =>
      ws.listRelations({
        ...(args.key ? { key: args.key } : {}),
        ...(args.relation ? { relation: args.relation } : {}),
        ...(status ? { status: status as 'proposed' | 'accepted' | 'rejected' } : {}),
      }),
    )
    print(found, args.format)
  },
})

const declare = defineCommand({
  meta: {
    name: 'declare',
    description: 'Declare FROM RELATION TO (accepted at once; --propose for review), checked against the relation type: endpoint kinds, support, cardinality',
  },
  args: {
    ...workspaceArg,
    ...output,
    from: { type: 'positional', required: true, description: "The subject's key (RFC 6749, V1.2.3, ADR-7)" },
    relation: { type: 'positional', required: true, description: 'A relation type the pack defines' },
    to: { type: 'positional', required: true, description: "The object's key" },
    evidence: { type: 'string', description: 'The supporting evidence: unit:N, chunk:N or a segment id seg_S_C' },
    note: { type: 'string', description: 'Why' },
    propose: { type: 'boolean', description: 'Propose it (status proposed) for a reviewer instead of declaring it', default: false },
  },
  async run({ args }) {
    const stored = await withLocalWorkspace(args.workspace, (ws) =>
      ws.declareRelation({
        from: String(args.from),
        relation: String(args.relation),
        to: String(args.to),
        ...(args.evidence ? { evidence: args.evidence } : {}),
        ...(args.note ? { note: args.note } : {}),
        ...(args.propose ? { propose: true } : {}),
      }),
    )
    print([stored], args.format)
  },
})

const review = defineCommand({
  meta: { name: 'review', description: 'Review assertion ID: accept, reject or comment (each review is an event; accept and reject decide it)' },
  args: {
    ...workspaceArg,
    ...output,
    id: { type: 'positional', required: true, description: 'The assertion id (#N in relations list)' },
    action: { type: 'positional', required: true, description: 'accept | reject | comment' },
    note: { type: 'string', description: 'Why' },
    actor: { type: 'string', description: 'Who reviews (default owner)' },
  },
  async run({ args }) {
    const action = String(args.action)
    if (!['accept', 'reject', 'comment'].includes(action)) throw new TychoraError('E_INVALID_ARGUMENT', 'the action is accept, reject or comment')
    const id = Number(String(args.id).replace(/^#/, ''))
    if (!Number.isInteger(id)) throw new TychoraError('E_INVALID_ARGUMENT', `not an assertion id: ${JSON.stringify(args.id)}`)
    const stored = await withLocalWorkspace(args.workspace, (ws) =>
      ws.reviewRelation(id, action as 'accept' | 'reject' | 'comment', {
        ...(args.actor ? { actor: args.actor } : {}),
        ...(args.note ? { note: args.note } : {}),
      }),
    )
    print([stored], args.format)
  },
})

export default defineCommand({
  meta: {
    name: 'relations',
    description: 'Relation assertions between documents and records: parsed (an RFC’s Obsoletes:), declared, proposed, reviewed',
  },
  subCommands: { list, declare, review },
})
