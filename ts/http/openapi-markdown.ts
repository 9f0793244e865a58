/** Renders the OpenAPI document as the Markdown reference in docs/http-api.md (kept in sync by a test). */
type Json = Record<string, unknown>

export function openApiToMarkdown(doc: Json): string {
  const info = doc.info as Json
  const out = ['# HTTP API reference', '', '<!-- Generated from the OpenAPI document (`GET /openapi.json`) by `npm run docs:http`; do not edit by hand. -->', '', String(info.description ?? ''), '']
  for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
    for (const [method, op] of Object.entries(methods)) {
      out.push(`## \`${method.toUpperCase()} ${path}\``, '', `${op.summary}${op.description ? ` — ${op.description}` : ''}`, '')
      const security = op.security as unknown[] | undefined
      const auth =
        security && security.length === 0 ? 'none' : op['x-tychora-token'] === 'owner' ? "bearer token: the owner's only (`runtime/token`; the agents' token gets 403 E_FORBIDDEN)" : 'bearer token'
      out.push(`Auth: ${auth}`, '')
      const params = (op.parameters as Json[] | undefined) ?? []
      if (params.length > 0) {
        out.push('| parameter | in | required | description |', '|---|---|---|---|')
        for (const p of params) out.push(`| \`${p.name}\` | ${p.in} | ${p.required ? 'yes' : 'no'} | ${String(p.description ?? '').replaceAll('|', '\\|')} |`)
        out.push('')
      }
      const body = (op.requestBody as Json | undefined)?.content as Record<string, Json> | undefined
      const bodyRef = ((body?.['application/json']?.schema as Json | undefined)?.$ref as string | undefined)?.split('/').pop()
      if (bodyRef) out.push(`Body: \`${bodyRef}\` (see the schema in \`/openapi.json\`)`, '')
      out.push('| status | meaning |', '|---|---|')
      for (const [status, r] of Object.entries(op.responses as Record<string, Json>)) {
        out.push(`| ${status} | ${String(r.description ?? '').replaceAll('|', '\\|')} |`)
      }
      out.push('')
    }
  }
  return `${out.join('\n').trimEnd()}\n`
}
