// API keys, the paths that succeed: list, create, revoke, rotate, last use, the 25-key limit and expiry.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestService, waitUntil, type TestService } from '../support/service'
import { expectApiError } from '../support/assertions'

const DAY_MS = 86_400_000
const FULL_KEY = /^alt_[0-9a-f]{64}$/

// The service's time source: tests move it forward only.
let now = Date.UTC(2026, 2, 15, 12, 0, 0)
let service: TestService

beforeAll(async () => {
  service = await startTestService({ env: { ALTTEXT_RATE_LIMITS: 'off' }, overrides: { clock: () => now } })
})
afterAll(async () => {
  await service.stop()
})

type KeySummary = { prefix: string; label: string | null; created_at: string; expires_at: string | null; last_used_at: string | null }

const iso = (ms: number) => new Date(ms).toISOString()

async function listKeys(key: string): Promise<KeySummary[]> {
  const res = await service.api.get('/api/keys', key)
  expect(res.status).toBe(200)
  expect(Object.keys(res.body)).toEqual(['keys'])
  return res.body.keys as KeySummary[]
}

describe('POST /api/keys', () => {
  test('creates a key: 201 with exactly the decided fields, the full key only here, and it works at once', async () => {
    const account = await service.api.register()
    const res = await service.api.post('/api/keys', { label: 'ci' }, account.apiKey)
    expect(res.status).toBe(201)
    expect(res.body).toEqual({
      api_key: expect.stringMatching(FULL_KEY),
      prefix: res.body.api_key.slice(0, 12),
      label: 'ci',
      expires: null,
      message: expect.any(String),
    })
    expect(res.body.prefix).toMatch(/^alt_[0-9a-f]{8}$/)
    expect(res.body.message.length).toBeGreaterThan(0)
    expect(res.body.api_key).not.toBe(account.apiKey)
    expect(res.body.prefix).not.toBe(account.prefix)

    const usage = await service.api.get('/api/usage', res.body.api_key)
    expect(usage.status).toBe(200)
  })

  test('an empty object creates a key with label null and expires null', async () => {
    const account = await service.api.register()
    const res = await service.api.post('/api/keys', {}, account.apiKey)
    expect(res.status).toBe(201)
    expect(res.body.label).toBeNull()
    expect(res.body.expires).toBeNull()
    const listed = (await listKeys(account.apiKey)).find((k) => k.prefix === res.body.prefix)
    expect(listed).toEqual({ prefix: res.body.prefix, label: null, created_at: iso(now), expires_at: null, last_used_at: null })
  })

  test('expires is Unix time in seconds: creation time + days * 86400, for 1, 30 and 3650 days', async () => {
    const account = await service.api.register()
    for (const days of [1, 30, 3650]) {
      const created = now
      const res = await service.api.post('/api/keys', { label: `d${days}`, expires_in_days: days }, account.apiKey)
      expect(res.status).toBe(201)
      expect(Number.isInteger(res.body.expires)).toBe(true)
      expect(Math.abs(res.body.expires - (created / 1000 + days * 86400))).toBeLessThanOrEqual(1)
      // Seconds, not milliseconds.
      expect(res.body.expires).toBeLessThan(1e11)

      const listed = (await listKeys(account.apiKey)).find((k) => k.prefix === res.body.prefix)!
      expect(listed.created_at).toBe(iso(created))
      expect(listed.expires_at).toBe(iso(created + days * DAY_MS))
      expect(Math.abs(Date.parse(listed.expires_at!) / 1000 - res.body.expires)).toBeLessThan(1)
      now += 1000
    }
  })

  test('the label is trimmed and may have 100 characters', async () => {
    const account = await service.api.register()
    const trimmed = await service.api.post('/api/keys', { label: '   staging  ' }, account.apiKey)
    expect(trimmed.status).toBe(201)
    expect(trimmed.body.label).toBe('staging')

    const hundred = 'x'.repeat(100)
    const long = await service.api.post('/api/keys', { label: hundred }, account.apiKey)
    expect(long.status).toBe(201)
    expect(long.body.label).toBe(hundred)

    // Trimmed first, then measured.
    const padded = await service.api.post('/api/keys', { label: `  ${'y'.repeat(100)}  ` }, account.apiKey)
    expect(padded.status).toBe(201)
    expect(padded.body.label).toBe('y'.repeat(100))

    const labels = new Map((await listKeys(account.apiKey)).map((k) => [k.prefix, k.label]))
    expect(labels.get(trimmed.body.prefix)).toBe('staging')
    expect(labels.get(long.body.prefix)).toBe(hundred)
  })
})

