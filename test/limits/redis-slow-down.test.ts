// The per-account sign-in slow-down in Redis, against a real redis-server: the same waits as the in-memory
// one, step by step, and one count per account for two replicas; no email or address in the clear.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { RedisClient } from 'bun'
import { createLoginSlowDown, type LoginSlowDown } from '../../src/modules/accounts/slow-down'
import { sha256Hex } from '../../src/shared/crypto'
import { createRedisConnection, type RedisConnection, redisKeyHasher } from '../../src/redis/connection'
import { createRedisSlowDown } from '../../src/redis/slow-down'
import { createLogger } from '../../src/shared/logger'
import { redisTestsRun, startRedis, type TestRedis } from '../support/redis'

const RUN = redisTestsRun('test/limits/redis-slow-down.test.ts')

let redis: TestRedis
let raw: RedisClient
const connections: RedisConnection[] = []
let prefixes = 0

/** A replica's slow-down in Redis; falling back would fail the test. */
function replica(prefix: string, clock?: () => number): LoginSlowDown {
  const connection = createRedisConnection({
    url: redis.url,
    logger: createLogger(() => {}),
    onFallback: () => {
      throw new Error('a check fell back: Redis did not answer')
    },
    timeoutMs: 10_000,
  })
  connections.push(connection)
  return createRedisSlowDown(connection, createLoginSlowDown(), { clock, keyPrefix: prefix, hashKey: redisKeyHasher(redis.url) })
}

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

describe.if(RUN)('the sign-in slow-down in Redis', () => {
  test('waits exactly as the in-memory slow-down, step by step: the fifth failure, doubling, the cap, known addresses, 15 minutes, forgetting', async () => {
    let now = Date.UTC(2026, 4, 1, 8)
    const memory = createLoginSlowDown()
    const shared = replica(`test:${process.pid}:${++prefixes}:`, () => now)
    let seed = 7
    const next = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648
      return seed / 2_147_483_648
    }
    const emails = ['a@example.org', 'b@example.org']
    const clients = ['198.51.100.1', '198.51.100.2', '203.0.113.9', '2001:db8:5::']
    const steps = [0, 1, 400, 999, 1000, 2000, 4100, 16_000, 30_000, 120_000, 15 * 60_000]
    const waits: number[] = []
    for (let i = 0; i < 800; i++) {
      now += steps[Math.floor(next() * steps.length)]!
      const email = emails[Math.floor(next() * emails.length)]!
      const client = clients[Math.floor(next() * clients.length)]!
      const roll = next()
      if (roll < 0.01) {
        memory.forget(email)
        await shared.forget(email)
        continue
      }
      const expected = memory.wait(email, client, now)
      expect({ step: i, wait: await shared.wait(email, client, now) }).toEqual({ step: i, wait: expected })
      if (expected > 0) {
        waits.push(expected)
        continue
      }
      // Mostly wrong passwords: the delays grow to the cap.
      if (roll < 0.06) {
        memory.succeeded(email, client, now)
        await shared.succeeded(email, client, now)
      } else {
        memory.failed(email, now)
        await shared.failed(email, now)
      }
    }
    // The walk met short and capped waits alike.
    expect(waits.length).toBeGreaterThan(30)
    expect(Math.max(...waits)).toBe(30_000)
    expect(waits.some((wait) => wait <= 1000)).toBe(true)
  })

  test('two replicas count one account together, on the server’s clock, and keep no email or address in the clear', async () => {
    const prefix = `test:${process.pid}:${++prefixes}:`
    const [first, second] = [replica(prefix), replica(prefix)]
    const email = 'victim@example.org'
    for (let i = 0; i < 5; i++) {
      const on = i % 2 === 0 ? first : second
      expect(await on.wait(email, `203.0.113.${i}`, 0)).toBe(0)
      await on.failed(email, 0)
    }
    // The sixth attempt waits about a second on either replica, whatever the caller's clock says.
    const waited = await second.wait(email, '203.0.113.77', 0)
    expect(waited).toBeGreaterThan(0)
    expect(waited).toBeLessThanOrEqual(1000)
    expect(await first.wait(email, '203.0.113.78', 0)).toBeGreaterThan(0)

    // A right password on one replica resets the count on both, and its address is never delayed again.
    await first.succeeded(email, '198.51.100.7', 0)
    expect(await second.wait(email, '203.0.113.79', 0)).toBe(0)
    for (let i = 0; i < 8; i++) await second.failed(email, 0)
    expect(await first.wait(email, '203.0.113.80', 0)).toBeGreaterThan(0)
    expect(await first.wait(email, '198.51.100.7', 0)).toBe(0)

    const keys = (await raw.send('KEYS', [`${prefix}*`])) as string[]
    expect(keys.length).toBe(3)
    const stored = JSON.stringify([keys, await raw.send('ZRANGE', [keys.find((k) => k.endsWith(':known'))!, '0', '-1'])])
    expect(stored).not.toContain('victim')
    expect(stored).not.toContain('198.51.100.7')
    // Nor a plain hash, which guessing would reverse: they are keyed.
    expect(stored).not.toContain(sha256Hex(email))
    expect(stored).not.toContain(sha256Hex('198.51.100.7'))

    // A deleted account is forgotten everywhere.
    await second.forget(email)
    expect(await raw.send('KEYS', [`${prefix}*`])).toEqual([])
    expect(await first.wait(email, '203.0.113.81', 0)).toBe(0)
  })
})
