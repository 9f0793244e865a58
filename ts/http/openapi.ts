import { packageVersion } from '../package-root.js'
import { z } from 'zod'
import { AddRequestSchema } from '../contracts/ingest.js'
import { BackupReportSchema, BackupRequestSchema } from '../contracts/operations.js'
import { StatusSchema, VerifyReportSchema } from '../contracts/workspace.js'
import { QueryRequestSchema } from '../contracts/query.js'
import { QueryResultSchema } from '../contracts/result.js'
import { CancelJobRequestSchema, EvidenceSchema, JobRefSchema, JobStatusSchema, ProjectListSchema, ProjectSchema, SnapshotListSchema, SourceListSchema } from '../contracts/service.js'
import { ERROR_CODES, type ErrorCode } from '../errors.js'
import { ErrorBodySchema } from './errors.js'
import type { Route } from './route.js'
import { HealthSchema } from './routes/meta.js'

type Json = Record<string, unknown>

/** Contracts that appear under `components.schemas` and are referenced by name. */
const NAMED = new Map<z.ZodType, string>([
  [QueryRequestSchema, 'QueryRequest'],
  [QueryResultSchema, 'QueryResult'],
  [AddRequestSchema, 'AddRequest'],
  [JobRefSchema, 'JobRef'],
  [JobStatusSchema, 'JobStatus'],
  [CancelJobRequestSchema, 'CancelJobRequest'],
  [SourceListSchema, 'SourceList'],
  [SnapshotListSchema, 'SnapshotList'],
  [EvidenceSchema, 'Evidence'],
  [ProjectListSchema, 'ProjectList'],
  [HealthSchema, 'Health'],
  [StatusSchema, 'Status'],
  [VerifyReportSchema, 'VerifyReport'],
  [BackupRequestSchema, 'BackupRequest'],
  [BackupReportSchema, 'BackupReport'],
  [ErrorBodySchema, 'Error'],
])

/** JSON Schema 2020-12 (OpenAPI 3.1's dialect) of a zod schema, without its `$schema` key. */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Json
  return rest
}

const toOpenApiPath = (path: string) => path.replace(/:([A-Za-z_]\w*)/g, '{$1}')

/** Errors a route can answer, by its kind of authorisation. */
function errorCodes(r: Route): ErrorCode[] {
  const codes: ErrorCode[] = []
  if (r.auth !== 'none') codes.push('E_UNAUTHORIZED', 'E_FORBIDDEN')
  if (r.params || r.query || r.body || r.headers) codes.push('E_INVALID_ARGUMENT')
  if (r.auth === 'project') codes.push('E_NOT_FOUND')
  if (r.body || r.path === '/mcp') codes.push('E_LIMIT_EXCEEDED')
  codes.push(...(r.errors ?? []), 'E_INTERNAL')
  return codes
}

/**
 * The OpenAPI 3.1 document of `routes`, generated from the zod contracts the routes validate
 * with (`z.toJSONSchema`): request bodies and parameters as inputs, responses as outputs.
 */
export function openApiDocument(routes: Route[], options: { port?: number } = {}): Json {
  const schemas: Record<string, Json> = {}
  const ref = (schema: z.ZodType, io: 'input' | 'output'): Json => {
    const name = NAMED.get(schema)
    if (!name) return jsonSchema(schema, io)
    schemas[name] ??= jsonSchema(schema, io)
    return { $ref: `#/components/schemas/${name}` }
  }
  const errorContent = { 'application/json': { schema: ref(ErrorBodySchema, 'output') } }

  const paths: Record<string, Record<string, Json>> = {}
  for (const r of routes) {
    const parameters: Json[] = []
    if (r.auth === 'project')
      parameters.push({
        name: 'project',
        in: 'path',
        required: true,
        description: 'Project (workspace) name; a token opens only its own project',
        schema: jsonSchema(ProjectSchema, 'input'),
      })
    for (const [name, field] of Object.entries(r.params?.shape ?? {})) {
      const f = field as z.ZodType
      parameters.push({ name, in: 'path', required: true, description: f.description, schema: jsonSchema(f, 'input') })
    }
    for (const [name, field] of Object.entries(r.query?.shape ?? {})) {
      const f = field as z.ZodType
      parameters.push({ name, in: 'query', required: !f.safeParse(undefined).success, description: f.description, schema: jsonSchema(f, 'input') })
    }
    for (const [name, description] of Object.entries(r.headers ?? {})) {
      parameters.push({ name, in: 'header', required: false, description, schema: { type: 'string', maxLength: 200 } })
    }

    const success = r.status ?? 200
    const responses: Record<string, Json> = {
      [String(success)]: {
        description: success === 202 ? 'Accepted' : 'OK',
        content: r.path === '/mcp' ? { 'application/json': {}, 'text/event-stream': {} } : { 'application/json': { schema: ref(r.response, 'output') } },
      },
    }
    for (const code of errorCodes(r)) {
      const status = String(ERROR_CODES[code].http)
      const entry = (responses[status] ??= { description: '', content: errorContent }) as { description: string }
      entry.description = entry.description ? `${entry.description}; ${code}` : `${code}: ${ERROR_CODES[code].meaning}`
    }

    const operation: Json = { operationId: r.operationId, summary: r.summary, tags: [tagOf(r.path)], responses }
    if (r.description) operation.description = r.description
    if (parameters.length > 0) operation.parameters = parameters
    if (r.body) operation.requestBody = { required: true, content: { 'application/json': { schema: ref(r.body, 'input') } } }
    if (r.path === '/mcp' && r.method === 'POST') operation.requestBody = { required: true, content: { 'application/json': {} } }
    if (r.auth === 'none') operation.security = []
    // Which of the project's two tokens: the agents' gets 403 E_FORBIDDEN here.
    if (r.ownerOnly) operation['x-tychora-token'] = 'owner'
    ;(paths[toOpenApiPath(r.path)] ??= {})[r.method.toLowerCase()] = operation
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'Tychora',
      version: packageVersion(),
      description:
        'Local evidence engine: cited source evidence for AI agents. Every route except /health and /openapi.json needs ' +
        "`Authorization: Bearer <token>` (the project's runtime/token), a loopback Host and no foreign Origin. " +
        'Errors are `{code, message}` with the status of the stable code table.',
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    ...(options.port ? { servers: [{ url: `http://127.0.0.1:${options.port}` }] } : {}),
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: "The project's token (runtime/token in its workspace, mode 0600)" },
      },
      schemas,
    },
  }
}

function tagOf(path: string): string {
  const match = /^\/v1\/projects\/:project\/([a-z]+)/.exec(path)
  if (match?.[1]) return match[1]
  if (path === '/v1/projects') return 'projects'
  if (path === '/mcp') return 'mcp'
  return 'meta'
}
