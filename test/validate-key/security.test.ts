// POST /api/validate-key, security: it reveals no account and no hint about keys that do not work,
// never logs the key, grants no access, and key guessing through it is rate limited.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestService, type TestService } from '../support/service'
import { expectApiError } from '../support/assertions'

const DAY_MS = 86_400_000

let now = Date.UTC(2026, 2, 15, 12, 0, 0)
let service: TestService
let limited: TestService
let account: { email: string; password: string; apiKey: string; prefix: string }

beforeAll(async () => {
  service = await startTestService({ env: { ALTTEXT_RATE_LIMITS: 'off' }, overrides: { clock: () => now } })
  limited = await startTestService({ env: { ALTTEXT_TRUST_PROXY: '1' } })
  account = await service.api.register()
})
afterAll(async () => {
  await service.stop()
  await limited.stop()
})

const validate = (api_key: unknown) => service.api.post('/api/validate-key', { api_key })

describe('what validate-key reveals', () => {
  test('a valid key answers the balance only: no email, no account id, no prefix, no key', async () => {
    const res = await validate(account.apiKey)
    expect(res.status).toBe(200)
    expect(Object.keys(res.body).sort()).toEqual(['credits_remaining', 'credits_total', 'credits_used', 'plan', 'valid'])
    expect(res.text).not.toContain(account.email)
    expect(res.text).not.toContain(account.email.split('@')[0]!)
    expect(res.text).not.toContain('@')
    expect(res.text).not.toContain(account.prefix)
    expect(res.text).not.toContain(account.apiKey.slice(4, 20))
    expect(res.text).not.toMatch(/"(id|account_id|account|email|user)"/)
  })

  test('unknown, malformed and revoked keys get the same 401 body: no hint that a key once existed', async () => {
    const revoked = await service.api.post('/api/keys', { label: 'revoked' }, account.apiKey)
    expect((await service.api.post('/api/keys/revoke', { key_prefix: revoked.body.prefix }, account.apiKey)).status).toBe(200)

    const unknown = await validate(`alt_${'0'.repeat(64)}`)
    expect(unknown.status).toBe(401)
    const others = [
      await validate(revoked.body.api_key),
      await validate(`${account.prefix}${'0'.repeat(56)}`), // a live prefix, a wrong rest
      await validate('nonsense'),
      await validate(''),
    ]
    for (const res of others) {
      expect(res.status).toBe(401)
      expect(res.text).toBe(unknown.text)
    }
    // The short form carries no code or docs that could differ either.
    expect(Object.keys(unknown.body)).toEqual(['error'])
    expect(typeof unknown.body.error).toBe('string')
    expect(unknown.text).not.toContain(account.prefix)
  })

  test('the 401 for an expired key does not name the account', async () => {
    const created = await service.api.post('/api/keys', { label: 'short', expires_in_days: 1 }, account.apiKey)
    now += DAY_MS + 1000
    const res = await validate(created.body.api_key)
    expect(res.status).toBe(401)
    expect(Object.keys(res.body)).toEqual(['error'])
    expect(typeof res.body.error).toBe('string')
    expect(res.text).not.toContain(account.email)
    expect(res.text).not.toContain(created.body.prefix)
  })
})

describe('validate-key grants nothing', () => {
  test('a key in a request body does not authenticate other endpoints', async () => {
    expectApiError(await service.api.post('/api/keys', { api_key: account.apiKey, label: 'sneaky' }), 401, 'missing_api_key')
    expectApiError(await service.api.post('/api/keys/revoke', { api_key: account.apiKey, key_prefix: account.prefix }), 401, 'missing_api_key')
    expect((await validate(account.apiKey)).status).toBe(200)
  })
})

describe('logs', () => {
  test('no key sent to validate-key, valid or not, reaches the log', async () => {
    const wrong = `alt_${'9e'.repeat(32)}`
    const fresh = await service.api.post('/api/keys', { label: 'logged?' }, account.apiKey)
    expect((await validate(account.apiKey)).status).toBe(200)
    expect((await validate(fresh.body.api_key)).status).toBe(200)
    expect((await validate(wrong)).status).toBe(401)
    expect((await validate(account.apiKey.toUpperCase())).status).toBe(401)
    expect((await validate('a'.repeat(300))).status).not.toBe(200)
    const text = service.logText()
    expect(text).toContain('/api/validate-key')
    expect(text).not.toMatch(/alt_[0-9a-fA-F]{64}/)
    for (const key of [account.apiKey, fresh.body.api_key as string, wrong]) expect(text.toLowerCase()).not.toContain(key.slice(4).toLowerCase())
    expect(text).not.toContain('a'.repeat(300))
  })
})

describe('key guessing', () => {
  test('validate-key is limited to 60 requests per minute per address: the 61st is 429 rate_limited', async () => {
    const from = (address: string, api_key: string) =>
      limited.api.request('POST', '/api/validate-key', { body: { api_key }, headers: { 'x-forwarded-for': address } })
    for (let i = 0; i < 60; i++) {
      const res = await from('198.51.100.4', `alt_${i.toString(16).padStart(64, '0')}`)
      expect(res.status).toBe(401)
    }
    const blocked = await from('198.51.100.4', `alt_${'f'.repeat(64)}`)
    expectApiError(blocked, 429, 'rate_limited')
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0)
    // Another address still gets answers.
    expect((await from('198.51.100.5', `alt_${'f'.repeat(64)}`)).status).toBe(401)
  })
})
