// CORS for named origins (ALTTEXT_CORS_ORIGINS): a listed origin's page calls the keyed API and reads the
// answers, errors and rate headers included; preflights are answered without a key; `*` allows any origin.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { expectApiError } from '../support/assertions'
import { CHEAP_PASSWORDS } from '../support/session'
import { type RegisteredAccount, startTestService, type TestService } from '../support/service'

const CMS = 'https://cms.example.org'
const SHOP = 'http://shop.example.net:8080'
const EXPOSED = 'X-Request-Id, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After'

let service: TestService
let account: RegisteredAccount

beforeAll(async () => {
  service = await startTestService({ env: { ALTTEXT_CORS_ORIGINS: ` ${CMS} , ${SHOP}/ ` }, overrides: { passwords: CHEAP_PASSWORDS } })
  account = await service.api.register()
})
afterAll(async () => {
  await service.stop()
})

const preflight = (path: string, origin: string, method = 'POST', headers = 'content-type, x-api-key') =>
  service.api.request('OPTIONS', path, { headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers } })

describe('a listed origin', () => {
  test('reads a keyed answer: Access-Control-Allow-Origin is the origin, Vary: Origin, the request id and rate headers exposed', async () => {
    for (const origin of [CMS, SHOP]) {
      const res = await service.api.request('GET', '/api/usage', { key: account.apiKey, headers: { origin } })
      expect(res.status).toBe(200)
      expect(res.headers.get('access-control-allow-origin')).toBe(origin)
      expect(res.headers.get('vary')).toBe('Origin')
      expect(res.headers.get('access-control-expose-headers')).toBe(EXPOSED)
      expect(res.headers.get('access-control-allow-credentials')).toBeNull()
    }
  })

  test('reads errors too (a 401, a 404, a 400), so its page can show what went wrong', async () => {
    for (const res of [
      await service.api.request('GET', '/api/keys', { headers: { origin: CMS } }),
      await service.api.request('GET', '/api/nothing-here', { headers: { origin: CMS } }),
      await service.api.request('POST', '/api/keys', { body: { expires_in_days: 0 }, key: account.apiKey, headers: { origin: CMS } }),
    ]) {
      expect(res.status).toBeGreaterThanOrEqual(400)
      expect(res.headers.get('access-control-allow-origin')).toBe(CMS)
      expect(res.headers.get('access-control-expose-headers')).toBe(EXPOSED)
    }
  })

  test('generates with a key from its page: POST /api/keys with the key works cross-origin', async () => {
    const res = await service.api.request('POST', '/api/keys', { body: { label: 'cms' }, key: account.apiKey, headers: { origin: CMS } })
    expect(res.status).toBe(201)
    expect(res.headers.get('access-control-allow-origin')).toBe(CMS)
  })

  test('a preflight needs no key: 204 with the methods, headers and max age, and counts against the rate limit', async () => {
    const res = await preflight('/api/alt-text', CMS, 'POST', 'content-type, x-api-key, idempotency-key')
    expect(res.status).toBe(204)
    expect(res.text).toBe('')
    expect(res.headers.get('access-control-allow-origin')).toBe(CMS)
    expect(res.headers.get('access-control-allow-methods')).toBe('GET, POST, DELETE')
    expect(res.headers.get('access-control-allow-headers')).toBe('content-type, x-api-key, idempotency-key')
    expect(res.headers.get('access-control-max-age')).toBe('600')
    expect(res.headers.get('vary')).toBe('Origin')
    expect(res.headers.get('access-control-allow-credentials')).toBeNull()
    expect(res.headers.get('ratelimit-limit')).toBe('60')
    expect(res.headers.get('x-request-id')).toBeTruthy()
  })

  test('preflights of every API path and method the API uses are answered alike', async () => {
    for (const [path, method] of [
      ['/api/keys', 'GET'],
      ['/api/keys/alt_00000000', 'GET'],
      ['/api/history', 'DELETE'],
      ['/api/usage', 'GET'],
    ] as const) {
      const res = await preflight(path, SHOP, method)
      expect(res.status).toBe(204)
      expect(res.headers.get('access-control-allow-origin')).toBe(SHOP)
      expect(res.headers.get('access-control-allow-methods')).toBe('GET, POST, DELETE')
    }
  })
})

describe('ALTTEXT_CORS_ORIGINS=*', () => {
  test('any origin is allowed: its own origin comes back, never with credentials', async () => {
    const any = await startTestService({ env: { ALTTEXT_CORS_ORIGINS: '*' }, overrides: { passwords: CHEAP_PASSWORDS } })
    try {
      const mine = await any.api.register()
      for (const origin of ['https://anywhere.example', 'http://localhost:5173']) {
        const res = await any.api.request('GET', '/api/usage', { key: mine.apiKey, headers: { origin } })
        expect(res.status).toBe(200)
        expect(res.headers.get('access-control-allow-origin')).toBe(origin)
        expect(res.headers.get('access-control-allow-credentials')).toBeNull()
        const pre = await any.api.request('OPTIONS', '/api/alt-text', { headers: { origin, 'access-control-request-method': 'POST' } })
        expect(pre.status).toBe(204)
        expect(pre.headers.get('access-control-allow-origin')).toBe(origin)
        expect(pre.headers.get('access-control-allow-methods')).toBe('GET, POST, DELETE')
      }
    } finally {
      await any.stop()
    }
  })
})

describe('requests without an Origin', () => {
  test('programs (curl) get no CORS headers but Vary: Origin, and are otherwise unchanged', async () => {
    const res = await service.api.get('/api/usage', account.apiKey)
    expect(res.status).toBe(200)
    expect(res.headers.get('access-control-allow-origin')).toBeNull()
    expect(res.headers.get('vary')).toBe('Origin')
    expectApiError(await service.api.get('/api/usage'), 401, 'missing_api_key')
  })
})
