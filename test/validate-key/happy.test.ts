// POST /api/validate-key with keys that are currently valid: 200 with exactly the balance fields.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestService, type TestService } from '../support/service'

const DAY_MS = 86_400_000

let now = Date.UTC(2026, 2, 15, 12, 0, 0)
let service: TestService
let custom: TestService

beforeAll(async () => {
  service = await startTestService({ env: { ALTTEXT_RATE_LIMITS: 'off' }, overrides: { clock: () => now } })
  custom = await startTestService({ env: { ALTTEXT_RATE_LIMITS: 'off', ALTTEXT_FREE_CREDITS: '12' } })
})
afterAll(async () => {
  await service.stop()
  await custom.stop()
})

const validBody = (total: number) => ({ valid: true, plan: 'free', credits_total: total, credits_used: 0, credits_remaining: total })

describe('POST /api/validate-key', () => {
  test('a valid key answers 200 with exactly {valid, plan, credits_total, credits_used, credits_remaining}, no X-API-Key needed', async () => {
    const account = await service.api.register()
    const res = await service.api.request('POST', '/api/validate-key', { body: { api_key: account.apiKey } })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('application/json')
    expect(res.body).toEqual(validBody(50))
    expect(Object.keys(res.body).sort()).toEqual(['credits_remaining', 'credits_total', 'credits_used', 'plan', 'valid'])
  })

  test('every active key of an account is valid: the first, a created one, a rotated replacement', async () => {
    const account = await service.api.register()
    const created = await service.api.post('/api/keys', { label: 'created' }, account.apiKey)
    expect(created.status).toBe(201)
    const toRotate = await service.api.post('/api/keys', { label: 'to rotate' }, account.apiKey)
    const rotated = await service.api.post('/api/keys/rotate', { key_prefix: toRotate.body.prefix }, account.apiKey)
    expect(rotated.status).toBe(201)
    for (const key of [account.apiKey, created.body.api_key, rotated.body.api_key]) {
      const res = await service.api.post('/api/validate-key', { api_key: key })
      expect(res.status).toBe(200)
      expect(res.body).toEqual(validBody(50))
    }
  })

  test('a key with an expiry is valid up to its expiry', async () => {
    const account = await service.api.register()
    const createdAt = now
    const created = await service.api.post('/api/keys', { expires_in_days: 2 }, account.apiKey)
    expect(created.status).toBe(201)
    expect((await service.api.post('/api/validate-key', { api_key: created.body.api_key })).status).toBe(200)
    now = createdAt + 2 * DAY_MS - 1000
    const res = await service.api.post('/api/validate-key', { api_key: created.body.api_key })
    expect(res.status).toBe(200)
    expect(res.body).toEqual(validBody(50))
  })

  test('the key in the body is what is checked; an X-API-Key header is ignored', async () => {
    const account = await service.api.register()
    const withBogusHeader = await service.api.post('/api/validate-key', { api_key: account.apiKey }, 'not-a-key')
    expect(withBogusHeader.status).toBe(200)
    expect(withBogusHeader.body).toEqual(validBody(50))
    // A valid header does not rescue an invalid body key.
    const withValidHeader = await service.api.post('/api/validate-key', { api_key: `alt_${'0'.repeat(64)}` }, account.apiKey)
    expect(withValidHeader.status).toBe(401)
    expect(typeof withValidHeader.body.error).toBe('string')
  })

  test('checking a key is not a use of it: no last_used_at, no call counted', async () => {
    const account = await service.api.register()
    const second = await service.api.post('/api/keys', { label: 'checked only' }, account.apiKey) // 1 call
    expect(second.status).toBe(201)
    for (let i = 0; i < 3; i++) expect((await service.api.post('/api/validate-key', { api_key: second.body.api_key })).status).toBe(200)
    const list = await service.api.get('/api/keys', account.apiKey) // 2
    const entry = (list.body.keys as { prefix: string; last_used_at: string | null }[]).find((k) => k.prefix === second.body.prefix)
    expect(entry?.last_used_at).toBeNull()
    const usage = await service.api.get('/api/usage', account.apiKey) // 3
    expect(usage.body.api_calls_today).toBe(3)
  })

  test('credits_total follows ALTTEXT_FREE_CREDITS and agrees with GET /api/usage', async () => {
    const account = await custom.api.register()
    const res = await custom.api.post('/api/validate-key', { api_key: account.apiKey })
    expect(res.status).toBe(200)
    expect(res.body).toEqual(validBody(12))
    const usage = await custom.api.get('/api/usage', account.apiKey)
    expect(usage.body.credits).toEqual({ total: res.body.credits_total, used: res.body.credits_used, remaining: res.body.credits_remaining })
  })
})
