import type { SymbolRelation, SymbolReport } from '../contracts/symbol.js'
import { type Lines, visibleLines } from './terminal.js'

function commit(site: { commit?: string }): string {
  return site.commit ? ` @${site.commit.slice(0, 12)}` : ''
}

/** One site: where, what it is, the symbol it sits in (or, for a callee, resolves to) and its outcome. */
function relationLine(r: SymbolRelation, direction: 'from' | 'to'): string {
  const outcome = r.outcome === 'resolved' ? '' : r.outcome === 'ambiguous' ? ` — ambiguous: ${(r.candidates ?? []).join(' | ')}` : ` — unresolved: ${r.reason ?? ''}`
  const other = r.symbol ? (direction === 'from' ? ` in \`${r.symbol}\`` : ` → \`${r.symbol}\``) : ''
  return `  - ${r.site.citation}${commit(r.site)} ${r.kind} \`${r.text}\`${other}${outcome}`
}

function section(title: string, rows: SymbolRelation[], total: number, direction: 'from' | 'to'): string[] {
  if (total === 0) return [`- ${title}: none`]
  const more = total > rows.length ? ` (first ${rows.length})` : ''
  return [`- ${title}: ${total}${more}`, ...rows.map((r) => relationLine(r, direction))]
}

/**
 * A symbol report as Markdown: each definition under its `path:start-end` citation and commit,
 * then the sites that resolve to it, its callers and callees, and the sites naming it that did
 * not resolve. Resolution is syntactic, and the text says so. Control characters in names, paths
 * and signatures print as escapes, and a line break in a name or path as one too (`visibleLines`).
 */
export function symbolToMarkdown(report: SymbolReport): string {
  const out: Array<Lines[number]> = []
  if (report.definitions.length === 0) out.push(`No definition of \`${report.name}\` in snapshot ${report.snapshot_id ?? '–'}.`)
  for (const d of report.definitions) {
    out.push(`### ${d.symbol} (${d.unit_type}) — ${d.site.citation}${commit(d.site)}`, '', { block: `\`${d.signature}\`` }, '')
    out.push(...section('references', d.references, d.references_total, 'from'))
    out.push(...section('callers', d.callers, d.callers_total, 'from'))
    out.push(...section('callees', d.callees, d.callees_total, 'to'))
    out.push('')
  }
  if (report.unresolved_total > 0) {
    out.push(...section(`sites naming \`${report.name}\` that did not resolve`, report.unresolved, report.unresolved_total, 'from'), '')
  }
  out.push(`_snapshot ${report.snapshot_id ?? '–'} · resolution ${report.resolution}: scope rules and import bindings, not a compiler_`)
  return visibleLines(out)
}
