// Rate limits, attacks: forged X-Forwarded-For, path spellings, random paths and address floods must
// not escape the limits nor grow memory without bound. Rate limits are ON.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { startTestService, uniqueEmail, type ApiResponse, type TestService } from '../support/service'

/** Shared clock of the services below (it drives their limiters); frozen unless a test moves it. */
let now = Date.now()
beforeEach(() => {
  now += 61_000
})

const loginBody = () => ({ email: uniqueEmail('atk'), password: 'guessed password' })

function loginVia(service: TestService, headers: Record<string, string>, path = '/api/login'): Promise<ApiResponse> {
  return service.api.request('POST', path, { body: loginBody(), headers })
}

describe('without ALTTEXT_TRUST_PROXY', () => {
  let service: TestService
  beforeAll(async () => {
    service = await startTestService({ overrides: { clock: () => now } })
  })
  afterAll(async () => {
    await service.stop()
  })

  test('X-Forwarded-For is ignored: a new forged address per request does not escape the limit', async () => {
    for (let i = 0; i < 5; i++) expect((await loginVia(service, { 'x-forwarded-for': `198.51.100.${i + 1}` })).status).toBe(401)
    const sixth = await loginVia(service, { 'x-forwarded-for': '198.51.100.99' })
    expect(sixth.status).toBe(429)
    expect(sixth.body.error.code).toBe('rate_limited')
    // Nor do the other usual client-address headers.
    const other = await loginVia(service, {
      'x-real-ip': '198.51.100.100',
      forwarded: 'for=198.51.100.100',
      'true-client-ip': '198.51.100.100',
      'cf-connecting-ip': '198.51.100.100',
    })
    expect(other.status).toBe(429)
  })

  test('the access log names the socket peer, not the forged address', async () => {
    await service.api.request('GET', '/health', { headers: { 'x-forwarded-for': '198.51.100.77', 'x-request-id': 'xff-ignored-check' } })
    const line = await service.accessLine('xff-ignored-check')
    expect(line?.client).toBe('127.0.0.1')
    expect(service.logText()).not.toContain('198.51.100.77')
  })

  test('no spelling of a sensitive path gets a second budget', async () => {
    const bodies: Record<string, () => unknown> = {
      '/api/login': loginBody,
      '/api/register': () => ({ email: uniqueEmail('spell'), password: 'a fine password' }),
      '/api/forgot-password': () => ({ email: uniqueEmail('spell') }),
    }
    const escaped: string[] = []
    for (const [endpoint, body] of Object.entries(bodies)) {
      for (let i = 0; i < 5; i++) expect((await service.api.post(endpoint, {})).status).toBe(400)
      expect((await service.api.post(endpoint, body())).status).toBe(429)
      // Each variant must either be refused by the limiter or not reach the handler at all.
      const upper = endpoint.toUpperCase()
      const variants = [
        `${endpoint}/`,
        `${endpoint}?x=1`,
        `${endpoint}?`,
        `/${endpoint}`,
        `${endpoint}//`,
        upper,
        endpoint.replace('/api/', '/api//'),
        endpoint.replace(/\/api\/(.)/, (_, c: string) => `/api/%${c.charCodeAt(0).toString(16).toUpperCase()}`),
      ]
      for (const path of variants) {
        const res = await service.api.request('POST', path, { body: body() })
        const code = res.body?.error?.code
        if (!((res.status === 429 && code === 'rate_limited') || (res.status === 404 && code === 'not_found'))) {
          escaped.push(`POST ${path} -> ${res.status} ${code} (RateLimit-Limit ${res.headers.get('ratelimit-limit')})`)
        }
      }
    }
    expect(escaped).toEqual([])
  })

  test('random unknown paths share one bucket: they mint no entries and are limited at 60', async () => {
    await service.api.get('/warm-up-the-unknown-bucket')
    const before = service.running.limiter!.size()
    const statuses: number[] = []
    for (let i = 0; i < 59; i++) statuses.push((await service.api.get(`/random/${i}/${crypto.randomUUID()}`)).status)
    expect(statuses.every((s) => s === 404)).toBe(true)
    expect(service.running.limiter!.size()).toBeLessThanOrEqual(before)
    const over = await service.api.request('POST', `/yet/another/${crypto.randomUUID()}`)
    expect(over.status).toBe(429)
    expect(over.body.error.code).toBe('rate_limited')
  })
})

