import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Workspace } from '../../ts/engine/workspace.js'
import { dataMissing, nativeMissing, sharedData } from './_setup.js'

/**
 * Cited structure of plain-text laws and RFCs. The GDPR twice, as `--kind regulation`: the clean
 * EUR-Lex text and its noisy PDF-extracted twin (split words, the Official Journal's running header
 * inside sentences, footnotes at page feet); thirty article-level questions — fifteen citations for
 * the exact channel, fifteen in words for the lexical one — must find the same article in both.
 * Then the three RFCs in shared/data: a section reference in any spelling finds that section.
 */

const GDPR = sharedData('docs/gdpr')
const skip = nativeMissing || dataMissing('docs/gdpr')

const QUESTIONS: Array<[string, number]> = [
  ['Article 17(1)(b)', 17],
  ['Article 83(5)(a)', 83],
  ['Article 4(7)', 4],
  ['Article 6(1)(f)', 6],
  ['Article 9(2)(a)', 9],
  ['Article 15(3)', 15],
  ['Article 20(1)', 20],
  ['Article 25(2)', 25],
  ['Article 28(3)(h)', 28],
  ['Article 32(1)(a)', 32],
  ['Article 33(1)', 33],
  ['Article 35(7)', 35],
  ['Article 37(1)(b)', 37],
  ['Article 44', 44],
  ['Article 99(2)', 99],
  ['right to be forgotten erasure of personal data', 17],
  ['notification of a personal data breach to the supervisory authority within 72 hours', 33],
  ['communication of a personal data breach to the data subject', 34],
  ['data protection impact assessment', 35],
  ['designation of the data protection officer', 37],
  ['tasks of the data protection officer', 39],
  ['right to data portability', 20],
  ['conditions for consent', 7],
  ["conditions applicable to child's consent in relation to information society services", 8],
  ['processing of special categories of personal data', 9],
  ['records of processing activities', 30],
  ['security of processing pseudonymisation and encryption', 32],
  ['general conditions for imposing administrative fines', 83],
  ['right to object to processing', 21],
  ['automated individual decision-making, including profiling', 22],
]

describe.skipIf(skip)('legislative text (--kind regulation) on the GDPR and its PDF-extracted twin', () => {
  let scratch: string
  let ws: Workspace

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'tychora-legal-'))
    for (const [twin, file] of [
      ['clean', 'gdpr_2016-679_clean.txt'],
      ['noisy', 'gdpr_2016-679_pdf_extracted.txt'],
    ] as const) {
      await mkdir(join(scratch, twin))
      await copyFile(join(GDPR, file), join(scratch, twin, 'gdpr.txt'))
    }
    await Workspace.init(join(scratch, 'ws'))
    ws = await Workspace.open(join(scratch, 'ws'))
    for (const twin of ['clean', 'noisy']) {
      const receipt = await ws.add({ paths: [join(scratch, twin)], collection: twin, kind: 'regulation' })
      expect(receipt.diagnostics).toEqual([])
    }
  }, 120_000)
  afterAll(async () => {
    ws?.close()
    await rm(scratch, { recursive: true, force: true })
  })

  /** The article the top segment belongs to, from its heading path. */
  async function topArticle(query: string, collection: string): Promise<number | undefined> {
    const result = await ws.search({ query, collections: [collection], limit: 1 })
    const path = result.segments[0]?.locator.heading_path ?? []
    const article = path.map((h) => /^Article (\d+)\b/.exec(h)?.[1]).find((n) => n !== undefined)
    return article === undefined ? undefined : Number(article)
  }

  it('answers the same thirty article-level questions from both twins', async () => {
    const answers: Array<{ query: string; expected: number; clean?: number; noisy?: number }> = []
    for (const [query, expected] of QUESTIONS) {
      answers.push({ query, expected, clean: await topArticle(query, 'clean'), noisy: await topArticle(query, 'noisy') })
    }
    const right = (twin: 'clean' | 'noisy') => answers.filter((a) => a[twin] === a.expected).length
    const agree = answers.filter((a) => a.clean === a.noisy).length
    console.log(`GDPR article@1: clean ${right('clean')}/30, noisy ${right('noisy')}/30, same article ${agree}/30`)
    // Every citation is an exact hit in both twins.
    for (const a of answers.slice(0, 15)) expect([a.query, a.clean, a.noisy]).toEqual([a.query, a.expected, a.expected])
    expect(right('clean')).toBeGreaterThanOrEqual(27)
    expect(right('noisy')).toBeGreaterThanOrEqual(27)
    expect(agree).toBeGreaterThanOrEqual(27)
  })

  it('a citation finds the window that holds the provision, cited with its article path', async () => {
    for (const twin of ['clean', 'noisy']) {
      const result = await ws.search({ query: 'Article 17(1)(b)', collections: [twin], limit: 1, explain: true })
      const top = result.segments[0]
      expect(top?.channels.find((c) => c.channel === 'exact')?.rank).toBe(1)
      expect(top?.text).toMatch(/withdra\s?ws consent on which the processing is based/)
      // The Official Journal's running header never reaches a segment.
      expect(top?.text).not.toMatch(/Official Jour/)
    }
  })
})

