// The connection to Redis under failure, against a real redis-server: a Redis that hangs holds a check
// no longer than its deadline, one that is gone costs no wait at all; either way the replica's own
// answer is used and counted, the outage is logged once, its end once, and the shared answers come back.
// The password in the URL is never logged.
import { afterEach, describe, expect, test } from 'bun:test'
import { createSlidingWindowLimiter } from '../../src/http/limiter'
import { createRedisConnection, type FallbackKind, type RedisConnection, redisKeyHasher } from '../../src/redis/connection'
import { createRedisRateLimiter, sharedRateCheck } from '../../src/redis/rate-limiter'
import { createLogger } from '../../src/shared/logger'
import { redisTestsRun, startRedis, type TestRedis } from '../support/redis'
import { waitUntil } from '../support/service'
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy'

const RUN = redisTestsRun('test/limits/redis-connection.test.ts')
const DOWN = 'Redis cannot be reached: rate limits and the sign-in slow-down hold per replica until it answers'
const UP = 'Redis answers again: rate limits and the sign-in slow-down are shared by every replica again'

let redis: TestRedis | undefined
let connection: RedisConnection | undefined
afterEach(async () => {
  connection?.close()
  await redis?.close()
  connection = undefined
  redis = undefined
})

function open(url: string, options: { timeoutMs?: number; retryMs?: number } = {}) {
  const lines: string[] = []
  const fallbacks: FallbackKind[] = []
  connection = createRedisConnection({
    url,
    logger: createLogger((line) => lines.push(line)),
    onFallback: (kind) => fallbacks.push(kind),
    timeoutMs: options.timeoutMs ?? 10_000,
    retryMs: options.retryMs ?? 50,
  })
  const logs = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>)
  const said = (msg: string) => logs().filter((line) => line.msg === msg).length
  /** PING on Redis, or 'local' from this replica. */
  const ping = (on = connection!) =>
    on.attempt(
      'rate_limit',
      async (run) => (await run({ source: "return 'shared'", sha: new Bun.CryptoHasher('sha1').update("return 'shared'").digest('hex') }, [], [])) as string,
      () => 'local',
    )
  return { connection, lines, logs, said, fallbacks, ping }
}

describe.if(RUN)('when Redis fails', () => {
  test('a Redis that hangs holds a check no longer than the deadline; while it is down, checks answer at once from memory; all logged once and counted', async () => {
    redis = await startRedis()
    const { said, fallbacks, ping } = open(redis.url, { timeoutMs: 100 })
    expect(await ping()).toBe('shared')

    redis.pause()
    // The first check waits for the deadline, then falls back.
    expect(await ping()).toBe('local')
    expect(said(DOWN)).toBe(1)
    // Later ones do not even try: a value, not a promise.
    for (let i = 0; i < 20; i++) expect(ping()).toBe('local')
    expect(fallbacks.length).toBe(21)
    expect(new Set(fallbacks)).toEqual(new Set(['rate_limit']))

    redis.resume()
    await waitUntil(() => said(UP) === 1, 'the recovery line')
    expect(await ping()).toBe('shared')
    expect(said(DOWN)).toBe(1)
    expect(said(UP)).toBe(1)
    expect(fallbacks.length).toBe(21)
  })

  test('a Redis that is gone costs no wait: the lost connection is noticed, checks fall back at once, and it is found again when Redis is back', async () => {
    redis = await startRedis()
    const { said, fallbacks, ping, logs } = open(redis.url)
    expect(await ping()).toBe('shared')

    await redis.stop()
    await waitUntil(() => said(DOWN) === 1, 'the outage line')
    for (let i = 0; i < 10; i++) expect(ping()).toBe('local')
    expect(fallbacks.length).toBe(10)

    await redis.start()
    await waitUntil(() => said(UP) === 1, 'the recovery line')
    expect(await ping()).toBe('shared')
    expect(said(DOWN)).toBe(1)
    const recovered = logs().find((line) => line.msg === UP)!
    expect(recovered.fallbacks).toBe(10)
    expect(recovered.redis).toBe(`redis://127.0.0.1:${redis.port}`)
  })

  test('a Redis not there at start: the first checks fall back, the outage is logged once, and the check of /ready fails', async () => {
    redis = await startRedis()
    const url = redis.url
    await redis.stop()
    const { said, ping } = open(url)
    expect(await ping()).toBe('local')
    expect(ping()).toBe('local')
    expect(said(DOWN)).toBe(1)
    expect(await connection!.check(1000)).toEqual({ ok: false, detail: 'cannot be reached' })

    await redis.start()
    await waitUntil(() => said(UP) === 1, 'the recovery line')
    expect(await connection!.check(1000)).toEqual({ ok: true, detail: 'writable' })
  })

  test('the password in the URL is never logged, whether it is right or wrong', async () => {
    const password = 'pw-4f1c-never-logged'
    redis = await startRedis({ password })
    const right = open(redis.url)
    expect(await right.ping()).toBe('shared')
    await redis.stop()
    await waitUntil(() => right.said(DOWN) === 1, 'the outage line')
    await redis.start()
    await waitUntil(() => right.said(UP) === 1, 'the recovery line')
    expect(right.lines.join('\n')).not.toContain(password)
    right.connection.close()

    const wrong = open(redis.url.replace(encodeURIComponent(password), 'wrong-pw-also-secret'))
    expect(await wrong.ping()).toBe('local')
    expect(wrong.said(DOWN)).toBe(1)
    expect(wrong.lines.join('\n')).not.toContain('wrong-pw-also-secret')
    expect(await wrong.connection.check(1000)).toMatchObject({ ok: false })
  })
})

