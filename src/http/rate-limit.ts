// Per-address, per-endpoint sliding-window limits, inside the router: a route's bucket is its method and
// route template (`GET /api/keys/:prefix` is one bucket whatever the prefix), and every unknown path shares
// one bucket, so random paths cannot mint buckets. A route says its tier once (`rateLimit: 'credentials'`);
// the app applies the standard tier around every route, and the first limit a request meets is the one
// that counts it.
import { Elysia } from 'elysia'
import type { RateLimiter } from './limiter'
import { ApiError } from '../shared/errors'
import type { RequestMeta } from './context'
import { errorResponse } from './errors'
import { RATE_LIMITS, RATE_WINDOW_SECONDS } from '../shared/limits'

export type RateTier = keyof typeof RATE_LIMITS

const UNROUTED = 'unknown path'

type LimitContext = { meta: RequestMeta; request: Request; route: string; set: { headers: Record<string, string | number> } }

export type Admission = (c: LimitContext, tier: RateTier) => void

/** Counts the request against its endpoint's bucket once; throws 429 over the limit. With no limiter, admits all. */
export function createAdmission(limiter: RateLimiter | null): Admission {
  return (c, tier) => {
    if (limiter === null || c.meta.admitted) return
    c.meta.admitted = true
    const method = c.request.method === 'HEAD' ? 'GET' : c.request.method
    check(limiter, c, `${method} ${c.route}`, RATE_LIMITS[tier])
  }
}

function check(limiter: RateLimiter, c: Omit<LimitContext, 'route'>, endpoint: string, limit: number): void {
  const decision = limiter.check(c.meta.client, endpoint, limit)
  c.set.headers['ratelimit-limit'] = String(decision.limit)
  c.set.headers['ratelimit-remaining'] = String(decision.remaining)
  c.set.headers['ratelimit-reset'] = String(decision.resetSeconds)
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

export function rateLimits(limiter: RateLimiter | null, admit: Admission, publicUrl: string) {
  return (
    new Elysia({ name: 'rate-limits' })
      .macro({
        rateLimit: (tier: RateTier) => ({
          transform(c) {
            admit(c as unknown as LimitContext, tier)
          },
        }),
      })
      // A 404 never reaches a route's hooks: unknown paths share one bucket here, before the 404 is rendered.
      .onError({ as: 'global' }, (c) => {
        const meta = (c as { meta?: RequestMeta | null }).meta
        if (c.code !== 'NOT_FOUND' || limiter === null || !meta || meta.admitted) return
        meta.admitted = true
        try {
          check(limiter, { meta, request: c.request, set: c.set as LimitContext['set'] }, UNROUTED, RATE_LIMITS.standard)
        } catch (error) {
          const refusal = error as ApiError
          c.set.status = refusal.status
          return errorResponse(publicUrl, refusal.code, refusal.status, refusal.message, refusal.headers)
        }
      })
  )
}
