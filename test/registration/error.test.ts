// ALTTEXT_REGISTRATION, the sign-ups it refuses: 403 registration_closed with a message that says how to
// get an account instead; and the values it refuses at start-up, naming the variable.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ConfigError, loadConfig } from '../../src/config'
import { runCommand } from '../support/process'
import { startTestService, type TestService, uniqueEmail, VALID_PASSWORD } from '../support/service'

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
