import { describe, expect, test } from 'bun:test'
import type { SmtpCapture } from '../support/smtp'
import { serviceForFile, uniqueEmail, VALID_PASSWORD, type TestService } from '../support/service'

let service: TestService
let smtp: SmtpCapture
serviceForFile({ env: { ALTTEXT_RATE_LIMITS: 'off' }, smtp: true }, (started) => ({ service, smtp } = started))

describe('register', () => {
  test('creates an account and returns its first key once, with the decided fields', async () => {
    const email = uniqueEmail('reg')
    const res = await service.api.post('/api/register', { email: `  ${email.toUpperCase()} `, password: VALID_PASSWORD })
    expect(res.status).toBe(201)
    expect(res.body).toEqual({
      api_key: expect.stringMatching(/^alt_[0-9a-f]{64}$/),
      prefix: res.body.api_key.slice(0, 12),
      email,
      plan: 'free',
      credits_total: 50,
      credits_remaining: 50,
      message: expect.stringContaining('only once'),
    })
    expect(res.body.prefix).toMatch(/^alt_[0-9a-f]{8}$/)
    // The key works at once.
    const usage = await service.api.get('/api/usage', res.body.api_key)
    expect(usage.status).toBe(200)
  })
})

describe('login', () => {
  test('returns account, credits and active key prefixes, never a full key', async () => {
    const account = await service.api.register()
    const res = await service.api.post('/api/login', { email: account.email.toUpperCase(), password: account.password })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      email: account.email,
      plan: 'free',
      credits: { total: 50, used: 0, remaining: 50 },
      keys: [{ prefix: account.prefix, label: null, created_at: expect.any(String), expires_at: null, last_used_at: null }],
    })
    expect(res.text).not.toContain(account.apiKey)
    expect(res.text).not.toMatch(/alt_[0-9a-f]{64}/)
    expect(new Date(res.body.keys[0].created_at).toISOString()).toBe(res.body.keys[0].created_at)
  })
})

describe('forgot and reset password', () => {
  test('mails a link and a token; reset revokes every key and issues one new key', async () => {
    const account = await service.api.register()
    const second = await service.api.post('/api/keys', { label: 'second' }, account.apiKey)
    expect(second.status).toBe(201)

    const forgot = await service.api.post('/api/forgot-password', { email: account.email })
    expect(forgot.status).toBe(202)
    expect(forgot.body).toEqual({ message: expect.any(String) })

    const mail = await smtp.waitForMail((m) => m.to.includes(account.email))
    expect(mail.from).toContain('alttext@alttext.test')
    const link = mail.text.match(/http:\/\/alttext\.test\/reset-password\?token=([\w-]+)/)
    expect(link).not.toBeNull()
    const token = link![1]!
    expect(token.length).toBeGreaterThanOrEqual(43) // 32 random bytes, base64url
    expect(mail.text).toContain(`\n${token}\n`) // also as the bare token
    // The token never reaches the log when mail is configured.
    expect(service.logText()).not.toContain(token)

    const reset = await service.api.post('/api/reset-password', { token, new_password: 'a brand new password' })
    expect(reset.status).toBe(200)
    expect(reset.body).toEqual({ message: expect.any(String), api_key: expect.stringMatching(/^alt_[0-9a-f]{64}$/), prefix: reset.body.api_key.slice(0, 12) })

    for (const old of [account.apiKey, second.body.api_key]) {
      const res = await service.api.get('/api/usage', old)
      expect(res.status).toBe(401)
      expect(res.body.error.code).toBe('invalid_api_key')
    }
    expect((await service.api.get('/api/usage', reset.body.api_key)).status).toBe(200)

    expect((await service.api.post('/api/login', { email: account.email, password: account.password })).status).toBe(401)
    const login = await service.api.post('/api/login', { email: account.email, password: 'a brand new password' })
    expect(login.status).toBe(200)
    expect(login.body.keys.map((k: { prefix: string }) => k.prefix)).toEqual([reset.body.prefix])
  })

  test('the reset page that mails link to is served', async () => {
    const res = await fetch(`${service.url}/reset-password?token=abc`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/html')
    // The console's page: its script (under /assets/) holds the reset form.
    const src = /<script[^>]+src="(\/assets\/[\w.-]+\.js)"/.exec(await res.text())?.[1]
    expect(src).toBeDefined()
    const script = await fetch(`${service.url}${src}`)
    expect(script.headers.get('content-type')).toContain('javascript')
    expect(await script.text()).toContain('/api/reset-password')
  })
})
