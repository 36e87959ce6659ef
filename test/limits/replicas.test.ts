// Two replicas sharing one Redis (ALTTEXT_REDIS_URL), over HTTP: two real services on loopback, each with
// its own SQLite file, and a real password-protected redis-server. The credentials and standard tiers and
// the sign-in slow-down hold exactly across both; with Redis gone each replica keeps limits of its own, says
// so once in its log and in /ready, and counts every such check in /metrics; when Redis is back, the limits
// are shared again. Time is the services' injected clock, which the Redis scripts follow in tests.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { RedisClient } from 'bun'
import { startService } from '../../src/app'
import { loadConfig } from '../../src/config'
import { LIMITS_PER_REPLICA } from '../../src/modules/health/service'
import { sha256Hex } from '../../src/shared/crypto'
import { createLogger } from '../../src/shared/logger'
import { expectApiError } from '../support/assertions'
import { startFakeOllama, type FakeOllama } from '../support/fake-ollama'
import { scrape } from '../support/metrics'
import { CHEAP_PASSWORDS } from '../support/session'
import { redisTestsRun, startRedis, type TestRedis } from '../support/redis'
import { apiClient, startTestService, type TestService, uniqueEmail, waitUntil } from '../support/service'

const RUN = redisTestsRun('test/limits/replicas.test.ts')
const PASSWORD = 'replica-test-redis-password'
const DOWN = 'Redis cannot be reached: rate limits and the sign-in slow-down hold per replica until it answers'
const UP = 'Redis answers again: rate limits and the sign-in slow-down are shared by every replica again'

let now = Date.UTC(2026, 5, 1, 9)
let redis: TestRedis
let ollama: FakeOllama
let replicas: TestService[] = []
let addresses = 0

beforeAll(async () => {
  if (!RUN) return
  redis = await startRedis({ password: PASSWORD })
  ollama = await startFakeOllama()
  // A trusted proxy lets a test speak for many client addresses. A generous deadline: a busy test machine
  // must not make a check fall back; a short retry: Redis's return is noticed quickly.
  replicas = await Promise.all(
    [1, 2].map(() =>
      startTestService({
        env: { ALTTEXT_REDIS_URL: redis.url, ALTTEXT_TRUST_PROXY: '1', OLLAMA_HOST: ollama.url },
        overrides: {
          clock: () => now,
          redisTimeoutMs: 5000,
          redisRetryMs: 50,
          passwords: CHEAP_PASSWORDS,
        },
      }),
    ),
  )
})
afterAll(async () => {
  if (!RUN) return
  await Promise.all(replicas.map((replica) => replica.stop()))
  await ollama.stop()
  await redis.close()
})

/** A client address no test used before. */
const freshAddress = () => `203.0.113.${++addresses}`
/** The replica of the i-th request: first, second, first, … */
const replicaOf = (i: number) => replicas[i % 2]!
const login = (replica: TestService, address: string, email = uniqueEmail('nobody'), password = 'a wrong password') =>
  replica.api.request('POST', '/api/login', { body: { email, password }, headers: { 'x-forwarded-for': address } })
const said = (replica: TestService, msg: string) => replica.logs.filter((line) => line.msg === msg).length