describe('GET /api/keys', () => {
  test('lists the active keys only, newest first, with {prefix, label, created_at, expires_at, last_used_at}', async () => {
    const registeredAt = now
    const account = await service.api.register()
    const created: { prefix: string; at: number; label: string; days: number | null }[] = []
    for (const [label, days] of [
      ['one', null],
      ['two', 7],
      ['three', null],
    ] as const) {
      now += 1000
      const res = await service.api.post('/api/keys', days === null ? { label } : { label, expires_in_days: days }, account.apiKey)
      expect(res.status).toBe(201)
      created.push({ prefix: res.body.prefix, at: now, label, days })
    }

    const res = await service.api.get('/api/keys', account.apiKey)
    expect(res.status).toBe(200)
    const keys = res.body.keys as KeySummary[]
    expect(keys.map((k) => k.prefix)).toEqual([created[2]!.prefix, created[1]!.prefix, created[0]!.prefix, account.prefix])
    for (const k of keys) expect(Object.keys(k).sort()).toEqual(['created_at', 'expires_at', 'label', 'last_used_at', 'prefix'])
    expect(keys[0]).toEqual({ prefix: created[2]!.prefix, label: 'three', created_at: iso(created[2]!.at), expires_at: null, last_used_at: null })
    expect(keys[1]).toEqual({
      prefix: created[1]!.prefix,
      label: 'two',
      created_at: iso(created[1]!.at),
      expires_at: iso(created[1]!.at + 7 * DAY_MS),
      last_used_at: null,
    })
    expect(keys[3]!.created_at).toBe(iso(registeredAt))
    // The key that made the calls has been used.
    expect(keys[3]!.last_used_at).toEqual(expect.any(String))
    expect(res.text).not.toMatch(/alt_[0-9a-f]{64}/)

    // A revoked key is no longer listed.
    const revoked = await service.api.post('/api/keys/revoke', { key_prefix: created[1]!.prefix }, account.apiKey)
    expect(revoked.status).toBe(200)
    expect((await listKeys(account.apiKey)).map((k) => k.prefix)).toEqual([created[2]!.prefix, created[0]!.prefix, account.prefix])
  })

  test('last_used_at is set after a key is used, to the time of that use', async () => {
    const account = await service.api.register()
    const second = await service.api.post('/api/keys', { label: 'worker' }, account.apiKey)
    expect(second.status).toBe(201)
    const before = (await listKeys(account.apiKey)).find((k) => k.prefix === second.body.prefix)!
    expect(before.last_used_at).toBeNull()

    now += 5000
    const usedAt = now
    expect((await service.api.get('/api/usage', second.body.api_key)).status).toBe(200)
    now += 5000

    // Writes may be batched: await the value rather than expecting it at once.
    await waitUntil(
      async () => (await listKeys(account.apiKey)).find((k) => k.prefix === second.body.prefix)!.last_used_at !== null,
      'last_used_at of the second key',
    )
    const after = (await listKeys(account.apiKey)).find((k) => k.prefix === second.body.prefix)!
    expect(after.last_used_at).toBe(iso(usedAt))

    // It stays set after the batch reaches the database.
    await waitUntil(async () => {
      const [row] = await service.query<{ last_used_at: number | null }>('SELECT last_used_at FROM api_keys WHERE prefix = ?', second.body.prefix)
      return row?.last_used_at === usedAt
    }, 'last_used_at persisted')
    expect((await listKeys(account.apiKey)).find((k) => k.prefix === second.body.prefix)!.last_used_at).toBe(iso(usedAt))
  })
})

