// CORS never lends the session: no answer allows credentials, a listed origin's request with the cookie
// is treated as having none (and a state change is refused), and preflights are rate limited like any request.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { expectApiError } from '../support/assertions'
import { CHEAP_PASSWORDS, signIn } from '../support/session'
import { type RegisteredAccount, startTestService, type TestService } from '../support/service'

const CMS = 'https://cms.example.org'

let service: TestService
let account: RegisteredAccount
let cookie: string

beforeAll(async () => {
  service = await startTestService({ env: { ALTTEXT_CORS_ORIGINS: CMS }, overrides: { passwords: CHEAP_PASSWORDS } })
  account = await service.api.register()
  cookie = (await signIn(service, account.email, account.password)).cookie
})
afterAll(async () => {
  await service.stop()
})

describe('no credentials, ever', () => {
  test('no answer carries Access-Control-Allow-Credentials: answers, errors, preflights, sign-in', async () => {
    const responses = [
      await service.api.request('GET', '/api/usage', { key: account.apiKey, headers: { origin: CMS } }),
      await service.api.request('GET', '/api/usage', { headers: { origin: CMS, cookie } }),
      await service.api.request('OPTIONS', '/api/keys', {
        headers: { origin: CMS, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, cookie' },
      }),
      await service.api.request('POST', '/api/session', { body: { email: account.email, password: account.password }, headers: { origin: CMS } }),
      await service.api.request('GET', '/api/session', { headers: { origin: CMS, cookie } }),
    ]
    for (const res of responses) expect(res.headers.get('access-control-allow-credentials')).toBeNull()
    // The preflight does not offer the cookie header either.
    expect(responses[2]!.headers.get('access-control-allow-headers')).not.toContain('cookie')
  })

  test("a listed origin's page with the visitor's cookie: reads are as if there were no cookie, changes are refused", async () => {
    expectApiError(await service.api.request('GET', '/api/keys', { headers: { origin: CMS, cookie } }), 401, 'missing_api_key')
    expectApiError(await service.api.request('GET', '/api/session', { headers: { origin: CMS, cookie } }), 401, 'invalid_session')
    expectApiError(await service.api.request('POST', '/api/keys', { body: {}, headers: { origin: CMS, cookie } }), 403, 'cross_site_request')
    // Signing in from the listed origin is refused too: no cookie is set for it.
    const signIn = await service.api.request('POST', '/api/session', { body: { email: account.email, password: account.password }, headers: { origin: CMS } })
    expectApiError(signIn, 403, 'cross_site_request')
    expect(signIn.headers.get('set-cookie')).toBeNull()
    // With its key, the same page works.
    expect((await service.api.request('GET', '/api/keys', { key: account.apiKey, headers: { origin: CMS, cookie } })).status).toBe(200)
  })
})

describe('preflights are limited like any request', () => {
  test('the 61st preflight within a minute from one address is 429', async () => {
    const limited = await startTestService({ env: { ALTTEXT_CORS_ORIGINS: CMS }, overrides: { passwords: CHEAP_PASSWORDS } })
    try {
      const send = () => limited.api.request('OPTIONS', '/api/alt-text', { headers: { origin: CMS, 'access-control-request-method': 'POST' } })
      for (let i = 0; i < 60; i++) expect((await send()).status).toBe(204)
      const refused = await send()
      expectApiError(refused, 429, 'rate_limited')
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
      // The refusal is readable by the listed origin, so its page can back off.
      expect(refused.headers.get('access-control-allow-origin')).toBe(CMS)
    } finally {
      await limited.stop()
    }
  })
})
