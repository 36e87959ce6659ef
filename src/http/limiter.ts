// In-memory sliding-window rate limiter, keyed by (client, endpoint).
//
// Algorithm: an exact sliding log (the timestamps of the admitted requests still
// inside the window), not the two-window counter. The counter is O(1) per entry but
// only estimates the window, and its estimate locks a client out for longer than the
// window (5 hits at t=0 with limit 5 are not forgiven until t=72s, not t=60s), so the
// Retry-After it promises is awkward to make exact. The log is exact, Retry-After
// falls straight out of it (the moment the right timestamp leaves the window), and
// its memory stays small: only admitted requests are logged, so a log never holds
// more than `limit` timestamps (<= 60 here), and a flood of distinct addresses costs
// one timestamp per entry. Total memory is bounded by maxEntries * limit timestamps.
//
// Rejected requests are never logged: a client that keeps hammering while locked out
// does not extend its own lockout and is let back in as soon as the window slides.

import type { MaybePromise } from '../shared/maybe-promise'

export type RateDecision = {
  allowed: boolean
  limit: number
  /** Requests still allowed in the window after this one. 0 when denied. */
  remaining: number
  /**
   * Whole seconds (>= 1) for RateLimit-Reset. When no room is left (denied, or this
   * request took the last slot): seconds until one more request would be allowed.
   * When room is left: seconds until every request counted in the window has expired
   * and the full quota is back (IETF draft: time until the quota resets).
   */
  resetSeconds: number
  /** Whole seconds (>= 1) for Retry-After when denied; retrying after it is allowed. 0 when allowed. */
  retryAfterSeconds: number
}

/**
 * Decides one request against its bucket, counting it when allowed: a value from this process's memory, a
 * promise when the decision is Redis's (ALTTEXT_REDIS_URL), so the in-memory path never waits a turn.
 */
export type RateCheck = (clientKey: string, endpoint: string, limit: number) => MaybePromise<RateDecision>

export interface RateLimiter {
  /** Counts the request if it is allowed; a denied request is not counted. */
  check(clientKey: string, endpoint: string, limit: number, now?: number): RateDecision
  /** Drops every entry idle for a whole window (all of its requests have expired). Returns how many were dropped. */
  sweep(now?: number): number
  /** Number of tracked (client, endpoint) entries. */
  size(): number
  clear(): void
}

export type SlidingWindowLimiterOptions = {
  /** Window length in milliseconds. Default 60 000. */
  windowMs?: number
  /** Hard cap on tracked (client, endpoint) entries; the least recently used is evicted beyond it. Default 100 000. */
  maxEntries?: number
  /** Millisecond clock. Default Date.now. */
  clock?: () => number
}

type WindowEntry = {
  /** Times of admitted requests, ascending; only those inside the window are kept. */
  hits: number[]
  /** Last time `check` saw this entry; the Map is ordered by it (least recent first). */
  touchedAt: number
}

const DEFAULT_WINDOW_MS = 60_000
const DEFAULT_MAX_ENTRIES = 100_000
/** Idle entries removed from the front of the LRU order on each check, so memory shrinks without a timer. */
const IDLE_SWEEP_PER_CHECK = 2

function wholeSecondsAtLeastOne(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000))
}

export function createSlidingWindowLimiter(options: SlidingWindowLimiterOptions = {}): RateLimiter {
  const windowMs = options.windowMs ?? DEFAULT_WINDOW_MS
  const maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES
  const clock = options.clock ?? Date.now
  if (!(Number.isFinite(windowMs) && windowMs > 0)) throw new RangeError(`windowMs must be a positive number, got ${windowMs}`)
  if (!(Number.isInteger(maxEntries) && maxEntries >= 1)) throw new RangeError(`maxEntries must be a whole number >= 1, got ${maxEntries}`)

  // A Map iterates in insertion order; deleting and re-setting on every touch makes
  // that order least-recently-used first, so eviction and idle sweeps work from the front.
  const entries = new Map<string, WindowEntry>()

  /**
   * Removes up to `budget` entries from the front that have been idle for a whole window.
   * Such an entry holds no live hits (every hit was logged at or before its last touch),
   * so dropping it changes no decision. Entries behind the first busy one were touched
   * later, so the scan stops there.
   */
  function sweepIdle(now: number, budget: number): number {
    let removed = 0
    for (const [key, entry] of entries) {
      if (removed >= budget || entry.touchedAt > now - windowMs) break
      entries.delete(key)
      removed++
    }
    return removed
  }

  function evictLeastRecentlyUsed(): void {
    while (entries.size > maxEntries) {
      const oldest = entries.keys().next()
      if (oldest.done) return
      entries.delete(oldest.value)
    }
  }

  return {
    check(clientKey, endpoint, limit, now = clock()) {
      if (!(Number.isInteger(limit) && limit >= 1)) throw new RangeError(`limit must be a whole number >= 1, got ${limit}`)
      sweepIdle(now, IDLE_SWEEP_PER_CHECK)

      // NUL cannot occur in an address or an HTTP method and path, so the key is unambiguous.
      const key = `${clientKey}\u0000${endpoint}`
      const found = entries.get(key)
      const entry: WindowEntry = found ?? { hits: [], touchedAt: now }
      if (found) entries.delete(key)
      entry.touchedAt = Math.max(entry.touchedAt, now)
      entries.set(key, entry)
      if (entries.size > maxEntries) evictLeastRecentlyUsed()

      const { hits } = entry
      // A hit at time t counts while now - t < windowMs. Each hit is dropped once, so
      // this is amortised O(1); splice moves at most `limit` numbers.
      let expired = 0
      while (expired < hits.length && (hits[expired] as number) <= now - windowMs) expired++
      if (expired > 0) hits.splice(0, expired)

      if (hits.length >= limit) {
        // Room for one more appears when enough of the oldest hits expire to leave
        // limit - 1 in the window: the hit at index length - limit is the last to go.
        const freedAt = (hits[hits.length - limit] as number) + windowMs
        const retryAfterSeconds = wholeSecondsAtLeastOne(freedAt - now)
        return { allowed: false, limit, remaining: 0, resetSeconds: retryAfterSeconds, retryAfterSeconds }
      }

      // Keep the log ascending even if the clock steps backwards.
      const newest = hits[hits.length - 1]
      hits.push(newest === undefined ? now : Math.max(newest, now))
      const remaining = limit - hits.length
      const resetAt =
        remaining > 0
          ? (hits[hits.length - 1] as number) + windowMs // full quota back
          : (hits[hits.length - limit] as number) + windowMs // room for one more
      return { allowed: true, limit, remaining, resetSeconds: wholeSecondsAtLeastOne(resetAt - now), retryAfterSeconds: 0 }
    },

    sweep(now = clock()) {
      return sweepIdle(now, Number.POSITIVE_INFINITY)
    },

    size() {
      return entries.size
    },

    clear() {
      entries.clear()
    },
  }
}
