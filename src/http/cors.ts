// CORS for named browser origins (ALTTEXT_CORS_ORIGINS), off by default. A listed origin may call the API
// with an API key: its responses carry Access-Control-Allow-Origin and expose the request id and the rate
// headers; its preflights are answered 204 with the methods and headers the API uses. Credentials are
// never allowed, so a browser never sends the session cookie cross-origin (and the auth layer ignores it
// from another origin anyway). An unlisted origin gets no CORS headers; its preflight is still a 204.
import { Elysia } from 'elysia'

const EXPOSED_HEADERS = 'X-Request-Id, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After'
const ALLOWED_METHODS = 'GET, POST, DELETE'
const ALLOWED_HEADERS = 'content-type, x-api-key, idempotency-key'
/** How long a browser may reuse a preflight's answer, in seconds. */
const PREFLIGHT_MAX_AGE = '600'

function allowance(origins: '*' | string[]) {
  const listed = new Set(origins === '*' ? [] : origins)
  const enabled = origins === '*' || listed.size > 0
  return {
    enabled,
    /** The request's Origin when it may read the answer, else null. */
    allowed(request: Request): string | null {
      if (!enabled) return null
      const origin = request.headers.get('origin')
      return origin !== null && (origins === '*' || listed.has(origin)) ? origin : null
    },
  }
}

/** The CORS headers of every answer, whatever route, error or 404 it meets: set before routing. */
export function corsHeaders(origins: '*' | string[]) {
  const cors = allowance(origins)
  // Off by default: then no hook at all, since every request would pay for one that does nothing.
  if (!cors.enabled) return new Elysia({ name: 'cors-headers' })
  return new Elysia({ name: 'cors-headers' }).onRequest(({ request, set }) => {
    // The answer depends on the Origin header: no cache may give one origin's answer to another.
    set.headers.vary = 'Origin'
    const origin = cors.allowed(request)
    if (origin === null) return
    set.headers['access-control-allow-origin'] = origin
    set.headers['access-control-expose-headers'] = EXPOSED_HEADERS
  })
}

/**
 * Preflights (`OPTIONS` on any path): no key needed; mounted where the rate limits apply, so they count
 * like any request. A preflight from a listed origin learns the methods and headers; any other gets a bare 204.
 */
export function corsPreflight(origins: '*' | string[]) {
  const cors = allowance(origins)
  return new Elysia({ name: 'cors-preflight' }).options(
    '/*',
    ({ request, set }) => {
      set.status = 204
      if (cors.allowed(request) === null || request.headers.get('access-control-request-method') === null) return ''
      set.headers['access-control-allow-methods'] = ALLOWED_METHODS
      set.headers['access-control-allow-headers'] = ALLOWED_HEADERS
      set.headers['access-control-max-age'] = PREFLIGHT_MAX_AGE
      return ''
    },
    { detail: { hide: true } },
  )
}
