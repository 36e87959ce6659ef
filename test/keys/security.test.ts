// API keys, security: authentication codes, malformed keys, isolation between accounts, and that a
// full key is never shown again, logged or stored.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { startTestService, VALID_PASSWORD, type TestService } from '../support/service'
import { expectApiError } from '../support/assertions'
import { sqliteOnly } from '../support/postgres'

type Account = { email: string; password: string; apiKey: string; prefix: string }

let service: TestService
let alice: Account
let bob: Account
/** Every full key this file was given, for the "never shown or stored again" checks. */
const issued: string[] = []

beforeAll(async () => {
  service = await startTestService({ env: { ALTTEXT_RATE_LIMITS: 'off' } })
  alice = await service.api.register(undefined, VALID_PASSWORD)
  bob = await service.api.register(undefined, VALID_PASSWORD)
  issued.push(alice.apiKey, bob.apiKey)
})
afterAll(async () => {
  await service.stop()
})

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

async function createKey(owner: Account, label: string) {
  const res = await service.api.post('/api/keys', { label }, owner.apiKey)
  expect(res.status).toBe(201)
  issued.push(res.body.api_key)
  return res.body as { api_key: string; prefix: string }
}

async function prefixesOf(owner: Account): Promise<string[]> {
  const res = await service.api.get('/api/keys', owner.apiKey)
  expect(res.status).toBe(200)
  return (res.body.keys as { prefix: string }[]).map((k) => k.prefix)
}

/** Each authenticated keys endpoint with a body that passes validation. */
const endpoints = () =>
  [
    ['GET', '/api/keys', undefined],
    ['POST', '/api/keys', { label: 'x' }],
    ['POST', '/api/keys/revoke', { key_prefix: alice.prefix }],
    ['POST', '/api/keys/rotate', { key_prefix: alice.prefix }],
  ] as const

describe('authentication', () => {
  test('no X-API-Key header is 401 missing_api_key on every keys endpoint', async () => {
    for (const [method, path, body] of endpoints()) {
      expectApiError(await service.api.request(method, path, { body }), 401, 'missing_api_key')
    }
    expect(await prefixesOf(alice)).toContain(alice.prefix)
  })

  test('a key sent anywhere but X-API-Key does not authenticate', async () => {
    for (const [method, path, body] of endpoints()) {
      const res = await service.api.request(method, path, { body, headers: { authorization: `Bearer ${alice.apiKey}` } })
      expectApiError(res, 401, 'missing_api_key')
      const query = await service.api.request(method, `${path}?api_key=${alice.apiKey}`, { body })
      expectApiError(query, 401, 'missing_api_key')
    }
    expect(await prefixesOf(alice)).toContain(alice.prefix)
  })

  test('a malformed key is 401 invalid_api_key', async () => {
    const hex = alice.apiKey.slice(4)
    const malformed = [
      alice.apiKey.slice(0, -1), // 63 hex characters
      `${alice.apiKey}0`, // 65 hex characters
      `alt_${hex.toUpperCase()}`, // uppercase hex of a real key
      `ALT_${hex}`,
      `Bearer ${alice.apiKey}`,
      `alt_${'g'.repeat(64)}`, // not hex
      hex, // without alt_
      `alt-${hex}`,
      alice.prefix, // the prefix alone
      `${alice.apiKey.slice(0, 30)} ${alice.apiKey.slice(30)}`,
      `${alice.apiKey},${bob.apiKey}`,
      'alt_',
      'x',
    ]
    for (const key of malformed) {
      for (const [method, path, body] of endpoints()) {
        expectApiError(await service.api.request(method, path, { body, key }), 401, 'invalid_api_key')
      }
    }
    expect(await prefixesOf(alice)).toContain(alice.prefix)
  })

  test('an unknown well-formed key and a revoked key are 401 invalid_api_key, with the same body', async () => {
    const unknown = await service.api.get('/api/keys', `alt_${'0'.repeat(64)}`)
    expectApiError(unknown, 401, 'invalid_api_key')

    const doomed = await createKey(alice, 'doomed')
    expect((await service.api.post('/api/keys/revoke', { key_prefix: doomed.prefix }, alice.apiKey)).status).toBe(200)
    for (const [method, path, body] of endpoints()) {
      const res = await service.api.request(method, path, { body, key: doomed.api_key })
      expectApiError(res, 401, 'invalid_api_key')
      if (method === 'GET') expect(res.body).toEqual(unknown.body)
    }
  })

  test('an unauthenticated request is 401 even when its body is invalid (authentication comes first)', async () => {
    expectApiError(await service.api.post('/api/keys', { expires_in_days: 0 }), 401, 'missing_api_key')
    expectApiError(await service.api.post('/api/keys', { label: 'x'.repeat(500) }, `alt_${'0'.repeat(64)}`), 401, 'invalid_api_key')
    expectApiError(await service.api.post('/api/keys/revoke', {}), 401, 'missing_api_key')
    expectApiError(await service.api.post('/api/keys/rotate', { key_prefix: 42 }, 'nonsense'), 401, 'invalid_api_key')
  })
})

