// Turns every failure into the contract's error shape: validation is 400 invalid_request (never 422), an
// unknown route 404 not_found, and a 500 never carries a stack trace or SQL: those go to the log under the
// request id. A client that hung up gets nothing and is logged as a hang-up, not as a fault.
import { Elysia } from 'elysia'
import { ApiError, ClientClosedError, type ErrorCode, errorBody } from '../shared/errors'
import { describeError, type Logger } from '../shared/logger'
import { StoreBusyError } from '../store/errors'
import type { RequestRegistry } from './context'

/** Nobody reads it (the client is gone); nginx's number for it makes the access log say what happened. */
const CLIENT_CLOSED_STATUS = 499

export function errorResponse(publicUrl: string, code: ErrorCode, status: number, message: string, headers: Record<string, string> = {}): Response {
  return Response.json(errorBody(publicUrl, code, message), { status, headers })
}

type Issue = { path?: unknown; message?: string; summary?: string }

function fieldName(path: unknown): string {
  // items[3].language: array positions in brackets, as a reader writes them.
  if (Array.isArray(path))
    return path.length ? path.map((part, i) => (typeof part === 'number' ? `[${part}]` : i === 0 ? String(part) : `.${String(part)}`)).join('') : 'body'
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

/** A store's own error as the contract's: the store knows nothing of HTTP. Anything else as it is. */
function fromStore(error: unknown): unknown {
  if (error instanceof StoreBusyError) return new ApiError('database_busy', error.message, { 'Retry-After': String(error.retryAfterSeconds) }, error.detail)
  return error
}

export function errorHandling(publicUrl: string, logger: Logger, requests: RequestRegistry) {
  return new Elysia({ name: 'error-handling' }).onError({ as: 'global' }, ({ code, error, request, set, path }) => {
    const meta = requests.meta(request)
    const fail = (errorCode: ErrorCode, status: number, message: string, headers: Record<string, string> = {}) => {
      set.status = status
      return errorResponse(publicUrl, errorCode, status, message, headers)
    }
    const cause = fromStore(code === 'PARSE' ? (error as { cause?: unknown }).cause : error)
    if (cause instanceof ApiError) {
      if (cause.detail !== undefined) logger.info('request refused', { request_id: meta?.id, code: cause.code, detail: cause.detail })
      return fail(cause.code, cause.status, cause.message, cause.headers)
    }
    if (cause instanceof ClientClosedError) {
      logger.info('client closed the connection', { request_id: meta?.id, stage: cause.stage })
      set.status = CLIENT_CLOSED_STATUS
      return new Response(null, { status: CLIENT_CLOSED_STATUS })
    }
    switch (code) {
      case 'VALIDATION':
        return fail('invalid_request', 400, validationMessage(((error as { all?: Issue[] }).all ?? []) as Issue[]))
      case 'PARSE':
        return fail('invalid_request', 400, 'body is not valid JSON')
      case 'NOT_FOUND':
        return fail('not_found', 404, `no endpoint ${request.method} ${path}`)
      default: {
        if (request.signal.aborted) {
          logger.info('client closed the connection', { request_id: meta?.id })
          set.status = CLIENT_CLOSED_STATUS
          return new Response(null, { status: CLIENT_CLOSED_STATUS })
        }
        logger.error('unhandled error', { request_id: meta?.id, method: request.method, path: path, ...describeError(error) })
        return fail('internal_error', 500, `internal error; quote request id ${meta?.id ?? 'unknown'} to the operator`)
      }
    }
  })
}
