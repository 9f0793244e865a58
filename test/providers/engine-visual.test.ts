import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { createCanvas } from '@napi-rs/canvas'
import { describe, expect, it } from 'vitest'
import { Workspace } from '../../ts/engine/workspace.js'
import { openConfigured } from '../../ts/service/providers.js'
import { nativeMissing } from '../native/_setup.js'
import { filesUnder, useFakeVoyageEngine } from './engine-env.js'

/**
 * The visual channel end to end: at publication the engine (Rust) sends each permitted picture's
 * bytes to the multimodal model through the TypeScript provider (the real `voyageai` SDK, against
 * a loopback fake of the API); at search it embeds the query's words with the same model and the
 * nearest picture votes for the window that holds it, fused at weight 0.7. The fake is told which
 * words "depict" which picture, so the test checks the plumbing, not a model's eyesight.
 */

const KEY = 'pa-test-KEY-5f4dcc3b5aa765d61d8327deb882cf99'

function png(color: string): Buffer {
  const canvas = createCanvas(24, 16)
  const g = canvas.getContext('2d')
  g.fillStyle = color
  g.fillRect(0, 0, 24, 16)
  return canvas.toBuffer('image/png')
}

const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')

describe.skipIf(nativeMissing)('the visual channel with Voyage multimodal embeddings', () => {
  const voyage = useFakeVoyageEngine({ apiKey: KEY, dimension: 16, prefix: 'tychora-visual-' })

  it('embeds permitted pictures at publication and finds them by what they show, fused at 0.7', async () => {
    const dir = join(voyage.scratch, 'ws')
    const figures = join(voyage.scratch, 'figures')
    const secret = join(voyage.scratch, 'secret')
    await mkdir(figures)
    await mkdir(secret)
    const red = png('#d01010')
    const blue = png('#1030d0')
    const green = png('#10c040')
    await writeFile(join(figures, 'figure-1.png'), red)
    await writeFile(join(figures, 'figure-2.png'), blue)
    await writeFile(join(figures, 'notes.md'), '# Notes\n\nThe quarterly figures are attached as pictures.\n')
    await writeFile(join(secret, 'plan.png'), green)

    await Workspace.init(dir)
    const toml = await readFile(join(dir, 'workspace.toml'), 'utf8')
    await writeFile(join(dir, 'workspace.toml'), toml.replace('network = false', 'network = true'))
    await appendFile(join(dir, 'workspace.toml'), '\n[visual]\nprovider = "voyage"\nmodel = "voyage-multimodal-3"\ndimension = 16\ncollections = ["figures"]\n')
    expect(Workspace.providerNeeds(dir)).toEqual({ visual: { provider: 'voyage', model: 'voyage-multimodal-3', dimension: 16 } })

    const ws = await openConfigured(dir)
    try {
      const first = await ws.add({ paths: [figures], collection: 'figures' })
      expect(first.published).toBe(true)
      expect(first.visual).toMatchObject({ pictures: 2, cached: 0, embedded: 2, skipped: 0, not_permitted: 0, calls: 1 })
      const documentCalls = voyage.fake.requests.filter((r) => r.path === '/v1/multimodalembeddings' && r.body.input_type === 'document')
      expect(documentCalls).toHaveLength(1)
      expect(documentCalls[0]?.body.model).toBe('voyage-multimodal-3')
      const sent = ((documentCalls[0]?.body.inputs ?? []) as Array<{ content: Array<{ type: string; image_base64?: string }> }>).map((i) => voyage.fake.multimodalKey(i.content))
      expect(sent.sort()).toEqual([`image:${sha(red)}`, `image:${sha(blue)}`].sort())

      // A collection [visual] does not list is never uploaded.
      const second = await ws.add({ paths: [secret], collection: 'secret' })
      expect(second.visual).toMatchObject({ pictures: 2, cached: 2, embedded: 0, not_permitted: 1 })
      const uploaded = voyage.fake.requests
        .filter((r) => r.path === '/v1/multimodalembeddings' && r.body.input_type === 'document')
        .flatMap((r) => (r.body.inputs as Array<{ content: Array<{ type: string; image_base64?: string }> }>).map((i) => voyage.fake.multimodalKey(i.content)))
      expect(uploaded).not.toContain(`image:${sha(green)}`)

      // No word of "crimson rectangle" is in the corpus: only the visual channel can find figure-1.
      voyage.fake.depicts('crimson rectangle', red)
      const lexical = await ws.search({ query: 'crimson rectangle', channels: ['exact', 'lexical'] })
      expect(lexical.segments.map((s) => s.source.path)).not.toContain('figure-1.png')
      const result = await ws.search({ query: 'crimson rectangle', explain: true })
      const top = result.segments[0]
      expect(top?.source.path).toBe('figure-1.png')
      const visual = top?.channels.find((c) => c.channel === 'visual')
      expect(visual?.rank).toBe(1)
      expect(visual?.score).toBeCloseTo(1, 5)
      expect(result.coverage.channels.find((c) => c.channel === 'visual')).toMatchObject({ weight: 0.7 })
      // RRF with k = 60: a segment only the visual channel found scores 0.7 / 61.
      expect(top?.score).toBeCloseTo(0.7 / 61, 9)
      const queryCall = voyage.fake.requests.at(-1)
      expect(queryCall?.path).toBe('/v1/multimodalembeddings')
      expect(queryCall?.body.input_type).toBe('query')
      expect(queryCall?.body.inputs).toEqual([{ content: [{ type: 'text', text: 'crimson rectangle' }] }])

      // Eligibility holds inside the channel: filtered to another collection, figure-1 is not found.
      const filtered = await ws.search({ query: 'crimson rectangle', collections: ['secret'] })
      expect(filtered.segments.map((s) => s.source.path)).not.toContain('figure-1.png')

      // A provider answer that cannot be used (a vector of the wrong length) fails the job:
      // nothing is published, the snapshot answers as before; the next add embeds only the new picture.
      await writeFile(join(figures, 'figure-3.png'), png('#f0e020'))
      voyage.fake.fail({ kind: 'dimension', dimension: 7 })
      const err = await ws.add({ paths: [figures], collection: 'figures' }).catch((e: unknown) => e)
      expect(err).toMatchObject({ code: 'E_PROVIDER' })
      expect((err as Error).message).toMatch(/multimodal embeddings/)
      expect((err as Error).message).not.toContain(KEY)
      expect((await ws.status()).current_snapshot?.id).toBe(second.snapshot_id)
      const retry = await ws.add({ paths: [figures], collection: 'figures' })
      expect(retry.visual).toMatchObject({ pictures: 3, cached: 2, embedded: 1 })
    } finally {
      ws.close()
    }
    for (const path of filesUnder(dir)) expect(readFileSync(path).includes(KEY), path).toBe(false)
  })

  it('`manage rebuild` embeds pictures added before [visual]; erasing a picture erases its vector', async () => {
    const dir = join(voyage.scratch, 'later')
    const docs = join(voyage.scratch, 'later-docs')
    await mkdir(docs)
    const chart = png('#8020a0')
    await writeFile(join(docs, 'chart.png'), chart)
    await Workspace.init(dir)
    const plain = await Workspace.open(dir)
    try {
      expect((await plain.add({ paths: [docs] })).visual).toBeUndefined()
    } finally {
      plain.close()
    }
    const toml = await readFile(join(dir, 'workspace.toml'), 'utf8')
    await writeFile(join(dir, 'workspace.toml'), `${toml.replace('network = false', 'network = true')}\n[visual]\nprovider = "voyage"\ndimension = 16\ncollections = ["default"]\n`)
    const ws = await openConfigured(dir)
    try {
      voyage.fake.depicts('purple bars', chart)
      // Before the rebuild no picture has a vector: the answer says so instead of silently missing it.
      const before = await ws.search({ query: 'purple bars' })
      expect(before.warnings.join(' ')).toMatch(/no.*vector|has a vector/)
      const report = await ws.rebuild()
      expect(report.visual).toMatchObject({ pictures: 1, embedded: 1 })
      expect(report.republished).toBe(false)
      expect((await ws.search({ query: 'purple bars' })).segments[0]?.source.path).toBe('chart.png')

      await ws.deleteOriginal('chart.png', 'test: erasure request')
      await ws.add({ paths: [docs] })
      const after = await ws.search({ query: 'purple bars', channels: ['visual'] })
      expect(after.segments).toHaveLength(0)
    } finally {
      ws.close()
    }
  })
})
