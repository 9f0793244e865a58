// Scoring the syntactic resolver against an oracle's "go to definition", site by site.
// Pure functions over the analyzer's report and the oracle's answers, so the rules live in one place.
//
// Rules (also written into the results):
// - A site is asked about the LAST segment of its chain (`util.helper` → `helper`).
// - Oracle answers with zero definitions (or an error) are "oracle-unresolvable".
// - Precision agreement ("contained"): some oracle definition lies in our target's file and inside
//   our target's byte range. For a module target the oracle only has to land in that module's file
//   (an oracle answer pointing at the `import` line instead does not count: both oracles are asked
//   to follow imports). `strict` additionally requires that definition to map to our exact anchor,
//   which catches a class target that merely contains the method the oracle meant.
// - An oracle definition "maps" to one of our definitions when it is a module (→ that file's module
//   unit) or when the innermost definition containing its position has the oracle's name. Recall's
//   denominator is the sites where some oracle definition maps; a hit is outcome resolved to that anchor.

const lastName = (anchor) => anchor.split('#').pop().split(/[./]/).pop()

/** Definitions grouped for lookups by anchor and by file. */
export function indexDefinitions(definitions) {
  const byAnchor = new Map()
  const byPath = new Map()
  const moduleOf = new Map()
  for (const d of definitions) {
    // An anchor can name several units (overload signatures, declaration merging): keep them all.
    if (!byAnchor.has(d.anchor)) byAnchor.set(d.anchor, [])
    byAnchor.get(d.anchor).push(d)
    if (!byPath.has(d.path)) byPath.set(d.path, [])
    byPath.get(d.path).push(d)
    if (d.unit_type === 'module') moduleOf.set(d.path, d)
  }
  return { byAnchor, byPath, moduleOf }
}

const isModuleDef = (od) => od.type === 'module'
const contains = (d, byte) => d.byte_start <= byte && byte < Math.max(d.byte_end, d.byte_start + 1)

/** The anchor an oracle definition corresponds to among ours, or null when we do not index it. */
export function mapOracleDefinition(index, od) {
  if (!od.path || od.byte == null) return null
  if (isModuleDef(od)) return index.moduleOf.get(od.path) ?? null
  const around = (index.byPath.get(od.path) ?? []).filter((d) => d.unit_type !== 'module' && contains(d, od.byte))
  if (around.length === 0) return null
  const innermost = around.reduce((a, b) => (b.byte_end - b.byte_start < a.byte_end - a.byte_start ? b : a))
  return lastName(innermost.anchor) === od.name ? innermost : null
}

/** Where the last segment of the reference's chain starts, as a UTF-8 byte offset. */
export function segmentByte(ref) {
  const dot = ref.text.lastIndexOf('.')
  let i = dot + 1
  while (i < ref.text.length && /\s/.test(ref.text[i])) i++ // chains broken over lines: `p\n  .then`
  return ref.byte_start + Buffer.byteLength(ref.text.slice(0, i), 'utf8')
}

/** One site's verdict. `answer` is the oracle's definition list, or `{error}`. */
export function judgeSite(ref, answer, index) {
  const defs = Array.isArray(answer) ? answer : []
  const oracle = !Array.isArray(answer) ? 'error' : defs.length === 0 ? 'none' : defs.some((d) => d.path) ? 'in-tree' : 'external'
  const mapped = [
    ...new Set(
      defs
        .map((d) => mapOracleDefinition(index, d))
        .filter(Boolean)
        .map((d) => d.anchor),
    ),
  ]
  const verdict = { oracle, mapped, recallHit: false, agree: null, strict: null, why: null }
  if (ref.outcome === 'resolved' && (oracle === 'in-tree' || oracle === 'external')) {
    const targets = index.byAnchor.get(ref.target) ?? []
    verdict.agree = targets.some((t) => defs.some((d) => d.path === t.path && (t.unit_type === 'module' || contains(t, d.byte))))
    verdict.strict = mapped.includes(ref.target)
    if (!verdict.agree) verdict.why = disagreement(targets, defs)
  }
  verdict.recallHit = ref.outcome === 'resolved' && mapped.includes(ref.target)
  return verdict
}

function disagreement(targets, defs) {
  if (targets.length === 0) return 'our target is not among the definitions'
  if (!defs.some((d) => d.path)) return 'oracle resolves outside the tree (stdlib, dependency or builtin)'
  if (!defs.some((d) => targets.some((t) => t.path === d.path))) return 'oracle resolves to another file'
  return 'oracle resolves elsewhere in the same file'
}

/**
 * Strips names out of reason strings so they can be counted: `no visible binding for X` →
 * `no visible binding`, `X not found on Y` → `member not found on <owner>`.
 */