describe('POST /api/keys/revoke', () => {
  test('200 {prefix, revoked: true}; the key stops authenticating at once; a second revoke is 404 key_not_found', async () => {
    const account = await service.api.register()
    const other = await service.api.post('/api/keys', { label: 'to revoke' }, account.apiKey)
    expect(other.status).toBe(201)
    expect((await service.api.get('/api/usage', other.body.api_key)).status).toBe(200)

    const res = await service.api.post('/api/keys/revoke', { key_prefix: other.body.prefix }, account.apiKey)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ prefix: other.body.prefix, revoked: true })

    expectApiError(await service.api.get('/api/usage', other.body.api_key), 401, 'invalid_api_key')
    expectApiError(await service.api.get('/api/keys', other.body.api_key), 401, 'invalid_api_key')
    // The revoking key is unaffected.
    expect((await service.api.get('/api/usage', account.apiKey)).status).toBe(200)

    expectApiError(await service.api.post('/api/keys/revoke', { key_prefix: other.body.prefix }, account.apiKey), 404, 'key_not_found')
  })

  test('a key can revoke itself', async () => {
    const account = await service.api.register()
    const spare = await service.api.post('/api/keys', { label: 'spare' }, account.apiKey)
    const res = await service.api.post('/api/keys/revoke', { key_prefix: account.prefix }, account.apiKey)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ prefix: account.prefix, revoked: true })
    expectApiError(await service.api.get('/api/keys', account.apiKey), 401, 'invalid_api_key')
    expect((await listKeys(spare.body.api_key)).map((k) => k.prefix)).toEqual([spare.body.prefix])
  })
})

describe('POST /api/keys/rotate', () => {
  test('201 with the new key and revoked_prefix; the old key stops, the new one works, label and expiry time are kept', async () => {
    const account = await service.api.register()
    const createdAt = now
    const old = await service.api.post('/api/keys', { label: 'rotating', expires_in_days: 10 }, account.apiKey)
    expect(old.status).toBe(201)

    now += 2 * DAY_MS
    const res = await service.api.post('/api/keys/rotate', { key_prefix: old.body.prefix }, account.apiKey)
    expect(res.status).toBe(201)
    expect(res.body).toEqual({
      api_key: expect.stringMatching(FULL_KEY),
      prefix: res.body.api_key.slice(0, 12),
      label: 'rotating',
      expires: old.body.expires,
      message: expect.any(String),
      revoked_prefix: old.body.prefix,
      old_key_expires_at: iso(now),
    })
    expect(res.body.prefix).not.toBe(old.body.prefix)
    expect(res.body.api_key).not.toBe(old.body.api_key)

    expectApiError(await service.api.get('/api/usage', old.body.api_key), 401, 'invalid_api_key')
    expect((await service.api.get('/api/usage', res.body.api_key)).status).toBe(200)

    const keys = await listKeys(account.apiKey)
    expect(keys.map((k) => k.prefix)).toEqual([res.body.prefix, account.prefix])
    expect(keys[0]).toEqual({
      prefix: res.body.prefix,
      label: 'rotating',
      created_at: iso(now),
      expires_at: iso(createdAt + 10 * DAY_MS),
      last_used_at: expect.any(String),
    })

    // The replacement expires when the old key would have.
    now = createdAt + 10 * DAY_MS + 1000
    expectApiError(await service.api.get('/api/usage', res.body.api_key), 401, 'key_expired')
  })

  test('rotating a key without expiry or label gives a key without expiry or label', async () => {
    const account = await service.api.register()
    const res = await service.api.post('/api/keys/rotate', { key_prefix: account.prefix }, account.apiKey)
    expect(res.status).toBe(201)
    expect(res.body.label).toBeNull()
    expect(res.body.expires).toBeNull()
    expect(res.body.revoked_prefix).toBe(account.prefix)
    // The calling key rotated itself away.
    expectApiError(await service.api.get('/api/usage', account.apiKey), 401, 'invalid_api_key')
    expect((await listKeys(res.body.api_key)).map((k) => k.prefix)).toEqual([res.body.prefix])
  })
})

