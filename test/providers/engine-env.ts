import { readdirSync, statSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll } from 'vitest'
import { type FakeAnthropic, startFakeAnthropic } from './fake-anthropic.js'
import { type FakeVoyage, startFakeVoyage } from './fake-voyage.js'

/** Every file under `dir`, recursively (to check that a key was written nowhere). */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? filesUnder(path) : [path]
  })
}

/**
 * For a suite that opens workspaces whose configuration names Voyage: a fake Voyage on loopback,
 * `VOYAGE_API_KEY` and `TYCHORA_VOYAGE_BASE_URL` pointing the engine's provider at it, and a
 * scratch folder; all restored or removed after the suite.
 */
export function useFakeVoyageEngine(options: { apiKey: string; dimension: number; prefix: string }): {
  readonly fake: FakeVoyage
  readonly scratch: string
} {
  const saved = { key: process.env.VOYAGE_API_KEY, url: process.env.TYCHORA_VOYAGE_BASE_URL }
  const ctx = {} as { fake: FakeVoyage; scratch: string }
  beforeAll(async () => {
    ctx.fake = await startFakeVoyage({ apiKey: options.apiKey, dimension: options.dimension })
    process.env.VOYAGE_API_KEY = options.apiKey
    process.env.TYCHORA_VOYAGE_BASE_URL = ctx.fake.url
    ctx.scratch = await mkdtemp(join(tmpdir(), options.prefix))
  })
  afterAll(async () => {
    await ctx.fake?.close()
    process.env.VOYAGE_API_KEY = saved.key
    process.env.TYCHORA_VOYAGE_BASE_URL = saved.url
    if (saved.key === undefined) delete process.env.VOYAGE_API_KEY
    if (saved.url === undefined) delete process.env.TYCHORA_VOYAGE_BASE_URL
    if (ctx.scratch) await rm(ctx.scratch, { recursive: true, force: true })
  })
  return ctx
}

/**
 * For a suite whose engine calls Anthropic: a fake Messages API on loopback, with
 * `ANTHROPIC_API_KEY` and `TYCHORA_ANTHROPIC_BASE_URL` pointing the provider at it; both restored
 * after the suite.
 */
export function useFakeAnthropicEngine(options: { apiKey: string }): { readonly fake: FakeAnthropic } {
  const saved = { key: process.env.ANTHROPIC_API_KEY, url: process.env.TYCHORA_ANTHROPIC_BASE_URL }
  const ctx = {} as { fake: FakeAnthropic }
  beforeAll(async () => {
    ctx.fake = await startFakeAnthropic({ apiKey: options.apiKey })
    process.env.ANTHROPIC_API_KEY = options.apiKey
    process.env.TYCHORA_ANTHROPIC_BASE_URL = ctx.fake.url
  })
  afterAll(async () => {
    await ctx.fake?.close()
    for (const [name, value] of [
      ['ANTHROPIC_API_KEY', saved.key],
      ['TYCHORA_ANTHROPIC_BASE_URL', saved.url],
    ] as const) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
  })
  return ctx
}
