// Accounts, failure paths: validation, duplicates, wrong credentials, forgot/reset edge cases, mail failures.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startSmtpCapture, type SmtpCapture } from '../support/smtp'
import { startTestService, uniqueEmail, VALID_PASSWORD, waitUntil, type ApiResponse, type TestService } from '../support/service'

const DOCS = 'http://alttext.test/docs/errors#'

let service: TestService
let smtp: SmtpCapture
/** Added to the real time; tests move it forward to expire tokens. */
let clockOffset = 0

beforeAll(async () => {
  smtp = await startSmtpCapture()
  service = await startTestService({
    env: { ALTTEXT_SMTP_URL: smtp.url, ALTTEXT_MAIL_FROM: 'alttext@alttext.test', ALTTEXT_RATE_LIMITS: 'off' },
    overrides: { clock: () => Date.now() + clockOffset },
  })
})
afterAll(async () => {
  await service.stop()
  await smtp.stop()
})

function expectError(res: ApiResponse, status: number, code: string): void {
  expect(res.status).toBe(status)
  expect(res.headers.get('content-type')).toContain('application/json')
  expect(res.body).toEqual({ error: { code, message: expect.any(String), docs: DOCS + code } })
}

/** A 400 invalid_request whose message names `field`. */
function expectInvalid(res: ApiResponse, field: string): void {
  expectError(res, 400, 'invalid_request')
  expect(res.body.error.message).toContain(field)
}

/** Asks for a reset token and returns it from the mail that carries it (waits for that very mail). */
async function requestResetToken(email: string): Promise<string> {
  const seen = new Set(smtp.messages)
  const res = await service.api.post('/api/forgot-password', { email })
  expect(res.status).toBe(202)
  const mail = await smtp.waitForMail((m) => m.to.includes(email) && !seen.has(m))
  const match = mail.text.match(/\/reset-password\?token=([\w-]+)/)
  expect(match).not.toBeNull()
  return match![1]!
}

describe('register: validation', () => {
  test('a missing email or password is 400 invalid_request naming the field', async () => {
    expectInvalid(await service.api.post('/api/register', { password: VALID_PASSWORD }), 'email')
    expectInvalid(await service.api.post('/api/register', { email: uniqueEmail('nopw') }), 'password')
    const neither = await service.api.post('/api/register', {})
    expectInvalid(neither, 'email')
    expect(neither.body.error.message).toContain('password')
  })

  test('a malformed email is 400 invalid_request naming email', async () => {
    for (const email of ['not-an-email', 'a@', '@example.com', 'a b@example.com', '', '   ', `${'x'.repeat(250)}@example.com`]) {
      expectInvalid(await service.api.post('/api/register', { email, password: VALID_PASSWORD }), 'email')
    }
  })

  test('passwords of 7 and 129 characters are refused; 8 and 128 are accepted', async () => {
    const short = await service.api.post('/api/register', { email: uniqueEmail('pw7'), password: 'x'.repeat(7) })
    expectInvalid(short, 'password')
    const long = await service.api.post('/api/register', { email: uniqueEmail('pw129'), password: 'y'.repeat(129) })
    expectInvalid(long, 'password')

    const eight = await service.api.post('/api/register', { email: uniqueEmail('pw8'), password: 'z'.repeat(8) })
    expect(eight.status).toBe(201)
    const max = 'w'.repeat(128)
    const email = uniqueEmail('pw128')
    const longest = await service.api.post('/api/register', { email, password: max })
    expect(longest.status).toBe(201)
    // The 128-character password is stored whole, not truncated.
    expect((await service.api.post('/api/login', { email, password: max })).status).toBe(200)
    expect((await service.api.post('/api/login', { email, password: `${max.slice(0, 127)}v` })).status).toBe(401)
  })

  test('wrong types are 400 invalid_request naming the field, never 422 or 500', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ email: 42, password: VALID_PASSWORD }, 'email'],
      [{ email: true, password: VALID_PASSWORD }, 'email'],
      [{ email: null, password: VALID_PASSWORD }, 'email'],
      [{ email: uniqueEmail('t'), password: 12345678 }, 'password'],
      [{ email: uniqueEmail('t'), password: null }, 'password'],
      [{ email: uniqueEmail('t'), password: false }, 'password'],
    ]
    for (const [body, field] of cases) expectInvalid(await service.api.post('/api/register', body), field)
  })

  test('extra nesting is 400 invalid_request naming the field', async () => {
    expectInvalid(await service.api.post('/api/register', { email: { address: uniqueEmail('n') }, password: VALID_PASSWORD }), 'email')
    expectInvalid(await service.api.post('/api/register', { email: [uniqueEmail('n')], password: VALID_PASSWORD }), 'email')
    expectInvalid(await service.api.post('/api/register', { email: uniqueEmail('n'), password: { value: VALID_PASSWORD } }), 'password')
    expectInvalid(await service.api.post('/api/register', { email: uniqueEmail('n'), password: [VALID_PASSWORD] }), 'password')
    // The fields wrapped in an envelope are missing at the top level.
    const wrapped = await service.api.post('/api/register', { account: { email: uniqueEmail('n'), password: VALID_PASSWORD } })
    expectInvalid(wrapped, 'email')
    expect(wrapped.body.error.message).toContain('password')
  })

  test('a refused registration creates no account', async () => {
    const email = uniqueEmail('refused')
    expectInvalid(await service.api.post('/api/register', { email, password: 'short' }), 'password')
    expectError(await service.api.post('/api/login', { email, password: VALID_PASSWORD }), 401, 'invalid_credentials')
    expect((await service.api.post('/api/register', { email, password: VALID_PASSWORD })).status).toBe(201)
  })
})

