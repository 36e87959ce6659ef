// The operator log never holds secrets (keys, passwords, reset tokens) nor request bodies, and a client
// cannot forge log lines through the request id.
import { describe, expect, test } from 'bun:test'
import type { SmtpCapture } from '../support/smtp'
import { serviceForFile, uniqueEmail, type TestService } from '../support/service'

let service: TestService
let smtp: SmtpCapture
serviceForFile({ env: { ALTTEXT_RATE_LIMITS: 'off' }, smtp: true }, (started) => ({ service, smtp } = started))

const FULL_KEY = /alt_[0-9a-f]{64}/

describe('secrets never reach the log', () => {
  test('register, login, key create/rotate/revoke, validate, forgot and reset: no key, password or token is logged', async () => {
    const email = uniqueEmail('logsec')
    const password = 'Pa55word-canary-7c1e'
    const newPassword = 'N3w-password-canary-92ab'
    const wrongPassword = 'Wr0ng-password-canary-31f0'
    const label = 'label-canary-e4d1b7'
    const secrets: string[] = [password, newPassword, wrongPassword]

    const reg = await service.api.post('/api/register', { email, password })
    expect(reg.status).toBe(201)
    secrets.push(reg.body.api_key)

    expect((await service.api.post('/api/login', { email, password })).status).toBe(200)
    expect((await service.api.post('/api/login', { email, password: wrongPassword })).status).toBe(401)

    const created = await service.api.post('/api/keys', { label, expires_in_days: 30 }, reg.body.api_key)
    expect(created.status).toBe(201)
    secrets.push(created.body.api_key)

    const rotated = await service.api.post('/api/keys/rotate', { key_prefix: created.body.prefix }, reg.body.api_key)
    expect(rotated.status).toBe(201)
    secrets.push(rotated.body.api_key)

    expect((await service.api.post('/api/validate-key', { api_key: reg.body.api_key })).status).toBe(200)
    // A rejected key (revoked by the rotation) and an unknown well-formed key are not logged either.
    expect((await service.api.post('/api/validate-key', { api_key: created.body.api_key })).status).toBe(401)
    const unknownKey = `alt_${'c0ffee12'.repeat(8)}`
    secrets.push(unknownKey)
    expect((await service.api.get('/api/usage', unknownKey)).status).toBe(401)
    expect((await service.api.post('/api/validate-key', { api_key: unknownKey })).status).toBe(401)

    // A key sent in the query string (a client mistake) does not reach the log through the path.
    expect((await service.api.get(`/api/usage?api_key=${rotated.body.api_key}`, rotated.body.api_key)).status).toBe(200)

    expect((await service.api.post('/api/keys/revoke', { key_prefix: rotated.body.prefix }, reg.body.api_key)).status).toBe(200)

    expect((await service.api.post('/api/forgot-password', { email })).status).toBe(202)
    const mail = await smtp.waitForMail((m) => m.to.includes(email))
    const token = mail.text.match(/reset-password\?token=([\w-]+)/)?.[1]
    expect(token).toBeDefined()
    secrets.push(token!)
    const reset = await service.api.post('/api/reset-password', { token, new_password: newPassword })
    expect(reset.status).toBe(200)
    secrets.push(reset.body.api_key)
    // A used token replayed is rejected, and still not logged.
    expect((await service.api.post('/api/reset-password', { token, new_password: newPassword })).status).toBe(400)

    const log = service.logText()
    expect(log.length).toBeGreaterThan(0)
    for (const secret of secrets) expect(log).not.toContain(secret)
    expect(log).not.toMatch(FULL_KEY)
    // The secret part of a key (after its 8-hex prefix) never appears, even in part.
    for (const key of [reg.body.api_key, created.body.api_key, rotated.body.api_key, reset.body.api_key] as string[]) {
      expect(log).not.toContain(key.slice(12, 44))
    }
  })

  test('the request log carries no request bodies', async () => {
    const account = await service.api.register(uniqueEmail('nobody'), 'Body-canary-password-55')
    const label = 'body-canary-label-0b9f3c'
    const res = await service.api.post('/api/keys', { label }, account.apiKey)
    expect(res.status).toBe(201)
    // A rejected body is not echoed into the log either.
    const bad = await service.api.request('POST', '/api/login', {
      rawBody: '{"email": "body-canary-bad@example.com", "password": ',
      headers: { 'content-type': 'application/json' },
    })
    expect(bad.status).toBe(400)

    const log = service.logText()
    expect(log).not.toContain(label)
    expect(log).not.toContain('Body-canary-password-55')
    expect(log).not.toContain('body-canary-bad@example.com')
    for (const line of service.logs.filter((l) => l.msg === 'request')) {
      expect(line).not.toHaveProperty('body')
      expect(line).not.toHaveProperty('headers')
      expect(String(line.path)).not.toContain('?')
    }
  })
})

describe('request ids', () => {
  test('a forged X-Request-Id cannot inject log lines: it is replaced, and the log stays one JSON object per line', async () => {
    const forged = 'x","level":"error","msg":"forged'
    const res = await fetch(`${service.url}/health`, { headers: { 'X-Request-Id': forged } })
    expect(res.status).toBe(200)
    const echoed = res.headers.get('x-request-id')!
    expect(echoed).not.toContain('"')
    expect(echoed).not.toBe(forged)
    const lines = service.logText().split('\n')
    for (const raw of lines) expect(() => JSON.parse(raw)).not.toThrow()
    expect(service.logs.some((l) => l.msg === 'forged')).toBe(false)
  })

  test('an over-long X-Request-Id is not echoed', async () => {
    const long = 'a'.repeat(5000)
    const res = await fetch(`${service.url}/health`, { headers: { 'X-Request-Id': long } })
    expect(res.status).toBe(200)
    expect(res.headers.get('x-request-id')).not.toBe(long)
    expect(service.logText()).not.toContain(long)
  })
})