describe('POST /api/keys/rotate with expire_old_in_seconds', () => {
  test('the old key keeps working for that long, then is 401 key_expired; the answer says when', async () => {
    const account = await service.api.register()
    const old = await service.api.post('/api/keys', { label: 'cms' }, account.apiKey)
    const rotatedAt = now
    const res = await service.api.post('/api/keys/rotate', { key_prefix: old.body.prefix, expire_old_in_seconds: 60 }, account.apiKey)
    expect(res.status).toBe(201)
    expect(res.body).toEqual({
      api_key: expect.stringMatching(FULL_KEY),
      prefix: res.body.api_key.slice(0, 12),
      label: 'cms',
      expires: null,
      message: expect.any(String),
      revoked_prefix: old.body.prefix,
      old_key_expires_at: iso(rotatedAt + 60_000),
    })

    // Both keys work meanwhile; the list shows the old one with its new end.
    expect((await service.api.get('/api/usage', old.body.api_key)).status).toBe(200)
    expect((await service.api.get('/api/usage', res.body.api_key)).status).toBe(200)
    const listed = await listKeys(account.apiKey)
    expect(listed.find((k) => k.prefix === old.body.prefix)?.expires_at).toBe(iso(rotatedAt + 60_000))
    expect(listed.find((k) => k.prefix === res.body.prefix)?.expires_at).toBeNull()

    now = rotatedAt + 59_999
    expect((await service.api.get('/api/usage', old.body.api_key)).status).toBe(200)
    now = rotatedAt + 60_000
    expectApiError(await service.api.get('/api/usage', old.body.api_key), 401, 'key_expired')
    expect((await listKeys(account.apiKey)).map((k) => k.prefix)).not.toContain(old.body.prefix)
    // The new key keeps the old key's own expiry (none), not the grace period.
    now += 30 * DAY_MS
    expect((await service.api.get('/api/usage', res.body.api_key)).status).toBe(200)
  })

  test('0, and no field at all, stop the old key at once, as before', async () => {
    const account = await service.api.register()
    for (const body of [{ expire_old_in_seconds: 0 }, {}, { expire_old_in_seconds: null }]) {
      const old = await service.api.post('/api/keys', {}, account.apiKey)
      const res = await service.api.post('/api/keys/rotate', { key_prefix: old.body.prefix, ...body }, account.apiKey)
      expect(res.status).toBe(201)
      expect(res.body.old_key_expires_at).toBe(iso(now))
      expectApiError(await service.api.get('/api/usage', old.body.api_key), 401, 'invalid_api_key')
    }
  })

  test('a grace period longer than the key has left ends with the key: its own expiry wins', async () => {
    const account = await service.api.register()
    const createdAt = now
    const old = await service.api.post('/api/keys', { expires_in_days: 1 }, account.apiKey)
    now = createdAt + DAY_MS - 10_000
    const res = await service.api.post('/api/keys/rotate', { key_prefix: old.body.prefix, expire_old_in_seconds: 86_400 }, account.apiKey)
    expect(res.status).toBe(201)
    expect(res.body.old_key_expires_at).toBe(iso(createdAt + DAY_MS))
    expect(res.body.expires).toBe(old.body.expires)
    now = createdAt + DAY_MS
    expectApiError(await service.api.get('/api/usage', old.body.api_key), 401, 'key_expired')
  })

  test('a key in its grace period cannot be rotated again (404), but can be revoked, which stops it at once', async () => {
    const account = await service.api.register()
    const old = await service.api.post('/api/keys', {}, account.apiKey)
    const res = await service.api.post('/api/keys/rotate', { key_prefix: old.body.prefix, expire_old_in_seconds: 3600 }, account.apiKey)
    expect(res.status).toBe(201)
    const again = await service.api.post('/api/keys/rotate', { key_prefix: old.body.prefix, expire_old_in_seconds: 3600 }, account.apiKey)
    expectApiError(again, 404, 'key_not_found')
    expect((await service.api.post('/api/keys/revoke', { key_prefix: old.body.prefix }, account.apiKey)).status).toBe(200)
    expectApiError(await service.api.get('/api/usage', old.body.api_key), 401, 'invalid_api_key')
    expect((await service.api.get('/api/usage', res.body.api_key)).status).toBe(200)
  })
})

