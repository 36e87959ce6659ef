// Rate limits, normal operation: budgets per endpoint and address, the RateLimit-* headers, the
// sliding window, recovery after a minute, exempt health and readiness probes. Rate limits are ON (the default).
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { serviceForFile, startTestService, uniqueEmail, VALID_PASSWORD, waitUntil, type ApiResponse, type TestService } from '../support/service'

let service: TestService
/** The service's clock (it drives the limiter too); frozen unless a test moves it. */
let now = Date.now()

serviceForFile({ overrides: { clock: () => now } }, (started) => ({ service } = started))
// Each test starts with every window empty.
beforeEach(() => {
  now += 61_000
})

function rateHeaders(res: ApiResponse): { limit: number; remaining: number; reset: number } {
  for (const name of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']) {
    expect(res.headers.get(name)).toMatch(/^\d+$/)
  }
  return {
    limit: Number(res.headers.get('ratelimit-limit')),
    remaining: Number(res.headers.get('ratelimit-remaining')),
    reset: Number(res.headers.get('ratelimit-reset')),
  }
}

const badLogin = () => service.api.post('/api/login', { email: uniqueEmail('nobody'), password: 'wrong password' })

describe('budgets', () => {
  test('five register, login and forgot-password requests per minute are all served', async () => {
    for (let i = 0; i < 5; i++) {
      expect((await service.api.post('/api/register', { email: uniqueEmail('five'), password: VALID_PASSWORD })).status).toBe(201)
    }
    for (let i = 0; i < 5; i++) expect((await badLogin()).status).toBe(401)
    for (let i = 0; i < 5; i++) expect((await service.api.post('/api/forgot-password', { email: uniqueEmail('f') })).status).toBe(202)
    // Ten argon2id hashes and checks: seconds on a busy 2-core machine, so more than the default 5 s.
  }, 30_000)

  test('the RateLimit headers count down from 5 on register, login and forgot-password', async () => {
    for (const [path, body] of [
      ['/api/register', { email: 'not-an-email', password: VALID_PASSWORD }],
      ['/api/login', { email: uniqueEmail('l'), password: 'wrong password' }],
      ['/api/forgot-password', { email: uniqueEmail('f') }],
    ] as const) {
      const seen: number[] = []
      for (let i = 0; i < 5; i++) {
        const res = await service.api.post(path, body)
        expect(res.status).not.toBe(429)
        const headers = rateHeaders(res)
        expect(headers.limit).toBe(5)
        expect(headers.reset).toBeGreaterThanOrEqual(1)
        expect(headers.reset).toBeLessThanOrEqual(60)
        seen.push(headers.remaining)
      }
      expect(seen).toEqual([4, 3, 2, 1, 0])
    }
  }, 30_000)

  test('other endpoints allow 60 requests a minute, counting down from 60', async () => {
    const account = await service.api.register()
    const remaining: number[] = []
    for (let i = 0; i < 60; i++) {
      const res = await service.api.get('/api/usage', account.apiKey)
      expect(res.status).toBe(200)
      const headers = rateHeaders(res)
      expect(headers.limit).toBe(60)
      remaining.push(headers.remaining)
    }
    expect(remaining).toEqual(Array.from({ length: 60 }, (_, i) => 59 - i))
  })

  test('every limited response carries the three RateLimit headers, whatever its status', async () => {
    const account = await service.api.register()
    const responses: ApiResponse[] = [
      await service.api.post('/api/register', { email: uniqueEmail('h'), password: VALID_PASSWORD }), // 201
      await service.api.post('/api/login', { email: account.email, password: account.password }), // 200
      await service.api.post('/api/forgot-password', { email: account.email }), // 202
      await service.api.post('/api/register', {}), // 400
      await service.api.get('/api/usage'), // 401
      await service.api.get('/api/keys', account.apiKey), // 200
      await service.api.post('/api/validate-key', { api_key: account.apiKey }), // 200
      await service.api.post('/api/validate-key', { api_key: 'alt_nope' }), // 401 short form
      await service.api.get('/no/such/route'), // 404
      await service.api.post('/api/keys', { label: 'x'.repeat(101) }, account.apiKey), // 400
    ]
    expect(responses.map((r) => r.status)).toEqual([201, 200, 202, 400, 401, 200, 200, 401, 404, 400])
    for (const res of responses) rateHeaders(res)
  })
})

