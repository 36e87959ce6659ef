// Browser sessions, the refusals: wrong credentials, bad bodies, missing or unusable cookies, which of key and
// cookie decides, and the sign-in rate limit.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { expectApiError } from '../support/assertions'
import { CHEAP_PASSWORDS, fromConsole, signIn } from '../support/session'
import { type RegisteredAccount, startTestService, type TestService } from '../support/service'

let service: TestService
let account: RegisteredAccount

beforeAll(async () => {
  service = await startTestService({ env: { ALTTEXT_RATE_LIMITS: 'off' }, overrides: { passwords: CHEAP_PASSWORDS } })
  account = await service.api.register()
})
afterAll(async () => {
  await service.stop()
})

const get = (path: string, headers: Record<string, string> = {}) => service.api.request('GET', path, { headers })

describe('POST /api/session refusals', () => {
  test('a wrong password and an unknown email are the same 401 invalid_credentials, with no cookie', async () => {
    for (const body of [
      { email: account.email, password: 'not the password' },
      { email: 'nobody-at-all@example.com', password: account.password },
    ]) {
      const res = await service.api.post('/api/session', body)
      expectApiError(res, 401, 'invalid_credentials')
      expect(res.body.error.message).toBe('email or password is wrong')
      expect(res.headers.get('set-cookie')).toBeNull()
    }
  })

  test('a missing or malformed field is 400 invalid_request naming it', async () => {
    expectApiError(await service.api.post('/api/session', { password: account.password }), 400, 'invalid_request', 'email')
    expectApiError(await service.api.post('/api/session', { email: account.email }), 400, 'invalid_request', 'password')
    expectApiError(await service.api.post('/api/session', { email: 'not-an-email', password: account.password }), 400, 'invalid_request', 'email')
  })

  test('a body not declared as JSON is 415 (a cross-site form cannot sign anyone in)', async () => {
    const res = await service.api.request('POST', '/api/session', {
      rawBody: `email=${encodeURIComponent(account.email)}&password=x`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    expectApiError(res, 415, 'unsupported_media_type')
  })
})

describe('GET /api/session refusals', () => {
  test('no cookie, an unknown token or a malformed one: 401 invalid_session', async () => {
    expectApiError(await get('/api/session'), 401, 'invalid_session')
    expectApiError(await get('/api/session', { cookie: `alttext_session=${'A'.repeat(43)}` }), 401, 'invalid_session')
    expectApiError(await get('/api/session', { cookie: 'alttext_session=short' }), 401, 'invalid_session')
    expectApiError(await get('/api/session', { cookie: 'other=1' }), 401, 'invalid_session')
  })

  test('an API key does not answer "am I signed in"', async () => {
    expectApiError(await service.api.get('/api/session', account.apiKey), 401, 'invalid_session')
  })
})

describe('key or cookie on the keyed routes', () => {
  test('neither: 401 missing_api_key saying to send a key or sign in', async () => {
    const res = await get('/api/keys')
    expectApiError(res, 401, 'missing_api_key')
    expect(res.body.error.message).toBe('send your API key in the X-API-Key header or sign in')
  })

  test('an unknown or expired cookie and no key: 401 invalid_session', async () => {
    expectApiError(await get('/api/keys', { cookie: `alttext_session=${'B'.repeat(43)}` }), 401, 'invalid_session')
    expectApiError(await get('/api/usage', { cookie: 'alttext_session=' }), 401, 'invalid_session')
  })

  test('an invalid key with a valid cookie: the key wins, 401 invalid_api_key', async () => {
    const { cookie } = await signIn(service, account.email, account.password)
    expectApiError(await service.api.request('GET', '/api/keys', { key: `alt_${'0'.repeat(64)}`, headers: { cookie } }), 401, 'invalid_api_key')
  })

  test('a valid key with a bad cookie: the key wins, 200', async () => {
    const res = await service.api.request('GET', '/api/keys', { key: account.apiKey, headers: { cookie: 'alttext_session=nonsense' } })
    expect(res.status).toBe(200)
  })

  test('an empty X-API-Key header counts as no key: the cookie is used', async () => {
    const { cookie } = await signIn(service, account.email, account.password)
    expect((await service.api.request('GET', '/api/keys', { headers: { cookie, 'x-api-key': ' ' } })).status).toBe(200)
  })

  test('a signed-out session before the body is checked: 401, not 400', async () => {
    const { cookie } = await signIn(service, account.email, account.password)
    expect((await service.api.request('DELETE', '/api/session', { headers: fromConsole(cookie) })).status).toBe(204)
    const res = await service.api.request('POST', '/api/keys', { body: { expires_in_days: 'never' }, headers: fromConsole(cookie) })
    expectApiError(res, 401, 'invalid_session')
  })

  test('end-all with neither key nor session: 401 missing_api_key', async () => {
    expectApiError(await service.api.post('/api/session/end-all'), 401, 'missing_api_key')
  })
})

describe('the sign-in rate limit', () => {
  test('POST /api/session shares the sign-in tier: 5 a minute per address, then 429 with Retry-After', async () => {
    const limited = await startTestService({ overrides: { passwords: CHEAP_PASSWORDS } })
    try {
      const body = { email: 'nobody-limited@example.com', password: 'wrong password 1' }
      for (let i = 0; i < 5; i++) {
        const res = await limited.api.post('/api/session', { ...body, email: `nobody-${i}@example.com` })
        expect(res.status).toBe(401)
        expect(res.headers.get('ratelimit-limit')).toBe('5')
      }
      const sixth = await limited.api.post('/api/session', body)
      expectApiError(sixth, 429, 'rate_limited')
      expect(Number(sixth.headers.get('retry-after'))).toBeGreaterThan(0)
    } finally {
      await limited.stop()
    }
  })
})
