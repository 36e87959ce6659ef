// API keys, the failures: invalid bodies, unknown or spent prefixes, expired keys, wrong routes.
import { describe, expect, test } from 'bun:test'
import { serviceForFile, type RegisteredAccount, type TestService } from '../support/service'
import { expectApiError } from '../support/assertions'

const DAY_MS = 86_400_000

let now = Date.UTC(2026, 2, 15, 12, 0, 0)
let service: TestService
let account: RegisteredAccount
serviceForFile({ env: { ALTTEXT_RATE_LIMITS: 'off' }, overrides: { clock: () => now }, account: true }, (started) => ({ service, account } = started))

async function activePrefixes(key = account.apiKey): Promise<string[]> {
  const res = await service.api.get('/api/keys', key)
  expect(res.status).toBe(200)
  return (res.body.keys as { prefix: string }[]).map((k) => k.prefix)
}

const json = { 'content-type': 'application/json' }

describe('POST /api/keys with an invalid body', () => {
  test('expires_in_days outside the integers 1..3650 is 400 invalid_request naming the field, and creates nothing', async () => {
    const before = await activePrefixes()
    for (const value of [0, 3651, 1.5, '3', -1, true, '', [5], { days: 3 }, 1e20]) {
      const res = await service.api.post('/api/keys', { label: 'bad', expires_in_days: value }, account.apiKey)
      expectApiError(res, 400, 'invalid_request', 'expires_in_days')
    }
    expect(await activePrefixes()).toEqual(before)
  })

  test('a label over 100 characters, or not a string, is 400 invalid_request naming label', async () => {
    const before = await activePrefixes()
    for (const value of ['x'.repeat(101), 123, true, ['a'], { text: 'a' }]) {
      const res = await service.api.post('/api/keys', { label: value }, account.apiKey)
      expectApiError(res, 400, 'invalid_request', 'label')
    }
    expect(await activePrefixes()).toEqual(before)
  })

  test('malformed JSON, a body that is not an object, or no body is 400 invalid_request', async () => {
    for (const path of ['/api/keys', '/api/keys/revoke', '/api/keys/rotate']) {
      expectApiError(await service.api.request('POST', path, { rawBody: '{"label": "a",', headers: json, key: account.apiKey }), 400, 'invalid_request')
      expectApiError(
        await service.api.request('POST', path, { rawBody: 'label=a', headers: { 'content-type': 'application/x-www-form-urlencoded' }, key: account.apiKey }),
        415,
        'unsupported_media_type',
      )
      for (const body of [[], ['a'], 'text', 42, null]) {
        expectApiError(await service.api.request('POST', path, { rawBody: JSON.stringify(body), headers: json, key: account.apiKey }), 400, 'invalid_request')
      }
      // Key creation takes only optional fields, so no body there is a valid request (tested in http/error).
      if (path !== '/api/keys') expectApiError(await service.api.request('POST', path, { key: account.apiKey }), 400, 'invalid_request')
    }
    expect(await activePrefixes()).toContain(account.prefix)
  })
})

describe('POST /api/keys/rotate with a bad expire_old_in_seconds', () => {
  test('outside the whole numbers 0..86400 is 400 invalid_request naming the field; the key is not rotated', async () => {
    const target = await service.api.post('/api/keys', { label: 'stays' }, account.apiKey)
    for (const value of [-1, 86_401, 1.5, '60', true, [60], { seconds: 60 }, 1e20]) {
      const res = await service.api.post('/api/keys/rotate', { key_prefix: target.body.prefix, expire_old_in_seconds: value }, account.apiKey)
      expectApiError(res, 400, 'invalid_request', 'expire_old_in_seconds')
    }
    expect(await activePrefixes()).toContain(target.body.prefix)
    expect((await service.api.get('/api/usage', target.body.api_key)).status).toBe(200)
  })
})

