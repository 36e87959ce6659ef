// GET /api/usage, security: it shows only the caller's own account, reveals no identity or key,
// accepts the key only in X-API-Key, never logs it, and limits key guessing per address.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestService, type TestService } from '../support/service'
import { expectApiError } from '../support/assertions'

type Account = { email: string; password: string; apiKey: string; prefix: string }

let service: TestService
let limited: TestService
let alice: Account
let bob: Account

beforeAll(async () => {
  service = await startTestService({ env: { ALTTEXT_RATE_LIMITS: 'off' } })
  limited = await startTestService({ env: { ALTTEXT_TRUST_PROXY: '1' } })
  alice = await service.api.register()
  bob = await service.api.register()
})
afterAll(async () => {
  await service.stop()
  await limited.stop()
})

describe('what usage reveals', () => {
  test('the body carries the account numbers only: no email, no key, no prefix', async () => {
    const res = await service.api.get('/api/usage', alice.apiKey)
    expect(res.status).toBe(200)
    expect(Object.keys(res.body).sort()).toEqual(['api_calls_today', 'credits', 'period_end', 'period_start', 'plan'])
    expect(Object.keys(res.body.credits).sort()).toEqual(['remaining', 'total', 'used'])
    expect(res.text).not.toContain(alice.email)
    expect(res.text).not.toContain(alice.email.split('@')[0]!)
    expect(res.text).not.toContain(alice.prefix)
    expect(res.text).not.toContain(alice.apiKey.slice(4, 20))
  })

  test("one account's calls never show in another account's usage", async () => {
    const bobBefore = (await service.api.get('/api/usage', bob.apiKey)).body.api_calls_today as number
    const aliceBefore = (await service.api.get('/api/usage', alice.apiKey)).body.api_calls_today as number
    for (let i = 0; i < 5; i++) expect((await service.api.get('/api/usage', alice.apiKey)).status).toBe(200)
    expect((await service.api.get('/api/usage', bob.apiKey)).body.api_calls_today).toBe(bobBefore + 1)
    expect((await service.api.get('/api/usage', alice.apiKey)).body.api_calls_today).toBe(aliceBefore + 6)
  })

  test("guessed keys that share a victim's prefix do not authenticate and do not count as the victim's calls", async () => {
    const before = (await service.api.get('/api/usage', alice.apiKey)).body.api_calls_today as number
    const guesses = [
      `${alice.prefix}${'0'.repeat(56)}`,
      `${alice.apiKey.slice(0, -1)}${alice.apiKey.endsWith('0') ? '1' : '0'}`, // one character off
      `${alice.apiKey.slice(0, 12)}${alice.apiKey.slice(12).split('').reverse().join('')}`,
    ]
    for (const guess of guesses) {
      if (guess === alice.apiKey) continue
      expectApiError(await service.api.get('/api/usage', guess), 401, 'invalid_api_key')
    }
    expect((await service.api.get('/api/usage', alice.apiKey)).body.api_calls_today).toBe(before + 1)
  })
})

describe('where the key may be sent', () => {
  test('only X-API-Key authenticates: Authorization, a query parameter or a cookie do not', async () => {
    expectApiError(await service.api.request('GET', '/api/usage', { headers: { authorization: `Bearer ${alice.apiKey}` } }), 401, 'missing_api_key')
    expectApiError(await service.api.request('GET', '/api/usage', { headers: { authorization: alice.apiKey } }), 401, 'missing_api_key')
    expectApiError(await service.api.get(`/api/usage?api_key=${alice.apiKey}`), 401, 'missing_api_key')
    expectApiError(await service.api.get(`/api/usage?x-api-key=${alice.apiKey}`), 401, 'missing_api_key')
    expectApiError(await service.api.request('GET', '/api/usage', { headers: { cookie: `api_key=${alice.apiKey}` } }), 401, 'missing_api_key')
  })

  test('a huge or strange header value is a clean 401, never a 500', async () => {
    for (const key of [`alt_${'a'.repeat(8000)}`, `${alice.apiKey}\t${alice.apiKey}`, "alt_' OR 1=1 --", `${alice.apiKey}%00`]) {
      expectApiError(await service.api.get('/api/usage', key), 401, 'invalid_api_key')
    }
  })
})

describe('logs', () => {
  test('no key sent to /api/usage, valid or not, reaches the log', async () => {
    const wrong = `alt_${'cd'.repeat(32)}`
    expect((await service.api.get('/api/usage', alice.apiKey)).status).toBe(200)
    expect((await service.api.get('/api/usage', wrong)).status).toBe(401)
    expect((await service.api.get('/api/usage', bob.apiKey.toUpperCase())).status).toBe(401)
    const text = service.logText()
    expect(text).toContain('/api/usage')
    expect(text).not.toMatch(/alt_[0-9a-fA-F]{64}/)
    for (const key of [alice.apiKey, bob.apiKey, wrong]) expect(text.toLowerCase()).not.toContain(key.slice(4).toLowerCase())
  })
})

describe('key guessing', () => {
  test('is limited to 60 requests per minute per address: the 61st is 429 rate_limited, and other addresses are not affected', async () => {
    const account = await limited.api.register()
    const from = (address: string, key: string) => limited.api.request('GET', '/api/usage', { key, headers: { 'x-forwarded-for': address } })
    for (let i = 0; i < 60; i++) {
      const res = await from('203.0.113.7', `alt_${i.toString(16).padStart(64, '0')}`)
      expect(res.status).toBe(401)
    }
    const blocked = await from('203.0.113.7', account.apiKey)
    expectApiError(blocked, 429, 'rate_limited')
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0)
    // A different client is served normally.
    expect((await from('203.0.113.8', account.apiKey)).status).toBe(200)
  })
})
