import { readFileSync, readdirSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

/** The real import graph of ts/, read from the sources. */
function imports(): Array<{ from: string; to: string }> {
  const edges: Array<{ from: string; to: string }> = []
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name)
      if (statSync(path).isDirectory()) walk(path)
      else if (path.endsWith('.ts')) {
        const text = readFileSync(path, 'utf8')
        for (const m of text.matchAll(/(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g)) {
          const spec = (m[1] ?? m[2]) as string
          edges.push({ from: relative('ts', path), to: relative('ts', resolve(dirname(path), spec)) })
        }
      }
    }
  }
  walk('ts')
  return edges
}

const layer = (file: string) => file.split('/')[0] as string

describe('dependency direction', () => {
  const edges = imports()

  it('finds the real graph', () => {
    expect(edges.length).toBeGreaterThan(20)
  })

  it('contracts and errors import nothing but contracts and errors', () => {
    const bad = edges.filter((e) => (layer(e.from) === 'contracts' || e.from === 'errors.ts') && !['contracts', 'errors.js'].includes(layer(e.to)))
    expect(bad).toEqual([])
  })

  it('engine, service, format and eval never import interfaces or adapters (cli, http, mcp, daemon, client)', () => {
    const bad = edges.filter(
      (e) => ['engine', 'service', 'format', 'eval'].includes(layer(e.from)) && ['cli', 'http', 'mcp', 'daemon', 'client'].includes(layer(e.to)),
    )
    expect(bad).toEqual([])
  })

  it('the HTTP and MCP surfaces do not depend on each other, on the CLI, or on the daemon that composes them', () => {
    const bad = edges.filter(
      (e) =>
        (layer(e.from) === 'http' && ['mcp', 'cli', 'daemon'].includes(layer(e.to))) ||
        (layer(e.from) === 'mcp' && (['http', 'cli'].includes(layer(e.to)) || e.to === 'daemon/daemon.js')),
    )
    expect(bad).toEqual([])
  })

  it('the HTTP client never loads the engine (it runs where no native addon is installed)', () => {
    const bad = edges.filter((e) => layer(e.from) === 'client' && layer(e.to) === 'engine' && e.to !== 'engine/call-native.js')
    expect(bad).toEqual([])
  })

  it('only the engine loads the native binding', () => {
    const bad = edges.filter((e) => layer(e.to) === 'native' && layer(e.from) !== 'engine')
    expect(bad).toEqual([])
  })
})
