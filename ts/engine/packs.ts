import { resolve } from 'node:path'
import { PackEntrySchema, PackSourceSchema, ResolvedPackSchema, type PackEntry, type ResolvedPack } from '../contracts/pack.js'
import { callNative } from './call-native.js'
import { native } from './native.js'
import { checked } from './parse.js'

/*
 * Packs are read, validated (against packs/pack.schema.json) and resolved by the core, which runs
 * with what they resolve to; these calls show that work. `dir` is a workspace directory: its
 * `packs/` folder is visible too (a workspace pack of a built-in's name replaces it).
 */

/** Every pack visible from `dir` (built-in, then the workspace's), each checked and resolved. */
export async function listPacks(dir?: string): Promise<PackEntry[]> {
  const entries = await callNative(() => native().listPacks(dir && resolve(dir)))
  return entries.map((e) => checked(PackEntrySchema, e))
}

/** Checks and resolves the pack files at `paths`; problems name file, line and field. */
export async function validatePacks(paths: string[], dir?: string): Promise<PackEntry[]> {
  const entries = await callNative(() =>
    native().validatePacks(
      dir && resolve(dir),
      paths.map((p) => resolve(p)),
    ),
  )
  return entries.map((e) => checked(PackEntrySchema, e))
}

/** A pack file as written: the workspace's own first, else the built-in one. */
export async function showPack(name: string, dir?: string): Promise<{ name: string; origin: string; text: string }> {
  return checked(PackSourceSchema, await callNative(() => native().showPack(dir && resolve(dir), name)))
}

/** What the workspace in `dir` runs with for a profile (default: its default one), with the origin of every value. */
export async function resolvePack(dir: string, profile?: string): Promise<ResolvedPack> {
  return checked(ResolvedPackSchema, await callNative(() => native().resolvePack(resolve(dir), profile)))
}
