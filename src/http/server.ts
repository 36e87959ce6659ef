// The outer HTTP server: request ids, client address, rate limits and the access log wrap the app,
// so they hold for every response, the app's own errors and 404s included.
import type { Server } from 'bun'
import { clientAddress } from '../limiter/client-address'
import type { RateLimiter } from '../limiter/limiter'
import type { Logger } from '../shared/logger'
import { describeError } from '../shared/logger'
import type { Caller } from '../modules/auth/service'
import { ApiError } from '../shared/errors'
import type { MaybePromise } from '../shared/maybe-promise'
import { apiErrorResponse, errorResponse } from './errors'
import { setRequestMeta, type RequestMeta } from './request-meta'

export type EndpointLimits = {
  /** "METHOD /path" → requests per window; endpoints not listed get `fallback`. */
  perEndpoint: Record<string, number>
  fallback: number
  /** Paths never limited (health probes). */
  exempt: Set<string>
}

export type HttpServerOptions = {
  fetch: (request: Request) => Response | Promise<Response>
  /** Known "METHOD /path" routes; others share one bucket so random paths cannot mint buckets. */
  routes: Set<string>
  /** Routes that need X-API-Key: authenticated here, before the body is read or validated. */
  authenticatedRoutes: Set<string>
  /** Returns at once when the key is in memory (no await on the hot path); throws or rejects with the contract's 401s. */
  authenticate: (request: Request) => MaybePromise<Caller>
  hostname: string
  port: number
  publicUrl: string
  trustProxyHops: number
  limiter: RateLimiter | null
  limits: EndpointLimits
  logger: Logger
}

const REQUEST_ID = /^[\w.:-]{1,128}$/

// Plain string scans, no regular expressions: these run on every request.
function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  if (start < 0) return '/'
  let end = url.indexOf('?', start)
  const hash = url.indexOf('#', start)
  if (hash >= 0 && (end < 0 || hash < end)) end = hash
  return end < 0 ? url.slice(start) : url.slice(start, end)
}

/** The router ignores trailing slashes, so limits and authentication must too (`/api/login/` is `/api/login`). */
function routePath(path: string): string {
  let end = path.length
  while (end > 1 && path.charCodeAt(end - 1) === 47) end--
  return end === path.length ? path : path.slice(0, end)
}

function withHeaders(response: Response, headers: [string, string][]): Response {
  try {
    for (const [name, value] of headers) response.headers.set(name, value)
    return response
  } catch {
    // Some responses have immutable headers; copy once in that rare case.
    const copy = new Response(response.body, response)
    for (const [name, value] of headers) copy.headers.set(name, value)
    return copy
  }
}

export function startHttpServer(options: HttpServerOptions): Server<undefined> {
  const { limiter, limits, logger, publicUrl } = options

  return Bun.serve({
    hostname: options.hostname,
    port: options.port,
    development: false,
    // Bodies over 64 KiB get our own 413 from the parser, which stops reading there; Bun's own limit
    // (a bare 413) only needs to stay out of its way.
    maxRequestBodySize: 1024 * 1024 * 1024,
    async fetch(request, server) {
      const started = performance.now()
      const incomingId = request.headers.get('x-request-id')
      const id = incomingId && REQUEST_ID.test(incomingId) ? incomingId : crypto.randomUUID()
      const client = clientAddress(server.requestIP(request)?.address, request.headers.get('x-forwarded-for'), options.trustProxyHops)
      const meta: RequestMeta = { id, client }
      setRequestMeta(request, meta)
      const path = pathOf(request.url)
      const method = request.method === 'HEAD' ? 'GET' : request.method
      const route = `${method} ${routePath(path)}`

      const extra: [string, string][] = [['X-Request-Id', id]]
      let response: Response | undefined
      if (limiter && !limits.exempt.has(routePath(path))) {
        const endpoint = options.routes.has(route) ? route : 'other'
        const limit = limits.perEndpoint[endpoint] ?? limits.fallback
        const decision = limiter.check(client, endpoint, limit)
        extra.push(
          ['RateLimit-Limit', String(decision.limit)],
          ['RateLimit-Remaining', String(decision.remaining)],
          ['RateLimit-Reset', String(decision.resetSeconds)],
        )
        if (!decision.allowed) {
          extra.push(['Retry-After', String(decision.retryAfterSeconds)])
          response = errorResponse(
            publicUrl,
            'rate_limited',
            429,
            `rate limit of ${limit} requests per minute for ${endpoint === 'other' ? 'this address' : endpoint} exceeded; retry in ${decision.retryAfterSeconds} s`,
          )
        }
      }
      if (!response) {
        try {
          // A missing or bad key is 401 whatever the body holds: never a validation hint to a stranger.
          if (options.authenticatedRoutes.has(route)) {
            const caller = options.authenticate(request)
            meta.caller = caller instanceof Promise ? await caller : caller
          }
          response = await options.fetch(request)
        } catch (error) {
          if (error instanceof ApiError) response = apiErrorResponse(publicUrl, error)
          else {
            logger.error('unhandled error', { request_id: id, ...describeError(error) })
            response = errorResponse(publicUrl, 'internal_error', 500, `internal error; quote request id ${id} to the operator`)
          }
        }
      }
      response = withHeaders(response, extra)
      logger.access({ method: request.method, path, status: response.status, durationMs: performance.now() - started, requestId: id, client })
      return response
    },
    error(error) {
      logger.error('server error', describeError(error))
      return errorResponse(publicUrl, 'internal_error', 500, 'internal error')
    },
  })
}