describe.if(RUN)('limits shared by two replicas through Redis', () => {
  test('the credentials tier holds exactly across both: 5 login attempts in all, the 6th on either is 429 with Retry-After', async () => {
    const address = freshAddress()
    const remaining: string[] = []
    for (let i = 0; i < 5; i++) {
      const res = await login(replicaOf(i), address)
      expectApiError(res, 401, 'invalid_credentials')
      remaining.push(res.headers.get('ratelimit-remaining')!)
    }
    expect(remaining).toEqual(['4', '3', '2', '1', '0'])
    for (const replica of replicas) {
      const refused = await login(replica, address)
      expectApiError(refused, 429, 'rate_limited')
      expect(refused.headers.get('retry-after')).toBe('60')
      expect(refused.headers.get('ratelimit-remaining')).toBe('0')
    }
    // Retrying after Retry-After is allowed, on either replica.
    now += 60_000
    expectApiError(await login(replicas[1]!, address), 401, 'invalid_credentials')
  })

  test('the standard tier too: 60 requests in all, the 61st on either is 429', async () => {
    const address = freshAddress()
    const seen: number[] = []
    for (let i = 0; i < 60; i++) {
      const res = await replicaOf(i).api.request('GET', '/api/keys', { headers: { 'x-forwarded-for': address } })
      expectApiError(res, 401, 'missing_api_key')
      seen.push(Number(res.headers.get('ratelimit-remaining')))
    }
    expect(seen).toEqual(Array.from({ length: 60 }, (_, i) => 59 - i))
    for (const replica of replicas) {
      const refused = await replica.api.request('GET', '/api/keys', { headers: { 'x-forwarded-for': address } })
      expectApiError(refused, 429, 'rate_limited')
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    }
  })

  test('unknown paths share one bucket across both too (the 404 path)', async () => {
    const address = freshAddress()
    for (let i = 0; i < 60; i++) {
      const res = await replicaOf(i).api.request('GET', `/no/such/${i}`, { headers: { 'x-forwarded-for': address } })
      expectApiError(res, 404, 'not_found')
    }
    const refused = await replicas[0]!.api.request('GET', '/no/such/page', { headers: { 'x-forwarded-for': address } })
    expectApiError(refused, 429, 'rate_limited')
    expect(refused.body.error.message).toContain('unknown paths from this address')
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
  })

  test('the sign-in slow-down counts failures on both replicas for the account: 5 in all, then 1 s, 2 s, …', async () => {
    const email = uniqueEmail('victim')
    for (let i = 0; i < 5; i++) expectApiError(await login(replicaOf(i), freshAddress(), email), 401, 'invalid_credentials')
    for (const replica of replicas) {
      const waiting = await login(replica, freshAddress(), email)
      expectApiError(waiting, 429, 'rate_limited')
      expect(waiting.body.error.message).toContain('too many failed sign-ins')
      expect(waiting.headers.get('retry-after')).toBe('1')
    }
    // A failure on one replica doubles the wait on the other.
    now += 1000
    expectApiError(await login(replicas[0]!, freshAddress(), email), 401, 'invalid_credentials')
    expect((await login(replicas[1]!, freshAddress(), email)).headers.get('retry-after')).toBe('2')
  })

  test('Redis holds no client address and no email: every key and member is a keyed hash', async () => {
    const email = uniqueEmail('stored')
    const password = 'the right password here'
    expect((await replicas[0]!.api.post('/api/register', { email, password })).status).toBe(201)
    const address = freshAddress()
    expectApiError(await login(replicas[0]!, address, email), 401, 'invalid_credentials')
    // A sign-in that succeeds makes the address a known one of the account (each replica here has a database of its own).
    expect((await login(replicas[0]!, address, email, password)).status).toBe(200)

    const raw = new RedisClient(redis.url)
    try {
      await raw.connect()
      const keys = (await raw.send('KEYS', ['*'])) as string[]
      const values = await Promise.all(
        keys.map(async (key) => {
          const type = (await raw.send('TYPE', [key])) as string
          return type === 'zset' ? raw.send('ZRANGE', [key, '0', '-1']) : type === 'string' ? raw.send('GET', [key]) : type
        }),
      )
      const stored = JSON.stringify([keys, values])
      // The rate limits and the slow-down of this address and this account are there, under hashes.
      expect(keys.filter((key) => key.startsWith('alttext:rate:')).length).toBeGreaterThan(0)
      expect(keys.filter((key) => key.startsWith('alttext:signin:')).length).toBeGreaterThan(0)
      for (const secret of [address, email, sha256Hex(address), sha256Hex(email)]) expect(stored).not.toContain(secret)
      // No address of any test either.
      expect(stored).not.toMatch(/\d+\.\d+\.\d+\.\d+/)
    } finally {
      raw.close()
    }
  })

  test('the password of ALTTEXT_REDIS_URL is never logged', () => {
    for (const replica of replicas) {
      expect(replica.logText()).not.toContain(PASSWORD)
      expect(replica.logs.find((line) => line.msg === 'rate limits and the sign-in slow-down are shared through Redis')?.redis).toBe(
        `redis://127.0.0.1:${redis.port}`,
      )
    }
  })
})

