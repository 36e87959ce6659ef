// ALTTEXT_REGISTRATION, the sign-ups it refuses: 403 registration_closed with a message that says how to
// get an account instead; the values it refuses at start-up, naming the variable; and the verification
// links that do not work (unknown, used, replaced, expired) and a resend asked for too soon.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ConfigError, loadConfig } from '../../src/config'
import { expectApiError } from '../support/assertions'
import { runCommand } from '../support/process'
import { CHEAP_PASSWORDS } from '../support/session'
import { serviceForFile, startTestService, type TestService, uniqueEmail, VALID_PASSWORD } from '../support/service'
import type { SmtpCapture } from '../support/smtp'
import { verificationToken } from './support'

let closed: TestService
let domains: TestService
beforeAll(async () => {
  ;[closed, domains] = await Promise.all([
    startTestService({ env: { ALTTEXT_RATE_LIMITS: 'off', ALTTEXT_REGISTRATION: 'closed' } }),
    startTestService({ env: { ALTTEXT_RATE_LIMITS: 'off', ALTTEXT_REGISTRATION: 'domains:example.org,example.net' } }),
  ])
})
afterAll(async () => {
  await Promise.all([closed?.stop(), domains?.stop()])
})

const register = (service: TestService, email: string) => service.api.post('/api/register', { email, password: VALID_PASSWORD })

describe('refused sign-ups', () => {
  test('closed: 403 registration_closed, saying to ask the operator, with its docs link', async () => {
    const res = await register(closed, uniqueEmail())
    expect(res.status).toBe(403)
    expect(res.body).toEqual({
      error: {
        code: 'registration_closed',
        message: 'sign-up is closed on this service: ask the operator of this service for an account (they make one with alttext admin accounts create)',
        docs: 'http://alttext.test/docs/errors#registration_closed',
      },
    })
  })

  test('domains: another domain gets 403 naming the allowed ones', async () => {
    const res = await register(domains, `dev-${Date.now()}@example.com`)
    expect(res.status).toBe(403)
    expect(res.body.error.code).toBe('registration_closed')
    expect(res.body.error.message).toBe(
      'sign-up is open only to email addresses at example.org or example.net: use one of those, or ask the operator of this service for an account (they make one with alttext admin accounts create)',
    )
  })

  test('domains: a subdomain is not its parent, and a look-alike is not the domain', async () => {
    for (const domain of ['mail.example.org', 'example.org.evil.test', 'notexample.org', 'example.organic', 'xample.org']) {
      const res = await register(domains, `dev-${Date.now()}@${domain}`)
      expect({ domain, status: res.status, code: res.body.error?.code }).toEqual({ domain, status: 403, code: 'registration_closed' })
    }
  })

  test('a malformed body is still 400 invalid_request, not 403', async () => {
    const res = await closed.api.post('/api/register', { email: 'not-an-email', password: VALID_PASSWORD })
    expect(res.status).toBe(400)
    expect(res.body.error.code).toBe('invalid_request')
  })
})

describe('bad values stop start-up, naming the variable', () => {
  const cases: [string, string][] = [
    ['sometimes', 'must be open, closed or domains:a.org,b.org, got "sometimes"'],
    ['domains:', 'domains: needs at least one domain'],
    ['domains: , ', 'domains: needs at least one domain'],
    ['domains:*.example.org', 'domains match exactly; list each subdomain on its own'],
    ['domains:example', '"example" is not a domain name'],
    ['domains:exa mple.org', '"exa mple.org" is not a domain name'],
    ['domains:https://example.org', '"https://example.org" is not a domain name'],
  ]
  for (const [value, message] of cases) {
    test(`ALTTEXT_REGISTRATION=${value}`, () => {
      let error: unknown
      try {
        loadConfig({ ALTTEXT_REGISTRATION: value })
      } catch (caught) {
        error = caught
      }
      expect(error).toBeInstanceOf(ConfigError)
      expect((error as ConfigError).message).toStartWith('ALTTEXT_REGISTRATION: ')
      expect((error as ConfigError).message).toContain(message)
    })
  }

  test('the service exits 2 with the message', async () => {
    const result = await runCommand(['serve'], { ALTTEXT_REGISTRATION: 'invite-only', PORT: '0' })
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('alttext: bad configuration: ALTTEXT_REGISTRATION: must be open, closed or domains:a.org,b.org')
  })
})