describe('isolation between accounts', () => {
  test('a key of one account cannot revoke or rotate a key of another: 404 key_not_found, same body as an unknown prefix', async () => {
    const bobSpare = await createKey(bob, 'bob spare')
    const unknownRevoke = await service.api.post('/api/keys/revoke', { key_prefix: 'alt_00000000' }, alice.apiKey)
    const unknownRotate = await service.api.post('/api/keys/rotate', { key_prefix: 'alt_00000000' }, alice.apiKey)
    expectApiError(unknownRevoke, 404, 'key_not_found')
    expectApiError(unknownRotate, 404, 'key_not_found')

    for (const prefix of [bob.prefix, bobSpare.prefix]) {
      const revoke = await service.api.post('/api/keys/revoke', { key_prefix: prefix }, alice.apiKey)
      expectApiError(revoke, 404, 'key_not_found')
      expect(revoke.body).toEqual(unknownRevoke.body)
      const rotate = await service.api.post('/api/keys/rotate', { key_prefix: prefix }, alice.apiKey)
      expectApiError(rotate, 404, 'key_not_found')
      expect(rotate.body).toEqual(unknownRotate.body)
    }

    // Bob's keys still work and are still listed; Alice sees none of them.
    expect((await service.api.get('/api/usage', bob.apiKey)).status).toBe(200)
    expect((await service.api.get('/api/usage', bobSpare.api_key)).status).toBe(200)
    expect((await prefixesOf(bob)).sort()).toEqual([bob.prefix, bobSpare.prefix].sort())
    const aliceSees = await prefixesOf(alice)
    expect(aliceSees).not.toContain(bob.prefix)
    expect(aliceSees).not.toContain(bobSpare.prefix)
  })

  test("keys created by one account do not count toward another account's limit", async () => {
    const carol: Account = await service.api.register()
    issued.push(carol.apiKey)
    for (let i = 0; i < 24; i++) {
      const res = await service.api.post('/api/keys', { label: `c${i}` }, carol.apiKey)
      expect(res.status).toBe(201)
      issued.push(res.body.api_key)
    }
    expectApiError(await service.api.post('/api/keys', { label: 'over' }, carol.apiKey), 409, 'key_limit_reached')
    // Bob is not affected by Carol's full set.
    const res = await service.api.post('/api/keys', { label: 'bob ok' }, bob.apiKey)
    expect(res.status).toBe(201)
    issued.push(res.body.api_key)
  })
})

describe('a full key is shown only once', () => {
  test('GET /api/keys, login, revoke and rotate responses never contain a full key', async () => {
    const extra = await createKey(alice, 'extra')
    const listed = await service.api.get('/api/keys', alice.apiKey)
    expect(listed.status).toBe(200)
    expect(listed.text).not.toMatch(/alt_[0-9a-f]{64}/)
    for (const key of issued) expect(listed.text).not.toContain(key.slice(4))

    const login = await service.api.post('/api/login', { email: alice.email, password: alice.password })
    expect(login.status).toBe(200)
    expect(login.text).not.toMatch(/alt_[0-9a-f]{64}/)
    for (const key of issued) expect(login.text).not.toContain(key.slice(4))

    const revoked = await service.api.post('/api/keys/revoke', { key_prefix: extra.prefix }, alice.apiKey)
    expect(revoked.status).toBe(200)
    expect(revoked.text).not.toMatch(/[0-9a-f]{64}/)

    const other = await createKey(alice, 'to rotate')
    const rotated = await service.api.post('/api/keys/rotate', { key_prefix: other.prefix }, alice.apiKey)
    expect(rotated.status).toBe(201)
    issued.push(rotated.body.api_key)
    // Only the new key, never the old one.
    expect(rotated.text).not.toContain(other.api_key.slice(4))
  })

  test("the service's log never contains a full key, valid or not", async () => {
    // Send a few failing keys too: a rejected key must not be logged either.
    const wrong = `alt_${'ab'.repeat(32)}`
    expect((await service.api.get('/api/keys', wrong)).status).toBe(401)
    expect((await service.api.get('/api/keys', alice.apiKey.toUpperCase())).status).toBe(401)
    const text = service.logText()
    expect(text.length).toBeGreaterThan(0)
    expect(text).not.toMatch(/alt_[0-9a-fA-F]{64}/)
    for (const key of [...issued, wrong]) {
      expect(text).not.toContain(key.slice(4))
      expect(text.toLowerCase()).not.toContain(key.slice(4).toLowerCase())
    }
  })

  test('the database keeps only the SHA-256 hex of each key, never the key', async () => {
    const rows = await service.query('SELECT * FROM api_keys')
    expect(rows.length).toBeGreaterThanOrEqual(issued.length)
    const byPrefix = new Map(rows.map((r) => [r.prefix as string, r]))
    for (const key of issued) {
      const row = byPrefix.get(key.slice(0, 12))
      expect(row).toBeDefined()
      expect(row!.key_hash).toBe(sha256(key))
      expect(row!.key_hash).toMatch(/^[0-9a-f]{64}$/)
    }
    // No column of any row, in any table, holds a key or its hex part.
    for (const name of await service.tables()) {
      const dump = JSON.stringify(await service.query(`SELECT * FROM "${name}"`))
      for (const key of issued) expect(dump).not.toContain(key.slice(4))
    }
  })

  sqliteOnly('the SQLite file and its write-ahead log on disk')('the database files on disk hold only the SHA-256 hex of each key, never the key', () => {
    // The raw files (the main file and the write-ahead log, where fresh pages live).
    let all = ''
    for (const file of [service.dbPath, `${service.dbPath}-wal`, `${service.dbPath}-journal`]) {
      if (!existsSync(file)) continue
      const bytes = readFileSync(file).toString('latin1')
      all += bytes
      for (const key of issued) expect(bytes).not.toContain(key.slice(4))
    }
    // The scan saw the stored rows: the hashes are there.
    for (const key of issued) expect(all).toContain(sha256(key))
  })
})
