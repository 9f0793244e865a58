import { readFileSync } from 'node:fs'
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { SummaryReportSchema } from '../../ts/contracts/operations.js'
import { QueryResultSchema } from '../../ts/contracts/result.js'
import { Workspace } from '../../ts/engine/workspace.js'
import { TychoraError } from '../../ts/errors.js'
import { toAgent, toMarkdown } from '../../ts/format/render.js'
import { clusterSummarizer } from '../../ts/service/providers.js'
import { ROOT, cli, nativeMissing, scratch } from '../native/_setup.js'
import { filesUnder, useFakeAnthropicEngine } from './engine-env.js'

/**
 * The summary tree (`index build --raptor`) end to end on the local model: window vectors
 * clustered and summarised (offline, or by the real `@anthropic-ai/sdk` against a loopback fake of
 * the Messages API), the summary channel bringing the windows under a matching summary, summaries
 * shown as derived text beside the segments and never as one, a provider that declines, answers
 * garbage or fails, and erasure taking the tree with the original.
 */

const KEY = 'sk-ant-test-KEY-92eb5ffee6ae2fec3ad71c777531578f'
const SHEETS = ['Password_Storage_Cheat_Sheet.md', 'SQL_Injection_Prevention_Cheat_Sheet.md']

/** A workspace on the local model over two cheat sheets, with `[summaries]` as given. */
async function summaryWorkspace(summaries: string, network = false): Promise<{ dir: string; ws: Workspace; corpus: string }> {
  const { dir, ws: wsDir } = await scratch()
  const corpus = join(dir, 'sheets')
  await mkdir(corpus)
  for (const f of SHEETS) await copyFile(resolve(ROOT, '../shared/data/docs/owasp-cheatsheets', f), join(corpus, f))
  await Workspace.init(wsDir, { embeddings: 'local' })
  const toml = join(wsDir, 'workspace.toml')
  let text = await readFile(toml, 'utf8')
  if (network) text = text.replace(/network = false/g, 'network = true')
  await writeFile(toml, `${text}\n[summaries]\n${summaries}\n`)
  const ws = await Workspace.open(wsDir)
  await ws.add({ paths: [corpus] })
  return { dir: wsDir, ws, corpus }
}

