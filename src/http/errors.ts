// Turns every failure into the contract's error shape. Validation is 400 invalid_request (never 422),
// and a 500 never carries a stack trace or SQL: those go to the log under the request id.
import { Elysia } from 'elysia'
import { ApiError, errorBody, type ErrorCode } from '../shared/errors'
import { describeError, type Logger } from '../shared/logger'
import { requestMeta } from './request-meta'

export const MAX_BODY_BYTES = 64 * 1024

export function errorResponse(publicUrl: string, code: ErrorCode, status: number, message: string, headers: Record<string, string> = {}): Response {
  return Response.json(errorBody(publicUrl, code, message), { status, headers })
}

export function apiErrorResponse(publicUrl: string, error: ApiError): Response {
  return errorResponse(publicUrl, error.code, error.status, error.message, error.headers)
}

/** Reads at most `limit` bytes of the body, whatever Content-Length claims. */
export async function readBodyLimited(request: Request, limit: number): Promise<string> {
  const header = request.headers.get('content-length')
  const declared = Number(header ?? 0)
  if (declared > limit) throw new ApiError('payload_too_large', `request body is over the limit of ${limit / 1024} KiB`)
  // With a Content-Length the HTTP framing delivers exactly that many bytes, so the native reader is
  // safe and much cheaper; a chunked body (no length) is counted as it arrives.
  if (header !== null && Number.isInteger(declared) && declared >= 0) return request.text()
  if (!request.body) return ''
  const chunks: Uint8Array[] = []
  let size = 0
  const reader = request.body.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => {})
      throw new ApiError('payload_too_large', `request body is over the limit of ${limit / 1024} KiB`)
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks).toString('utf8')
}

type Issue = { path?: unknown; message?: string; summary?: string }

function fieldName(path: unknown): string {
  if (Array.isArray(path)) return path.length ? path.join('.') : 'body'
  if (typeof path === 'string') {
    const trimmed = path.replace(/^\//, '').replace(/\//g, '.')
    return trimmed === '' || trimmed === 'root' ? 'body' : trimmed
  }
  return 'body'
}

/** "email: must be ..." for each failing field, so the client knows what to fix. */
export function validationMessage(issues: Issue[]): string {
  const parts = issues.slice(0, 5).map((issue) => {
    const field = fieldName(issue.path)
    const raw = issue.message ?? issue.summary ?? 'is invalid'
    if (field === 'body') return 'body must be a JSON object'
    if (/received undefined/.test(raw)) return `${field} is required`
    return `${field}: ${raw}`
  })
  return [...new Set(parts)].join('; ') || 'the request is invalid'
}

export function errorHandling(publicUrl: string, logger: Logger) {
  return new Elysia({ name: 'error-handling' })
    .onParse({ as: 'global' }, async ({ request }) => {
      // Bodies are JSON whatever Content-Type says: `curl -d` sends form encoding by default.
      const text = await readBodyLimited(request, MAX_BODY_BYTES)
      if (text.trim() === '') throw new ApiError('invalid_request', 'body must be a JSON object')
      let parsed: unknown
      try {
        parsed = JSON.parse(text)
      } catch {
        throw new ApiError('invalid_request', 'body is not valid JSON')
      }
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new ApiError('invalid_request', 'body must be a JSON object')
      return parsed
    })
    .onError({ as: 'global' }, ({ code, error, request }) => {
      const cause = code === 'PARSE' ? (error as { cause?: unknown }).cause : error
      if (cause instanceof ApiError) return apiErrorResponse(publicUrl, cause)
      switch (code) {
        case 'VALIDATION': {
          const issues = ((error as { all?: Issue[] }).all ?? []) as Issue[]
          return errorResponse(publicUrl, 'invalid_request', 400, validationMessage(issues))
        }
        case 'PARSE':
          return errorResponse(publicUrl, 'invalid_request', 400, 'body is not valid JSON')
        case 'NOT_FOUND':
          return errorResponse(publicUrl, 'not_found', 404, `no endpoint ${request.method} ${new URL(request.url).pathname}`)
        default: {
          const meta = requestMeta(request)
          logger.error('unhandled error', { request_id: meta?.id, method: request.method, path: new URL(request.url).pathname, ...describeError(error) })
          return errorResponse(publicUrl, 'internal_error', 500, `internal error; quote request id ${meta?.id ?? 'unknown'} to the operator`)
        }
      }
    })
}
