import { describe, expect, it } from 'vitest'
import { visible } from '../../ts/format/terminal.js'

/** Every code point `visible` must not let through: C0 but \t \n \r, DEL, C1, bidi controls. */
const UNSAFE = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/

/** Reverses the documented notation: `\xNN` and `\u{N…}` are escapes, every other backslash is literal. */
function unescape(text: string): string {
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
      expect(unescape(out)).toBe(s)
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
    expect(unescape(out)).toBe(all)
  })
})
