// GET /api/usage, the failures: missing, malformed, unknown, revoked and expired keys, wrong methods.
import { describe, expect, test } from 'bun:test'
import { serviceForFile, type RegisteredAccount, type TestService } from '../support/service'
import { expectApiError } from '../support/assertions'

const DAY_MS = 86_400_000

let now = Date.UTC(2026, 2, 15, 12, 0, 0)
let service: TestService
let account: RegisteredAccount
serviceForFile({ env: { ALTTEXT_RATE_LIMITS: 'off' }, overrides: { clock: () => now }, account: true }, (started) => ({ service, account } = started))

describe('GET /api/usage without a usable key', () => {
  test('no X-API-Key is 401 missing_api_key', async () => {
    expectApiError(await service.api.get('/api/usage'), 401, 'missing_api_key')
  })

  test('a malformed or unknown key is 401 invalid_api_key', async () => {
    for (const key of [
      'nonsense',
      account.apiKey.slice(0, -1),
      `${account.apiKey}a`,
      account.apiKey.toUpperCase(),
      `alt_${account.apiKey.slice(4).toUpperCase()}`,
      `Bearer ${account.apiKey}`,
      `alt_${'z'.repeat(64)}`,
      `alt_${'0'.repeat(64)}`,
      account.prefix,
    ]) {
      expectApiError(await service.api.get('/api/usage', key), 401, 'invalid_api_key')
    }
  })

  test('a revoked key is 401 invalid_api_key, a rotated-away key too', async () => {
    const revoked = await service.api.post('/api/keys', { label: 'revoked' }, account.apiKey)
    expect((await service.api.get('/api/usage', revoked.body.api_key)).status).toBe(200)
    expect((await service.api.post('/api/keys/revoke', { key_prefix: revoked.body.prefix }, account.apiKey)).status).toBe(200)
    expectApiError(await service.api.get('/api/usage', revoked.body.api_key), 401, 'invalid_api_key')

    const rotated = await service.api.post('/api/keys', { label: 'rotated' }, account.apiKey)
    const replacement = await service.api.post('/api/keys/rotate', { key_prefix: rotated.body.prefix }, account.apiKey)
    expect(replacement.status).toBe(201)
    expectApiError(await service.api.get('/api/usage', rotated.body.api_key), 401, 'invalid_api_key')
    expect((await service.api.get('/api/usage', replacement.body.api_key)).status).toBe(200)
  })

  test('an expired key is 401 key_expired and its attempt is not counted', async () => {
    const created = await service.api.post('/api/keys', { label: 'day', expires_in_days: 1 }, account.apiKey)
    expect(created.status).toBe(201)
    expect((await service.api.get('/api/usage', created.body.api_key)).status).toBe(200)

    now += DAY_MS + 1000
    const before = (await service.api.get('/api/usage', account.apiKey)).body.api_calls_today as number
    expectApiError(await service.api.get('/api/usage', created.body.api_key), 401, 'key_expired')
    expectApiError(await service.api.get('/api/usage', created.body.api_key), 401, 'key_expired')
    const after = (await service.api.get('/api/usage', account.apiKey)).body.api_calls_today as number
    expect(after).toBe(before + 1)
  })
})

describe('methods other than GET', () => {
  test('POST, PUT and DELETE /api/usage are 404 not_found in the structured shape, with or without a key', async () => {
    expectApiError(await service.api.post('/api/usage', {}, account.apiKey), 404, 'not_found')
    expectApiError(await service.api.post('/api/usage', {}), 404, 'not_found')
    expectApiError(await service.api.request('POST', '/api/usage', { key: account.apiKey }), 404, 'not_found')
    expectApiError(await service.api.request('PUT', '/api/usage', { body: { plan: 'pro' }, key: account.apiKey }), 404, 'not_found')
    expectApiError(await service.api.request('DELETE', '/api/usage', { key: account.apiKey }), 404, 'not_found')
    // Nothing changed.
    const res = await service.api.get('/api/usage', account.apiKey)
    expect(res.status).toBe(200)
    expect(res.body.plan).toBe('free')
  })

  test('a near-miss path is 404 not_found', async () => {
    expectApiError(await service.api.get('/api/usages', account.apiKey), 404, 'not_found')
    expectApiError(await service.api.get('/api/usage/today', account.apiKey), 404, 'not_found')
  })
})