describe('register: duplicates', () => {
  test('the same email again is 409 email_taken, also with other case and surrounding whitespace', async () => {
    const account = await service.api.register()
    expectError(await service.api.post('/api/register', { email: account.email, password: 'another password 1' }), 409, 'email_taken')
    expectError(await service.api.post('/api/register', { email: account.email.toUpperCase(), password: 'another password 2' }), 409, 'email_taken')
    expectError(await service.api.post('/api/register', { email: `  ${account.email}\t`, password: 'another password 3' }), 409, 'email_taken')
    const mixed = account.email.replace(/^./, (c) => c.toUpperCase())
    expectError(await service.api.post('/api/register', { email: ` ${mixed} `, password: 'another password 4' }), 409, 'email_taken')

    // The refused attempts changed nothing: the first password still signs in, the others do not.
    expect((await service.api.post('/api/login', { email: account.email, password: account.password })).status).toBe(200)
    expectError(await service.api.post('/api/login', { email: account.email, password: 'another password 2' }), 401, 'invalid_credentials')
    // And the original key still works.
    expect((await service.api.get('/api/usage', account.apiKey)).status).toBe(200)
  })

  test('two concurrent registrations of one email: exactly one 201, the other 409 email_taken', async () => {
    const email = uniqueEmail('race')
    const results = await Promise.all([
      service.api.post('/api/register', { email, password: VALID_PASSWORD }),
      service.api.post('/api/register', { email: email.toUpperCase(), password: VALID_PASSWORD }),
    ])
    expect(results.map((r) => r.status).sort()).toEqual([201, 409])
    expectError(results.find((r) => r.status === 409)!, 409, 'email_taken')
  })
})

describe('login failures', () => {
  test('a wrong password and an unknown email give the same 401 invalid_credentials body', async () => {
    const account = await service.api.register()
    const wrongPassword = await service.api.post('/api/login', { email: account.email, password: 'not the password' })
    const unknownEmail = await service.api.post('/api/login', { email: uniqueEmail('ghost'), password: 'not the password' })
    expectError(wrongPassword, 401, 'invalid_credentials')
    expectError(unknownEmail, 401, 'invalid_credentials')
    expect(unknownEmail.text).toBe(wrongPassword.text)
    // Nothing in the body says which part was wrong.
    expect(wrongPassword.body.error.message).not.toMatch(/no (such )?account|not found|unknown|does not exist|not registered/i)
  })

  test('login validates its body like register: 400 invalid_request naming the field', async () => {
    expectInvalid(await service.api.post('/api/login', { password: VALID_PASSWORD }), 'email')
    expectInvalid(await service.api.post('/api/login', { email: uniqueEmail('l') }), 'password')
    expectInvalid(await service.api.post('/api/login', { email: 'nope', password: VALID_PASSWORD }), 'email')
    expectInvalid(await service.api.post('/api/login', { email: uniqueEmail('l'), password: 1234567890 }), 'password')
  })
})