describe('ALTTEXT_VERIFY_EMAIL', () => {
  test('a value other than on or off stops start-up, naming the variable', () => {
    expect(() => loadConfig({ ALTTEXT_VERIFY_EMAIL: 'sometimes' })).toThrow('ALTTEXT_VERIFY_EMAIL: must be "on" or "off", got "sometimes"')
  })

  test('off cannot lift the proof a domains: policy needs', () => {
    expect(() => loadConfig({ ALTTEXT_VERIFY_EMAIL: 'off', ALTTEXT_REGISTRATION: 'domains:example.org' })).toThrow(
      'ALTTEXT_VERIFY_EMAIL: cannot be off while ALTTEXT_REGISTRATION is domains:',
    )
  })

  test('unset: on under domains:, off when open', () => {
    expect(loadConfig({ ALTTEXT_REGISTRATION: 'domains:example.org' }).verifyEmail).toBe(true)
    expect(loadConfig({}).verifyEmail).toBe(false)
    expect(loadConfig({ ALTTEXT_VERIFY_EMAIL: 'ON' }).verifyEmail).toBe(true)
  })
})

describe('verification links that do not work', () => {
  let now = Date.UTC(2026, 2, 15, 12, 0, 0)
  let service: TestService
  let smtp: SmtpCapture
  serviceForFile(
    { env: { ALTTEXT_RATE_LIMITS: 'off', ALTTEXT_VERIFY_EMAIL: 'on' }, overrides: { clock: () => now, passwords: CHEAP_PASSWORDS }, smtp: true },
    (started) => ({ service, smtp } = started),
  )

  test('an unknown token, or a used one, is 400 invalid_token', async () => {
    expectApiError(await service.api.post('/api/verify-email', { token: 'x'.repeat(43) }), 400, 'invalid_token')
    const account = await service.api.register()
    const token = await verificationToken(smtp, account.email)
    expect((await service.api.post('/api/verify-email', { token })).status).toBe(200)
    expectApiError(await service.api.post('/api/verify-email', { token }), 400, 'invalid_token')
  })

  test('a link older than 24 hours is 400 invalid_token, and the account stays unverified until a new one', async () => {
    const account = await service.api.register()
    const token = await verificationToken(smtp, account.email)
    now += 24 * 3_600_000
    expectApiError(await service.api.post('/api/verify-email', { token }), 400, 'invalid_token')
    expectApiError(await service.api.get('/api/usage', account.apiKey), 403, 'email_not_verified')
    expect((await service.api.post('/api/verify-email/resend', {}, account.apiKey)).status).toBe(202)
    const fresh = await verificationToken(smtp, account.email, 2)
    expect((await service.api.post('/api/verify-email', { token: fresh })).status).toBe(200)
  })

  test('a body without a token is 400 invalid_request naming it', async () => {
    for (const body of [{}, { token: '' }, { token: 42 }, { token: 'x'.repeat(513) }])
      expectApiError(await service.api.post('/api/verify-email', body), 400, 'invalid_request', 'token')
  })

  test('a second resend within a minute is 429 rate_limited with Retry-After, and mails nothing', async () => {
    const account = await service.api.register()
    await verificationToken(smtp, account.email)
    const mailed = () => smtp.messages.filter((m) => m.to.includes(account.email)).length
    // The sign-up's own mail counts: the first resend may come a minute after it.
    now += 30_000
    expectApiError(await service.api.post('/api/verify-email/resend', {}, account.apiKey), 429, 'rate_limited')
    now += 30_000
    const first = await service.api.post('/api/verify-email/resend', {}, account.apiKey)
    expect(first.status).toBe(202)
    now += 10_000
    const second = await service.api.post('/api/verify-email/resend', {}, account.apiKey)
    expectApiError(second, 429, 'rate_limited')
    expect(second.headers.get('retry-after')).toBe('50')
    await smtp.waitForMail(() => mailed() === 2)
    now += 50_000
    expect((await service.api.post('/api/verify-email/resend', {}, account.apiKey)).status).toBe(202)
  })

  test('a resend for an account already verified says so and mails nothing', async () => {
    const account = await service.api.register()
    const token = await verificationToken(smtp, account.email)
    expect((await service.api.post('/api/verify-email', { token })).status).toBe(200)
    const res = await service.api.post('/api/verify-email/resend', {}, account.apiKey)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ message: 'Your email address is already confirmed.' })
  })
})
