// The sign-in budget holds whatever Host a client sends: a missing or malformed Host once put login,
// register and forgot-password in the ordinary 60-a-minute bucket.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { httpRequest, rawRequest } from '../support/raw-http'
import { startTestService, type TestService } from '../support/service'

let service: TestService
const now = Date.UTC(2026, 10, 23, 12)

beforeAll(async () => {
  service = await startTestService({ overrides: { clock: () => now } })
})
afterAll(async () => {
  await service.stop()
})

describe('login through odd Host headers', () => {
  test.each([
    ['no Host (HTTP/1.0)', [] as string[], 'HTTP/1.0'],
    ['an empty Host', ['Host:'], 'HTTP/1.1'],
    ['Host: a@b', ['Host: a@b'], 'HTTP/1.1'],
    ['Host: api', ['Host: api'], 'HTTP/1.1'],
  ])('%s: five attempts, the sixth is 429 with RateLimit-Limit 5', async (_what, headers, version) => {
    service.running.limiter?.clear()
    // An email per case: five failures for one account would start its own slow-down (also a 429).
    const body = JSON.stringify({ email: `nobody-${_what.replace(/[^a-z0-9]+/gi, '-')}@example.com`, password: 'wrong password 1' })
    for (let i = 0; i < 5; i++) {
      const res = await rawRequest(service.url, httpRequest('POST', '/api/login', headers, body, version))
      expect(res.status).toBe(401)
      expect(res.headers['ratelimit-limit']).toBe('5')
    }
    const sixth = await rawRequest(service.url, httpRequest('POST', '/api/login', headers, body, version))
    expect(sixth.status).toBe(429)
    expect(JSON.parse(sixth.body).error.code).toBe('rate_limited')
  })
})