describe('forgot-password', () => {
  test('an unknown email gets the same 202 body as a known one, and no mail is sent for it', async () => {
    const account = await service.api.register()
    const unknown = uniqueEmail('nobody')
    const before = smtp.messages.length
    const rejectedBefore = smtp.rejected.length

    const forUnknown = await service.api.post('/api/forgot-password', { email: unknown })
    expect(forUnknown.status).toBe(202)
    const forKnown = await service.api.post('/api/forgot-password', { email: account.email })
    expect(forKnown.status).toBe(202)
    expect(forUnknown.text).toBe(forKnown.text)
    expect(forKnown.body).toEqual({ message: expect.any(String) })

    await smtp.waitForMail((m) => m.to.includes(account.email))
    const since = smtp.messages.slice(before)
    expect(since.map((m) => m.to)).toEqual([[account.email]])
    expect([...smtp.messages, ...smtp.rejected].some((m) => m.to.includes(unknown))).toBe(false)
    expect(smtp.rejected.length).toBe(rejectedBefore)
  })

  test('a missing or malformed email is 400 invalid_request naming email', async () => {
    expectInvalid(await service.api.post('/api/forgot-password', {}), 'email')
    expectInvalid(await service.api.post('/api/forgot-password', { email: 'not-an-email' }), 'email')
    expectInvalid(await service.api.post('/api/forgot-password', { email: 7 }), 'email')
    expectInvalid(await service.api.post('/api/forgot-password', { email: { address: uniqueEmail('f') } }), 'email')
  })

  test('an SMTP failure does not change the 202 answer and is logged as an error', async () => {
    const account = await service.api.register()
    const reference = await service.api.post('/api/forgot-password', { email: uniqueEmail('reference') })
    const errorsBefore = service.logs.filter((l) => l.level === 'error').length
    const rejectedBefore = smtp.rejected.length

    smtp.failNext(1, 550)
    const res = await service.api.post('/api/forgot-password', { email: account.email })
    expect(res.status).toBe(202)
    expect(res.text).toBe(reference.text)

    await waitUntil(() => service.logs.filter((l) => l.level === 'error').length > errorsBefore, 'an error log line about the failed mail')
    expect(smtp.rejected.length).toBe(rejectedBefore + 1)
    const failure = service.logs.filter((l) => l.level === 'error').at(-1)!
    expect(String(failure.msg)).toMatch(/mail/i)
    // The log names the failure, not the token that the refused mail carried.
    const token = smtp.rejected.at(-1)!.text.match(/token=([\w-]+)/)![1]!
    expect(service.logText()).not.toContain(token)

    // The relay is back: the next request, once the account's minute is over (a failed mail counts), is delivered.
    clockOffset += 61_000
    const fresh = await requestResetToken(account.email)
    expect(fresh.length).toBeGreaterThanOrEqual(43)
  })
})

