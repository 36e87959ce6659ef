// The sliding log in Redis (one Lua script per check), against a real redis-server on loopback: exact when
// raced by two clients, the same decisions as the in-memory limiter step by step, the window slides on the
// server's clock, refused requests are not logged, and a server that forgot the script gets it again.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { RedisClient } from 'bun'
import { createSlidingWindowLimiter, type RateDecision } from '../../src/http/limiter'
import { createRedisConnection, type RedisConnection, redisKeyHasher } from '../../src/redis/connection'
import { createRedisRateLimiter } from '../../src/redis/rate-limiter'
import { sha256Hex } from '../../src/shared/crypto'
import { createLogger } from '../../src/shared/logger'
import { redisTestsRun, startRedis, type TestRedis } from '../support/redis'
import { waitUntil } from '../support/service'

const RUN = redisTestsRun('test/limits/redis-limiter.test.ts')
const LOGIN = 'POST /api/login'

let redis: TestRedis
let raw: RedisClient
const connections: RedisConnection[] = []
let prefixes = 0

/** A connection with a generous deadline (a busy test machine must not fall back), and a fallback that fails the test. */
function connect(): RedisConnection {
  const connection = createRedisConnection({
    url: redis.url,
    logger: createLogger(() => {}),
    onFallback: () => {
      throw new Error('a check fell back: Redis did not answer')
    },
    timeoutMs: 10_000,
  })
  connections.push(connection)
  return connection
}

/** A limiter on its own connection, with keys of its own test (`prefix`). */
function limiterOn(connection: RedisConnection, options: { prefix: string; windowMs?: number; clock?: () => number }) {
  const limiter = createRedisRateLimiter({ keyPrefix: options.prefix, windowMs: options.windowMs, clock: options.clock, hashKey: redisKeyHasher(redis.url) })
  return (client: string, endpoint: string, limit: number) =>
    connection.attempt(
      'rate_limit',
      (run) => limiter.check(run, client, endpoint, limit),
      (): RateDecision => {
        throw new Error('fell back')
      },
    )
}

const freshPrefix = () => `test:${process.pid}:${++prefixes}:`

beforeAll(async () => {
  if (!RUN) return
  redis = await startRedis()
  raw = new RedisClient(redis.url)
  await raw.connect()
})
afterAll(async () => {
  if (!RUN) return
  for (const connection of connections) connection.close()
  raw.close()
  await redis.close()
})