export function normalizeReason(reason) {
  if (!reason) return '(no reason given)'
  const rules = [
    [/^no visible binding for .+$/, 'no visible binding'],
    [/^external module .+$/, 'external module'],
    [/^module not found: .+$/, 'module not found'],
    [/^attribute not found on the enclosing class$/, null],
    [/^\S+ not found in module .+$/, '<name> not found in module'],
    [/^\S+ not found on .+$/, '<member> not found on <owner>'],
    [/^\S+ not found$/, '<name> not found'],
  ]
  for (const [re, label] of rules) if (re.test(reason)) return label ?? reason
  // Anything else: blank out tokens that look like code (dotted, snake_case, CamelCase, quoted).
  return reason.replace(/`[^`]*`|'[^']*'|"[^"]*"|\b[\w$]*[._/$A-Z][\w$./]*\b/g, (t) => (/^[a-z]+$/.test(t) ? t : '<x>'))
}

const share = (n, d) => (d === 0 ? null : Number((n / d).toFixed(4)))

function topCounts(values, n = 8) {
  const counts = new Map()
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1)
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([reason, count]) => ({ reason, count }))
}

/** Per-language figures from the judged sites (`{ref, verdict, corpus}`). */
export function summarize(sites) {
  const n = sites.length
  const by = (o) => sites.filter((s) => s.ref.outcome === o)
  const resolved = by('resolved')
  const judged = resolved.filter((s) => s.verdict.agree !== null)
  const recallBase = sites.filter((s) => s.verdict.mapped.length > 0)
  const ambiguous = by('ambiguous')
  const unresolved = by('unresolved')
  return {
    sites: n,
    resolved: resolved.length,
    ambiguous: ambiguous.length,
    unresolved: unresolved.length,
    resolved_share: share(resolved.length, n),
    ambiguous_share: share(ambiguous.length, n),
    unresolved_share: share(unresolved.length, n),
    precision: share(judged.filter((s) => s.verdict.agree).length, judged.length),
    precision_strict: share(judged.filter((s) => s.verdict.strict).length, judged.length),
    precision_sites: judged.length,
    oracle_unresolvable_among_resolved: resolved.length - judged.length,
    recall: share(recallBase.filter((s) => s.verdict.recallHit).length, recallBase.length),
    recall_sites: recallBase.length,
    // Misses that are near hits: we said "ambiguous" and the oracle's target was one of our candidates.
    recall_ambiguous_with_oracle_candidate: recallBase.filter((s) => s.ref.outcome === 'ambiguous' && (s.ref.candidates ?? []).some((c) => s.verdict.mapped.includes(c))).length,
    recall_misses_by_outcome: Object.fromEntries(['resolved', 'ambiguous', 'unresolved'].map((o) => [o, recallBase.filter((s) => !s.verdict.recallHit && s.ref.outcome === o).length])),
    disagreements_by_cause: topCounts(
      judged.filter((s) => !s.verdict.agree).map((s) => s.verdict.why),
      10,
    ),
    top_ambiguous_reasons: topCounts(ambiguous.map((s) => normalizeReason(s.ref.reason))),
    top_unresolved_reasons: topCounts(unresolved.map((s) => normalizeReason(s.ref.reason))),
    // Unresolved sites the oracle can map to a definition we index: what the resolver leaves on the table.
    top_unresolved_reasons_among_recall_misses: topCounts(recallBase.filter((s) => s.ref.outcome === 'unresolved').map((s) => normalizeReason(s.ref.reason))),
    // The same misses split by what the oracle found (exported type? method reached through a typed local?).
    recall_misses_by_reason_and_oracle_kind: topCounts(
      recallBase.filter((s) => !s.verdict.recallHit).map((s) => `${s.ref.outcome}: ${normalizeReason(s.ref.reason)} → oracle ${oracleKind(s.answer)}`),
      12,
    ),
    examples: {
      precision_disagreements: pickExamples(
        judged.filter((s) => !s.verdict.agree),
        (s) => s.verdict.why,
      ),
      strict_only_disagreements: pickExamples(
        judged.filter((s) => s.verdict.agree && !s.verdict.strict),
        () => 'contained, not exact',
      ),
      recall_misses: pickExamples(
        recallBase.filter((s) => !s.verdict.recallHit),
        (s) => `${s.ref.outcome}: ${normalizeReason(s.ref.reason)}`,
      ),
    },
  }
}

const oracleKind = (answer) => [...new Set((Array.isArray(answer) ? answer : []).filter((d) => d.path).map((d) => d.type))].join('/') || 'none'

/** Up to `n` examples, taken round-robin across causes so one frequent cause does not fill the list. */
function pickExamples(sites, causeOf, n = 10) {
  const groups = new Map()
  for (const s of sites) {
    const c = causeOf(s)
    if (!groups.has(c)) groups.set(c, [])
    groups.get(c).push(s)
  }
  const lists = [...groups.values()].sort((a, b) => b.length - a.length)
  const picked = []
  for (let round = 0; picked.length < n && lists.some((l) => l.length > round); round++) {
    for (const l of lists) if (l[round] && picked.length < n) picked.push(example(l[round], causeOf(l[round])))
  }
  return picked
}

function example({ ref, answer, corpus }, cause) {
  const defs = Array.isArray(answer) ? answer : []
  return {
    at: `${corpus}:${ref.path}:${ref.line}:${ref.col}`,
    text: ref.text,
    kind: ref.kind,
    outcome: ref.outcome,
    ours: ref.target ?? (ref.candidates?.length ? `candidates: ${ref.candidates.join(', ')}` : null),
    reason: ref.reason,
    oracle: defs.length ? defs.map((d) => `${d.path ?? d.abs}:${d.line} (${d.type} ${d.name})`).join(' | ') : Array.isArray(answer) ? '(nothing)' : `error: ${answer.error}`,
    cause,
  }
}
