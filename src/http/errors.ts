// Turns every failure into the contract's error shape: validation is 400 invalid_request (never 422), an
// unknown route 404 not_found, and a 500 never carries a stack trace or SQL: those go to the log under the
// request id. A client that hung up gets nothing and is logged as a hang-up, not as a fault.
import { Elysia } from 'elysia'
import { ApiError, ClientClosedError, type ErrorCode, errorBody, type Issue, validationMessage } from '../shared/errors'
import { describeError, type Logger } from '../shared/logger'
import { StoreBusyError } from '../store/contract'
import type { RequestRegistry } from './context'

/** Nobody reads it (the client is gone); nginx's number for it makes the access log say what happened. */
const CLIENT_CLOSED_STATUS = 499

export function errorResponse(publicUrl: string, code: ErrorCode, status: number, message: string, headers: Record<string, string> = {}): Response {
  return Response.json(errorBody(publicUrl, code, message), { status, headers })
}

/** Headers that go with every answer of a code: the challenge a 401 for a bearer token names. */
const CODE_HEADERS: Partial<Record<ErrorCode, Record<string, string>>> = {
  invalid_metrics_token: { 'WWW-Authenticate': 'Bearer realm="alttext metrics"' },
}

/**
 * An error whose answer also closes the connection: a body refused before it was read to its end (see
 * closingConnection in body.ts).
 */
export class ConnectionClosingError extends ApiError {
  constructor(error: ApiError) {
    super(error.code, error.message, { retryAfterSeconds: error.retryAfterSeconds, detail: error.detail })
  }
}

/** The headers of an error's answer: the only place Retry-After is written. */
function errorHeaders(error: ApiError): Record<string, string> {
  const headers: Record<string, string> = { ...CODE_HEADERS[error.code] }
  if (error.retryAfterSeconds !== undefined) headers['Retry-After'] = String(error.retryAfterSeconds)
  if (error instanceof ConnectionClosingError) headers.Connection = 'close'
  return headers
}

/** An ApiError's answer in the contract's shape, with its headers. */
export function apiErrorResponse(publicUrl: string, error: ApiError): Response {
  return errorResponse(publicUrl, error.code, error.status, error.message, errorHeaders(error))
}

/** A store's own error as the contract's: the store knows nothing of HTTP. Anything else as it is. */
function fromStore(error: unknown): unknown {
  if (error instanceof StoreBusyError) return new ApiError('database_busy', error.message, { retryAfterSeconds: error.retryAfterSeconds, detail: error.detail })
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
      return fail(cause.code, cause.status, cause.message, errorHeaders(cause))
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
