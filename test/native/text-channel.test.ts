import { existsSync } from 'node:fs'
import { appendFile, readFile, readdir, writeFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { AddPlanSchema } from '../../ts/contracts/ingest.js'
import { QueryResultSchema } from '../../ts/contracts/result.js'
import { cli, nativeMissing, scratch } from './_setup.js'

/** The local model the fetch script puts in the user cache (`node scripts/fetch-model.mjs`; `npm test` runs it). */
const MODEL = join(process.env.TYCHORA_TEST_MODEL ?? join(homedir(), '.cache', 'tychora', 'models', 'all-MiniLM-L6-v2'))

describe.skipIf(nativeMissing)('the text channel from the CLI (local model)', () => {
  it('the model is present (fetched before the tests)', () => {
    expect(existsSync(join(MODEL, 'model.safetensors')), `run node scripts/fetch-model.mjs (looked in ${MODEL})`).toBe(true)
  })

  it('init --embeddings local, add --dry-run, add, search --explain, manage rebuild', async () => {
    const { dir, docs, ws } = await scratch()
    expect((await cli(['init', ws, '--embeddings', 'local'])).code).toBe(0)
    const toml = await readFile(join(ws, 'workspace.toml'), 'utf8')
    expect(toml).toMatch(/channels = \["exact", "lexical", "text"\]/)
    // Vectors go to a cache of this test, not the user's.
    await appendFile(join(ws, 'workspace.toml'), `model_dir = ${JSON.stringify(MODEL)}\ncache_dir = ${JSON.stringify(join(dir, 'cache'))}\n`)

    const dry = await cli(['add', '-w', ws, docs, '--dry-run'])
    expect(dry.code, dry.stderr).toBe(0)
    expect(dry.stdout).toMatch(/dry run \(nothing written, no provider called\): 3 to add/)
    expect(dry.stdout).toMatch(/embed with local\/all-MiniLM-L6-v2@[0-9a-f]{16}\/truncate-256: \d+ new inputs, \d+ tokens; 0 already embedded/)
    expect(dry.stdout).toMatch(/estimated cost: \$0 \(local model\)/)
    const plan = AddPlanSchema.parse(JSON.parse((await cli(['add', '-w', ws, docs, '--dry-run', '--format', 'json'])).stdout))
    expect(plan.windows).toBeGreaterThan(0)
    expect(plan.embedding?.new_inputs).toBe(plan.windows)
    const status = JSON.parse((await cli(['manage', 'status', '-w', ws, '--format', 'json'])).stdout)
    expect(status.counts.sources).toBe(0)
    expect(status.counts.jobs).toBe(0)

    const add = await cli(['add', '-w', ws, docs])
    expect(add.code, add.stderr).toBe(0)
    expect(add.stdout).toMatch(new RegExp(`embedded ${plan.windows} of ${plan.windows} inputs`))

    // "stale" and "validators" are not in the glossary's words: the text channel finds meaning.
    const md = await cli(['search', '-w', ws, 'when is a stored answer too old to reuse', '--channels', 'text', '--explain', '--limit', '3'])
    expect(md.code, md.stderr).toBe(0)
    expect(md.stdout).toMatch(/text #1 \(0\.\d{3}\) · fused 0\.\d{4}/)
    expect(md.stdout).toMatch(/- text: [\d.]+ ms · \d+ candidates · local\/all-MiniLM-L6-v2@/)
    // The weight each channel ran at: an English query, read whole by the model.
    expect(md.stdout).toContain('_fusion weights:_ text 1.25')
    // Part Chinese: the text channel counts for the share of letters the model reads (5 of 7), and
    // the lexical and text scores blend at the shares of those weights (1 : 1.25 × 5/7).
    const mixed = await cli(['search', '-w', ws, 'cache 缓存', '--explain'])
    expect(mixed.code, mixed.stderr).toBe(0)
    expect(mixed.stdout).toContain('_fusion weights:_ exact 2 · lexical 1 (blend 0.528) · text 0.893 (blend 0.472)')
    // All Chinese: the local model does not read Han, so the text channel sits out, and says so.
    const zh = QueryResultSchema.parse(JSON.parse((await cli(['search', '-w', ws, '缓存的新鲜度', '--format', 'json', '--explain'])).stdout))
    expect(zh.coverage.channels.map((c) => c.channel)).toEqual(['exact', 'lexical'])
    expect(zh.warnings).toContainEqual(expect.stringMatching(/the embedding model does not read this query's script/))
    const json = QueryResultSchema.parse(JSON.parse((await cli(['search', '-w', ws, 'cache freshness lifetime', '--format', 'json', '--explain'])).stdout))
    expect(json.applied_scope.channels).toEqual(['exact', 'lexical', 'text'])
    expect(json.coverage.channels.map((c) => c.channel)).toEqual(['exact', 'lexical', 'text'])
    expect(json.coverage.channels.map((c) => c.blend)).toEqual([undefined, 1 / 2.25, 1.25 / 2.25])
    expect(json.segments[0]?.channels.some((c) => c.channel === 'text' && typeof c.score === 'number')).toBe(true)

    // A vector file damaged on disk: verify says so, rebuild rewrites it from the records.
    const textDir = join(ws, 'indexes', 'text')
    const [file] = await readdir(textDir)
    await writeFile(join(textDir, file as string), 'not a vector index')
    const verify = await cli(['manage', 'verify', '-w', ws])
    expect(verify.code).toBe(8)
    expect(verify.stdout).toMatch(/E_CORRUPT snapshot 1: vector index .* does not match its recorded sha256/)
    const rebuild = await cli(['manage', 'rebuild', '-w', ws])
    expect(rebuild.code, rebuild.stderr).toBe(0)
    expect(rebuild.stdout).toMatch(/1 vector file\(s\) rewritten from the records/)
    expect(rebuild.stdout).toMatch(/current snapshot 1 kept/)
    expect((await cli(['manage', 'verify', '-w', ws])).code).toBe(0)
  })

  it('the text channel without [embeddings] is a clear error', async () => {
    const { docs, ws } = await scratch()
    await cli(['init', ws])
    await cli(['add', '-w', ws, docs])
    const r = await cli(['search', '-w', ws, 'cache', '--channels', 'text'])
    expect(r.code).not.toBe(0)
    expect(r.stderr).toMatch(/E_INVALID_ARGUMENT.*text channel needs an \[embeddings\] section/)
  })
})
