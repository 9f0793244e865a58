/**
 * Characters that print as nothing: zero-width space, non-joiner and joiner, the bidi marks
 * (LRM, RLM, ALM), word joiner and invisible operators, the deprecated format controls, the
 * Mongolian vowel separator, a byte-order mark inside text, and the tag characters
 * (U+E0000–E007F), which spell ASCII an agent reads and a person does not see. The Rust core flags
 * text carrying them (`safety::hides_characters`); the two lists and the joiner rule agree.
 */
const INVISIBLE = '\\u200b-\\u200f\\u2060-\\u2064\\u206a-\\u206f\\u061c\\u180e\\ufeff\\u{e0000}-\\u{e007f}'
/** C0 controls but \t and \n, DEL, C1, bidi embeddings, overrides and isolates, and invisible characters. */
const CONTROLS = `\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f-\\x9f\\u202a-\\u202e\\u2066-\\u2069${INVISIBLE}`
/** A backslash the reader would take for the start of an escape. */
const LOOKS_ESCAPED = '\\\\(?=x[0-7][0-9a-fA-F]|u\\{)'
/** Multi-line text: the controls, a \r not ending a line, and a backslash that would read as an escape. */
const UNSAFE = new RegExp(`[${CONTROLS}]|\\r(?!\\n)|${LOOKS_ESCAPED}`, 'gu')
/** One-line fields: the same, and every line or paragraph break and tab as well. */
const UNSAFE_IN_LINE = new RegExp(`[${CONTROLS}\\t\\n\\r\\u2028\\u2029]|${LOOKS_ESCAPED}`, 'gu')

/** Scripts whose spelling uses ZWNJ and ZWJ between letters (Persian, Hindi, Sinhala, …). */
const JOINING_SCRIPT =
  /[\p{sc=Arabic}\p{sc=Syriac}\p{sc=Nko}\p{sc=Mongolian}\p{sc=Devanagari}\p{sc=Bengali}\p{sc=Gurmukhi}\p{sc=Gujarati}\p{sc=Oriya}\p{sc=Tamil}\p{sc=Telugu}\p{sc=Kannada}\p{sc=Malayalam}\p{sc=Sinhala}\p{sc=Khmer}\p{sc=Myanmar}\p{sc=Tibetan}]/u
const MARK = /\p{M}/u
const PICTOGRAPH = /\p{Extended_Pictographic}/u
/** What may stand before the ZWJ of an emoji sequence (👩🏽‍💻, 🏳️‍🌈). */
// biome-ignore lint/suspicious/noMisleadingCharacterClass: U+FE0F is listed alone on purpose, as the variation selector that may precede a ZWJ
const EMOJI_BEFORE_ZWJ = /[\p{Extended_Pictographic}\p{Emoji_Modifier}\ufe0f]/u

/**
 * Whether the ZWNJ or ZWJ at `at` is spelling, not payload: one joiner between two letters of a
 * script that writes with joiners (after a letter or a mark, before a letter), or a ZWJ inside an
 * emoji sequence. Anywhere else (a run of them, between Latin letters, at a word's edge) it is
 * printed as an escape. One joiner per gap can carry bits, not text an agent would read.
 */
function joinsLetters(text: string, at: number): boolean {
  const before = codePointBefore(text, at)
  const after = at + 1 < text.length ? String.fromCodePoint(text.codePointAt(at + 1) as number) : ''
  if (JOINING_SCRIPT.test(after) && (JOINING_SCRIPT.test(before) || MARK.test(before))) return true
  return text[at] === '\u200d' && EMOJI_BEFORE_ZWJ.test(before) && PICTOGRAPH.test(after)
}

/** The whole code point that ends before UTF-16 index `at` ('' at the start). */
function codePointBefore(text: string, at: number): string {
  if (at === 0) return ''
  const pair = at >= 2 && /^[\ud800-\udbff][\udc00-\udfff]$/.test(text.slice(at - 2, at))
  return String.fromCodePoint(text.codePointAt(pair ? at - 2 : at - 1) as number)
}

function escapeMatches(text: string, unsafe: RegExp): string {
  return text.replace(unsafe, (match, offset: number) => {
    const code = match.codePointAt(0) as number
    if ((code === 0x200c || code === 0x200d) && joinsLetters(text, offset)) return match
    return code >= 0x80 ? `\\u{${code.toString(16)}}` : `\\x${code.toString(16).padStart(2, '0')}`
  })
}

/**
 * Text from indexed files, file names and messages, made safe to print on a terminal or to hand
 * to an agent.
 *
 * A control character in source text would otherwise act on the reader's terminal (an OSC 52
 * clipboard write, a screen clear, a window title, a bell), bidi overrides and isolates would
 * reorder what is displayed ("Trojan source"), and invisible characters would carry text a person
 * reviewing the output cannot see (tag characters spell ASCII an agent reads). Each such character
 * is printed as an escape:
 *
 * - C0 controls (U+0000–U+001F) except `\n` and `\t`, a `\r` not followed by `\n`, and DEL (U+007F)
 *   become `\xNN`, two lowercase hex digits below 80 (ESC is `\x1b`);
 * - C1 controls (U+0080–U+009F), bidi embeddings, overrides and isolates (U+202A–U+202E,
 *   U+2066–U+2069) and the invisible characters (zero-width, bidi marks, tag characters; a joiner
 *   only where it is not spelling, see `joinsLetters`) become `\u{NN…}` (the C1 CSI is `\u{9b}`,
 *   RLO `\u{202e}`, TAG LATIN SMALL LETTER A `\u{e0061}`). `\xNN` from 80 up is left to file
 *   names, whose stored form writes an invalid UTF-8 byte that way (`bad\xff.md`);
 * - a backslash the reader would take for the start of such an escape (followed by `x` and a hex
 *   pair below 80, or by `u{`) becomes `\x5c`. So every such escape in the output is one, and every
 *   other backslash is the source's own; backslashes elsewhere (paths, regular expressions, the
 *   `\\` and `\xff` of a stored file name) print as they are.
 *
 * JSON output does not go through this: it carries the exact text.
 */
export function visible(text: string): string {
  return escapeMatches(text, UNSAFE)
}

/**
 * A field that must stay on its line (a file name, a citation, a heading, a query, a message): as
 * `visible`, and its newlines, carriage returns, tabs and Unicode line and paragraph separators
 * become escapes too (`\x0a`, `\x0d`, `\x09`, `\u{2028}`, `\u{2029}`). A file named
 * `a\n  published snapshot 9` then cannot print a line of its own in a receipt, nor a file named
 * `x\n### [9] y` a heading of its own in Markdown.
 */
export function oneLine(text: string): string {
  return escapeMatches(text, UNSAFE_IN_LINE)
}

/**
 * Output built of lines, each one line whatever its fields hold, and blocks of quoted text that
 * keep their own line breaks (`{ block: text }`, a segment's text, a signature, a body).
 */
export type Lines = ReadonlyArray<string | { block: string }>

/**
 * `lines` joined by newlines: each line escaped with `oneLine`, each block with `visible`. A file
 * name, heading or message holding a newline can then neither end its line nor start one that
 * reads as the output's own (a receipt line, a `### [n]` heading, a `<notice>`).
 */
export function visibleLines(lines: Lines): string {
  return lines.map((line) => (typeof line === 'string' ? oneLine(line) : visible(line.block))).join('\n')
}
