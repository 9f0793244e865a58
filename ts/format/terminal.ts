/** C0 controls but \t and \n, a \r not ending a line, DEL, C1, bidi controls, and a backslash that would read as an escape. */
const UNSAFE = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]|\r(?!\n)|\\(?=x[0-7][0-9a-fA-F]|u\{)/g

/**
 * Text from indexed files, file names and messages, made safe to print on a terminal.
 *
 * A control character in source text would otherwise act on the reader's terminal (an OSC 52
 * clipboard write, a screen clear, a window title, a bell), and bidi overrides and isolates would
 * reorder what is displayed ("Trojan source"). Each such character is printed as an escape:
 *
 * - C0 controls (U+0000–U+001F) except `\n` and `\t`, a `\r` not followed by `\n`, and DEL (U+007F)
 *   become `\xNN`, two lowercase hex digits below 80 (ESC is `\x1b`);
 * - C1 controls (U+0080–U+009F) and bidi embeddings, overrides and isolates (U+202A–U+202E,
 *   U+2066–U+2069) become `\u{NN…}` (the C1 CSI is `\u{9b}`, RLO `\u{202e}`). `\xNN` from 80 up
 *   is left to file names, whose stored form writes an invalid UTF-8 byte that way (`bad\xff.md`);
 * - a backslash the reader would take for the start of such an escape (followed by `x` and a hex
 *   pair below 80, or by `u{`) becomes `\x5c`. So every such escape in the output is one, and every
 *   other backslash is the source's own; backslashes elsewhere (paths, regular expressions, the
 *   `\\` and `\xff` of a stored file name) print as they are.
 *
 * JSON output does not go through this: it carries the exact text.
 */
export function visible(text: string): string {
  return text.replace(UNSAFE, (match) => {
    const code = match.codePointAt(0) as number
    return code >= 0x80 ? `\\u{${code.toString(16)}}` : `\\x${code.toString(16).padStart(2, '0')}`
  })
}