describe('reset-password failures', () => {
  test('an unknown token is 400 invalid_token', async () => {
    expectError(await service.api.post('/api/reset-password', { token: 'x'.repeat(43), new_password: 'a new password' }), 400, 'invalid_token')
    expectError(await service.api.post('/api/reset-password', { token: 'abc', new_password: 'a new password' }), 400, 'invalid_token')
  })

  test('a token works once: its second use is 400 invalid_token', async () => {
    const account = await service.api.register()
    const token = await requestResetToken(account.email)
    const first = await service.api.post('/api/reset-password', { token, new_password: 'first new password' })
    expect(first.status).toBe(200)
    const second = await service.api.post('/api/reset-password', { token, new_password: 'second new password' })
    expectError(second, 400, 'invalid_token')
    // The second attempt changed nothing: the first new password and the key issued with it hold.
    expect((await service.api.post('/api/login', { email: account.email, password: 'first new password' })).status).toBe(200)
    expect((await service.api.post('/api/login', { email: account.email, password: 'second new password' })).status).toBe(401)
    expect((await service.api.get('/api/usage', first.body.api_key)).status).toBe(200)
  })

  test('a token is valid for 60 minutes: at 59 minutes it works, at 61 minutes it is 400 invalid_token', async () => {
    const early = await service.api.register()
    const earlyToken = await requestResetToken(early.email)
    clockOffset += 59 * 60_000
    expect((await service.api.post('/api/reset-password', { token: earlyToken, new_password: 'reset at 59 minutes' })).status).toBe(200)

    const late = await service.api.register()
    const lateToken = await requestResetToken(late.email)
    clockOffset += 61 * 60_000
    expectError(await service.api.post('/api/reset-password', { token: lateToken, new_password: 'reset at 61 minutes' }), 400, 'invalid_token')
    // The expired token left the account alone.
    expect((await service.api.post('/api/login', { email: late.email, password: late.password })).status).toBe(200)
    expect((await service.api.get('/api/usage', late.apiKey)).status).toBe(200)
  })

  test('a newer forgot-password request supersedes the older token', async () => {
    const account = await service.api.register()
    const older = await requestResetToken(account.email)
    // After the account's minute between reset mails.
    clockOffset += 61_000
    const newer = await requestResetToken(account.email)
    expect(newer).not.toBe(older)
    expectError(await service.api.post('/api/reset-password', { token: older, new_password: 'via the older token' }), 400, 'invalid_token')
    expect((await service.api.post('/api/reset-password', { token: newer, new_password: 'via the newer token' })).status).toBe(200)
  })

  test('a missing token or new_password, or a short or long new_password, is 400 invalid_request naming the field', async () => {
    expectInvalid(await service.api.post('/api/reset-password', { new_password: 'a new password' }), 'token')
    expectInvalid(await service.api.post('/api/reset-password', { token: 'x'.repeat(43) }), 'new_password')
    expectInvalid(await service.api.post('/api/reset-password', { token: 'x'.repeat(43), new_password: 'x'.repeat(7) }), 'new_password')
    expectInvalid(await service.api.post('/api/reset-password', { token: 'x'.repeat(43), new_password: 'x'.repeat(129) }), 'new_password')
    expectInvalid(await service.api.post('/api/reset-password', { token: 12345, new_password: 'a new password' }), 'token')
    expectInvalid(await service.api.post('/api/reset-password', { token: '', new_password: 'a new password' }), 'token')
  })

  test('a valid token with an invalid new_password is refused without using up the token', async () => {
    const account = await service.api.register()
    const token = await requestResetToken(account.email)
    expectInvalid(await service.api.post('/api/reset-password', { token, new_password: 'short' }), 'new_password')
    expect((await service.api.post('/api/reset-password', { token, new_password: 'long enough now' })).status).toBe(200)
  })
})

describe('without ALTTEXT_SMTP_URL (air-gapped)', () => {
  let airGapped: TestService

  beforeAll(async () => {
    airGapped = await startTestService({ env: { ALTTEXT_RATE_LIMITS: 'off' } })
  })
  afterAll(async () => {
    await airGapped.stop()
  })

  test('a start-up warning says there is no SMTP; the service with SMTP does not warn', () => {
    const warnings = airGapped.logs.filter((l) => l.level === 'warn' && /SMTP/i.test(String(l.msg)))
    expect(warnings.length).toBe(1)
    expect(service.logs.some((l) => l.level === 'warn' && /SMTP/i.test(String(l.msg)))).toBe(false)
  })

  test('the reset link goes to the log and works; an unknown email logs no link', async () => {
    const account = await airGapped.api.register()
    const unknown = await airGapped.api.post('/api/forgot-password', { email: uniqueEmail('nobody') })
    const res = await airGapped.api.post('/api/forgot-password', { email: account.email })
    expect(res.status).toBe(202)
    expect(unknown.status).toBe(202)
    expect(unknown.text).toBe(res.text)

    const linkPattern = /http:\/\/alttext\.test\/reset-password\?token=([\w-]+)/
    await waitUntil(() => linkPattern.test(airGapped.logText()), 'the reset link in the log')
    const tokens = [...airGapped.logText().matchAll(new RegExp(linkPattern.source, 'g'))].map((m) => m[1]!)
    expect(new Set(tokens).size).toBe(1) // only the known account got a link

    const reset = await airGapped.api.post('/api/reset-password', { token: tokens[0], new_password: 'reset from the log' })
    expect(reset.status).toBe(200)
    expect((await airGapped.api.post('/api/login', { email: account.email, password: 'reset from the log' })).status).toBe(200)
  })
})
