import { readFileSync, readdirSync, statSync } from 'node:fs'
import { appendFile, copyFile, mkdir, readFile, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DescribeReportSchema } from '../../ts/contracts/description.js'
import { EvidenceSchema } from '../../ts/contracts/evidence.js'
import { Workspace } from '../../ts/engine/workspace.js'
import { TychoraError } from '../../ts/errors.js'
import { imageDescriber } from '../../ts/service/providers.js'
import { ROOT, cli, nativeMissing, scratch } from '../native/_setup.js'
import { type FakeAnthropic, startFakeAnthropic } from './fake-anthropic.js'

/**
 * `describe asset`, end to end: the core checks the picture (permitted collection, retained and
 * re-hashed bytes, a form the model reads), the real `@anthropic-ai/sdk` sends it to a loopback
 * fake of the Messages API, and the answer is kept beside the asset as unreviewed, derived
 * evidence: shown by inspect, never a search result's text, erased with the picture, and with no
 * trace of the key anywhere in the workspace.
 */

const KEY = 'sk-ant-test-KEY-0cc175b9c0f1b6a831c399e269772661'

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? files(path) : [path]
  })
}

async function rejection(promise: Promise<unknown>): Promise<TychoraError> {
  const error = await promise.then(
    () => {
      throw new Error('expected a rejection')
    },
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(TychoraError)
  return error as TychoraError
}

describe.skipIf(nativeMissing)('descriptions of pictures by a vision model', () => {
  let fake: FakeAnthropic
  const saved = { key: process.env.ANTHROPIC_API_KEY, url: process.env.TYCHORA_ANTHROPIC_BASE_URL }

  beforeAll(async () => {
    fake = await startFakeAnthropic({ apiKey: KEY })
    process.env.ANTHROPIC_API_KEY = KEY
    process.env.TYCHORA_ANTHROPIC_BASE_URL = fake.url
  })
  afterAll(async () => {
    await fake.close()
    for (const [name, value] of [
      ['ANTHROPIC_API_KEY', saved.key],
      ['TYCHORA_ANTHROPIC_BASE_URL', saved.url],
    ] as const) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
  })

  it('uploads only a permitted, verified picture and keeps the answer as reviewable derived evidence', async () => {
    const { dir, ws: wsDir } = await scratch()
    const manuals = join(dir, 'manuals')
    const secret = join(dir, 'secret')
    await mkdir(manuals)
    await mkdir(secret)
    const { createCanvas } = await import('@napi-rs/canvas')
    const draw = async (text: string) => {
      const canvas = createCanvas(400, 120)
      const ctx = canvas.getContext('2d')
      ctx.fillStyle = 'white'
      ctx.fillRect(0, 0, 400, 120)
      ctx.fillStyle = 'black'
      ctx.font = '30px sans-serif'
      ctx.fillText(text, 10, 70)
      return Buffer.from(await canvas.encode('png'))
    }
    const chart = await draw('Revenue by quarter')
    await writeFile(join(manuals, 'revenue-chart.png'), chart)
    await writeFile(join(secret, 'badge-photo.png'), await draw('Employee badge'))
    await copyFile(resolve(ROOT, '../shared/data/docs/docx/docling/word_sample.docx'), join(manuals, 'word_sample.docx'))
    await Workspace.init(wsDir)
    let ws = await Workspace.open(wsDir)
    const assetOf = async (path: string, query = path.replace(/\.\w+$/, '').replace(/[-_]/g, ' ')) => {
      const found = await ws.search({ query, limit: 10 })
      const segment = found.segments.find((s) => s.source.path === path)!
      const revision = await ws.inspect(`revision:${segment.revision.revision_id}`)
      if (revision.type !== 'revision') throw new Error('a revision')
      return { revision: segment.revision.revision_id, asset: revision.extractions[0]!.document!.assets[0]! }
    }
    let chartAsset: Awaited<ReturnType<typeof assetOf>>
    let badgeAsset: Awaited<ReturnType<typeof assetOf>>
    let docxSha = ''
    let requestsBefore = 0
    try {
      expect((await ws.add({ paths: [manuals], collection: 'manuals' })).status).toBe('succeeded')
      expect((await ws.add({ paths: [secret], collection: 'secret' })).status).toBe('succeeded')
      chartAsset = await assetOf('revenue-chart.png')
      badgeAsset = await assetOf('badge-photo.png')
      // Off unless configured: nothing is checked, nothing is sent.
      const off = await rejection(ws.describe(chartAsset.asset.sha256, imageDescriber()))
      expect(off.code).toBe('E_INVALID_ARGUMENT')
      expect(off.message).toMatch(/^descriptions are off: add a \[descriptions\] section/)
    } finally {
      ws.close()
    }

    // The picture leaves the machine, so the profile must allow the network and the collection must be listed.
    const config = join(wsDir, 'workspace.toml')
    const base = await readFile(config, 'utf8')
    await writeFile(config, base.replace('network = false', 'network = true'))
    await appendFile(config, '\n[descriptions]\nprovider = "anthropic"\nmodel = "claude-test"\ncollections = ["manuals"]\nmax_tokens = 300\n')
    ws = await Workspace.open(wsDir)
    try {
      const forbidden = await rejection(ws.describe(badgeAsset.asset.sha256, imageDescriber()))
      expect(forbidden.code).toBe('E_FORBIDDEN')
      expect(forbidden.message).toBe(`asset ${badgeAsset.asset.sha256} is held by collection "secret", whose pictures may not be uploaded: [descriptions] collections = ["manuals"]`)
      const unknown = await rejection(ws.describe('0123456789abcdef', imageDescriber()))
      expect(unknown.code).toBe('E_NOT_FOUND')
      expect((await rejection(ws.describe('not-a-sha', imageDescriber()))).code).toBe('E_INVALID_ARGUMENT')

      // A dry run checks and shows what would go, and sends nothing.
      const dry = await ws.describe(chartAsset.asset.sha256.slice(0, 16), undefined, { dryRun: true })
      expect(dry).toMatchObject({
        asset: chartAsset.asset.sha256,
        path: 'revenue-chart.png',
        collections: ['manuals'],
        dry_run: true,
        description: null,
      })
      expect(dry.sent).toEqual({ media_type: 'image/png', bytes: chart.length, sha256: chartAsset.asset.sha256 })
      expect(fake.requests).toHaveLength(0)

      const done = await ws.describe(chartAsset.asset.sha256, imageDescriber())
      expect(DescribeReportSchema.safeParse(done).success).toBe(true)
      expect(fake.requests).toHaveLength(1)
      const sent = fake.requests[0]!.body
      expect(sent.model).toBe('claude-test')
      expect(sent.max_tokens).toBe(300)
      expect(Buffer.from(sent.messages![0]!.content[0]!.source!.data, 'base64').equals(chart)).toBe(true)
      const description = done.description!
      expect(description).toMatchObject({
        sha256: chartAsset.asset.sha256,
        sent_sha256: chartAsset.asset.sha256,
        sent_media_type: 'image/png',
        provider: 'anthropic',
        model: 'claude-test-20260101',
        text: fake.describe('image/png', chart),
        stop_reason: 'end_turn',
        input_tokens: 1500,
        output_tokens: 40,
        review_status: 'unreviewed',
        reviewed_at: null,
      })
      expect(description.prompt_fingerprint).toMatch(/^[0-9a-f]{64}$/)
      expect(description.prompt_fingerprint).toBe(done.prompt_fingerprint)

      // inspect shows it beside the asset; search never returns it as the source's text.
      const revision = await ws.inspect(`revision:${chartAsset.revision}`)
      expect(EvidenceSchema.safeParse(revision).success).toBe(true)
      if (revision.type !== 'revision') throw new Error('a revision')
      expect(revision.extractions[0]!.document!.assets[0]!.descriptions).toEqual([description])
      const searched = await ws.search({ query: 'bar chart titled Quarterly revenue', limit: 20 })
      expect(searched.segments.some((s) => s.text.includes('bar chart'))).toBe(false)

      // A refusal records nothing; a DOCX picture is described like a file.
      fake.fail({ kind: 'refusal' })
      const refused = await rejection(ws.describe(chartAsset.asset.sha256, imageDescriber()))
      expect(refused.code).toBe('E_PROVIDER')
      const docxAsset = await assetOf('word_sample.docx', 'cartoon duck holding a paper')
      const docx = await ws.describe(docxAsset.asset.sha256, imageDescriber())
      expect(docx.description!.sha256).toBe(docxAsset.asset.sha256)
      docxSha = docxAsset.asset.sha256
      const again = await ws.inspect(`revision:${chartAsset.revision}`)
      if (again.type !== 'revision') throw new Error('a revision')
      expect(again.extractions[0]!.document!.assets[0]!.descriptions).toHaveLength(1)

      const reviewed = await ws.reviewDescription(description.id, 'accepted', 'checked against the chart')
      expect(reviewed).toMatchObject({ id: description.id, review_status: 'accepted', review_note: 'checked against the chart' })
      expect(reviewed.reviewed_at).toBeGreaterThan(0)
      expect((await rejection(ws.reviewDescription(999_999, 'rejected'))).code).toBe('E_NOT_FOUND')

      // Erasing the picture erases what was said about it.
      await ws.deleteOriginal(`revision:${chartAsset.revision}`, 'legal request')
      // The revision stays as history with its tombstone; its extraction, pictures and what was
      // said of them are gone from every snapshot.
      const erased = await ws.inspect(`revision:${chartAsset.revision}`)
      if (erased.type !== 'revision') throw new Error('a revision')
      expect(erased.extractions).toEqual([])
      expect(erased.tombstones.map((t) => t.kind)).toContain('erasure')
      expect((await rejection(ws.describe(chartAsset.asset.sha256, imageDescriber()))).code).toBe('E_NOT_FOUND')
    } finally {
      ws.close()
    }
    requestsBefore = fake.requests.length
    // The key is nowhere in the workspace.
    for (const path of files(wsDir)) expect(readFileSync(path).includes(KEY), path).toBe(false)

    // The CLI: a dry run prints what would be sent; a refused picture is an error with its reason.
    const dry = await cli(['describe', 'asset', docxSha, '--dry-run', '--workspace', wsDir])
    expect(dry.code, dry.stderr).toBe(0)
    expect(DescribeReportSchema.parse(JSON.parse(dry.stdout))).toMatchObject({
      asset: docxSha,
      path: 'word_sample.docx',
      dry_run: true,
      description: null,
    })
    const refused = await cli(['describe', 'asset', badgeAsset.asset.sha256, '--workspace', wsDir])
    expect(refused.code).toBe(9)
    expect(refused.stderr).toContain('E_FORBIDDEN')
    expect(fake.requests.length).toBe(requestsBefore)
  })
})