describe.if(RUN)('the sliding log in Redis', () => {
  test('raced by 2 clients with 500 checks against a limit of 60, exactly 60 are allowed', async () => {
    const prefix = freshPrefix()
    const first = limiterOn(connect(), { prefix })
    const second = limiterOn(connect(), { prefix })
    const decisions = await Promise.all(Array.from({ length: 500 }, (_, i) => (i % 2 === 0 ? first : second)('203.0.113.1', 'GET /api/keys', 60)))
    expect(decisions.filter((d) => d.allowed).length).toBe(60)
    // Every refusal names a wait within the window; the allowed ones counted down from 59 to 0, each once.
    expect(decisions.filter((d) => !d.allowed).every((d) => d.retryAfterSeconds >= 1 && d.retryAfterSeconds <= 60)).toBe(true)
    expect(
      decisions
        .filter((d) => d.allowed)
        .map((d) => d.remaining)
        .toSorted((a, b) => a - b),
    ).toEqual(Array.from({ length: 60 }, (_, i) => i))
    expect(await raw.send('ZCARD', [`${prefix}${redisKeyHasher(redis.url)('203.0.113.1')} GET /api/keys`])).toBe(60)
  })

  test('decides exactly as the in-memory limiter, step by step, Retry-After and RateLimit-Reset included', async () => {
    let now = 1_700_000_000_000
    const memory = createSlidingWindowLimiter({ clock: () => now })
    const shared = limiterOn(connect(), { prefix: freshPrefix(), clock: () => now })
    // A fixed pseudo-random walk: many steps of 0, whole and odd milliseconds, and exact window edges.
    let seed = 42
    const next = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648
      return seed / 2_147_483_648
    }
    const small = [0, 0, 1, 3, 250, 999, 1000, 1001, 2_500, 7_250]
    const large = [12_001, 59_999, 60_000, 60_001]
    const clients = ['198.51.100.1', '198.51.100.2', '2001:db8:1::']
    const endpoints: [string, number][] = [
      [LOGIN, 5],
      ['GET /api/usage', 60],
    ]
    let denied = 0
    for (let i = 0; i < 600; i++) {
      const steps = next() < 0.05 ? large : small
      now += steps[Math.floor(next() * steps.length)]!
      const client = clients[Math.floor(next() * clients.length)]!
      const [endpoint, limit] = endpoints[next() < 0.8 ? 0 : 1]!
      const expected = memory.check(client, endpoint, limit)
      if (!expected.allowed) denied++
      expect({ step: i, ...(await shared(client, endpoint, limit)) }).toEqual({ step: i, ...expected })
    }
    // The walk went over the limit many times, and also had room.
    expect(denied).toBeGreaterThan(100)
    expect(denied).toBeLessThan(500)
  })

  test('a clock stepping back keeps the log in order, as in memory: the newest entry decides when the quota is back', async () => {
    let now = 1_700_000_000_000
    const memory = createSlidingWindowLimiter({ clock: () => now })
    const shared = limiterOn(connect(), { prefix: freshPrefix(), clock: () => now })
    for (const step of [0, 10_000, -4_000, 1_500, -20_000, 30_000, 25_000]) {
      now += step
      const expected = memory.check('192.0.2.6', LOGIN, 3)
      expect(await shared('192.0.2.6', LOGIN, 3)).toEqual(expected)
    }
  })

  test("the window slides on the server's clock: a refused client is let in again once its oldest request leaves", async () => {
    const check = limiterOn(connect(), { prefix: freshPrefix(), windowMs: 400 })
    const first = await check('192.0.2.7', LOGIN, 2)
    expect(first).toMatchObject({ allowed: true, remaining: 1, resetSeconds: 1, retryAfterSeconds: 0 })
    expect(await check('192.0.2.7', LOGIN, 2)).toMatchObject({ allowed: true, remaining: 0 })
    const refused = await check('192.0.2.7', LOGIN, 2)
    expect(refused).toEqual({ allowed: false, limit: 2, remaining: 0, resetSeconds: 1, retryAfterSeconds: 1 })
    // Polling does not extend the lockout: refused checks are not logged.
    await waitUntil(async () => (await check('192.0.2.7', LOGIN, 2)).allowed, 'the window to slide')
  })

  test('a key holds a keyed hash of the address: no address, nor a plain hash of one, is stored', async () => {
    const prefix = freshPrefix()
    const check = limiterOn(connect(), { prefix })
    for (const address of ['198.51.100.23', '2001:db8::23']) expect((await check(address, LOGIN, 5)).allowed).toBe(true)
    const keys = (await raw.send('KEYS', [`${prefix}*`])) as string[]
    expect(keys).toHaveLength(2)
    const stored = JSON.stringify([keys, ...(await Promise.all(keys.map((key) => raw.send('ZRANGE', [key, '0', '-1']))))])
    for (const address of ['198.51.100.23', '2001:db8::23']) {
      expect(stored).not.toContain(address)
      expect(stored).not.toContain(sha256Hex(address))
    }
    // Keyed with the credentials of ALTTEXT_REDIS_URL: another secret makes other keys.
    const hashed = redisKeyHasher(redis.url)('198.51.100.23')
    expect(keys).toContain(`${prefix}${hashed} ${LOGIN}`)
    expect(redisKeyHasher('redis://alttext:another-password@127.0.0.1:6379')('198.51.100.23')).not.toBe(hashed)
  })

  test('refused requests are not logged: a client hammering while limited keeps exactly `limit` entries', async () => {
    const prefix = freshPrefix()
    const check = limiterOn(connect(), { prefix })
    for (let i = 0; i < 5; i++) expect((await check('192.0.2.8', LOGIN, 5)).allowed).toBe(true)
    for (let i = 0; i < 20; i++) expect((await check('192.0.2.8', LOGIN, 5)).allowed).toBe(false)
    const key = `${prefix}${redisKeyHasher(redis.url)('192.0.2.8')} ${LOGIN}`
    expect(await raw.send('ZCARD', [key])).toBe(5)
    // The log expires a window after its newest entry, so an idle client costs Redis nothing.
    const ttl = (await raw.send('PTTL', [key])) as number
    expect(ttl).toBeGreaterThan(0)
    expect(ttl).toBeLessThanOrEqual(60_000)
  })

  test('a server that forgot the script (restart, SCRIPT FLUSH) is sent it again, and the check still counts', async () => {
    const prefix = freshPrefix()
    const check = limiterOn(connect(), { prefix })
    expect((await check('192.0.2.9', LOGIN, 5)).remaining).toBe(4)
    expect(await raw.send('SCRIPT', ['FLUSH'])).toBe('OK')
    expect((await check('192.0.2.9', LOGIN, 5)).remaining).toBe(3)
    expect((await check('192.0.2.9', LOGIN, 5)).remaining).toBe(2)
  })
})
