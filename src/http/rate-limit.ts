// Per-address, per-endpoint sliding-window limits, inside the router: a route's bucket is its method and
// route template (`GET /api/keys/:prefix` is one bucket whatever the prefix), and every unknown path shares
// one bucket, so random paths cannot mint buckets. A route says its tier once (`rateLimit: 'credentials'`);
// the app applies the standard tier around every route, and the first limit a request meets is the one
// that counts it. The decision is this process's (a value) or Redis's (a promise, ALTTEXT_REDIS_URL):
// only the latter makes the hooks asynchronous, so the in-memory path costs no extra turn.
import { Elysia } from 'elysia'
import type { RateCheck, RateDecision } from './limiter'
import { ApiError } from '../shared/errors'
import { andThen, type MaybePromise } from '../shared/maybe-promise'
import type { RequestRegistry } from './context'
import { apiErrorResponse } from './errors'
import { RATE_LIMITS, RATE_WINDOW_SECONDS } from '../shared/limits'

export type RateTier = keyof typeof RATE_LIMITS

const UNROUTED = 'unknown path'

type Headers = Record<string, string | number>

/**
 * Counts a request against its endpoint's bucket once; throws (or rejects with) 429 over the limit. With no
 * limiter, admits all. A promise only when the decision is Redis's.
 */
export type Admission = (request: Request, route: string, set: { headers: Headers }, tier: RateTier) => MaybePromise<void>

export function createAdmission(check: RateCheck | null, requests: RequestRegistry): Admission {
  return (request, route, set, tier) => {
    const meta = requests.meta(request)
    if (check === null || meta === undefined || meta.admitted) return
    meta.admitted = true
    const method = request.method === 'HEAD' ? 'GET' : request.method
    const endpoint = `${method} ${route}`
    const limit = RATE_LIMITS[tier]
    return andThen(check(meta.client, endpoint, limit), (decision) => enforce(decision, set, endpoint, limit))
  }
}

function enforce(decision: RateDecision, set: { headers: Headers }, endpoint: string, limit: number): void {
  set.headers['ratelimit-limit'] = String(decision.limit)
  set.headers['ratelimit-remaining'] = String(decision.remaining)
  set.headers['ratelimit-reset'] = String(decision.resetSeconds)
  if (decision.allowed) return
  const where = endpoint === UNROUTED ? 'unknown paths from this address' : endpoint
  throw new ApiError(
    'rate_limited',
    `rate limit of ${limit} requests per ${RATE_WINDOW_SECONDS} seconds for ${where} exceeded; retry in ${decision.retryAfterSeconds} s`,
    { retryAfterSeconds: decision.retryAfterSeconds },
  )
}

/** `shared`: the check may answer with a promise (Redis), so the route hook must be awaited. */
export function rateLimits(check: RateCheck | null, admit: Admission, requests: RequestRegistry, publicUrl: string, shared = false) {
  const refusal = (set: { status?: number | string }, error: unknown) => {
    if (!(error instanceof ApiError)) throw error
    set.status = error.status
    return apiErrorResponse(publicUrl, error)
  }
  return (
    new Elysia({ name: 'rate-limits' })
      .macro({
        // Elysia awaits a hook only when it looks asynchronous: the in-memory one must not.
        rateLimit: (tier: RateTier) => ({
          transform: shared
            ? async ({ request, route, set }) => {
                await admit(request, route, set as { headers: Headers }, tier)
              }
            : ({ request, route, set }) => {
                admit(request, route, set as { headers: Headers }, tier)
              },
        }),
      })
      // A 404 never reaches a route's hooks: unknown paths share one bucket here, before the 404 is rendered.
      .onError({ as: 'global' }, ({ code, request, set }) => {
        const meta = requests.meta(request)
        if (code !== 'NOT_FOUND' || check === null || meta === undefined || meta.admitted) return
        meta.admitted = true
        const headers = set as { headers: Headers }
        try {
          const decided = andThen(check(meta.client, UNROUTED, RATE_LIMITS.standard), (decision) => enforce(decision, headers, UNROUTED, RATE_LIMITS.standard))
          return decided instanceof Promise ? decided.catch((error: unknown) => refusal(set, error)) : decided
        } catch (error) {
          return refusal(set, error)
        }
      })
  )
}
