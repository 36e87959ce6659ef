// Builds each route's OpenAPI `detail` from zod schemas and the error catalogue, so the document lists
// every success and error response with examples, without validating responses at run time.
import { z } from 'zod'
import { ERROR_CATALOGUE, type ErrorCode } from '../shared/errors'

export const ErrorBodySchema = z.object({
  error: z.object({
    code: z.enum(Object.keys(ERROR_CATALOGUE) as [ErrorCode, ...ErrorCode[]]),
    message: z.string().describe('What went wrong, naming the field or rule.'),
    docs: z.string().describe('Link to this code on the error reference page: <ALTTEXT_PUBLIC_URL>/docs/errors#<code>.'),
  }),
})

const RATE_HEADERS = {
  'RateLimit-Limit': { description: 'Requests allowed per 60-second window for this endpoint and address.', schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'Requests left in the current window.', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until the window frees room.', schema: { type: 'integer' } },
  'X-Request-Id': { description: 'Identifies the request in the operator log.', schema: { type: 'string' } },
}

// OpenAPI's schema types are looser than zod's JSON Schema output; this is the one place they meet.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type OpenApiObject = Record<string, any>

export function jsonSchema(schema: z.ZodType, io: 'input' | 'output' = 'output'): OpenApiObject {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as OpenApiObject
  return rest
}

export type SuccessDoc = { status: number; description: string; schema: z.ZodType; example: unknown; headers?: Record<string, unknown> }

export type RouteDoc = {
  summary: string
  /** camelCase, unique: client generators name their methods after it. */
  operationId?: string
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

/** What the auth macro adds to a keyed route's document: the security scheme and its 401s. */
export const KEYED_ROUTE_DETAIL = {
  security: [{ ApiKey: [] }],
  responses: errorResponses(['missing_api_key', 'invalid_api_key', 'key_expired']),
}

export function routeDetail(doc: RouteDoc) {
  const responses: Record<string, { description: string } & OpenApiObject> = {}
  for (const success of doc.success) {
    responses[String(success.status)] = {
      description: success.description,
      headers: { ...RATE_HEADERS, ...success.headers },
      content: { 'application/json': { schema: jsonSchema(success.schema), example: success.example } },
    }
  }
  Object.assign(responses, errorResponses(new Set<ErrorCode>([...doc.errors, 'rate_limited', 'internal_error']), doc.exampleMessages))
  return {
    summary: doc.summary,
    operationId: doc.operationId,
    description: doc.description,
    tags: doc.tags,
    responses,
  }
}

export const errorSchemaComponent = jsonSchema(ErrorBodySchema)
