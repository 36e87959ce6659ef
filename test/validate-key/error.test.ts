// POST /api/validate-key, the failures: any string that is not a currently valid key is 401 with a
// plain-string `error` (the one short-form error); a body without a string api_key is 400 invalid_request.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Mail, Mailer } from '../../src/modules/accounts/mailer'
import { startTestService, waitUntil, type ApiResponse, type TestService } from '../support/service'
import { expectApiError } from '../support/assertions'

const DAY_MS = 86_400_000

let now = Date.UTC(2026, 2, 15, 12, 0, 0)
let service: TestService
let account: { email: string; password: string; apiKey: string; prefix: string }
/** Reset mails, captured in memory. */
const mails: Mail[] = []
const mailer: Mailer = {
  kind: 'smtp',
  send: async (mail) => {
    mails.push(mail)
  },
  close: () => {},
}

beforeAll(async () => {
  service = await startTestService({ env: { ALTTEXT_RATE_LIMITS: 'off' }, overrides: { clock: () => now, mailer } })
  account = await service.api.register()
})
afterAll(async () => {
  await service.stop()
})

/** The short form: exactly `{"error": "<short message>"}`. */
function expectPlainInvalid(res: ApiResponse) {
  expect(res.status).toBe(401)
  expect(res.headers.get('content-type')).toContain('application/json')
  expect(Object.keys(res.body)).toEqual(['error'])
  expect(typeof res.body.error).toBe('string')
  expect(res.body.error.length).toBeGreaterThan(0)
  expect(res.body.valid).toBeUndefined()
}

const validate = (api_key: unknown) => service.api.post('/api/validate-key', { api_key })
const raw = (rawBody: string | undefined, contentType = 'application/json') =>
  service.api.request('POST', '/api/validate-key', { rawBody, headers: { 'content-type': contentType } })

describe('a string that is not a currently valid key: 401 {"error": "<string>"}', () => {
  test('an unknown well-formed key', async () => {
    expectPlainInvalid(await validate(`alt_${'0'.repeat(64)}`))
    expectPlainInvalid(await validate(`alt_${'f'.repeat(64)}`))
  })

  test('malformed strings, the empty string included', async () => {
    const hex = account.apiKey.slice(4)
    for (const value of [
      '',
      ' ',
      'alt_',
      'x',
      account.prefix,
      account.apiKey.slice(0, -1),
      `${account.apiKey}0`,
      `alt_${hex.toUpperCase()}`,
      account.apiKey.toUpperCase(),
      `Bearer ${account.apiKey}`,
      `alt_${'g'.repeat(64)}`,
      hex,
      `${account.apiKey} ${account.apiKey}`,
      `${account.apiKey}\n${account.apiKey}`,
      '\u0000',
      'ключ',
    ]) {
      expectPlainInvalid(await validate(value))
    }
  })

  test('a long string is still just a string that is not a valid key', async () => {
    expectPlainInvalid(await validate('a'.repeat(2000)))
    expectPlainInvalid(await validate(account.apiKey.repeat(20)))
  })

  test('a revoked key, and a key rotated away', async () => {
    const revoked = await service.api.post('/api/keys', { label: 'revoked' }, account.apiKey)
    expect((await validate(revoked.body.api_key)).status).toBe(200)
    expect((await service.api.post('/api/keys/revoke', { key_prefix: revoked.body.prefix }, account.apiKey)).status).toBe(200)
    expectPlainInvalid(await validate(revoked.body.api_key))

    const old = await service.api.post('/api/keys', { label: 'old' }, account.apiKey)
    const rotated = await service.api.post('/api/keys/rotate', { key_prefix: old.body.prefix }, account.apiKey)
    expect(rotated.status).toBe(201)
    expectPlainInvalid(await validate(old.body.api_key))
    expect((await validate(rotated.body.api_key)).status).toBe(200)
  })

  test('an expired key, once the clock passes its expiry', async () => {
    const created = await service.api.post('/api/keys', { label: 'one day', expires_in_days: 1 }, account.apiKey)
    expect(created.status).toBe(201)
    expect((await validate(created.body.api_key)).status).toBe(200)
    now += DAY_MS + 1000
    expectPlainInvalid(await validate(created.body.api_key))
    // The account's other key is still valid.
    expect((await validate(account.apiKey)).status).toBe(200)
  })

  test('a key whose account reset its password', async () => {
    const victim = await service.api.register()
    const forgot = await service.api.post('/api/forgot-password', { email: victim.email })
    expect(forgot.status).toBe(202)
    await waitUntil(() => mails.some((m) => m.to === victim.email), 'the reset mail')
    const token = mails.find((m) => m.to === victim.email)!.text.match(/reset-password\?token=([\w-]+)/)![1]!
    const reset = await service.api.post('/api/reset-password', { token, new_password: 'another good password' })
    expect(reset.status).toBe(200)
    expectPlainInvalid(await validate(victim.apiKey))
    expect((await validate(reset.body.api_key)).status).toBe(200)
  })
})

describe('a body without a string api_key: 400 invalid_request (structured)', () => {
  test('api_key missing, or of another type', async () => {
    expectApiError(await service.api.post('/api/validate-key', {}), 400, 'invalid_request', 'api_key')
    expectApiError(await service.api.post('/api/validate-key', { key: account.apiKey }), 400, 'invalid_request', 'api_key')
    expectApiError(await service.api.post('/api/validate-key', { apiKey: account.apiKey }), 400, 'invalid_request', 'api_key')
    for (const value of [42, 0, null, true, false, [account.apiKey], [], { key: account.apiKey }]) {
      expectApiError(await validate(value), 400, 'invalid_request', 'api_key')
    }
  })

  test('a body that is not an object', async () => {
    for (const body of [JSON.stringify([{ api_key: account.apiKey }]), JSON.stringify(account.apiKey), '42', 'null', 'true', '[]']) {
      expectApiError(await raw(body), 400, 'invalid_request')
    }
  })

  test('malformed JSON, an empty body, no body', async () => {
    expectApiError(await raw('{"api_key": "alt_'), 400, 'invalid_request')
    expectApiError(await raw("{'api_key': 'x'}"), 400, 'invalid_request')
    expectApiError(await raw(`api_key=${account.apiKey}`, 'application/x-www-form-urlencoded'), 415, 'unsupported_media_type')
    expectApiError(await raw(''), 400, 'invalid_request')
    expectApiError(await service.api.request('POST', '/api/validate-key'), 400, 'invalid_request')
  })

  test('other methods are 404 not_found', async () => {
    expectApiError(await service.api.get('/api/validate-key'), 404, 'not_found')
    expectApiError(await service.api.get(`/api/validate-key?api_key=${account.apiKey}`), 404, 'not_found')
  })
})