describe('POST /api/keys/revoke and /api/keys/rotate', () => {
  test('a missing or non-string key_prefix is 400 invalid_request naming key_prefix', async () => {
    for (const path of ['/api/keys/revoke', '/api/keys/rotate']) {
      expectApiError(await service.api.post(path, {}, account.apiKey), 400, 'invalid_request', 'key_prefix')
      expectApiError(await service.api.post(path, { prefix: account.prefix }, account.apiKey), 400, 'invalid_request', 'key_prefix')
      for (const value of [null, 42, true, [account.prefix], { prefix: account.prefix }]) {
        expectApiError(await service.api.post(path, { key_prefix: value }, account.apiKey), 400, 'invalid_request', 'key_prefix')
      }
    }
    // Nothing was revoked on the way.
    expect(await activePrefixes()).toContain(account.prefix)
  })

  test('an unknown prefix is 404 key_not_found', async () => {
    for (const path of ['/api/keys/revoke', '/api/keys/rotate']) {
      for (const prefix of ['alt_00000000', 'alt_zzzzzzzz', 'nothing-like-a-prefix', account.prefix.toUpperCase()]) {
        expectApiError(await service.api.post(path, { key_prefix: prefix }, account.apiKey), 404, 'key_not_found')
      }
    }
    expect(await activePrefixes()).toContain(account.prefix)
  })

  test('revoking or rotating an already revoked key is 404 key_not_found', async () => {
    const other = await service.api.post('/api/keys', { label: 'soon revoked' }, account.apiKey)
    expect(other.status).toBe(201)
    expect((await service.api.post('/api/keys/revoke', { key_prefix: other.body.prefix }, account.apiKey)).status).toBe(200)
    expectApiError(await service.api.post('/api/keys/revoke', { key_prefix: other.body.prefix }, account.apiKey), 404, 'key_not_found')
    expectApiError(await service.api.post('/api/keys/rotate', { key_prefix: other.body.prefix }, account.apiKey), 404, 'key_not_found')
    expect(await activePrefixes()).not.toContain(other.body.prefix)
  })

  test('rotating a prefix that was already rotated away is 404 key_not_found and issues nothing', async () => {
    const other = await service.api.post('/api/keys', { label: 'rotated' }, account.apiKey)
    const rotated = await service.api.post('/api/keys/rotate', { key_prefix: other.body.prefix }, account.apiKey)
    expect(rotated.status).toBe(201)
    const before = await activePrefixes()
    expectApiError(await service.api.post('/api/keys/rotate', { key_prefix: other.body.prefix }, account.apiKey), 404, 'key_not_found')
    expect(await activePrefixes()).toEqual(before)
    // Clean up so the account keeps few keys.
    expect((await service.api.post('/api/keys/revoke', { key_prefix: rotated.body.prefix }, account.apiKey)).status).toBe(200)
  })
})

