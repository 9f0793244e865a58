import { describe, expect, it } from 'vitest'
import { oneLine, visible, visibleLines } from '../../ts/format/terminal.js'

/** Every code point `visible` must not let through: C0 but \t \n \r, DEL, C1, bidi controls. */
const UNSAFE = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/

/** Reverses the documented notation: `\xNN` and `\u{N…}` are escapes, every other backslash is literal. */
function unescaped(text: string): string {
  return text.replace(/\\x([0-7][0-9a-f])|\\u\{([0-9a-f]+)\}/g, (_, x?: string, u?: string) => String.fromCodePoint(Number.parseInt((x ?? u) as string, 16)))
}

describe('visible', () => {
  it('escapes terminal controls: OSC 52, CSI, title, bell, C1 CSI, DEL, bidi overrides', () => {
    expect(visible('a\x1b]52;c;ZXZpbA==\x07b')).toBe('a\\x1b]52;c;ZXZpbA==\\x07b')
    expect(visible('\x1b[2J\x1b]0;title\x07')).toBe('\\x1b[2J\\x1b]0;title\\x07')
    expect(visible('\u009b31m\x7f\x00')).toBe('\\u{9b}31m\\x7f\\x00')
    expect(visible('abc\u202edcba \u2066x\u2069 \u202a')).toBe('abc\\u{202e}dcba \\u{2066}x\\u{2069} \\u{202a}')
  })

  it('keeps newlines, tabs, CRLF line ends and ordinary text as they are', () => {
    const text = '# Title\n\n\tindented, CRLF\r\nend — ünïcödé, emoji 🦓, C:\\path\\to, regex \\d+\\s'
    expect(visible(text)).toBe(text)
    expect(visible('a\rb')).toBe('a\\x0db')
    expect(visible('trailing\r')).toBe('trailing\\x0d')
  })

  it('is unambiguous: a literal backslash that looks like an escape is escaped itself', () => {
    expect(visible('\\x1b and \\u{202e}')).toBe('\\x5cx1b and \\x5cu{202e}')
    const samples = ['\\x1b\x1b', '\\\\x41\\', '\\x\x07', '\\u{\u202e}', 'C:\\x64\\', 'a\x1b\\x1bb\r\n\t\u009b']
    for (const s of samples) {
      const out = visible(s)
      expect(out).not.toMatch(UNSAFE)
      expect(unescaped(out)).toBe(s)
    }
  })

  it("leaves a stored file name's escapes (\\xff for an invalid byte, \\\\ for a backslash) as they are", () => {
    expect(visible('names/bad\\xff.md')).toBe('names/bad\\xff.md')
    expect(visible('back\\\\slash.md')).toBe('back\\\\slash.md')
    expect(visible('esc\x1b.md')).not.toBe(visible('esc\\x1b.md'))
  })

  it('lets no unsafe code point through, whatever the input', () => {
    const codes = [...Array(0x100).keys(), ...Array.from({ length: 0x70 }, (_, i) => 0x2000 + i)]
    const all = codes.map((c) => String.fromCodePoint(c)).join('')
    const out = visible(all)
    expect(out).not.toMatch(UNSAFE)
    expect(out).not.toMatch(/\r(?!\n)/)
    expect(unescaped(out)).toBe(all)
  })

  it('makes tag characters and zero-width characters visible (issue 32, item 9)', () => {
    // "ignore all" spelled in tag characters after an innocent word: an agent reads it, a person does not see it.
    const tags = [...'ignore all'].map((c) => String.fromCodePoint(0xe0000 + c.codePointAt(0)!)).join('')
    const out = visible(`hello${tags}\u{e007f}`)
    expect(out).not.toMatch(/[\u{e0000}-\u{e007f}]/u)
    expect(out.startsWith('hello\\u{e0069}\\u{e0067}')).toBe(true)
    expect(unescaped(out)).toBe(`hello${tags}\u{e007f}`)
    expect(visible('ig\u200bnore \ufeffall\u2060 \u200e\u200f\u061c\u180e\u2062')).toBe('ig\\u{200b}nore \\u{feff}all\\u{2060} \\u{200e}\\u{200f}\\u{61c}\\u{180e}\\u{2062}')
    // Joiners between Latin letters, at a word's edge or in a run carry payload, not spelling.
    expect(visible('a\u200cb \u200dc d\u200c\u200de')).toBe('a\\u{200c}b \\u{200d}c d\\u{200c}\\u{200d}e')
  })

  it('keeps the joiners that spell Persian, Hindi and emoji sequences', () => {
    const spelling = ['می\u200cخواهم', 'क्\u200dष', 'ক্\u200cষ', '👩\u200d💻', '👩🏽\u200d💻', '🏳\ufe0f\u200d🌈']
    for (const s of spelling) expect(visible(s)).toBe(s)
    // Two joiners in a row between Arabic letters are not spelling.
    expect(visible('ب\u200c\u200cب')).toBe('ب\\u{200c}\\u{200c}ب')
  })

  it('keeps a one-line field on its line: newlines, tabs, CR and line separators escaped (issue 32, item 8)', () => {
    const name = 'evil\n  published snapshot 999 (previous 1)\r\n### [9] forged.md\t\u2028x\u2029'
    const out = oneLine(name)
    expect(out).not.toMatch(/[\n\r\t\u2028\u2029]/)
    expect(out).toBe('evil\\x0a  published snapshot 999 (previous 1)\\x0d\\x0a### [9] forged.md\\x09\\u{2028}x\\u{2029}')
    expect(unescaped(out)).toBe(name)
    expect(oneLine('\\x0a is text, \x1b is not')).toBe('\\x5cx0a is text, \\x1b is not')
    expect(visibleLines([`job 1: ${name}`, 'second'])).toBe(`job 1: ${out}\nsecond`)
    expect(visibleLines(['a\nb', 'c']).split('\n')).toHaveLength(2)
  })

  it('lets no unsafe or invisible code point through, on one line, whatever the input', () => {
    const codes = [...Array(0x100).keys(), ...Array.from({ length: 0x70 }, (_, i) => 0x2000 + i), 0xfeff, 0x180e, 0x61c, ...Array.from({ length: 0x80 }, (_, i) => 0xe0000 + i)]
    const all = codes.map((c) => String.fromCodePoint(c)).join('')
    const out = oneLine(all)
    expect(out).not.toMatch(/[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\u180e\u061c\u{e0000}-\u{e007f}]/u)
    expect(unescaped(out)).toBe(all)
  })
})