describe('per endpoint and per address', () => {
  test('exhausting login does not limit register, forgot-password or other endpoints', async () => {
    for (let i = 0; i < 5; i++) expect((await badLogin()).status).toBe(401)
    expect((await badLogin()).status).toBe(429)

    const registered = await service.api.post('/api/register', { email: uniqueEmail('after'), password: VALID_PASSWORD })
    expect(registered.status).toBe(201)
    expect(rateHeaders(registered)).toMatchObject({ limit: 5, remaining: 4 })
    const forgot = await service.api.post('/api/forgot-password', { email: uniqueEmail('after') })
    expect(forgot.status).toBe(202)
    expect(rateHeaders(forgot)).toMatchObject({ limit: 5, remaining: 4 })
    expect((await service.api.get('/api/usage', registered.body.api_key)).status).toBe(200)
  })

  describe('behind a trusted proxy', () => {
    let proxied: TestService
    beforeAll(async () => {
      proxied = await startTestService({ env: { ALTTEXT_TRUST_PROXY: '1' }, overrides: { clock: () => now } })
    })
    afterAll(async () => {
      await proxied.stop()
    })

    const loginFrom = (address: string) =>
      proxied.api.request('POST', '/api/login', { body: { email: uniqueEmail('p'), password: 'wrong password' }, headers: { 'x-forwarded-for': address } })

    test('each client address has its own budget', async () => {
      for (let i = 0; i < 5; i++) expect((await loginFrom('203.0.113.10')).status).toBe(401)
      expect((await loginFrom('203.0.113.10')).status).toBe(429)

      const other = await loginFrom('203.0.113.11')
      expect(other.status).toBe(401)
      expect(rateHeaders(other)).toMatchObject({ limit: 5, remaining: 4 })
      const v6 = await loginFrom('2001:db8::11')
      expect(v6.status).toBe(401)
      expect(rateHeaders(v6)).toMatchObject({ limit: 5, remaining: 4 })
    })
  })
})

describe('the window', () => {
  test('moving the clock 60 seconds lets a limited client in again, with the full budget', async () => {
    for (let i = 0; i < 5; i++) await badLogin()
    expect((await badLogin()).status).toBe(429)
    now += 60_000
    const again = await badLogin()
    expect(again.status).toBe(401)
    expect(rateHeaders(again)).toMatchObject({ limit: 5, remaining: 4 })
  })

  test('the window slides: requests leave it 60 seconds after they were made', async () => {
    for (let i = 0; i < 3; i++) expect((await badLogin()).status).toBe(401) // at T
    now += 30_000
    for (let i = 0; i < 2; i++) expect((await badLogin()).status).toBe(401) // at T+30
    expect((await badLogin()).status).toBe(429)

    now += 30_000 // T+60: the three from T have left; the two from T+30 still count
    for (let i = 0; i < 3; i++) expect((await badLogin()).status).toBe(401)
    expect((await badLogin()).status).toBe(429)

    now += 30_000 // T+90: the two from T+30 have left
    for (let i = 0; i < 2; i++) expect((await badLogin()).status).toBe(401)
    expect((await badLogin()).status).toBe(429)
  })
})

describe('exempt probes', () => {
  test('/health is not limited: 70 calls in a minute all answer 200', async () => {
    const statuses: number[] = []
    for (let i = 0; i < 70; i++) statuses.push((await service.api.get('/health')).status)
    expect(statuses.every((s) => s === 200)).toBe(true)
  })

  test('/ready is not limited: 70 calls in a minute are all answered, none refused as too many', async () => {
    // At once: they share checks (one after another, each waits READINESS_MIN_INTERVAL_MS for the next).
    const statuses = await Promise.all(Array.from({ length: 70 }, () => service.api.get('/ready').then((r) => r.status)))
    // Not ready here (no model server), and said so every time.
    expect(statuses).toEqual(Array(70).fill(503))
  })

  test('/ready bounds its own cost: 50 probes cost two checks (one database write each), not 50', async () => {
    let probes = 0
    // The first check's write waits until every probe has arrived.
    const { promise: held, resolve: release } = Promise.withResolvers<void>()
    const counted = await startTestService({
      wrapStore: (store) => ({
        ...store,
        probe: async () => {
          if (++probes === 1) await held
          return store.probe()
        },
      }),
    })
    try {
      const answers = Promise.all(Array.from({ length: 50 }, () => counted.api.get('/ready').then((r) => r.status)))
      await waitUntil(() => counted.running.server.pendingRequests >= 50, 'the 50 probes to be under way', 10_000)
      release()
      // Not ready (no model server here), and answered: none is refused as too many.
      expect(new Set(await answers)).toEqual(new Set([503]))
      // The first started a check; the 49 that came while it ran share the one that started after it.
      expect(probes).toBe(2)
    } finally {
      release()
      await counted.stop()
    }
  })

  test('health probes do not use up the budget of other endpoints', async () => {
    for (let i = 0; i < 10; i++) await service.api.get('/health')
    const res = await service.api.get('/api/usage')
    expect(rateHeaders(res)).toMatchObject({ limit: 60, remaining: 59 })
  })
})