describe.if(RUN)('a Redis slower than the deadline', () => {
  let proxy: TcpProxy | undefined
  afterEach(() => {
    proxy?.stop()
    proxy = undefined
  })

  /** A connection to Redis through a proxy that can slow it down, its waits timed on a clock the test moves. */
  async function slowable() {
    redis = await startRedis()
    proxy = startTcpProxy(redis.port)
    let now = 0
    const lines: string[] = []
    const fallbacks: FallbackKind[] = []
    const url = redis.url.replace(`:${redis.port}`, `:${proxy.port}`)
    connection = createRedisConnection({
      url,
      logger: createLogger((line) => lines.push(line)),
      onFallback: (kind) => fallbacks.push(kind),
      timeoutMs: 100,
      retryMs: 5000,
      clock: () => now,
    })
    const said = (msg: string) => lines.filter((line) => (JSON.parse(line) as { msg: string }).msg === msg).length
    const limiter = createRedisRateLimiter({ hashKey: redisKeyHasher(url), keyPrefix: `test:slow:${process.pid}:` })
    const local = createSlidingWindowLimiter()
    const check = sharedRateCheck(connection, limiter, local)
    return { proxy, said, fallbacks, check, advance: (ms: number) => (now += ms) }
  }

  test('is one outage, not hundreds: no probe until the wait ends, a failed probe doubles it, and the limit holds throughout', async () => {
    const { proxy, said, check, advance } = await slowable()
    const through = { n: 0 }
    const ask = async () => {
      if ((await check('203.0.113.9', 'GET /api/usage', 60)).allowed) through.n++
    }
    for (let i = 0; i < 30; i++) await ask()
    expect(through.n).toBe(30)

    // 150 ms a chunk each way: every command misses the 100 ms deadline.
    proxy.delay(150)
    await ask()
    expect(said(DOWN)).toBe(1)
    // Fifty more checks come: none reaches Redis (nothing is probed) and the local count holds the limit.
    for (let i = 0; i < 50; i++) await ask()
    expect(proxy.accepted()).toBe(1)
    // The replica's own log counted the 30 that Redis let through: 30 more in the window, no more.
    expect(through.n).toBe(60)

    // The wait (5 s on the moved clock) ends: the next check starts one probe, still too slow.
    advance(4999)
    await ask()
    expect(proxy.accepted()).toBe(1)
    advance(1)
    await ask()
    await waitUntil(() => proxy.accepted() === 2, 'the probe')
    await waitUntil(() => proxy.openConnections() === 0, 'the probe to fail')
    expect(said(UP)).toBe(0)
    // A failed probe doubles the wait: 10 s.
    advance(9999)
    await ask()
    expect(proxy.accepted()).toBe(2)

    proxy.delay(0)
    advance(1)
    await ask()
    await waitUntil(() => said(UP) === 1, 'the recovery line')
    expect(said(DOWN)).toBe(1)
    // Redis is trusted again, and the replica's own count still holds the window's 60.
    expect((await check('203.0.113.9', 'GET /api/usage', 60)).allowed).toBe(false)
    expect((await check('203.0.113.10', 'GET /api/usage', 60)).allowed).toBe(true)
    expect(through.n).toBe(60)
  })

  test('an outage soon after Redis came back waits twice as long; after a quiet spell the wait starts over', async () => {
    const { proxy, said, check, advance } = await slowable()
    const ask = () => check('203.0.113.20', 'GET /api/usage', 1000)
    await ask()
    const outage = async () => {
      proxy.delay(150)
      await ask()
      proxy.delay(0)
    }
    const probesAfter = async (ms: number) => {
      const before = proxy.accepted()
      advance(ms - 1)
      await ask()
      expect(proxy.accepted()).toBe(before)
      advance(1)
      await ask()
      await waitUntil(() => proxy.accepted() === before + 1, 'the probe')
    }
    await outage()
    await probesAfter(5000)
    await waitUntil(() => said(UP) === 1, 'the first recovery')
    // Down again 1 s after it came back: 10 s.
    advance(1000)
    await outage()
    expect(said(DOWN)).toBe(2)
    await probesAfter(10_000)
    await waitUntil(() => said(UP) === 2, 'the second recovery')
    // Up for longer than the longest wait: the next outage waits 5 s again.
    advance(30_000)
    await outage()
    await probesAfter(5000)
    await waitUntil(() => said(UP) === 3, 'the third recovery')
  })
})