describe('with ALTTEXT_TRUST_PROXY=1', () => {
  let service: TestService
  beforeAll(async () => {
    service = await startTestService({ env: { ALTTEXT_TRUST_PROXY: '1' }, overrides: { clock: () => now } })
  })
  afterAll(async () => {
    await service.stop()
  })

  test('distinct X-Forwarded-For addresses are distinct clients', async () => {
    for (let i = 0; i < 5; i++) expect((await loginVia(service, { 'x-forwarded-for': '192.0.2.1' })).status).toBe(401)
    expect((await loginVia(service, { 'x-forwarded-for': '192.0.2.1' })).status).toBe(429)
    expect((await loginVia(service, { 'x-forwarded-for': '192.0.2.2' })).status).toBe(401)
    // The limited client is limited on login only.
    const registerFrom1 = await service.api.request('POST', '/api/register', { body: {}, headers: { 'x-forwarded-for': '192.0.2.1' } })
    expect(registerFrom1.status).toBe(400)

    await service.api.request('GET', '/health', { headers: { 'x-forwarded-for': '192.0.2.3', 'x-request-id': 'xff-trusted-check' } })
    expect((await service.accessLine('xff-trusted-check')).client).toBe('192.0.2.3')
  })

  test('only the entry written by the trusted proxy counts: forged entries on its left do not escape', async () => {
    for (let i = 0; i < 5; i++) {
      expect((await loginVia(service, { 'x-forwarded-for': `10.9.9.${i}, 192.0.2.20` })).status).toBe(401)
    }
    expect((await loginVia(service, { 'x-forwarded-for': '10.9.9.200, 172.16.0.1, 192.0.2.20' })).status).toBe(429)
    expect((await loginVia(service, { 'x-forwarded-for': '192.0.2.20' })).status).toBe(429)
  })

  test('spellings of one IPv6 address are one client', async () => {
    const spellings = ['2001:db8::20', '2001:DB8:0:0:0:0:0:20', '2001:db8:0::20', '[2001:db8::20]', '[2001:db8::20]:4711']
    for (const spelling of spellings) expect((await loginVia(service, { 'x-forwarded-for': spelling })).status).toBe(401)
    expect((await loginVia(service, { 'x-forwarded-for': '2001:0db8:0000:0000:0000:0000:0000:0020' })).status).toBe(429)
  })

  test('a non-address X-Forwarded-For is one unknown client, not the proxy itself: junk values do not escape', async () => {
    const junk = ['not-an-ip', 'unknown', '', '999.1.1.1', '<script>', '1.2.3.4.5']
    for (const value of junk.slice(0, 5)) expect((await loginVia(service, { 'x-forwarded-for': value })).status).toBe(401)
    expect((await loginVia(service, { 'x-forwarded-for': junk[5]! })).status).toBe(429)
    await service.api.request('GET', '/health', { headers: { 'x-forwarded-for': 'junk', 'x-request-id': 'xff-junk' } })
    expect((await service.accessLine('xff-junk')).client).toBe('unknown')
  })
})

describe('X-Forwarded-For from a peer that is not a trusted proxy', () => {
  // The review found ALTTEXT_TRUST_PROXY trusted the header from any client: anyone could pick their address.
  let service: TestService
  beforeAll(async () => {
    service = await startTestService({ env: { ALTTEXT_TRUST_PROXY: '1', ALTTEXT_TRUSTED_PROXIES: '192.0.2.0/24' }, overrides: { clock: () => now } })
  })
  afterAll(async () => {
    await service.stop()
  })

  test('is ignored: a new forged address per request does not escape the sign-in limit', async () => {
    for (let i = 0; i < 5; i++) expect((await loginVia(service, { 'x-forwarded-for': `203.0.113.${i}` })).status).toBe(401)
    expect((await loginVia(service, { 'x-forwarded-for': '203.0.113.99' })).status).toBe(429)
    await service.api.request('GET', '/health', { headers: { 'x-forwarded-for': '203.0.113.7', 'x-request-id': 'untrusted-peer' } })
    expect((await service.accessLine('untrusted-peer')).client).toBe('127.0.0.1')
  })
})

describe('IPv6 clients behind a trusted proxy', () => {
  let service: TestService
  beforeAll(async () => {
    service = await startTestService({ env: { ALTTEXT_TRUST_PROXY: '1' }, overrides: { clock: () => now } })
  })
  afterAll(async () => {
    await service.stop()
  })

  test('are counted per /64: new addresses in one /64 do not escape; another /64 is another client', async () => {
    for (let i = 1; i <= 5; i++) expect((await loginVia(service, { 'x-forwarded-for': `2001:db8:77:1::${i}` })).status).toBe(401)
    expect((await loginVia(service, { 'x-forwarded-for': '2001:db8:77:1:ffff:ffff:ffff:ffff' })).status).toBe(429)
    expect((await loginVia(service, { 'x-forwarded-for': '2001:db8:77:2::1' })).status).toBe(401)
  })
})

describe('memory under a flood of distinct addresses', () => {
  let service: TestService
  beforeAll(async () => {
    service = await startTestService({ env: { ALTTEXT_TRUST_PROXY: '1' }, overrides: { clock: () => now, rateLimitMaxEntries: 50 } })
  })
  afterAll(async () => {
    await service.stop()
  })

  test('500 distinct addresses never hold more than 50 limiter entries, and limiting still works', async () => {
    const limiter = service.running.limiter!
    const sizes: number[] = []
    for (let batch = 0; batch < 20; batch++) {
      const responses = await Promise.all(
        Array.from({ length: 25 }, (_, i) => {
          const n = batch * 25 + i
          return service.api.request('GET', '/api/usage', { headers: { 'x-forwarded-for': `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}` } })
        }),
      )
      expect(responses.every((r) => r.status === 401)).toBe(true)
      sizes.push(limiter.size())
    }
    expect(sizes.length).toBe(20)
    expect(Math.max(...sizes)).toBeLessThanOrEqual(50)
    expect(limiter.size()).toBeGreaterThan(0)

    // A client that keeps coming is still counted and limited after the flood.
    for (let i = 0; i < 5; i++) expect((await loginVia(service, { 'x-forwarded-for': '192.0.2.50' })).status).toBe(401)
    expect((await loginVia(service, { 'x-forwarded-for': '192.0.2.50' })).status).toBe(429)
    expect(limiter.size()).toBeLessThanOrEqual(50)
  })
})
