/**
 * One rule for what a suite needs beyond the repository (the built addon, `../shared/data`, a
 * packed package): without it the suite is skipped with the reason, so a newcomer's partial
 * checkout still runs the rest — unless this run requires it. `TYCHORA_REQUIRE` (a comma list of
 * needs, or `all`; `.ci/run` and the CI workflow set it) turns a missing need into a failure at
 * collection, so CI can never pass by skipping. `TYCHORA_PACKAGE_TEST=required` (the release
 * workflow's older switch) still requires the package.
 */
export type Need = 'native' | 'data' | 'package' | 'browser' | 'servers'

export function required(need: Need): boolean {
  const needs = (process.env.TYCHORA_REQUIRE ?? '').split(',').map((n) => n.trim())
  if (needs.includes('all') || needs.includes(need)) return true
  return need === 'package' && process.env.TYCHORA_PACKAGE_TEST === 'required'
}

/**
 * `missing` (a reason, or false when the need is met) for `describe.skipIf`/`it.skipIf`; throws
 * instead when this run requires `need`, which fails the file with the reason.
 */
export function unless(need: Need, missing: string | false): string | false {
  if (missing && required(need)) throw new Error(`${missing} — and this run requires ${need} (TYCHORA_REQUIRE=${process.env.TYCHORA_REQUIRE ?? ''}), so the suite fails instead of skipping`)
  return missing
}
