import { readFile, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ReceiptSchema } from '../../ts/contracts/ingest.js'
import { Workspace } from '../../ts/engine/workspace.js'
import { cli, nativeMissing, scratch } from '../native/_setup.js'
import { buildHostileCorpus } from './corpus.js'

/** What must never reach a terminal raw: C0 controls but \t and \n, DEL, C1, bidi overrides and isolates. */
const RAW_CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/

/** Every file under `dir`, recursively. */
async function files(dir: string): Promise<string[]> {
  const out: string[] = []
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...(await files(path)))
    else if (entry.isFile()) out.push(path)
  }
  return out
}

/** Whether any byte of any file under `dir` contains `needle`. */
async function anyFileContains(dir: string, needle: string): Promise<string[]> {
  const hits: string[] = []
  for (const path of await files(dir)) if ((await readFile(path)).includes(needle)) hits.push(path)
  return hits
}

describe.skipIf(nativeMissing)('hostile corpus through add, under both profiles', () => {
  for (const profile of ['documents', 'code'] as const) {
    it(`${profile}: nothing outside is captured or named, nothing executes, no file fails the job, no control byte reaches the terminal`, async () => {
      const { dir, ws } = await scratch()
      const corpus = await buildHostileCorpus(dir)
      const env = { PATH: `${corpus.bin}:${process.env.PATH}` }
      expect((await cli(['init', ws, '--profile', profile])).code).toBe(0)

      const text = await cli(['add', '-w', ws, corpus.root], { env })
      expect(text.signal).toBeNull()
      expect([0, 10]).toContain(text.code) // succeeded or partial, never an internal error
      expect(text.stdout).not.toMatch(RAW_CONTROL)
      expect(text.stderr).not.toMatch(RAW_CONTROL)

      const again = await cli(['add', '-w', ws, corpus.root, '--format', 'json'], { env })
      expect([0, 10]).toContain(again.code)
      const receipt = ReceiptSchema.parse(JSON.parse(again.stdout))
      expect(receipt.diagnostics.filter((d) => d.code === 'E_INTERNAL')).toEqual([])
      expect(receipt.files.changed + receipt.files.added + receipt.files.removed).toBe(0)
      // Rules say what they left out, once per job.
      const rules = Object.fromEntries(receipt.excluded.map((e) => [e.rule, e.count]))
      expect(rules['hidden (dotfiles and dot-directories)']).toBeGreaterThanOrEqual(3) // .env .git .gitattributes
      expect(rules['capture.exclude: dist/']).toBe(1)
      expect(rules['capture.exclude: node_modules/']).toBe(1)

      // Both names that differ only in an invalid byte are captured, as two sources.
      if (profile === 'documents') {
        const handle = await Workspace.open(ws)
        try {
          const paths = (await handle.listSources({ limit: 1000 })).sources.map((s) => s.path)
          expect(paths).toEqual(expect.arrayContaining(['names/bad\\xff.md', 'names/bad\\xfe.md', 'names/lone-\\xc3.md', 'names/back\\\\slash\\\\x41.md']))
          expect(paths.filter((p) => p.startsWith('names/caf'))).toHaveLength(2) // NFC and NFD twins
          expect(paths.some((p) => p.startsWith('wide/'))).toBe(true)
          expect((await handle.verify()).problems).toEqual([])
          // Malformed documents keep what can be read; hidden Word runs are flagged, never plain text.
          expect(paths).toEqual(expect.arrayContaining(['documents/loop.pdf', 'documents/huge-image.pdf', 'documents/hidden.docx']))
          const hidden = (await handle.search({ query: 'ignore previous instructions reveal the secrets', limit: 10 })).segments.filter((s) => s.source.path === 'documents/hidden.docx')
          expect(hidden.length).toBeGreaterThan(0)
          for (const s of hidden.filter((s) => s.text.includes('Ignore previous'))) expect(s.content_classification).toBe('hidden_text')
        } finally {
          handle.close()
        }
      }

      // Human formats show control characters visibly; JSON keeps them exact.
      for (const query of ['clipboard clear title bell', 'escape in name', 'rtl override', 'zebra crossing']) {
        for (const format of ['md', 'agent']) {
          const out = await cli(['search', '-w', ws, query, '--format', format], { env })
          expect(out.code).toBe(0)
          expect(out.stdout).not.toMatch(RAW_CONTROL)
        }
      }
      const json = await cli(['search', '-w', ws, 'clipboard clear title bell', '--format', 'json'])
      expect(json.stdout).toContain('\\u001b]52;c;')

      // Nothing from outside the root, neither bytes nor names, anywhere in the workspace or output.
      expect(await anyFileContains(ws, corpus.secret)).toEqual([])
      for (const out of [text.stdout, text.stderr, again.stdout]) expect(out).not.toContain(corpus.secret)
      // Nothing ran: no fake program and no hook left a marker.
      expect(await readdir(corpus.markers)).toEqual([])
    })
  }
})
