// The Redis checks of `alttext doctor` (ALTTEXT_REDIS_URL): the server answers and is Redis 7 or newer (or
// Valkey); this user may run scripts (the limits are one Lua script each) and write (the probe /ready also
// makes); one round trip is quick. Without the variable on PostgreSQL, a warning that the limits hold per
// replica. Nothing here names the URL's user or password.
import { RedisClient } from 'bun'
import type { Config } from '../../config'
import { redisAddress } from '../../redis/connection'
import { type CheckResult, errorText, result } from './result'

/** The key /ready's Redis probe writes (redis/connection.ts), with the same short expiry. */
const PROBE_KEY = 'alttext:probe'
const ROUND_TRIPS = 10
const SLOW_ROUND_TRIP_MS = 20
const MINIMUM_MAJOR = 7

/** Each command within the deadline, or an error saying it did not answer. */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)
  })
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer))
}

const CREDENTIALS_FIX = "check the user and password in ALTTEXT_REDIS_URL (and the server's requirepass or ACL)"
const REACH_FIX = "start Redis, or correct the host and port in ALTTEXT_REDIS_URL; check firewalls and the server's bind and protected-mode"

/** Whether something accepts TCP connections at the URL's host and port: Bun's client says only "Connection closed" when a login fails too. */
async function listening(url: string, ms: number): Promise<boolean> {
  const parsed = new URL(url)
  const port = Number(parsed.port || 6379)
  const hostname = parsed.hostname.replace(/^\[|\]$/g, '')
  try {
    const socket = await within(Bun.connect({ hostname, port, socket: { data() {} } }), ms)
    socket.end()
    return true
  } catch {
    return false
  }
}

/** The version line of INFO server: Valkey says both its own and the Redis version it is compatible with. */
function versionOf(info: string): { name: string; version: string; redisMajor: number } {
  const field = (name: string) => new RegExp(`^${name}:(\\S+)`, 'm').exec(info)?.[1]
  const redis = field('redis_version') ?? '0'
  const valkey = field('valkey_version')
  return { name: valkey ? `Valkey ${valkey}` : `Redis ${redis}`, version: redis, redisMajor: Number(redis.split('.')[0]) }
}

/** Runs the Redis checks, handing each to `add`. */
export async function redisChecks(config: Config, timeoutMs: number, add: (check: CheckResult) => void): Promise<void> {
  if (config.redisUrl === undefined) {
    // One process on a SQLite file keeps its limits itself: nothing to say, as before Redis existed.
    if (config.databaseUrl !== undefined)
      add(
        result(
          'redis',
          'redis',
          'warn',
          'ALTTEXT_REDIS_URL is not set: with several replicas, each keeps its own rate limits and sign-in slow-down (5 sign-in attempts a minute become 5 per replica)',
          'set ALTTEXT_REDIS_URL to a Redis 7 (or Valkey) that every replica reaches',
        ),
      )
    return
  }
  const where = redisAddress(config.redisUrl)
  const client = new RedisClient(config.redisUrl, { connectionTimeout: Math.max(timeoutMs, 1000), autoReconnect: false, enableOfflineQueue: false })
  try {
    let server: ReturnType<typeof versionOf>
    try {
      await within(client.connect(), timeoutMs)
      server = versionOf(String(await within(client.send('INFO', ['server']), timeoutMs)))
    } catch (error) {
      const text = errorText(error)
      const answers = /NOAUTH|WRONGPASS/i.test(text) || (config.redisUrl.startsWith('redis:') && (await listening(config.redisUrl, timeoutMs)))
      const detail = answers ? `Redis at ${where} answers, but refused this connection (${text})` : `cannot reach Redis at ${where}: ${text}`
      add(result('redis', 'redis', 'fail', detail, answers ? CREDENTIALS_FIX : REACH_FIX))
      add(result('redis_latency', 'redis round trip', 'skip', 'Redis could not be reached'))
      return
    }
    if (server.redisMajor < MINIMUM_MAJOR)
      add(
        result(
          'redis',
          'redis',
          'fail',
          `${server.name} at ${where}; alttext needs Redis ${MINIMUM_MAJOR} or newer, or Valkey`,
          `upgrade Redis to ${MINIMUM_MAJOR} or newer`,
        ),
      )
    else {
      try {
        // The limits are Lua scripts (EVAL/EVALSHA) and /ready writes a key: an ACL may allow neither.
        await within(client.send('EVAL', ["return redis.call('TIME')[1]", '0']), timeoutMs)
        await within(client.send('SET', [PROBE_KEY, '1', 'PX', '10000']), timeoutMs)
        add(result('redis', 'redis', 'pass', `${server.name} at ${where}; a script ran and a write committed`))
      } catch (error) {
        add(
          result(
            'redis',
            'redis',
            'fail',
            `${server.name} at ${where} refused: ${errorText(error)}`,
            "allow this user scripts and writes: an ACL such as '+@scripting +@write +@read +@connection ~alttext:*'",
          ),
        )
      }
    }
    const times: number[] = []
    for (let i = 0; i < ROUND_TRIPS; i++) {
      const started = performance.now()
      await within(client.send('PING', []), timeoutMs)
      times.push(performance.now() - started)
    }
    times.sort((a, b) => a - b)
    const median = times[Math.floor(times.length / 2)]!
    const detail = `median ${median.toFixed(2)} ms, slowest ${times[times.length - 1]!.toFixed(2)} ms over ${ROUND_TRIPS} round trips`
    add(
      median > SLOW_ROUND_TRIP_MS
        ? result(
            'redis_latency',
            'redis round trip',
            'warn',
            `${detail}: every limited request waits for one`,
            'put the replicas and Redis close together (one data centre, one zone)',
            median,
          )
        : result('redis_latency', 'redis round trip', 'pass', detail, undefined, median),
    )
  } catch (error) {
    add(result('redis_latency', 'redis round trip', 'fail', `Redis at ${where} stopped answering: ${errorText(error)}`, REACH_FIX))
  } finally {
    client.close()
  }
}
