// Text fidelity metrics shared by the document benches: words (lowercased letter/digit runs),
// precision/recall/F1 over word multisets, reading order as normalised word edit distance,
// heading recall and table cell accuracy against a reference Markdown.
export const words = (text) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []
export const norm = (text) => words(text).join(' ')

/** Markdown to its words: images, link targets, HTML comments, table rules and emphasis dropped. */
export function mdText(md) {
  return md
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/!\[[^\]]*\]\([^)]*\)/g, ' ')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/^\s*\|?\s*:?-{3,}.*$/gm, ' ')
}
export function mdHeadings(md) {
  return md
    .split('\n')
    .filter((l) => /^#{1,6}\s/.test(l))
    .map((l) => norm(l.replace(/^#+\s*/, '')))
    .filter(Boolean)
}
export function mdCells(md) {
  const cells = []
  for (const line of md.split('\n')) {
    if (!/^\s*\|/.test(line) || /^\s*\|?\s*:?-{3,}/.test(line)) continue
    for (const cell of line
      .trim()
      .replace(/^\||\|$/g, '')
      .split('|'))
      if (norm(cell)) cells.push(norm(cell))
  }
  return cells
}
export function htmlCells(html) {
  return [...html.matchAll(/<t[dh][^>]*>([\s\S]*?)<\/t[dh]>/g)].map((m) => norm(m[1].replace(/<[^>]+>/g, ' '))).filter(Boolean)
}

/** Of `expected` (a multiset), the share found in `found`. */
export function recall(expected, found) {
  if (expected.length === 0) return null
  const pool = new Map()
  for (const f of found) pool.set(f, (pool.get(f) ?? 0) + 1)
  let hit = 0
  for (const e of expected) {
    const n = pool.get(e) ?? 0
    if (n > 0) {
      hit++
      pool.set(e, n - 1)
    }
  }
  return hit / expected.length
}
export function prf(expected, found) {
  const r = recall(expected, found) ?? (found.length === 0 ? 1 : 0)
  const p = recall(found, expected) ?? (expected.length === 0 ? 1 : 0)
  return { precision: p, recall: r, f1: p + r === 0 ? 0 : (2 * p * r) / (p + r) }
}
/** Word-level Levenshtein distance over max length (two rows; the fixtures are small). */
export function orderDistance(a, b) {
  if (a.length === 0 && b.length === 0) return 0
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const cur = [i]
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
    prev = cur
  }
  return prev[b.length] / Math.max(a.length, b.length)
}

export function score(expectedMd, got) {
  const expected = words(mdText(expectedMd))
  const found = words(got.text)
  return {
    ...prf(expected, found),
    order: orderDistance(expected, found),
    headings: recall(mdHeadings(expectedMd), got.headings),
    cells: recall(mdCells(expectedMd), got.cells),
  }
}
