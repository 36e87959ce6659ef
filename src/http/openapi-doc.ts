// Builds each route's OpenAPI `detail` from zod schemas and the error catalogue, so the document lists
// every success and error response with examples, without validating responses at run time.
import { z } from 'zod'
import { ERROR_CATALOGUE, type ErrorCode } from '../shared/errors'

export const ErrorBodySchema = z.object({
  error: z.object({
    code: z.enum(Object.keys(ERROR_CATALOGUE) as [ErrorCode, ...ErrorCode[]]),
    message: z.string().describe('What went wrong, naming the field or rule.'),
    docs: z.url().describe('Link to this code on the error reference page: <ALTTEXT_PUBLIC_URL>/docs/errors#<code>.'),
  }),
})

const RATE_HEADERS = {
  'RateLimit-Limit': { description: 'Requests allowed per 60-second window for this endpoint and address.', schema: { type: 'integer', minimum: 1 } },
  'RateLimit-Remaining': { description: 'Requests left in the current window.', schema: { type: 'integer', minimum: 0 } },
  'RateLimit-Reset': { description: 'Seconds until the window frees room.', schema: { type: 'integer', minimum: 1 } },
  'X-Request-Id': { description: 'Identifies the request in the operator log.', schema: { type: 'string' } },
}

// OpenAPI's schema types are looser than zod's JSON Schema output; this is the one place they meet.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type OpenApiObject = Record<string, any>

const componentUri = (id: string) => `#/components/schemas/${id}`

/** Request bodies are named `…Request`: they are written out in each operation, never as components. */
const isRequestId = (id: string) => id.endsWith('Request')

/** Replaces each `#/$defs/<id>` reference with a copy of that definition (request schemas have no cycles). */
function inlineDefs(node: unknown, defs: Record<string, unknown>): unknown {
  if (Array.isArray(node)) return node.map((item) => inlineDefs(item, defs))
  if (!node || typeof node !== 'object') return node
  const { $ref, ...rest } = node as OpenApiObject
  if (typeof $ref === 'string' && $ref.startsWith('#/$defs/')) return inlineDefs({ ...(defs[$ref.slice('#/$defs/'.length)] as object), ...rest }, defs)
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, inlineDefs(value, defs)]))
}

/**
 * A response schema named with `.meta({ id })` is a reference to its component; any other is written out
 * in place. Request bodies are input (fields with defaults are optional) and always written out in place,
 * named ones included: openapi-typescript, with its default options, makes a property with a `default`
 * required everywhere except under a requestBody, so a request component would demand every defaulted field.
 */