const RFCS = sharedData('docs/rfc')

describe.skipIf(nativeMissing || dataMissing('docs/rfc'))('RFCs in plain text (rfc6749.txt is the rfc kind by its name)', () => {
  let scratch: string
  let ws: Workspace

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'tychora-rfc-'))
    await Workspace.init(join(scratch, 'ws'))
    ws = await Workspace.open(join(scratch, 'ws'))
    const receipt = await ws.add({ paths: [RFCS] })
    expect(receipt.diagnostics).toEqual([])
    expect(receipt.added.sort()).toEqual(['rfc2616.txt', 'rfc3986.txt', 'rfc6749.txt'])
  }, 120_000)
  afterAll(async () => {
    ws?.close()
    await rm(scratch, { recursive: true, force: true })
  })

  it('a section reference in any spelling is an exact hit on that section, not on the passages citing it', async () => {
    const cases: Array<[string, string, string]> = [
      ['RFC 6749 §4.1.2', 'rfc6749.txt', '4.1.2. Authorization Response'],
      ['Section 4.1.2 of RFC 6749', 'rfc6749.txt', '4.1.2. Authorization Response'],
      ['rfc 6749 section 4.1.2.1', 'rfc6749.txt', '4.1.2.1. Error Response'],
      ['RFC 2616 section 14.9.4', 'rfc2616.txt', '14.9.4 Cache Revalidation and Reload Controls'],
      ['§3.2.2 of RFC 3986', 'rfc3986.txt', '3.2.2. Host'],
      ['RFC 6749 §A.1', 'rfc6749.txt', 'A.1. "client_id" Syntax'],
    ]
    for (const [query, path, heading] of cases) {
      const top = (await ws.search({ query, limit: 1, explain: true })).segments[0]
      expect([query, top?.source.path, top?.locator.heading_path.at(-1)]).toEqual([query, path, heading.replace(/^(\d+(?:\.\d+)*) /, '$1. ')])
      expect(top?.channels.find((c) => c.channel === 'exact')?.rank).toBe(1)
      // Page furniture is not in the evidence.
      expect(top?.text).not.toMatch(/\[Page \d+\]|\f/)
    }
  })

  it('CRLF text (RFC 2616) keeps exact line locators', async () => {
    const top = (await ws.search({ query: 'RFC 2616 section 14.9.4', limit: 1 })).segments[0]
    expect(top?.citation).toMatch(/^rfc2616\.txt:\d+-\d+$/)
    const [first] = (top?.citation.split(':')[1] ?? '').split('-').map(Number)
    const lines = (await import('node:fs')).readFileSync(join(RFCS, 'rfc2616.txt'), 'latin1').split('\r\n')
    expect(lines[(first as number) - 1]).toMatch(/^14\.9\.4 Cache Revalidation and Reload Controls/)
  })
})
