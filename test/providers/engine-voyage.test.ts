import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { appendFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { Workspace } from '../../ts/engine/workspace.js'
import { TychoraError } from '../../ts/errors.js'
import { openConfigured } from '../../ts/service/providers.js'
import { ROOT, nativeMissing } from '../native/_setup.js'
import { filesUnder, useFakeVoyageEngine } from './engine-env.js'

/**
 * The text channel and reranking through Voyage, end to end: the engine (Rust) calls the TypeScript
 * provider (the real `voyageai` SDK) through the binding, against a loopback fake of the API.
 * Faults fail the job with `E_PROVIDER`, leave the published snapshot as it was and keep the
 * vectors already stored; the key is found nowhere in the workspace.
 */

const KEY = 'pa-test-KEY-d41d8cd98f00b204e9800998ecf8427e'

describe.skipIf(nativeMissing)('the engine with Voyage embeddings and reranking', () => {
  const voyage = useFakeVoyageEngine({ apiKey: KEY, dimension: 16, prefix: 'tychora-voyage-' })

  it('embeds at publication, searches and reranks through the provider; faults change nothing', async () => {
    const dir = join(voyage.scratch, 'ws')
    const docs = join(voyage.scratch, 'docs')
    await mkdir(docs)
    for (const [name, text] of [
      ['a.txt', 'alpha beta gamma delta'],
      ['b.txt', 'epsilon zeta eta theta'],
      ['c.txt', 'iota kappa lambda mu'],
    ] as const) {
      await writeFile(join(docs, name), `${text}\n`)
    }
    await Workspace.init(dir, { embeddings: 'voyage' })
    // The fake answers 16 dimensions; cache off so that nothing outside the workspace is written.
    await appendFile(join(dir, 'workspace.toml'), 'dimension = 16\nrepresentation = "window"\ncache_dir = ""\n\n[rerank]\nprovider = "voyage"\n')
    expect(Workspace.providerNeeds(dir)).toEqual({
      embeddings: { provider: 'voyage', model: 'voyage-3.5', dimension: 16, representation: 'window', quantization: 'f32' },
      rerank: { provider: 'voyage', model: 'rerank-2.5' },
    })

    const ws = await openConfigured(dir)
    try {
      const receipt = await ws.add({ paths: [docs] })
      expect(receipt.embedding).toMatchObject({ inputs: 3, embedded: 3, workspace_cached: 0 })
      const documentCalls = voyage.fake.requests.filter((r) => r.path.endsWith('/embeddings') && r.body.input_type === 'document')
      expect(documentCalls).toHaveLength(1)
      expect(documentCalls[0]?.body.model).toBe('voyage-3.5')
      expect(documentCalls[0]?.headers.authorization).toBe(`Bearer ${KEY}`)

      // The fake's vectors are seeded by the text: a query equal to a window's text is its nearest.
      const window = (await ws.search({ query: 'epsilon', channels: ['lexical'] })).segments[0]
      expect(window?.source.path).toBe('b.txt')
      const result = await ws.search({ query: window?.text ?? '', channels: ['text'], explain: true })
      expect(result.segments[0]?.source.path).toBe('b.txt')
      expect(result.segments[0]?.channels[0]).toMatchObject({ channel: 'text', rank: 1 })
      expect(result.segments[0]?.channels[0]?.score).toBeCloseTo(1, 5)
      const queryCall = voyage.fake.requests.at(-2)
      expect(queryCall?.body.input_type).toBe('query')
      const text = result.trace.find((t) => t.stage === 'text')
      expect(text?.provider).toMatchObject({ provider: 'voyage', model: 'voyage-3.5' })
      // Reranking ran on the fused candidates and says so.
      expect(result.applied_scope.rerank).toBe('voyage/rerank-2.5')
      expect(voyage.fake.requests.at(-1)?.path).toMatch(/\/rerank$/)
      expect(result.segments.every((s) => typeof s.rerank_score === 'number')).toBe(true)
      expect(result.trace.find((t) => t.stage === 'rerank')?.provider?.model).toBe('rerank-2.5')
      const unranked = await ws.search({ query: 'alpha', rerank: false })
      expect(unranked.applied_scope.rerank).toBeUndefined()

      // Faults: a vector of the wrong dimension, then a partial batch, then a body that is not JSON.
      const published = receipt.snapshot_id
      const status = await ws.status()
      const faults = [{ kind: 'dimension', dimension: 7 }, { kind: 'partial' }, { kind: 'malformed' }] as const
      for (const [i, fault] of faults.entries()) {
        await writeFile(join(docs, `new-${i}.txt`), `nu xi omicron ${i}\n`)
        voyage.fake.fail(fault)
        const err = await ws.add({ paths: [docs] }).catch((e: unknown) => e)
        expect(err).toBeInstanceOf(TychoraError)
        expect((err as TychoraError).code).toBe('E_PROVIDER')
        expect((err as TychoraError).message).not.toContain(KEY)
        expect((await ws.status()).current_snapshot?.id).toBe(published)
      }
      expect((await ws.status()).counts.vector_records).toBe(status.counts.vector_records)
      expect((await ws.verify()).ok).toBe(true)
      // The provider answers again: the retry embeds only the new windows (its vector generation
      // is a layer over the first one's, so the three windows already embedded are not read again).
      const retry = await ws.add({ paths: [docs] })
      expect(retry.embedding).toMatchObject({ inputs: 3, embedded: 3, workspace_cached: 0 })
      expect(retry.published).toBe(true)
    } finally {
      ws.close()
    }
    // The key is nowhere in the workspace: not in the database, its WAL, job rows, query runs,
    // configuration or runtime files.
    for (const file of filesUnder(dir)) expect(readFileSync(file).includes(KEY), file).toBe(false)
  })

  it("contextualised embeddings: a document's windows are embedded together, and re-embedded together", async () => {
    const dir = join(voyage.scratch, 'contextual')
    const docs = join(voyage.scratch, 'contextual-docs')
    await mkdir(docs)
    await writeFile(join(docs, 'one.txt'), 'first window words\n')
    await writeFile(join(docs, 'two.txt'), 'second document words\n')
    await Workspace.init(dir, { embeddings: 'voyage' })
    await appendFile(join(dir, 'workspace.toml'), 'dimension = 16\nrepresentation = "contextual"\ncache_dir = ""\n')
    expect(Workspace.providerNeeds(dir).embeddings?.model).toBe('voyage-context-3')
    const ws = await openConfigured(dir)
    try {
      const before = voyage.fake.requests.length
      const receipt = await ws.add({ paths: [docs] })
      expect(receipt.embedding).toMatchObject({ inputs: 2, embedded: 2 })
      const calls = voyage.fake.requests.slice(before)
      expect(calls.map((r) => r.path)).toEqual(['/v1/contextualizedembeddings'])
      expect(calls[0]?.body.inputs).toEqual([['first window words'], ['second document words']])
      // A query is a document of one window; the fake's vector of a one-window document is its text's.
      const found = await ws.search({ query: 'second document words', channels: ['text'] })
      expect(found.segments[0]?.source.path).toBe('two.txt')
      expect(voyage.fake.requests.at(-1)?.body.input_type).toBe('query')
      // Unchanged documents are not sent again; a changed one is sent whole.
      await writeFile(join(docs, 'one.txt'), 'first window words, edited\n')
      const again = await ws.add({ paths: [docs] })
      expect(again.embedding).toMatchObject({ inputs: 2, embedded: 1, workspace_cached: 1 })
    } finally {
      ws.close()
    }
  })

  it('the CLI with debug logs: the key is in no output, no log line and no file, even when the server echoes it', async () => {
    const dir = join(voyage.scratch, 'cli')
    const docs = join(voyage.scratch, 'cli-docs')
    await mkdir(docs)
    await writeFile(join(docs, 'a.txt'), 'upsilon phi chi psi\n')
    await Workspace.init(dir, { embeddings: 'voyage' })
    await appendFile(join(dir, 'workspace.toml'), 'dimension = 16\ncache_dir = ""\n')
    const env = { ...process.env, VOYAGE_API_KEY: KEY, TYCHORA_VOYAGE_BASE_URL: voyage.fake.url, TYCHORA_LOG: 'trace', NO_COLOR: '1' }
    // Asynchronous: the fake server answers from this process's event loop.
    const run = (args: string[]) =>
      new Promise<{ status: number | null; stdout: string; stderr: string }>((done, reject) => {
        const child = spawn(process.execPath, [join(ROOT, 'dist/bin/tychora.cjs'), ...args], { env })
        let stdout = ''
        let stderr = ''
        child.stdout.on('data', (d) => (stdout += d))
        child.stderr.on('data', (d) => (stderr += d))
        child.on('error', reject)
        child.on('close', (status) => done({ status, stdout, stderr }))
      })
    // A 400 whose detail quotes the Authorization header back.
    voyage.fake.fail({ kind: 'echo-auth' })
    const failed = await run(['add', '-w', dir, docs])
    expect(failed.status).toBe(12)
    expect(failed.stderr).toMatch(/E_PROVIDER/)
    const ok = await run(['add', '-w', dir, docs])
    expect(ok.status, ok.stderr).toBe(0)
    const search = await run(['search', '-w', dir, 'upsilon', '--explain', '--format', 'json'])
    expect(search.status, search.stderr).toBe(0)
    for (const output of [failed.stdout, failed.stderr, ok.stdout, ok.stderr, search.stdout, search.stderr]) expect(output.includes(KEY)).toBe(false)
    for (const file of filesUnder(dir)) expect(readFileSync(file).includes(KEY), file).toBe(false)
  })

  it('a workspace that names Voyage opens without a key; the first call says what is missing', async () => {
    const dir = join(voyage.scratch, 'nokey')
    await Workspace.init(dir, { embeddings: 'voyage' })
    delete process.env.VOYAGE_API_KEY
    const home = await mkdtemp(join(tmpdir(), 'tychora-home-'))
    const xdg = process.env.XDG_CONFIG_HOME
    process.env.XDG_CONFIG_HOME = home
    try {
      const ws = await openConfigured(dir)
      try {
        expect((await ws.status()).counts.sources).toBe(0)
        const docs = join(voyage.scratch, 'nokey-docs')
        await mkdir(docs)
        await writeFile(join(docs, 'x.txt'), 'rho sigma tau\n')
        const err = await ws.add({ paths: [docs] }).catch((e: unknown) => e)
        expect((err as TychoraError).code).toBe('E_PROVIDER')
        expect((err as TychoraError).message).toMatch(/VOYAGE_API_KEY is not set/)
        expect((await ws.status()).current_snapshot).toBeNull()
      } finally {
        ws.close()
      }
    } finally {
      process.env.VOYAGE_API_KEY = KEY
      if (xdg === undefined) delete process.env.XDG_CONFIG_HOME
      else process.env.XDG_CONFIG_HOME = xdg
      await rm(home, { recursive: true, force: true })
    }
  })
})
