import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { PackEntrySchema, ResolvedPackSchema } from '../../ts/contracts/pack.js'
import { StatusSchema } from '../../ts/contracts/workspace.js'
import { QueryResultSchema } from '../../ts/contracts/result.js'
import { SnapshotEvidenceSchema } from '../../ts/contracts/evidence.js'
import { RebuildReportSchema, ReceiptSchema } from '../../ts/contracts/ingest.js'
import { Workspace } from '../../ts/engine/workspace.js'
import { ROOT, cli, nativeMissing, scratch } from './_setup.js'
import { RecordDetailSchema, RecordListSchema } from '../../ts/contracts/records.js'
import { RelationAssertionSchema } from '../../ts/contracts/relations.js'

const BUILT_IN_KINDS = [
  'law',
  'regulation',
  'decision',
  'standard',
  'guidance',
  'manual',
  'template',
  'procedure',
  'feedback',
  'evidence',
  'example',
  'rationale',
  'research_note',
  'code_file',
  'architecture_decision',
]

async function writePack(ws: string, name: string, text: string): Promise<string> {
  const file = join(ws, 'packs', name, 'pack.json')
  await mkdir(join(ws, 'packs', name), { recursive: true })
  await writeFile(file, text)
  return file
}

describe.skipIf(nativeMissing)('packs and kinds', () => {
  it('lists the built-in packs, shows the 15 built-in kinds, and says where each resolved value came from', async () => {
    const { ws } = await scratch()
    expect((await cli(['init', ws])).code).toBe(0)
    const list = await cli(['packs', 'list', '-w', ws, '--format', 'json'])
    expect(list.code).toBe(0)
    const entries = PackEntrySchema.array().parse(JSON.parse(list.stdout))
    expect(entries.map((e) => [e.name, e.problems.length])).toEqual([
      ['core', 0],
      ['documents', 0],
      ['code', 0],
    ])
    const core = entries.find((e) => e.name === 'core')!
    for (const kind of BUILT_IN_KINDS) expect(core.kinds).toContain(kind)
    expect(entries.find((e) => e.name === 'documents')!.depends).toEqual(['core'])

    const show = await cli(['packs', 'show', 'core', '-w', ws])
    expect(show.code).toBe(0)
    expect(show.stdout).toContain('"architecture_decision"')

    await writeFile(join(ws, 'workspace.toml'), `${await readFile(join(ws, 'workspace.toml'), 'utf8')}\n[lexical]\nstemmer = false\n`)
    const resolved = ResolvedPackSchema.parse(JSON.parse((await cli(['packs', 'resolved', '-w', ws, '--format', 'json'])).stdout))
    expect(resolved.chain).toEqual(['core', 'documents'])
    const origin = (path: string) => resolved.values.find((v) => v.path === path)
    expect(origin('/lexical/stemmer')).toEqual({ path: '/lexical/stemmer', value: false, origin: 'workspace.toml' })
    expect(origin('/lexical/capsule_boost')?.origin).toBe('pack documents (built-in:packs/documents/pack.json)')
    expect(origin('/kinds/standard')?.origin).toBe('pack core (built-in:packs/core/pack.json)')
    expect(origin('/fusion/weights/visual')?.origin).toBe('engine default')
    const text = await cli(['packs', 'resolved', '-w', ws])
    expect(text.stdout).toMatch(/\/lexical\/stemmer\s+false\s+← workspace\.toml/)
  })

  it('refuses bad packs with file, line and field, and a workspace that selects one does not open', async () => {
    const { ws, docs } = await scratch()
    expect((await cli(['init', ws])).code).toBe(0)
    const bad = await writePack(ws, 'strict', '{\n  "name": "strict",\n  "version": 1,\n  "description": "x",\n  "depends": ["documents"],\n  "output": { "limit": "ten" }\n}\n')
    const validate = await cli(['packs', 'validate', bad, '-w', ws])
    expect(validate.code).toBe(1)
    expect(validate.stdout).toContain(`${bad}:6: /output/limit:`)
    const list = await cli(['packs', 'list', '-w', ws])
    expect(list.code).toBe(1)
    expect(list.stdout).toMatch(/strict v?\S*\s+INVALID/)
    expect(list.stdout).toMatch(/documents v1\s+ok/)

    // Selecting it: the engine refuses to open rather than run on a half-valid pack.
    const add0 = await cli(['add', '-w', ws, docs])
    expect(add0.code).toBe(0)
    const toml = await readFile(join(ws, 'workspace.toml'), 'utf8')
    await writeFile(join(ws, 'workspace.toml'), toml.replace(/pack = "documents"/, 'pack = "strict"'))
    const search = await cli(['search', '-w', ws, 'ETag'])
    expect(search.code).not.toBe(0)
    expect(search.stderr).toContain('/output/limit')
    // Fixed, it opens, with the pack's own value and the rest from documents.
    await writePack(ws, 'strict', '{"name":"strict","version":1,"description":"x","depends":["documents"],"output":{"limit":1}}')
    const fixed = QueryResultSchema.parse(JSON.parse((await cli(['search', '-w', ws, 'ETag validator', '--format', 'json'])).stdout))
    expect(fixed.segments).toHaveLength(1)
  })

  it('add --kind assigns a kind, records its definition, and a kind filter finds only its sources', async () => {
    const { ws, docs } = await scratch()
    expect((await cli(['init', ws])).code).toBe(0)
    expect((await cli(['add', '-w', ws, docs])).code).toBe(0)
    const standard = join(docs, '..', 'standard')
    await mkdir(standard)
    await writeFile(
      join(standard, 'asvs-v2.md'),
      '# V2 Authentication\n\n## V2.1 Password Security\n\nV2.1.1 Verify that user set passwords are at least 12 characters in length (after multiple spaces are combined).\n',
    )
    const add = await cli(['add', '-w', ws, standard, '--kind', 'standard', '--collection', 'asvs'])
    expect(add.code).toBe(0)
    const unknown = await cli(['add', '-w', ws, standard, '--kind', 'pamphlet'])
    expect(unknown.code).not.toBe(0)
    expect(unknown.stderr).toContain('unknown kind "pamphlet"')

    const status = StatusSchema.parse(JSON.parse((await cli(['manage', 'status', '-w', ws, '--format', 'json'])).stdout))
    expect(status.kinds).toHaveLength(1)
    expect(status.kinds[0]).toMatchObject({ name: 'standard', version: 2, pack: 'documents', lane: 'standards', sources: 1 })
    expect(status.kinds[0]!.fingerprint).toMatch(/^[0-9a-f]{64}$/)

    const opened = await Workspace.open(ws)
    const sources = await opened.listSources().finally(() => opened.close())
    const asvs = sources.sources.find((s) => s.path === 'asvs-v2.md')!
    expect(asvs).toMatchObject({ kind: 'standard', format: 'markdown' })
    expect(sources.sources.filter((s) => s.kind === null).length).toBe(sources.sources.length - 1)

    // "password" appears in the standard only; "Verify" is in both: the filter keeps the standard.
    const only = QueryResultSchema.parse(JSON.parse((await cli(['search', '-w', ws, 'verify', '--kind', 'standard', '--format', 'json'])).stdout))
    expect(only.segments.length).toBeGreaterThan(0)
    expect(only.segments.every((s) => s.source.kind === 'standard' && s.source.format === 'markdown')).toBe(true)
    // Formatted output groups by lane in the pack's order; JSON carries the lane per segment.
    expect(only.segments.every((s) => s.source.lane === 'standards')).toBe(true)
    expect(only.lanes.slice(0, 2)).toEqual(['authority', 'standards'])
    const md = await cli(['search', '-w', ws, 'verify validator cache', '--format', 'md'])
    expect(md.stdout).toMatch(/## standards\n\n### \[\d+\] asvs-v2\.md/)
    expect(md.stdout.indexOf('## standards')).toBeLessThan(md.stdout.indexOf('## other sources'))
    const agent = await cli(['search', '-w', ws, 'verify validator cache', '--format', 'agent'])
    expect(agent.stdout).toMatch(/<lane name="standards">\n<evidence [^>]*cite="asvs-v2\.md/)
    expect(agent.stdout).toContain('<lane name="other">')
    const markdown = QueryResultSchema.parse(JSON.parse((await cli(['search', '-w', ws, 'password characters', '--kind', 'markdown', '--format', 'json'])).stdout))
    expect(markdown.segments.every((s) => s.source.kind === null && s.source.format === 'markdown')).toBe(true)
  })
})

describe.skipIf(nativeMissing)('a source keeps its kind', () => {
  const REGULATION =
    'HAVE ADOPTED THIS REGULATION:\n\nCHAPTER III\n\nRights of the data subject\n\nArticle 17\n\nRight to erasure\n\n1.   The data subject shall have the right where one of the following applies:\n\n(a)\n\nthe data are no longer necessary;\n\n(b)\n\nthe data subject withdraws consent;\n\n2.   Where the controller has made the data public.\n'

  it('a later add or sync without --kind keeps it, reads the file as its kind says, and re-extracts nothing unchanged', async () => {
    const { ws, dir } = await scratch()
    const laws = join(dir, 'laws')
    await mkdir(laws)
    await writeFile(join(laws, 'gdpr.txt'), REGULATION)
    await writeFile(join(laws, 'notes.txt'), 'Article 17 notes: erasure requests arrive by mail.\n')
    expect((await cli(['init', ws])).code).toBe(0)
    expect((await cli(['add', '-w', ws, join(laws, 'gdpr.txt'), '--kind', 'regulation'])).code).toBe(0)
    const point = async () => QueryResultSchema.parse(JSON.parse((await cli(['search', '-w', ws, 'Article 17(1)(b)', '--format', 'json', '--limit', '1'])).stdout)).segments[0]!
    // The text never writes "Article 17(1)(b)": only the legal reading registers that citation.
    const cited = (s: { channels: { channel: string }[] }) => s.channels.some((c) => c.channel === 'exact')
    expect(cited(await point())).toBe(true)

    // The folder synced without --kind: gdpr.txt unchanged and not read again; notes.txt new, plain text.
    const sync = ReceiptSchema.parse(JSON.parse((await cli(['add', '-w', ws, laws, '--format', 'json'])).stdout))
    expect(sync.files).toMatchObject({ added: 1, unchanged: 1, changed: 0 })
    // Changed and synced again without --kind: still a regulation, still read as legislation.
    await writeFile(join(laws, 'gdpr.txt'), REGULATION.replace('made the data public', 'made the personal data public'))
    const changed = ReceiptSchema.parse(JSON.parse((await cli(['add', '-w', ws, laws, '--format', 'json'])).stdout))
    expect(changed.files).toMatchObject({ changed: 1, unchanged: 1 })
    const hit = await point()
    expect(hit.source).toMatchObject({ path: 'gdpr.txt', kind: 'regulation', format: 'legal', lane: 'authority' })
    expect(cited(hit)).toBe(true)
    expect(hit.text).toContain('made the personal data public')
    const again = ReceiptSchema.parse(JSON.parse((await cli(['add', '-w', ws, laws, '--format', 'json'])).stdout))
    expect(again.files).toMatchObject({ unchanged: 2, changed: 0, added: 0 })
    const status = StatusSchema.parse(JSON.parse((await cli(['manage', 'status', '-w', ws, '--format', 'json'])).stdout))
    expect(status.kinds.map((k) => [k.name, k.sources])).toEqual([['regulation', 1]])
  })
})

describe.skipIf(nativeMissing)('stage fingerprints', () => {
  const fingerprints = async (ws: string) => ResolvedPackSchema.parse(JSON.parse((await cli(['packs', 'resolved', '-w', ws, '--format', 'json'])).stdout)).fingerprints
  const changed = (a: Record<string, string>, b: Record<string, string>) => Object.keys(a).filter((k) => a[k] !== b[k])
  const lexicalGeneration = async (ws: string, snapshot: number) => {
    const s = SnapshotEvidenceSchema.parse(JSON.parse((await cli(['inspect', '-w', ws, `snapshot:${snapshot}`])).stdout))
    return s.indexes.find((i) => i.family === 'lexical')!.generation
  }

  it('an output change re-extracts and re-indexes nothing; an analyzer change rebuilds the lexical generation only', async () => {
    const { ws, docs } = await scratch()
    expect((await cli(['init', ws])).code).toBe(0)
    expect((await cli(['add', '-w', ws, docs])).code).toBe(0)
    const first = await fingerprints(ws)
    const generation = await lexicalGeneration(ws, 1)

    // Output: a workspace pack over documents that returns at most two segments.
    await writePack(ws, 'brief', '{"name":"brief","version":1,"description":"documents, briefer","depends":["documents"],"output":{"limit":2}}')
    const toml = join(ws, 'workspace.toml')
    await writeFile(toml, (await readFile(toml, 'utf8')).replace(/pack = "documents"/, 'pack = "brief"'))
    const brief = await fingerprints(ws)
    expect(changed(first, brief)).toEqual(['output'])
    const again = ReceiptSchema.parse(JSON.parse((await cli(['add', '-w', ws, docs, '--format', 'json'])).stdout))
    expect(again.files).toMatchObject({ unchanged: 3, added: 0, changed: 0 })
    expect(again.published).toBe(false)
    const search = QueryResultSchema.parse(JSON.parse((await cli(['search', '-w', ws, 'cache', '--format', 'json'])).stdout))
    expect(search.segments.length).toBe(2)
    expect(search.snapshot_id).toBe(1)

    // Analyzer: no stemming. Only the indexing stage changes; a rebuild makes a new lexical
    // generation over the same extractions.
    const before = StatusSchema.parse(JSON.parse((await cli(['manage', 'status', '-w', ws, '--format', 'json'])).stdout)).counts
    await writeFile(toml, `${await readFile(toml, 'utf8')}\n[lexical]\nstemmer = false\n`)
    const unstemmed = await fingerprints(ws)
    expect(changed(brief, unstemmed)).toEqual(['indexing'])
    const stale = QueryResultSchema.parse(JSON.parse((await cli(['search', '-w', ws, 'cache', '--format', 'json'])).stdout))
    expect(stale.warnings.join(' ')).toContain('manage rebuild')
    const rebuild = RebuildReportSchema.parse(JSON.parse((await cli(['manage', 'rebuild', '-w', ws, '--format', 'json'])).stdout))
    expect(rebuild.republished).toBe(true)
    expect(rebuild.reason).toContain('analyzer')
    expect(await lexicalGeneration(ws, rebuild.snapshot_id!)).not.toBe(generation)
    const after = StatusSchema.parse(JSON.parse((await cli(['manage', 'status', '-w', ws, '--format', 'json'])).stdout)).counts
    expect(after.extractions).toBe(before.extractions)
    expect(after.chunks).toBe(before.chunks)
    const fresh = QueryResultSchema.parse(JSON.parse((await cli(['search', '-w', ws, 'cache', '--format', 'json'])).stdout))
    expect(fresh.warnings.join(' ')).not.toContain('manage rebuild')
  })

  it('records: ASVS rows from CSV and JSON are one requirement per id, listed by facet and shown with their evidence; hostile fields stay out of the terminal', async () => {
    const { dir, ws } = await scratch()
    const asvs = join(dir, 'asvs')
    await mkdir(asvs)
    const base = join(ROOT, '../shared/data/docs/owasp-asvs-5.0/OWASP_Application_Security_Verification_Standard_5.0.0_en')
    await copyFile(`${base}.csv`, join(asvs, 'asvs.csv'))
    await copyFile(`${base}.flat.json`, join(asvs, 'asvs.json'))
    // A stranger's row: an escape sequence in its description.
    await writeFile(join(asvs, 'extra.csv'), 'req_id,req_description,L\nV99.1.1,"Verify \u001b[31mred\u001b[0m text",1\n')
    expect((await cli(['init', ws])).code).toBe(0)
    const added = ReceiptSchema.parse(JSON.parse((await cli(['add', '-w', ws, asvs, '--kind', 'standard', '--format', 'json'])).stdout))
    expect(added.files.added).toBe(3)

    const level1 = RecordListSchema.parse(JSON.parse((await cli(['records', 'list', '-w', ws, '--facet', 'level=1', '--facet', 'chapter=V1', '--format', 'json'])).stdout))
    const flat = JSON.parse(await readFile(`${base}.flat.json`, 'utf8')) as { requirements: { req_id: string; chapter_id: string; L: string }[] }
    const expected = flat.requirements.filter((r) => r.L === '1' && r.chapter_id === 'V1').map((r) => r.req_id)
    expect(expected.length).toBeGreaterThan(3)
    expect(level1.records.map((r) => r.key).sort()).toEqual(expected.sort())
    expect(level1.records.every((r) => r.body.level === 1 && r.body.chapter === 'V1' && r.evidence_count === 2)).toBe(true)
    const all = RecordListSchema.parse(JSON.parse((await cli(['records', 'list', '-w', ws, '--type', 'requirement', '--format', 'json'])).stdout))
    expect(all.total).toBe(346)

    const shown = RecordDetailSchema.parse(JSON.parse((await cli(['records', 'show', 'V1.2.1', '-w', ws, '--format', 'json'])).stdout))
    expect(shown.evidence.map((e) => e.format).sort()).toEqual(['csv', 'json'])
    expect(shown.status).toBe('captured')
    const reviewed = RecordDetailSchema.parse(JSON.parse((await cli(['records', 'review', 'V1.2.1', 'accept', '-w', ws, '--format', 'json'])).stdout))
    expect(reviewed.status).toBe('reviewed')
    const text = await cli(['records', 'show', 'V99.1.1', '-w', ws])
    expect(text.code).toBe(0)
    expect(text.stdout).toContain('extra.csv:2-2')
    expect(text.stdout).not.toContain('\u001b')

    // The same conditions narrow a search: only level-2 rows answer.
    const search = QueryResultSchema.parse(JSON.parse((await cli(['search', '-w', ws, 'LDAP injection', '--facet', 'level=2', '--format', 'json'])).stdout))
    expect(search.segments.length).toBeGreaterThan(0)
    // A CSV row ends with its level; a JSON record's text with its last value, the level.
    expect(search.segments.every((s) => s.text.trim().endsWith('2'))).toBe(true)
    const missing = await cli(['records', 'show', 'V0.0.0', '-w', ws])
    expect(missing.code).not.toBe(0)
    expect(missing.stderr).toContain('E_NOT_FOUND')
  })

  it('relations: an RFC header is parsed into assertions; a declaration is checked, a proposal reviewed; answers carry the relations of what they cite', async () => {
    const { dir, ws } = await scratch()
    const rfcs = join(dir, 'rfc')
    await mkdir(rfcs)
    for (const n of [3986, 6749]) await copyFile(join(ROOT, `../shared/data/docs/rfc/rfc${n}.txt`), join(rfcs, `rfc${n}.txt`))
    expect((await cli(['init', ws])).code).toBe(0)
    expect((await cli(['add', '-w', ws, rfcs])).code).toBe(0)
    const listed = RelationAssertionSchema.array().parse(JSON.parse((await cli(['relations', 'list', '-w', ws, '--key', 'RFC 3986', '--format', 'json'])).stdout))
    expect(listed.map((a) => `${a.relation} ${a.to_key}`).sort()).toEqual(['obsoletes RFC 1808', 'obsoletes RFC 2396', 'obsoletes RFC 2732', 'updates RFC 1738'])

    // Refused: cardinality (RFC 2396 already has its successor), with the assertion in the way.
    const refused = await cli(['relations', 'declare', 'RFC 6749', 'obsoletes', 'RFC 2396', '--evidence', 'unit:1', '-w', ws])
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain('E_CONFLICT')
    expect(refused.stderr).toContain('RFC 3986 obsoletes RFC 2396')

    const proposed = RelationAssertionSchema.parse(
      JSON.parse((await cli(['relations', 'declare', 'RFC 6749', 'updates', 'RFC 3986', '--evidence', 'unit:1', '--propose', '-w', ws, '--format', 'json'])).stdout)[0],
    )
    expect(proposed.status).toBe('proposed')
    const text = await cli(['relations', 'review', String(proposed.id), 'accept', '--note', 'checked \u001b[2J', '-w', ws])
    expect(text.code).toBe(0)
    expect(text.stdout).toContain('accepted')
    expect(text.stdout).not.toContain('\u001b')

    const md = await cli(['search', '-w', ws, 'RFC 3986 §3.2.2', '--limit', '1'])
    expect(md.stdout).toContain('> relation: RFC 3986 obsoletes RFC 2396 (parsed, rfc3986.txt:')
    expect(md.stdout).toContain('> relation: RFC 6749 updates RFC 3986 (proposed')
  })
})
