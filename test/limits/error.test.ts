// Rate limits, the refusals: the 6th sensitive request and the 61st ordinary one get 429 rate_limited
// with the decided body and headers, an honest Retry-After, and no side effect. Rate limits are ON.
import { beforeEach, describe, expect, test } from 'bun:test'
import { serviceForFile, uniqueEmail, VALID_PASSWORD, waitUntil, type ApiResponse, type TestService } from '../support/service'

let service: TestService
/** The service's clock (it drives the limiter too); frozen unless a test moves it. */
let now = Date.now()

// No SMTP: reset links go to the log, which lets a test see whether a limited request sent one.
serviceForFile({ overrides: { clock: () => now } }, (started) => ({ service } = started))
beforeEach(() => {
  now += 61_000
})

/** Asserts the decided 429 and returns its Retry-After in seconds. */
function expectRateLimited(res: ApiResponse, limit: number): number {
  expect(res.status).toBe(429)
  expect(res.headers.get('content-type')).toContain('application/json')
  expect(res.body).toEqual({ error: { code: 'rate_limited', message: expect.any(String), docs: 'http://alttext.test/docs/errors#rate_limited' } })
  expect(res.body.error.message.length).toBeGreaterThan(0)
  const retryAfter = res.headers.get('retry-after')
  expect(retryAfter).toMatch(/^\d+$/)
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1)
  expect(Number(retryAfter)).toBeLessThanOrEqual(60)
  expect(res.headers.get('ratelimit-limit')).toBe(String(limit))
  expect(res.headers.get('ratelimit-remaining')).toBe('0')
  expect(res.headers.get('ratelimit-reset')).toMatch(/^\d+$/)
  expect(Number(res.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(1)
  expect(res.headers.get('x-request-id')).toBeTruthy()
  return Number(retryAfter)
}

const badLogin = () => service.api.post('/api/login', { email: uniqueEmail('nobody'), password: 'wrong password' })
const resetLinksLogged = () => (service.logText().match(/reset-password\?token=/g) ?? []).length

describe('the 6th request to a sensitive endpoint', () => {
  test('register: 429 rate_limited, and the refused registration creates no account', async () => {
    for (let i = 0; i < 5; i++) {
      expect((await service.api.post('/api/register', { email: uniqueEmail('r'), password: VALID_PASSWORD })).status).toBe(201)
    }
    const email = uniqueEmail('sixth')
    expectRateLimited(await service.api.post('/api/register', { email, password: VALID_PASSWORD }), 5)

    now += 60_000
    // Had the 6th gone through, this would be 409 email_taken.
    expect((await service.api.post('/api/register', { email, password: VALID_PASSWORD })).status).toBe(201)
  })

  test('login: 429 rate_limited, even with the right password', async () => {
    const account = await service.api.register()
    now += 61_000 // the registration above is another endpoint anyway; start login clean
    for (let i = 0; i < 5; i++) expect((await badLogin()).status).toBe(401)
    expectRateLimited(await service.api.post('/api/login', { email: account.email, password: account.password }), 5)
  })

  test('forgot-password: 429 rate_limited, and no reset link is issued for the refused request', async () => {
    const account = await service.api.register()
    for (let i = 0; i < 5; i++) expect((await service.api.post('/api/forgot-password', { email: uniqueEmail('f') })).status).toBe(202)
    const before = resetLinksLogged()
    expectRateLimited(await service.api.post('/api/forgot-password', { email: account.email }), 5)
    expect(resetLinksLogged()).toBe(before)

    now += 60_000
    expect((await service.api.post('/api/forgot-password', { email: account.email })).status).toBe(202)
    // Mail goes out after the answer: wait for the allowed request's link; a link of the refused one would be here too.
    await waitUntil(() => resetLinksLogged() >= before + 1, 'the reset link of the allowed request')
    expect(resetLinksLogged()).toBe(before + 1)
  })

  test('requests refused by validation count too: bad bodies cannot probe without limit', async () => {
    for (let i = 0; i < 5; i++) expect((await service.api.post('/api/login', {})).status).toBe(400)
    expectRateLimited(await service.api.post('/api/login', {}), 5)
    expectRateLimited(await badLogin(), 5)
  })
})

describe('the 61st request to an ordinary endpoint', () => {
  test('GET /api/usage: 60 served, the 61st is 429 rate_limited with RateLimit-Limit 60', async () => {
    const account = await service.api.register()
    for (let i = 0; i < 60; i++) expect((await service.api.get('/api/usage', account.apiKey)).status).toBe(200)
    expectRateLimited(await service.api.get('/api/usage', account.apiKey), 60)
    // Another ordinary endpoint has its own 60.
    expect((await service.api.get('/api/keys', account.apiKey)).status).toBe(200)
  })

  test('POST /api/validate-key and unauthenticated calls are limited at 60 too', async () => {
    for (let i = 0; i < 60; i++) expect((await service.api.post('/api/validate-key', { api_key: `alt_${'0'.repeat(64)}` })).status).toBe(401)
    expectRateLimited(await service.api.post('/api/validate-key', { api_key: `alt_${'0'.repeat(64)}` }), 60)
    for (let i = 0; i < 60; i++) expect((await service.api.get('/api/keys')).status).toBe(401)
    expectRateLimited(await service.api.get('/api/keys'), 60)
  })

  test('the limit applies before authentication: a valid key does not lift it', async () => {
    const account = await service.api.register()
    for (let i = 0; i < 60; i++) await service.api.get('/api/usage')
    expectRateLimited(await service.api.get('/api/usage', account.apiKey), 60)
  })
})

describe('Retry-After', () => {
  test('is honest: one second early is still refused, after it the request is served', async () => {
    for (let i = 0; i < 5; i++) await badLogin()
    const retryAfter = expectRateLimited(await badLogin(), 5)
    now += (retryAfter - 1) * 1000
    const early = await badLogin()
    expect(expectRateLimited(early, 5)).toBe(1)
    now += 1000
    expect((await badLogin()).status).toBe(401)
  })

  test('hammering while limited does not extend the lockout', async () => {
    for (let i = 0; i < 5; i++) await service.api.post('/api/login', {})
    for (let i = 0; i < 5; i++) {
      now += 10_000
      expectRateLimited(await service.api.post('/api/login', {}), 5)
    }
    now += 10_000 // 60 s after the first five
    expect((await service.api.post('/api/login', {})).status).toBe(400)
  })

  test('RateLimit-Reset of a 429 equals its Retry-After', async () => {
    for (let i = 0; i < 5; i++) await service.api.post('/api/forgot-password', {})
    now += 20_000
    const res = await service.api.post('/api/forgot-password', {})
    const retryAfter = expectRateLimited(res, 5)
    expect(retryAfter).toBe(40)
    expect(Number(res.headers.get('ratelimit-reset'))).toBe(retryAfter)
  })
})