describe('the limit of 25 active keys', () => {
  test('the 26th key is 409 key_limit_reached; revoking, or a key expiring, frees a slot; rotating works at the limit', async () => {
    const account = await service.api.register()
    let expiring = ''
    for (let i = 1; i <= 24; i++) {
      const res = await service.api.post('/api/keys', i === 1 ? { label: `k${i}`, expires_in_days: 1 } : { label: `k${i}` }, account.apiKey)
      expect(res.status).toBe(201)
      if (i === 1) expiring = res.body.prefix
    }
    expect(await listKeys(account.apiKey)).toHaveLength(25)

    const over = await service.api.post('/api/keys', { label: 'k25' }, account.apiKey)
    expectApiError(over, 409, 'key_limit_reached')
    expect(await listKeys(account.apiKey)).toHaveLength(25)

    // Rotation replaces a key, so it is allowed at the limit.
    const keys = await listKeys(account.apiKey)
    const victim = keys.find((k) => k.label === 'k5')!
    const rotated = await service.api.post('/api/keys/rotate', { key_prefix: victim.prefix }, account.apiKey)
    expect(rotated.status).toBe(201)
    expect(await listKeys(account.apiKey)).toHaveLength(25)

    // Revoking one frees one slot.
    const revoked = await service.api.post('/api/keys/revoke', { key_prefix: rotated.body.prefix }, account.apiKey)
    expect(revoked.status).toBe(200)
    const refill = await service.api.post('/api/keys', { label: 'refill' }, account.apiKey)
    expect(refill.status).toBe(201)
    expectApiError(await service.api.post('/api/keys', { label: 'again' }, account.apiKey), 409, 'key_limit_reached')

    // An expired key is not active, so it does not count.
    now += DAY_MS + 1000
    const listed = await listKeys(account.apiKey)
    expect(listed.map((k) => k.prefix)).not.toContain(expiring)
    expect(listed).toHaveLength(24)
    expect((await service.api.post('/api/keys', { label: 'after expiry' }, account.apiKey)).status).toBe(201)
    expectApiError(await service.api.post('/api/keys', { label: 'one more' }, account.apiKey), 409, 'key_limit_reached')
  })
})

describe('expiry', () => {
  test('a key with expires_in_days: 1 works until its expiry, then is 401 key_expired and leaves GET /api/keys', async () => {
    const account = await service.api.register()
    const createdAt = now
    const res = await service.api.post('/api/keys', { label: 'short', expires_in_days: 1 }, account.apiKey)
    expect(res.status).toBe(201)
    const key = res.body.api_key as string
    expect((await service.api.get('/api/usage', key)).status).toBe(200)

    now = createdAt + DAY_MS - 1000
    expect((await service.api.get('/api/usage', key)).status).toBe(200)
    expect((await listKeys(account.apiKey)).map((k) => k.prefix)).toContain(res.body.prefix)

    now = createdAt + DAY_MS + 1000
    expectApiError(await service.api.get('/api/usage', key), 401, 'key_expired')
    expectApiError(await service.api.get('/api/keys', key), 401, 'key_expired')
    expectApiError(await service.api.post('/api/keys', { label: 'from expired' }, key), 401, 'key_expired')
    expect((await listKeys(account.apiKey)).map((k) => k.prefix)).toEqual([account.prefix])
    // The account's other key is unaffected.
    expect((await service.api.get('/api/usage', account.apiKey)).status).toBe(200)
  })
})
