// Per-address, per-endpoint sliding-window limits, inside the router: a route's bucket is its method and
// route template (`GET /api/keys/:prefix` is one bucket whatever the prefix), and every unknown path shares
// one bucket, so random paths cannot mint buckets. A route says its tier once (`rateLimit: 'credentials'`);
// the app applies the standard tier around every route, and the first limit a request meets is the one
// that counts it.
import { Elysia } from 'elysia'
import type { RateLimiter } from './limiter'
import { ApiError } from '../shared/errors'
import type { RequestMeta, RequestRegistry } from './context'
import { errorResponse } from './errors'
import { RATE_LIMITS, RATE_WINDOW_SECONDS } from '../shared/limits'

export type RateTier = keyof typeof RATE_LIMITS

const UNROUTED = 'unknown path'

type Headers = Record<string, string | number>

/** Counts a request against its endpoint's bucket once; throws 429 over the limit. With no limiter, admits all. */
export type Admission = (request: Request, route: string, set: { headers: Headers }, tier: RateTier) => void

export function createAdmission(limiter: RateLimiter | null, requests: RequestRegistry): Admission {
  return (request, route, set, tier) => {
    const meta = requests.meta(request)
    if (limiter === null || meta === undefined || meta.admitted) return
    meta.admitted = true
    const method = request.method === 'HEAD' ? 'GET' : request.method
    check(limiter, meta, set, `${method} ${route}`, RATE_LIMITS[tier])
  }
}

function check(limiter: RateLimiter, meta: RequestMeta, set: { headers: Headers }, endpoint: string, limit: number): void {
  const decision = limiter.check(meta.client, endpoint, limit)
  set.headers['ratelimit-limit'] = String(decision.limit)
  set.headers['ratelimit-remaining'] = String(decision.remaining)
  set.headers['ratelimit-reset'] = String(decision.resetSeconds)
  if (decision.allowed) return
  const where = endpoint === UNROUTED ? 'unknown paths from this address' : endpoint
  throw new ApiError(
    'rate_limited',
    `rate limit of ${limit} requests per ${RATE_WINDOW_SECONDS} seconds for ${where} exceeded; retry in ${decision.retryAfterSeconds} s`,
    {
      'Retry-After': String(decision.retryAfterSeconds),
    },
  )
}

export function rateLimits(limiter: RateLimiter | null, admit: Admission, requests: RequestRegistry, publicUrl: string) {
  return (
    new Elysia({ name: 'rate-limits' })
      .macro({
        rateLimit: (tier: RateTier) => ({
          transform({ request, route, set }) {
            admit(request, route, set as { headers: Headers }, tier)
          },
        }),
      })
      // A 404 never reaches a route's hooks: unknown paths share one bucket here, before the 404 is rendered.
      .onError({ as: 'global' }, ({ code, request, set }) => {
        const meta = requests.meta(request)
        if (code !== 'NOT_FOUND' || limiter === null || meta === undefined || meta.admitted) return
        meta.admitted = true
        try {
          check(limiter, meta, set as { headers: Headers }, UNROUTED, RATE_LIMITS.standard)
        } catch (error) {
          const refusal = error as ApiError
          set.status = refusal.status
          return errorResponse(publicUrl, refusal.code, refusal.status, refusal.message, refusal.headers)
        }
      })
  )
}
