// The per-account sign-in slow-down of modules/accounts/slow-down.ts, kept in Redis so that failures on
// every replica count for the account together: the same rules, each step one Lua script (atomic on the
// server, timed by its clock). Per account, three keys under a keyed hash of the email (no email or address
// is stored, nor a plain hash one could reverse by guessing): the failure times within the window, the moment
// of the next allowed attempt, and the addresses that signed in before (keyed hashes too, forgotten LOGIN_KNOWN_ADDRESS_DAYS after their last
// sign-in). This replica's own slow-down decides while Redis does not answer.
import { randomBytes } from 'node:crypto'
import { LOGIN_FAILURES_BEFORE_DELAY, LOGIN_KNOWN_ADDRESS_DAYS, LOGIN_KNOWN_ADDRESSES } from '../shared/limits'
import { type LocalSlowDown, type LoginSlowDown, MAX_DELAY_MS, MAX_FAILURES_KEPT, WINDOW_MS } from '../modules/accounts/slow-down'
import { type KeyHasher, luaScript, type RedisConnection } from './connection'

// The time in ms: the caller's when given (tests), else the server's.
const NOW = (index: number) => `
local now = tonumber(ARGV[${index}])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end`

// The wait after `count` failures in the window (modules/accounts/slow-down.ts delayAfter).
const DELAY = `
local function delayAfter(count, threshold, maxDelay)
  if count < threshold then return 0 end
  return math.min(maxDelay, 1000 * 2 ^ (count - threshold))
end`

// KEYS: failures, next, known. ARGV: client, threshold, window ms, longest delay ms, now.
// Returns the ms still to wait (0: go ahead, and the next attempt's slot is taken).
const WAIT = luaScript(`${NOW(5)}${DELAY}
if redis.call('ZSCORE', KEYS[3], ARGV[1]) then return 0 end
local window = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
local threshold = tonumber(ARGV[2])
if count < threshold then return 0 end
local nextAt = tonumber(redis.call('GET', KEYS[2]) or '0')
if now < nextAt then return math.ceil(nextAt - now) end
redis.call('SET', KEYS[2], string.format('%.3f', now + delayAfter(count, threshold, tonumber(ARGV[4]))), 'PX', window)
return 0
`)

// KEYS: failures, next. ARGV: a member unique to this call, threshold, window ms, longest delay ms, failures kept, now.
const FAILED = luaScript(`${NOW(6)}${DELAY}
local window = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -(tonumber(ARGV[5]) + 1))
redis.call('PEXPIRE', KEYS[1], window)
local count = redis.call('ZCARD', KEYS[1])
redis.call('SET', KEYS[2], string.format('%.3f', now + delayAfter(count, tonumber(ARGV[2]), tonumber(ARGV[4]))), 'PX', window)
return count
`)

// KEYS: failures, next, known. ARGV: client, addresses kept, how long one is kept (ms), now.
const SUCCEEDED = luaScript(`${NOW(4)}
redis.call('DEL', KEYS[1], KEYS[2])
local ttl = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - ttl)
redis.call('ZADD', KEYS[3], now, ARGV[1])
redis.call('ZREMRANGEBYRANK', KEYS[3], 0, -(tonumber(ARGV[2]) + 1))
redis.call('PEXPIRE', KEYS[3], ttl)
return 1
`)

// KEYS: failures, next, known.
const FORGET = luaScript(`return redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])`)

const KNOWN_TTL_MS = LOGIN_KNOWN_ADDRESS_DAYS * 86_400_000

export type RedisSlowDownOptions = {
  /** What the keys and members hold instead of emails and addresses (redisKeyHasher). */
  hashKey: KeyHasher
  /** Tests move time; unset, the Redis server's clock decides (the service always leaves it unset). */
  clock?: () => number
  /** Prefix of the keys (tests keep runs apart). */
  keyPrefix?: string
}

export function createRedisSlowDown(connection: RedisConnection, local: LocalSlowDown, options: RedisSlowDownOptions): LoginSlowDown {
  const prefix = options.keyPrefix ?? 'alttext:signin:'
  const replica = randomBytes(6).toString('base64url')
  let sequence = 0
  // One hash slot per account (the braces), should the keys ever live in a cluster.
  const keys = (email: string) => {
    const account = `${prefix}{${options.hashKey(email)}}`
    return [`${account}:failures`, `${account}:next`, `${account}:known`]
  }
  const now = () => options.clock?.() ?? ''

  return {
    wait: (email, client, at) =>
      connection.attempt(
        'slow_down',
        async (run) => (await run(WAIT, keys(email), [options.hashKey(client), LOGIN_FAILURES_BEFORE_DELAY, WINDOW_MS, MAX_DELAY_MS, now()])) as number,
        () => local.wait(email, client, at),
      ),
    failed: (email, at) =>
      connection.attempt(
        'slow_down',
        async (run) => {
          const [failures, next] = keys(email)
          await run(FAILED, [failures!, next!], [`${replica}.${++sequence}`, LOGIN_FAILURES_BEFORE_DELAY, WINDOW_MS, MAX_DELAY_MS, MAX_FAILURES_KEPT, now()])
        },
        () => local.failed(email, at),
      ),
    succeeded: (email, client, at) =>
      connection.attempt(
        'slow_down',
        async (run) => {
          await run(SUCCEEDED, keys(email), [options.hashKey(client), LOGIN_KNOWN_ADDRESSES, KNOWN_TTL_MS, now()])
        },
        () => local.succeeded(email, client, at),
      ),
    // Both: the account is gone everywhere, and this replica's memory may hold what an outage left there.
    forget: (email) => {
      local.forget(email)
      return connection.attempt(
        'slow_down',
        async (run) => {
          await run(FORGET, keys(email), [])
        },
        () => undefined,
      )
    },
  }
}