export function jsonSchema(schema: z.ZodType, io: 'input' | 'output' = 'output'): OpenApiObject {
  const id = z.globalRegistry.get(schema)?.id
  if (io === 'output' && id !== undefined) return { $ref: componentUri(id) }
  const { $schema: _ignored, $defs = {}, id: _id, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as OpenApiObject
  if (io === 'input') return inlineDefs(rest, $defs) as OpenApiObject
  // Named schemas inside come out as local $defs; they are components already, so point there instead.
  return JSON.parse(JSON.stringify(rest).replaceAll('"#/$defs/', '"#/components/schemas/')) as OpenApiObject
}

/** Every named response schema as an OpenAPI component (output: fields with defaults are present). */
export function componentSchemas(): Record<string, OpenApiObject> {
  const { schemas } = z.toJSONSchema(z.globalRegistry, { io: 'output', unrepresentable: 'any', uri: componentUri }) as {
    schemas: Record<string, OpenApiObject>
  }
  const components: Record<string, OpenApiObject> = {}
  for (const [id, schema] of Object.entries(schemas)) {
    if (isRequestId(id)) continue
    const { $schema: _ignored, $id: _uri, id: _id, ...rest } = schema
    components[id] = rest
  }
  return components
}

/** What a handler returns for a documented schema: the type ties the code to the document. */
export type Body<S extends z.ZodType> = z.output<S>

/** A success answer; without `schema` it has no body (a 204). */
export type SuccessDoc = { status: number; description: string; schema?: z.ZodType; example?: unknown; headers?: Record<string, unknown> }

export type RouteDoc = {
  /** The route reads a JSON body: it can also answer 413 and 415. */
  jsonBody?: boolean
  summary: string
  /** camelCase, unique: client generators name their methods after it. */
  operationId: string
  description: string
  tags: string[]
  success: SuccessDoc[]
  errors: ErrorCode[]
  exampleMessages?: Partial<Record<ErrorCode, string>>
}

/** The documented error responses of these codes, grouped by status, each with an example. */
export function errorResponses(codes: Iterable<ErrorCode>, exampleMessages: Partial<Record<ErrorCode, string>> = {}) {
  const byStatus = new Map<number, ErrorCode[]>()
  for (const code of codes) {
    const status = ERROR_CATALOGUE[code].status
    byStatus.set(status, [...(byStatus.get(status) ?? []), code])
  }
  const responses: Record<string, { description: string } & OpenApiObject> = {}
  for (const [status, statusCodes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const examples: Record<string, unknown> = {}
    for (const code of statusCodes) {
      examples[code] = {
        summary: ERROR_CATALOGUE[code].title,
        value: { error: { code, message: exampleMessages[code] ?? ERROR_CATALOGUE[code].meaning, docs: `https://alttext.example/docs/errors#${code}` } },
      }
    }
    const headers: Record<string, unknown> = { ...RATE_HEADERS }
    if (status === 429 || status === 503)
      headers['Retry-After'] = { description: 'Whole seconds to wait before retrying.', schema: { type: 'integer', minimum: 1 } }
    responses[String(status)] = {
      description: statusCodes.map((c) => `\`${c}\`: ${ERROR_CATALOGUE[c].title}`).join('; '),
      headers,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' }, examples } },
    }
  }
  return responses
}

/** One way to authenticate: scheme name → scopes (none for these schemes). */
type SecurityRequirement = Record<string, string[]>

/**
 * What the auth macro adds to a keyed route's document: either security scheme (a key, or the session
 * cookie) and their refusals (`cross_site_request` only for session requests that change something;
 * `account_disabled` for a key or session of an account the operator disabled; `email_not_verified` for
 * one of an account that has not followed its mailed link).
 */
export const KEYED_ROUTE_DETAIL = {
  security: [{ ApiKey: [] }, { cookieAuth: [] }] as SecurityRequirement[],
  responses: errorResponses([
    'missing_api_key',
    'invalid_api_key',
    'key_expired',
    'invalid_session',
    'cross_site_request',
    'account_disabled',
    'email_not_verified',
  ]),
}

/** What `auth: 'unverified'` adds: as a keyed route, which an account waiting for its mailed link may call too. */
export const UNVERIFIED_ROUTE_DETAIL = {
  security: KEYED_ROUTE_DETAIL.security,
  responses: errorResponses(['missing_api_key', 'invalid_api_key', 'key_expired', 'invalid_session', 'cross_site_request', 'account_disabled']),
}

/** What `auth: 'session'` adds: the cookie scheme only. Such routes list their refusals themselves (they share a 401 with the password check). */
export const SESSION_ROUTE_DETAIL = { security: [{ cookieAuth: [] }] as SecurityRequirement[] }

export function routeDetail(doc: RouteDoc) {
  const responses: Record<string, { description: string } & OpenApiObject> = {}
  for (const success of doc.success) {
    responses[String(success.status)] = {
      description: success.description,
      headers: { ...RATE_HEADERS, ...success.headers },
      ...(success.schema && { content: { 'application/json': { schema: jsonSchema(success.schema), example: success.example } } }),
    }
  }
  const bodyErrors: ErrorCode[] = doc.jsonBody ? ['invalid_request', 'payload_too_large', 'unsupported_media_type'] : []
  Object.assign(responses, errorResponses(new Set<ErrorCode>([...bodyErrors, ...doc.errors, 'rate_limited', 'internal_error']), doc.exampleMessages))
  return {
    summary: doc.summary,
    operationId: doc.operationId,
    description: doc.description,
    tags: doc.tags,
    responses,
  }
}

export const errorSchemaComponent = jsonSchema(ErrorBodySchema)
