// ALTTEXT_REGISTRATION cannot be talked round: a refused sign-up creates nothing and tells nothing about
// which emails have accounts; addresses crafted to look like an allowed domain are refused; an outsider
// who registers someone else's address gets an account that can do nothing, and loses it to the owner.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { adminOf } from '../admin/support'
import { expectApiError } from '../support/assertions'
import { CHEAP_PASSWORDS, signIn, withSession } from '../support/session'
import { serviceForFile, startTestService, type TestService, uniqueEmail, VALID_PASSWORD } from '../support/service'
import type { SmtpCapture } from '../support/smtp'
import { verificationToken } from './support'

let closed: TestService
let domains: TestService
beforeAll(async () => {
  ;[closed, domains] = await Promise.all([
    startTestService({ env: { ALTTEXT_RATE_LIMITS: 'off', ALTTEXT_REGISTRATION: 'closed' } }),
    startTestService({ env: { ALTTEXT_RATE_LIMITS: 'off', ALTTEXT_REGISTRATION: 'domains:example.org' } }),
  ])
})
afterAll(async () => {
  await Promise.all([closed?.stop(), domains?.stop()])
})

/** Rows of a table, on either engine. */
const count = async (service: TestService, table: string) => (await service.query<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))[0]!.n
const accounts = (service: TestService) => count(service, 'accounts')

describe('a refused sign-up', () => {
  test('creates no account and no key', async () => {
    const email = uniqueEmail()
    const before = await accounts(closed)
    expect((await closed.api.post('/api/register', { email, password: VALID_PASSWORD })).status).toBe(403)
    expect(await accounts(closed)).toBe(before)
    expect((await closed.api.post('/api/login', { email, password: VALID_PASSWORD })).status).toBe(401)
  })

  test('answers the same whether or not the email has an account (no email_taken hint)', async () => {
    const member = uniqueEmail('member')
    expect((await adminOf(closed, { ALTTEXT_REGISTRATION: 'closed' })('accounts', 'create', member)).code).toBe(0)
    const taken = await closed.api.post('/api/register', { email: member, password: VALID_PASSWORD })
    const fresh = await closed.api.post('/api/register', { email: uniqueEmail(), password: VALID_PASSWORD })
    expect(taken.status).toBe(403)
    expect(taken.body).toEqual(fresh.body)
  })
})

describe('addresses made to look allowed', () => {
  const crafted = [
    'dev@example.org@evil.test',
    'dev@evil.test?@example.org',
    '"dev@example.org"@evil.test',
    'dev@evil.test#@example.org',
    'dev%example.org@evil.test',
    'dev@example.org.',
    'dev@еxample.org', // a Cyrillic "е"
  ]
  for (const email of crafted) {
    test(JSON.stringify(email), async () => {
      const before = await accounts(domains)
      const res = await domains.api.post('/api/register', { email, password: VALID_PASSWORD })
      expect([400, 403]).toContain(res.status)
      expect(await accounts(domains)).toBe(before)
    })
  }
})

describe('an outsider who registers an address of the domain', () => {
  let service: TestService
  let smtp: SmtpCapture
  serviceForFile(
    { env: { ALTTEXT_RATE_LIMITS: 'off', ALTTEXT_REGISTRATION: 'domains:example.org' }, overrides: { passwords: CHEAP_PASSWORDS }, smtp: true },
    (started) => ({ service, smtp } = started),
  )

  test('gets a key and a session that do nothing: 403 email_not_verified everywhere, checked before the body, nothing charged', async () => {
    const outsider = await service.api.register(`ceo-${Date.now()}@example.org`)
    const { cookie } = await signIn(service, outsider.email, outsider.password)
    const calls: [string, string, unknown?][] = [
      ['GET', '/api/usage'],
      ['GET', '/api/usage/history'],
      ['GET', '/api/keys'],
      ['POST', '/api/keys', {}],
      ['GET', `/api/keys/${outsider.prefix}`],
      ['POST', '/api/keys/revoke', { key_prefix: outsider.prefix }],
      ['POST', '/api/keys/rotate', { key_prefix: outsider.prefix }],
      ['GET', '/api/history'],
      ['DELETE', '/api/history'],
      ['POST', '/api/alt-text', { image_url: 'not even a url' }],
      ['POST', '/api/batches', { nonsense: true }],
      ['GET', '/api/batches'],
      ['POST', '/api/session/end-all'],
      ['GET', '/api/webhook-secret'],
    ]
    for (const [method, path, body] of calls) {
      const byKey = await service.api.request(method, path, { body, key: outsider.apiKey })
      expect({ path, status: byKey.status, code: byKey.body?.error?.code }).toEqual({ path, status: 403, code: 'email_not_verified' })
      const bySession = await withSession(service, cookie, method, path, body)
      expect({ path, status: bySession.status, code: bySession.body?.error?.code }).toEqual({ path, status: 403, code: 'email_not_verified' })
    }
    expectApiError(
      await withSession(service, cookie, 'POST', '/api/account/password', { current_password: VALID_PASSWORD, new_password: 'x'.repeat(12) }),
      403,
      'email_not_verified',
    )
    expect((await service.api.post('/api/validate-key', { api_key: outsider.apiKey })).body).toEqual({ error: 'email not verified' })
    expect(await count(service, 'credit_usage')).toBe(0)
    // Nor is a refused call counted as a call of the key.
    expect(await count(service, 'api_calls')).toBe(0)
  })

  test("opening the mailed link (what a mail scanner does) verifies nothing: only the page's POST does", async () => {
    const outsider = await service.api.register(`scanned-${Date.now()}@example.org`)
    const token = await verificationToken(smtp, outsider.email)
    const page = await service.api.request('GET', `/verify-email?token=${token}`)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toContain('text/html')
    expectApiError(await service.api.get('/api/usage', outsider.apiKey), 403, 'email_not_verified')
  })

  test("the owner takes the address back: a password reset proves the mailbox, verifies it and ends the outsider's key and session", async () => {
    const email = `owner-${Date.now()}@example.org`
    const outsider = await service.api.register(email, 'the outsider password')
    const { cookie } = await signIn(service, email, 'the outsider password')
    expect((await service.api.post('/api/forgot-password', { email })).status).toBe(202)
    const mail = await smtp.waitForMail((m) => m.to.includes(email) && m.subject.includes('Reset'))
    const resetToken = /reset-password\?token=([\w-]+)/.exec(mail.text)![1]!
    const reset = await service.api.post('/api/reset-password', { token: resetToken, new_password: 'the owner password' })
    expect(reset.status).toBe(200)
    expect((await service.api.get('/api/usage', reset.body.api_key)).status).toBe(200)
    expectApiError(await service.api.get('/api/usage', outsider.apiKey), 401, 'invalid_api_key')
    expectApiError(await withSession(service, cookie, 'GET', '/api/keys'), 401, 'invalid_session')
  })

  test('the token is stored only as a hash and never logged', async () => {
    const outsider = await service.api.register(`hashed-${Date.now()}@example.org`)
    const token = await verificationToken(smtp, outsider.email)
    const stored = await service.query<{ token_hash: string }>('SELECT token_hash FROM email_verifications')
    expect(stored.length).toBeGreaterThan(0)
    expect(stored.map((r) => r.token_hash)).not.toContain(token)
    expect(service.logText()).not.toContain(token)
    expect((await service.api.post('/api/verify-email', { token })).status).toBe(200)
    expect(service.logText()).not.toContain(token)
  })
})
