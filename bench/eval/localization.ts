/**
 * Code-localization metrics (SWE-bench style): a ranked list of locations (files or
 * `path:Class.method` functions) against the set the gold fix touched.
 */

/** 1 when every gold location is within the top k, else 0; null when there is no gold to find. */
export function allInTop(ranked: string[], gold: string[], k: number): number | null {
  if (gold.length === 0) return null
  const top = new Set(ranked.slice(0, k))
  return gold.every((g) => top.has(g)) ? 1 : 0
}

export function recallInTop(ranked: string[], gold: string[], k: number): number | null {
  if (gold.length === 0) return null
  const top = new Set(ranked.slice(0, k))
  return gold.filter((g) => top.has(g)).length / gold.length
}

/** Reciprocal rank of the first gold location anywhere in the ranking (not cut off). */
export function reciprocalRank(ranked: string[], gold: string[]): number {
  const wanted = new Set(gold)
  const i = ranked.findIndex((r) => wanted.has(r))
  return i === -1 ? 0 : 1 / (i + 1)
}

/** Distinct values in order of first appearance. */
export function firstAppearance(values: Iterable<string | undefined>): string[] {
  const seen = new Set<string>()
  for (const v of values) if (v !== undefined) seen.add(v)
  return [...seen]
}

/** Mean over the non-null values; null when there are none. */
export function mean(values: Array<number | null>): number | null {
  const present = values.filter((v): v is number => v !== null)
  return present.length === 0 ? null : present.reduce((a, b) => a + b, 0) / present.length
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0
}