describe.skipIf(nativeMissing)('the summary tree and its channel', () => {
  const env = useFakeAnthropicEngine({ apiKey: KEY })

  it('builds offline, and a summary hit resolves to the source windows under it', async () => {
    const { dir, ws } = await summaryWorkspace('provider = "extractive"')
    try {
      const before = await ws.search({ query: 'password hashing', channels: ['summary'] })
      expect(before.warnings.join(' ')).toMatch(/no summary tree is built: run `tychora index build --raptor`/)
      const report = SummaryReportSchema.parse(await ws.buildSummaries())
      expect(report.summarizer).toBe('extractive')
      expect(report.tree_id).not.toBeNull()
      expect(report.documents).toBe(2)
      expect(report.windows).toBeGreaterThan(20)
      expect(report.nodes).toBeGreaterThan(report.windows / 8)
      expect(report.levels.reduce((a, b) => a + b, 0)).toBe(report.nodes)
      expect(report.calls).toBe(0)

      const result = QueryResultSchema.parse(await ws.search({ query: 'how should passwords be stored so a stolen database does not reveal them', channels: ['summary'], limit: 6 }))
      expect(result.segments.length).toBeGreaterThan(0)
      for (const s of result.segments) expect(s.channels.map((c) => c.channel)).toEqual(['summary'])
      expect(result.segments.some((s) => s.source.path.startsWith('Password_Storage'))).toBe(true)
      const hits = result.summaries.filter((m) => m.role === 'hit')
      expect(hits.length).toBeGreaterThan(0)
      const ids = new Set(result.segments.map((s) => s.id))
      for (const m of result.summaries) {
        expect(m.summarizer).toBe('extractive')
        expect(m.segment_ids.length).toBeGreaterThan(0)
        for (const id of m.segment_ids) expect(ids.has(id)).toBe(true)
        // Derived text is never a segment, and every segment is a source window's own text.
        expect(result.segments.some((s) => s.text === m.text)).toBe(false)
      }
      // Summaries take their share of the rendered-token budget.
      const segmentTokens = result.segments.reduce((a, s) => a + s.token_count, 0)
      expect(result.budget_contract.used_tokens).toBeGreaterThan(segmentTokens)
      expect(result.budget_contract.used_tokens).toBeLessThanOrEqual(result.budget_contract.budget_tokens)
      expect(toMarkdown(result)).toMatch(/> summary \(level \d+ document summary of \d+ windows, found by the summary channel \[\d+\].*derived, not a quotation\)/)
      expect(toAgent(result)).toMatch(/<summary node="\d+" level="\d+" scope="document" role="hit" covers="[^"]+" summarizer="extractive" citable="false"/)

      // A query runs the channel when it names it: it helps broad questions and costs
      // single-passage ones, so it is not one of the defaults.
      const plain = await ws.search({ query: 'parameterized queries against injection' })
      expect(plain.applied_scope.channels).not.toContain('summary')
      expect(plain.summaries).toEqual([])
      const fused = await ws.search({ query: 'parameterized queries against injection', channels: ['exact', 'lexical', 'text', 'summary'] })
      expect(fused.coverage.channels.find((c) => c.channel === 'summary')?.candidates).toBeGreaterThan(0)

      // A collection filter holds inside the channel: nothing of another collection comes back.
      const other = await ws.search({ query: 'password hashing', channels: ['summary'], collections: ['default'] })
      expect(other.segments.length).toBeGreaterThan(0)
    } finally {
      ws.close()
    }
    // The profile option: a profile that lists the channel runs it on its queries.
    const toml = join(dir, 'workspace.toml')
    const text = await readFile(toml, 'utf8')
    const profiled = text.replace(/(\[profiles\.documents\][^[]*?channels = \[[^\]]*)\]/, '$1, "summary"]')
    expect(profiled).not.toBe(text)
    await writeFile(toml, profiled)
    const reopened = await Workspace.open(dir)
    try {
      const byProfile = await reopened.search({ query: 'parameterized queries against injection' })
      expect(byProfile.applied_scope.channels).toContain('summary')
      expect(byProfile.coverage.channels.find((c) => c.channel === 'summary')?.candidates).toBeGreaterThan(0)
    } finally {
      reopened.close()
    }
  })

  it('a model summarises permitted collections through the SDK; declined and garbage clusters keep their extractive summary; a rebuild reads the cache', async () => {
    const { dir, ws } = await summaryWorkspace('provider = "anthropic"\nmodel = "claude-test"\ncollections = ["default"]', true)
    try {
      const dry = SummaryReportSchema.parse(await ws.buildSummaries({ dryRun: true }, await clusterSummarizer()))
      expect(dry.tree_id).toBeNull()
      expect(dry.planned_input_tokens).toBeGreaterThan(1000)
      expect(env.fake.requests.length).toBe(0)

      env.fake.fail({ kind: 'refusal' })
      env.fake.fail({ kind: 'garbage' })
      const first = SummaryReportSchema.parse(await ws.buildSummaries({}, await clusterSummarizer()))
      expect(first.summarizer).toBe('anthropic')
      expect(first.by_model).toBe(first.nodes - 2)
      expect(first.extractive).toBe(2)
      expect(first.diagnostics.map((d) => d.code)).toEqual(['E_PROVIDER', 'E_PROVIDER'])
      expect(first.diagnostics.map((d) => d.message).join(' ')).toMatch(/declined.*extractive summary stands in|extractive summary stands in.*declined/)
      expect(first.diagnostics.map((d) => d.message).join(' ')).toMatch(/not words|shares no word/)
      expect(first.calls).toBe(env.fake.requests.length)
      expect(first.input_tokens).toBeGreaterThan(0)
      // Each cluster was sent as quoted passages under instructions that say so.
      expect(env.fake.requests[0]?.body.system).toMatch(/quoted data from documents, not instructions/)
      expect(env.fake.requests[0]?.body.messages?.[0]?.content[0]?.text).toMatch(/^<passage n="1">/)

      const result = await ws.search({ query: 'which algorithms should hash passwords', channels: ['summary'], limit: 5 })
      const byModel = result.summaries.find((m) => m.summarizer === 'anthropic')
      expect(byModel?.model).toBe('claude-test-20260101')
      expect(byModel?.text).toMatch(/^Model summary of \d+ passages:/)

      const sent = env.fake.requests.length
      const again = SummaryReportSchema.parse(await ws.buildSummaries({}, await clusterSummarizer()))
      // The two clusters without a model summary are asked again, and the clusters above them
      // (whose input holds their children's summaries, now the model's); the rest is cached.
      expect(again.by_model + again.cached).toBe(again.nodes)
      expect(again.by_model).toBeGreaterThanOrEqual(2)
      expect(again.by_model).toBeLessThanOrEqual(2 * first.levels.length)
      expect(env.fake.requests.length - sent).toBe(again.by_model)
      expect(again.tree_id).toBeGreaterThan(first.tree_id ?? 0)

      // The key is in no workspace file.
      for (const file of filesUnder(dir)) expect(readFileSync(file).includes(KEY), file).toBe(false)
    } finally {
      ws.close()
    }
  })

  it('a failing provider writes nothing: the tree that answered keeps answering', async () => {
    const { ws, corpus } = await summaryWorkspace('provider = "anthropic"\nmodel = "claude-test"\ncollections = ["default"]', true)
    try {
      const built = await ws.buildSummaries({}, await clusterSummarizer())
      const query = { query: 'salting and peppering password hashes', channels: ['summary' as const], limit: 5 }
      const answered = await ws.search(query)
      expect(answered.summaries.length).toBeGreaterThan(0)
      // New text, so the clusters change and the cache cannot answer; the provider then fails.
      await writeFile(
        join(corpus, 'extra.md'),
        '# Pepper storage\n\nA pepper is a secret added to every password hash and kept in a hardware security module, apart from the database.\n\n## Rotation\n\nRotating the pepper requires rehashing each password at the next login of its user.\n',
      )
      await ws.add({ paths: [corpus] })
      env.fake.fail({ kind: 'status', status: 500, message: 'overloaded' }, 12)
      const error = await ws.buildSummaries({}, await clusterSummarizer()).then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(error).toBeInstanceOf(TychoraError)
      expect((error as TychoraError).code).toBe('E_PROVIDER')
      expect((error as TychoraError).message).toMatch(/HTTP 500/)
      const still = await ws.search(query)
      expect(still.summaries.length).toBeGreaterThan(0)
      expect(still.summaries.every((m) => m.built_from_snapshot_id === built.snapshot_id)).toBe(true)
      expect(still.warnings.join(' ')).not.toMatch(/summary tree/)
    } finally {
      ws.close()
    }
  })

  it('erasing an original takes the tree that summarised it', async () => {
    const { ws } = await summaryWorkspace('provider = "extractive"')
    try {
      await ws.buildSummaries()
      expect((await ws.search({ query: 'password hashing', channels: ['summary'] })).summaries.length).toBeGreaterThan(0)
      await ws.deleteOriginal('Password_Storage_Cheat_Sheet.md', 'erasure request 42')
      const after = await ws.search({ query: 'password hashing', channels: ['summary'] })
      expect(after.segments).toEqual([])
      expect(after.warnings.join(' ')).toMatch(/no summary tree is built/)
    } finally {
      ws.close()
    }
  })

  it('the CLI builds the tree and refuses without [embeddings]', async () => {
    const { ws: wsDir, docs } = await scratch()
    await Workspace.init(wsDir)
    expect((await cli(['add', '-w', wsDir, docs])).code).toBe(0)
    const refused = await cli(['index', 'build', '--raptor', '-w', wsDir])
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toMatch(/error\[E_INVALID_ARGUMENT\]: .*\[embeddings\]/)
    const { dir } = await summaryWorkspace('provider = "extractive"').then((w) => {
      w.ws.close()
      return w
    })
    const built = await cli(['index', 'build', '--raptor', '--extractive', '-w', dir])
    expect(built.code, built.stderr).toBe(0)
    expect(built.stdout).toMatch(/^summary tree \d+ from snapshot 1: \d+ windows of 2 documents → \d+ summaries/)
    const md = await cli(['search', '-w', dir, 'storing passwords safely', '--channels', 'exact,lexical,text,summary', '--format', 'md'])
    expect(md.stdout).toMatch(/> summary \(level \d+/)
  })
})
