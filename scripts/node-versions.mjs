// The package test (test/package: pack, install into an empty folder outside the repository, then
// the CLI, the MCP server and the library from there) under every Node major the package supports
// besides the one running this script: `node scripts/node-versions.mjs [22,24]` (`.ci/run` calls
// it after the README's test command). Each Node binary comes from the npm registry's `node`
// package, whose versions install that release's binary; they are kept under
// ~/.cache/tychora/nodes/<major>. A major that fails its package test fails the script.
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { delimiter, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The Node binary of `major` from the npm `node` package, installed on first use; with its version. */
export function nodeBinary(major) {
  if (!/^\d+$/.test(String(major))) throw new Error(`not a Node major: ${major}`)
  const dir = join(homedir(), '.cache', 'tychora', 'nodes', String(major))
  const bin = join(dir, 'node_modules', 'node', 'bin')
  if (!existsSync(join(bin, 'node'))) {
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, 'package.json'), '{ "private": true }\n')
    execFileSync('npm', ['install', '--no-audit', '--no-fund', `node@${major}`], { cwd: dir, stdio: 'inherit' })
  }
  const node = join(bin, 'node')
  return { node, bin, version: execFileSync(node, ['--version']).toString().trim() }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const majors = (process.argv[2] ?? process.env.TYCHORA_NODE_MAJORS ?? '22,24').split(',').filter(Boolean)
  const results = []
  for (const major of majors) {
    const { bin, version } = nodeBinary(major)
    process.stdout.write(`\n== the package test under Node ${version} ==\n`)
    const started = performance.now()
    const run = spawnSync('npx', ['vitest', 'run', 'test/package'], {
      stdio: 'inherit',
      env: { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH}`, TYCHORA_NODE_EXPECTED: version },
    })
    results.push({ version, ok: run.status === 0, s: (performance.now() - started) / 1000 })
  }
  process.stdout.write(`\n${results.map((r) => `Node ${r.version}: ${r.ok ? 'passed' : 'FAILED'} (${r.s.toFixed(0)} s)`).join('\n')}\n`)
  if (results.some((r) => !r.ok)) process.exitCode = 1
}
