// The exact sliding log of http/limiter.ts, kept in Redis so that every replica counts in one log: one Lua
// script per check, atomic on the server, timed by the server's clock (TIME) so that the replicas' clocks
// do not matter. Same decision, same headers, denied requests not logged. A log holds at most `limit`
// entries and expires a window after its newest one. Its key holds a keyed hash of the address, never the address.
import { randomBytes } from 'node:crypto'
import type { RateCheck, RateDecision, RateLimiter } from '../http/limiter'
import { RATE_WINDOW_SECONDS } from '../shared/limits'
import { type KeyHasher, luaScript, type RedisConnection, type ScriptRunner } from './connection'

// KEYS[1]: the log (a sorted set: one member per admitted request, scored by its time in ms).
// ARGV: limit, window (ms), a member unique to this call, the time in ms (empty: the server's TIME).
// Returns {allowed (1/0), remaining, ms until RateLimit-Reset}: Redis turns Lua numbers into integers,
// so the script rounds up itself.
const SLIDING_LOG = luaScript(`
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now = tonumber(ARGV[4])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
local function scoreAt(index)
  return tonumber(redis.call('ZRANGE', key, index, index, 'WITHSCORES')[2])
end
if count >= limit then
  return {0, 0, math.ceil(scoreAt(count - limit) + window - now)}
end
local at = now
if count > 0 then at = math.max(scoreAt(count - 1), now) end
redis.call('ZADD', key, at, ARGV[3])
redis.call('PEXPIRE', key, math.ceil(at - now + window))
count = count + 1
local remaining = limit - count
local resetAt = at + window
if remaining == 0 then resetAt = scoreAt(count - limit) + window end
return {1, remaining, math.ceil(resetAt - now)}
`)

const KEY_PREFIX = 'alttext:rate:'

export type RedisRateLimiterOptions = {
  /** What a key holds instead of the client's address (redisKeyHasher). */
  hashKey: KeyHasher
  /** Window length in milliseconds. Default RATE_WINDOW_SECONDS. */
  windowMs?: number
  /** Tests move time; unset, the Redis server's clock decides (the service always leaves it unset). */
  clock?: () => number
  /** Prefix of the keys (tests keep runs apart). */
  keyPrefix?: string
}

const wholeSecondsAtLeastOne = (ms: number) => Math.max(1, Math.ceil(ms / 1000))

/** The check of one request against the shared log; rejects when Redis fails (the caller falls back). */
export function createRedisRateLimiter(options: RedisRateLimiterOptions) {
  const windowMs = options.windowMs ?? RATE_WINDOW_SECONDS * 1000
  const prefix = options.keyPrefix ?? KEY_PREFIX
  if (!(Number.isInteger(windowMs) && windowMs > 0)) throw new RangeError(`windowMs must be a whole positive number, got ${windowMs}`)
  // Log members must differ even when two replicas log the same millisecond.
  const replica = randomBytes(6).toString('base64url')
  let sequence = 0

  return {
    /** Counts the request if it is allowed, in one atomic step on Redis. */
    check(run: ScriptRunner, clientKey: string, endpoint: string, limit: number): Promise<RateDecision> {
      if (!(Number.isInteger(limit) && limit >= 1)) throw new RangeError(`limit must be a whole number >= 1, got ${limit}`)
      // The client key (an address) is hashed: Redis never holds an address. The endpoint is a method, a space and a route.
      const key = `${prefix}${options.hashKey(clientKey)} ${endpoint}`
      const now = options.clock?.() ?? ''
      return run(SLIDING_LOG, [key], [limit, windowMs, `${replica}.${++sequence}`, now]).then((reply) => {
        const [allowed, remaining, resetMs] = reply as [number, number, number]
        const seconds = wholeSecondsAtLeastOne(resetMs)
        return allowed === 1
          ? { allowed: true, limit, remaining, resetSeconds: seconds, retryAfterSeconds: 0 }
          : { allowed: false, limit, remaining: 0, resetSeconds: seconds, retryAfterSeconds: seconds }
      })
    },
  }
}

export type RedisRateLimiter = ReturnType<typeof createRedisRateLimiter>

/**
 * Checks in Redis, shared by every replica; this replica's own limiter decides while Redis does not answer.
 * The own limiter logs what Redis admitted too, and refuses what passes its own count: when Redis stops
 * answering, or comes back without the requests admitted meanwhile, this replica still lets no more than
 * the limit through in a window.
 */
export function sharedRateCheck(connection: RedisConnection, shared: RedisRateLimiter, local: RateLimiter): RateCheck {
  return (clientKey, endpoint, limit) => {
    // Redis's answer after the deadline, when the own limiter decided already, is not logged twice.
    let decided = false
    return connection.attempt(
      'rate_limit',
      (run) =>
        shared.check(run, clientKey, endpoint, limit).then((decision) => {
          if (!decision.allowed || decided) return decision
          const own = local.check(clientKey, endpoint, limit)
          return own.allowed ? decision : own
        }),
      () => {
        decided = true
        return local.check(clientKey, endpoint, limit)
      },
    )
  }
}