describe.if(RUN)('when Redis is gone', () => {
  test('each replica keeps limits of its own, logs the outage once, counts the fallbacks in /metrics and is not ready; when Redis is back it says so and limits are shared again', async () => {
    const [first, second] = replicas as [TestService, TestService]
    const ready = await first.api.get('/ready')
    expect(ready.status).toBe(200)
    expect(ready.body.checks.redis).toEqual({ ok: true, detail: 'writable' })
    const before = await scrape(first.url)
    expect(before.value('alttext_rate_limit_fallback_total', { kind: 'rate_limit' })).toBe(0)
    expect(before.value('alttext_rate_limit_fallback_total', { kind: 'slow_down' })).toBe(0)

    await redis.stop()
    await waitUntil(() => replicas.every((replica) => said(replica, DOWN) === 1), 'both replicas to notice')
    const notReady = await first.api.get('/ready')
    expect(notReady.status).toBe(503)
    expect(notReady.body.error).toMatchObject({ code: 'not_ready', message: 'redis: cannot be reached' })
    expect(notReady.body.checks).toEqual({
      database: { ok: true, detail: 'writable' },
      model: { ok: true, detail: expect.any(String) },
      redis: { ok: false, detail: 'cannot be reached' },
    })

    // Per replica now: 5 attempts on each, the 6th refused by each.
    const address = freshAddress()
    for (const replica of [first, second]) {
      for (let i = 0; i < 5; i++) expectApiError(await login(replica, address), 401, 'invalid_credentials')
      expectApiError(await login(replica, address), 429, 'rate_limited')
    }
    // Logged once per outage, however many requests fell back.
    for (const replica of replicas) expect(said(replica, DOWN)).toBe(1)
    const during = await scrape(first.url)
    // 6 logins and this scrape (/ready is not limited); each of the 5 failed logins asked and told the slow-down.
    expect(during.value('alttext_rate_limit_fallback_total', { kind: 'rate_limit' })).toBe(7)
    expect(during.value('alttext_rate_limit_fallback_total', { kind: 'slow_down' })).toBe(10)

    await redis.start()
    await waitUntil(() => replicas.every((replica) => said(replica, UP) === 1), 'both replicas to find Redis again')
    expect((await first.api.get('/ready')).status).toBe(200)
    const shared = freshAddress()
    for (let i = 0; i < 5; i++) expectApiError(await login(replicaOf(i), shared), 401, 'invalid_credentials')
    expectApiError(await login(second, shared), 429, 'rate_limited')
    expect(said(first, DOWN)).toBe(1)
    expect(first.logs.find((line) => line.msg === UP)).toMatchObject({ level: 'info', redis: `redis://127.0.0.1:${redis.port}` })
    expect(first.logText()).not.toContain(PASSWORD)
  })
})

describe.if(RUN)('when Redis hangs', () => {
  test('requests are answered, with the replica’s own limits, once the first check has waited out its deadline', async () => {
    const frozen = await startRedis()
    const replica = await startTestService({
      env: { ALTTEXT_REDIS_URL: frozen.url, ALTTEXT_TRUST_PROXY: '1' },
      overrides: { clock: () => now, redisRetryMs: 50, passwords: CHEAP_PASSWORDS },
    })
    try {
      frozen.pause()
      const address = freshAddress()
      for (let i = 0; i < 5; i++) expectApiError(await login(replica, address), 401, 'invalid_credentials')
      expectApiError(await login(replica, address), 429, 'rate_limited')
      expect(said(replica, DOWN)).toBe(1)
      expect((await replica.api.get('/ready')).body.checks.redis).toEqual({ ok: false, detail: 'cannot be reached' })
      frozen.resume()
      await waitUntil(() => said(replica, UP) === 1, 'the recovery line')
    } finally {
      await replica.stop()
      await frozen.close()
    }
  })
})

describe('several replicas (ALTTEXT_DATABASE_URL) without Redis', () => {
  test('the configuration says limits hold per replica only then', () => {
    expect(loadConfig({ ALTTEXT_DATABASE_URL: 'postgres://alttext:pw@db.internal:5432/alttext' }).limitsPerReplica).toBe(true)
    expect(
      loadConfig({ ALTTEXT_DATABASE_URL: 'postgres://alttext:pw@db.internal:5432/alttext', ALTTEXT_REDIS_URL: 'redis://cache.internal:6379' }).limitsPerReplica,
    ).toBe(false)
    expect(loadConfig({}).limitsPerReplica).toBe(false)
    expect(loadConfig({ ALTTEXT_REDIS_URL: 'redis://cache.internal:6379' }).limitsPerReplica).toBe(false)
  })

  test('the service warns at start-up, and /ready passes while saying that limits hold per replica', async () => {
    const lines: string[] = []
    const base = loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      ALTTEXT_DB: ':memory:',
      OLLAMA_HOST: 'http://127.0.0.1:9',
      ALTTEXT_PUBLIC_URL: 'http://alttext.test',
    })
    // The database stays SQLite here: only the warning's condition is set.
    const running = startService({ ...base, limitsPerReplica: true }, { logger: createLogger((line) => lines.push(line)) })
    try {
      const logs = lines.map((line) => JSON.parse(line) as Record<string, unknown>)
      expect(logs.find((line) => String(line.msg).startsWith('no ALTTEXT_REDIS_URL'))).toMatchObject({ level: 'warn' })
      const ready = await apiClient(running.url).get('/ready')
      // Not ready for want of a model server; the redis check passes and says why limits are per replica.
      expect(ready.body.checks.redis).toEqual({ ok: true, detail: LIMITS_PER_REPLICA })
    } finally {
      await running.stop()
    }
  })
})