describe('a rotation with a grace period at the limit of 25 active keys', () => {
  // The review found that rotating each of 25 keys with a grace period left 50 working keys.
  test('is 409 key_limit_reached and issues nothing: the old key counts until its grace ends; a rotation without one works', async () => {
    const owner = await service.api.register()
    const made = [owner.apiKey]
    for (let i = 1; i < 24; i++) {
      const res = await service.api.post('/api/keys', { label: `k${i}` }, owner.apiKey)
      expect(res.status).toBe(201)
      made.push(res.body.api_key)
    }
    // 24 active: one rotation with a grace fits (the old key and the new one make 25).
    const prefixes = await activePrefixes(owner.apiKey)
    const graced = await service.api.post('/api/keys/rotate', { key_prefix: prefixes[0], expire_old_in_seconds: 3600 }, owner.apiKey)
    expect(graced.status).toBe(201)
    expect(await activePrefixes(owner.apiKey)).toHaveLength(25)

    const before = await activePrefixes(owner.apiKey)
    for (const prefix of before.filter((p) => p !== prefixes[0])) {
      const refused = await service.api.post('/api/keys/rotate', { key_prefix: prefix, expire_old_in_seconds: 3600 }, owner.apiKey)
      expectApiError(refused, 409, 'key_limit_reached')
      expect(refused.body.error.message).toContain('grace period')
    }
    expect(await activePrefixes(owner.apiKey)).toEqual(before)
    let working = 0
    for (const key of [...made, graced.body.api_key]) if ((await service.api.get('/api/usage', key)).status === 200) working++
    expect(working).toBe(25)

    // Without a grace period the old key stops at once: the count stays 25.
    const plainPrefix = before.find((p) => ![prefixes[0], graced.body.prefix, owner.prefix].includes(p))
    const plain = await service.api.post('/api/keys/rotate', { key_prefix: plainPrefix }, owner.apiKey)
    expect(plain.status).toBe(201)
    expect(await activePrefixes(owner.apiKey)).toHaveLength(25)
    // Once the grace period is over, the rotated key no longer counts: a rotation with a grace fits again.
    now += 3600_000 + 1000
    const next = (await activePrefixes(owner.apiKey))[0]
    expect((await service.api.post('/api/keys/rotate', { key_prefix: next, expire_old_in_seconds: 60 }, owner.apiKey)).status).toBe(201)
  })
})

describe('an expired key', () => {
  test('is 401 key_expired on every authenticated endpoint, and its prefix can no longer be revoked or rotated', async () => {
    const created = await service.api.post('/api/keys', { label: 'expiring', expires_in_days: 1 }, account.apiKey)
    expect(created.status).toBe(201)
    const key = created.body.api_key as string
    expect((await service.api.get('/api/keys', key)).status).toBe(200)

    now += DAY_MS + 1000
    expectApiError(await service.api.get('/api/keys', key), 401, 'key_expired')
    expectApiError(await service.api.post('/api/keys', { label: 'x' }, key), 401, 'key_expired')
    expectApiError(await service.api.post('/api/keys/revoke', { key_prefix: account.prefix }, key), 401, 'key_expired')
    expectApiError(await service.api.post('/api/keys/rotate', { key_prefix: account.prefix }, key), 401, 'key_expired')
    expectApiError(await service.api.get('/api/usage', key), 401, 'key_expired')
    // Authentication fails before the image is looked at, so nothing is fetched.
    expectApiError(await service.api.post('/api/alt-text', { image_url: 'https://127.0.0.1/image.png' }, key), 401, 'key_expired')
    // The expired key could not touch the account's other keys.
    expect(await activePrefixes()).toContain(account.prefix)

    // From a live key: the expired key is not active, so it is not found.
    expectApiError(await service.api.post('/api/keys/revoke', { key_prefix: created.body.prefix }, account.apiKey), 404, 'key_not_found')
    expectApiError(await service.api.post('/api/keys/rotate', { key_prefix: created.body.prefix }, account.apiKey), 404, 'key_not_found')
    expect(await activePrefixes()).not.toContain(created.body.prefix)
  })
})

describe('routes that do not exist', () => {
  test('other methods on the key paths are 404 not_found in the structured shape', async () => {
    // GET /api/keys/{prefix} shows one key: `revoke` and `rotate` are prefixes no key has.
    expectApiError(await service.api.get('/api/keys/revoke', account.apiKey), 404, 'key_not_found')
    expectApiError(await service.api.get('/api/keys/rotate', account.apiKey), 404, 'key_not_found')
    expectApiError(await service.api.request('DELETE', '/api/keys', { key: account.apiKey }), 404, 'not_found')
    expectApiError(await service.api.request('PUT', '/api/keys', { body: { label: 'x' }, key: account.apiKey }), 404, 'not_found')
    expectApiError(await service.api.request('DELETE', `/api/keys/${account.prefix}`, { key: account.apiKey }), 404, 'not_found')
    expect(await activePrefixes()).toContain(account.prefix)
  })
})
