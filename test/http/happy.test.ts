// Routing inside the framework: any Host a client or a container network may send, path parameters with
// their own rate-limit bucket, and the request context (id, client) on every response.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { httpRequest, rawRequest } from '../support/raw-http'
import { type RegisteredAccount, startTestService, type TestService } from '../support/service'

let service: TestService
let account: RegisteredAccount

beforeAll(async () => {
  service = await startTestService()
  account = await service.api.register()
})
afterAll(async () => {
  await service.stop()
})

describe('short host names', () => {
  // A compose or Kubernetes service is often called `api` or `db`; the framework once routed nothing for them.
  test.each(['api', 'x', 'ab', 'api:3000', 'alttext', 'db:8080'])('Host: %s is routed', async (host) => {
    const res = await rawRequest(service.url, httpRequest('GET', '/health', [`Host: ${host}`]))
    expect(res.status).toBe(200)
    expect(JSON.parse(res.body)).toMatchObject({ status: 'ok' })
  })

  test('a keyed route answers through a short host too', async () => {
    const res = await rawRequest(service.url, httpRequest('GET', '/api/usage', ['Host: api', `X-API-Key: ${account.apiKey}`]))
    expect(res.status).toBe(200)
    expect(JSON.parse(res.body).plan).toBe('free')
  })
})

describe('GET /api/keys/{prefix}', () => {
  test("shows one key's summary", async () => {
    const res = await service.api.get(`/api/keys/${account.prefix}`, account.apiKey)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ prefix: account.prefix, label: null, expires_at: null })
    expect(Object.keys(res.body).sort()).toEqual(['created_at', 'expires_at', 'label', 'last_used_at', 'prefix'])
  })

  test('a path-parameter route has one rate-limit bucket whatever the parameter, apart from GET /api/keys', async () => {
    const first = await service.api.get(`/api/keys/${account.prefix}`, account.apiKey)
    const other = await service.api.get('/api/keys/alt_00000000', account.apiKey)
    const remainingOf = (res: { headers: Headers }) => Number(res.headers.get('ratelimit-remaining'))
    expect(remainingOf(other)).toBe(remainingOf(first) - 1)
    const list = await service.api.get('/api/keys', account.apiKey)
    expect(remainingOf(list)).toBeGreaterThan(remainingOf(other))
  })
})

describe('the router itself, without a server in front', () => {
  // Bun's server routes static and parameter paths natively; Elysia's own path finding serves `app.handle`
  // and every path Bun passes on (404s). Both must agree for short host names.
  test.each(['http://api/health', 'http://x/health', 'http://ab/api/keys/alt_00000000', 'http://api/nope', 'https://x/health'])('%s', async (url) => {
    const res = await service.running.app.handle(new Request(url))
    const expected = url.endsWith('/health') ? 200 : url.endsWith('/nope') ? 404 : 401
    expect(res.status).toBe(expected)
  })
})
