// Accounts, security: secrets never leak, passwords are argon2id, reset tokens are stored hashed,
// an unknown email costs the same password check as a wrong password, a reset touches one account only.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { argon2idHasher, type PasswordHasher } from '../../src/modules/accounts/service'
import { sqliteOnly } from '../support/postgres'
import { type CapturedMail, startSmtpCapture, type SmtpCapture } from '../support/smtp'
import { startTestService, uniqueEmail, type ApiResponse, type TestService } from '../support/service'

let service: TestService
let smtp: SmtpCapture

/** Every hash handed to `verify`, in call order. */
let verifiedAgainst: string[] = []
let hashCalls = 0
const spyHasher: PasswordHasher = {
  hash: async (password) => {
    hashCalls++
    return argon2idHasher.hash(password)
  },
  verify: async (password, hash) => {
    verifiedAgainst.push(hash)
    return argon2idHasher.verify(password, hash)
  },
}

beforeAll(async () => {
  smtp = await startSmtpCapture()
  service = await startTestService({
    env: { ALTTEXT_SMTP_URL: smtp.url, ALTTEXT_MAIL_FROM: 'alttext@alttext.test', ALTTEXT_RATE_LIMITS: 'off' },
    overrides: { passwords: spyHasher },
  })
})
afterAll(async () => {
  await service.stop()
  await smtp.stop()
})
beforeEach(() => {
  verifiedAgainst = []
  hashCalls = 0
})

/** Every row of every table as text, to look for a secret anywhere in the database (either engine). */
async function databaseText(): Promise<string> {
  const dumps = await Promise.all((await service.tables()).map(async (name) => JSON.stringify(await service.query(`SELECT * FROM "${name}"`))))
  return dumps.join('\n')
}

/** The SQLite file and its WAL as text, to look for a secret anywhere on disk. */
function databaseBytes(): string {
  return [service.dbPath, `${service.dbPath}-wal`]
    .filter((path) => existsSync(path))
    .map((path) => readFileSync(path).toString('latin1'))
    .join('\n')
}

async function storedPasswordHash(email: string): Promise<string> {
  const [row] = await service.query<{ password_hash: string }>('SELECT password_hash FROM accounts WHERE email = ?', email)
  expect(row).toBeDefined()
  return row!.password_hash
}

async function requestResetToken(email: string): Promise<string> {
  const seen = new Set(smtp.messages)
  expect((await service.api.post('/api/forgot-password', { email })).status).toBe(202)
  const mail = await smtp.waitForMail((m) => m.to.includes(email) && !seen.has(m))
  return mail.text.match(/\/reset-password\?token=([\w-]+)/)![1]!
}

describe('passwords never leak', () => {
  test('the password appears in no response and in no log line, also when it is refused', async () => {
    const email = uniqueEmail('secret')
    const password = 'Zebra-Quartz-9917-secret'
    const wrong = 'Wrong-Mango-4432-secret'
    const tooLong = `Long-Secret-Walrus-${'q'.repeat(120)}` // 139 characters: refused by validation
    const typed = 'Array-Wrapped-Secret-5521'
    const newPassword = 'Fresh-Otter-7781-secret'
    const responses: ApiResponse[] = []

    responses.push(await service.api.post('/api/register', { email, password }))
    expect(responses.at(-1)!.status).toBe(201)
    responses.push(await service.api.post('/api/register', { email, password })) // 409
    responses.push(await service.api.post('/api/login', { email, password }))
    expect(responses.at(-1)!.status).toBe(200)
    responses.push(await service.api.post('/api/login', { email, password: wrong }))
    responses.push(await service.api.post('/api/register', { email: uniqueEmail('long'), password: tooLong }))
    expect(responses.at(-1)!.status).toBe(400)
    responses.push(await service.api.post('/api/login', { email, password: tooLong }))
    responses.push(await service.api.post('/api/register', { email: uniqueEmail('typed'), password: [typed] }))
    expect(responses.at(-1)!.status).toBe(400)
    responses.push(await service.api.post('/api/register', { email: 'not-an-email', password }))
    responses.push(
      await service.api.request('POST', '/api/login', {
        rawBody: `{"email":"${email}","password":"${password}"`,
        headers: { 'content-type': 'application/json' },
      }),
    ) // malformed
    expect(responses.at(-1)!.status).toBe(400)
    responses.push(
      await service.api.request('POST', '/api/login', {
        rawBody: `email=${encodeURIComponent(email)}&password=${password}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
    )
    expect(responses.at(-1)!.status).toBe(415)

    const token = await requestResetToken(email)
    responses.push(await service.api.post('/api/reset-password', { token, new_password: newPassword }))
    expect(responses.at(-1)!.status).toBe(200)
    responses.push(await service.api.post('/api/reset-password', { token, new_password: newPassword })) // used token
    responses.push(await service.api.post('/api/reset-password', { token: 'x'.repeat(43), new_password: `Long-${tooLong}` }))

    const secrets = [password, wrong, tooLong, typed, newPassword, 'Long-Secret-Walrus']
    for (const res of responses) {
      for (const secret of secrets) expect(res.text).not.toContain(secret)
    }
    const log = service.logText()
    for (const secret of secrets) expect(log).not.toContain(secret)
  })

  test('the password is not stored in clear anywhere in the database', async () => {
    const password = 'Plaintext-Hunt-6620-secret'
    await service.api.register(uniqueEmail('rows'), password)
    expect(await databaseText()).not.toContain(password)
  })

  sqliteOnly('the SQLite file and its write-ahead log on disk')('the password is not stored in clear anywhere in the database file', async () => {
    const password = 'Plaintext-Hunt-6621-secret'
    await service.api.register(uniqueEmail('disk'), password)
    expect(databaseBytes()).toContain('$argon2id$')
    expect(databaseBytes()).not.toContain(password)
  })
})

describe('password hashing', () => {
  test('the stored password hash is argon2id and verifies the password', async () => {
    const account = await service.api.register()
    const hash = await storedPasswordHash(account.email)
    expect(hash).toStartWith('$argon2id$')
    expect(hash).not.toContain(account.password)
    expect(await Bun.password.verify(account.password, hash)).toBe(true)
  })

  test('a reset stores the new password as argon2id too', async () => {
    const account = await service.api.register()
    const before = await storedPasswordHash(account.email)
    const token = await requestResetToken(account.email)
    expect((await service.api.post('/api/reset-password', { token, new_password: 'the replacement password' })).status).toBe(200)
    const after = await storedPasswordHash(account.email)
    expect(after).toStartWith('$argon2id$')
    expect(after).not.toBe(before)
    expect(await Bun.password.verify('the replacement password', after)).toBe(true)
  })

  test('login with an unknown email runs the password verifier exactly like a wrong password', async () => {
    const account = await service.api.register()
    const stored = await storedPasswordHash(account.email)
    // Warm any lazily built state, so the calls below are the steady state an attacker would measure.
    await service.api.post('/api/login', { email: uniqueEmail('warm'), password: 'whatever password' })

    verifiedAgainst = []
    const wrong = await service.api.post('/api/login', { email: account.email, password: 'not the password' })
    expect(wrong.status).toBe(401)
    expect(verifiedAgainst).toEqual([stored])

    verifiedAgainst = []
    hashCalls = 0
    const unknown = await service.api.post('/api/login', { email: uniqueEmail('ghost'), password: 'not the password' })
    expect(unknown.status).toBe(401)
    expect(unknown.text).toBe(wrong.text)
    expect(verifiedAgainst.length).toBe(1)
    expect(hashCalls).toBe(0) // no extra hashing on the unknown path
    // The decoy is a real argon2id hash with the same cost parameters as a real account's.
    const decoy = verifiedAgainst[0]!
    const params = (hash: string) => hash.split('$').slice(1, 4).join('$') // argon2id$v=19$m=...,t=...,p=...
    expect(decoy).toStartWith('$argon2id$')
    expect(params(decoy)).toBe(params(stored))
    expect(decoy).not.toBe(stored)
  })

  test('a correct login also costs exactly one verify call', async () => {
    const account = await service.api.register()
    verifiedAgainst = []
    expect((await service.api.post('/api/login', { email: account.email, password: account.password })).status).toBe(200)
    expect(verifiedAgainst.length).toBe(1)
  })
})

describe('reset tokens', () => {
  test('are stored only as their SHA-256 hash', async () => {
    const account = await service.api.register()
    const token = await requestResetToken(account.email)
    expect(token.length).toBeGreaterThanOrEqual(43) // at least 32 random bytes

    const rows = await service.query<{ token_hash: string }>(
      'SELECT token_hash FROM reset_tokens WHERE account_id = (SELECT id FROM accounts WHERE email = ?)',
      account.email,
    )
    expect(rows.length).toBe(1)
    const stored = rows[0]!.token_hash
    expect(stored).not.toBe(token)
    expect(stored).not.toContain(token)
    expect(stored).toBe(createHash('sha256').update(token).digest('hex'))
    expect(await databaseText()).not.toContain(token)
  })

  sqliteOnly('the SQLite file and its write-ahead log on disk')('the database file never holds a reset token', async () => {
    const account = await service.api.register()
    const token = await requestResetToken(account.email)
    expect(databaseBytes()).toContain(createHash('sha256').update(token).digest('hex'))
    expect(databaseBytes()).not.toContain(token)
  })

  test('the token in the reset link never reaches the access log', async () => {
    const account = await service.api.register()
    const token = await requestResetToken(account.email)
    const page = await fetch(`${service.url}/reset-password?token=${token}`)
    expect(page.status).toBe(200)
    await page.text()
    expect(service.logText()).not.toContain(token)
  })

  test('two tokens for two accounts are distinct and each works only for its own account', async () => {
    const a = await service.api.register()
    const b = await service.api.register()
    const tokenA = await requestResetToken(a.email)
    const tokenB = await requestResetToken(b.email)
    expect(tokenA).not.toBe(tokenB)
    expect((await service.api.post('/api/reset-password', { token: tokenA, new_password: 'new password for a' })).status).toBe(200)
    // A's reset did not consume or touch B's token, nor B's password.
    expect((await service.api.post('/api/login', { email: b.email, password: 'new password for a' })).status).toBe(401)
    expect((await service.api.post('/api/reset-password', { token: tokenB, new_password: 'new password for b' })).status).toBe(200)
  })
})

describe('reset scope', () => {
  test('a reset revokes the keys of that account only', async () => {
    const victim = await service.api.register()
    const bystander = await service.api.register()
    const bystanderSecond = await service.api.post('/api/keys', { label: 'other account' }, bystander.apiKey)
    expect(bystanderSecond.status).toBe(201)

    const token = await requestResetToken(victim.email)
    const reset = await service.api.post('/api/reset-password', { token, new_password: 'victim new password' })
    expect(reset.status).toBe(200)

    expect((await service.api.get('/api/usage', victim.apiKey)).status).toBe(401)
    for (const key of [bystander.apiKey, bystanderSecond.body.api_key]) {
      expect((await service.api.get('/api/usage', key)).status).toBe(200)
    }
    const login = await service.api.post('/api/login', { email: bystander.email, password: bystander.password })
    expect(login.status).toBe(200)
    expect(login.body.keys.map((k: { prefix: string }) => k.prefix).sort()).toEqual([bystander.prefix, bystanderSecond.body.prefix].sort())
  })

  test('full API keys never reach the log', async () => {
    const account = await service.api.register()
    expect((await service.api.get('/api/usage', account.apiKey)).status).toBe(200)
    expect((await service.api.post('/api/validate-key', { api_key: account.apiKey })).status).toBe(200)
    expect(service.logText()).not.toContain(account.apiKey)
    expect(service.logText()).not.toMatch(/alt_[0-9a-f]{64}/)
  })
})

describe('reset mails to one account', () => {
  // The review found 40 reset mails in one inbox within seconds, sent for 8 addresses (5 a minute each).
  let proxied: TestService
  let mailbox: SmtpCapture
  let now = Date.UTC(2026, 10, 23, 12)
  beforeAll(async () => {
    mailbox = await startSmtpCapture()
    proxied = await startTestService({
      env: { ALTTEXT_SMTP_URL: mailbox.url, ALTTEXT_MAIL_FROM: 'alttext@alttext.test', ALTTEXT_TRUST_PROXY: '1' },
      overrides: { clock: () => now },
    })
  })
  afterAll(async () => {
    await proxied.stop()
    await mailbox.stop()
  })

  const forgotFrom = (address: string, email: string) =>
    proxied.api.request('POST', '/api/forgot-password', { body: { email }, headers: { 'x-forwarded-for': address } })
  const tokensOf = async (email: string) =>
    Number(
      (await proxied.query<{ n: number }>('SELECT count(*) AS n FROM reset_tokens t JOIN accounts a ON a.id = t.account_id WHERE a.email = ?', email))[0]!.n,
    )
  const mailsTo = (email: string) => mailbox.messages.filter((m) => m.to.includes(email))

  test('40 requests from 8 addresses at once: one mail, answered like an unknown email; another only after 60 s', async () => {
    const account = await proxied.api.register()
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => forgotFrom(`203.0.113.${(i % 8) + 1}`, account.email)))
    const unknown = await forgotFrom('203.0.113.99', uniqueEmail('nobody'))
    expect(unknown.status).toBe(202)
    for (const answer of answers) expect({ status: answer.status, text: answer.text }).toEqual({ status: unknown.status, text: unknown.text })

    const first = await mailbox.waitForMail((m) => m.to.includes(account.email))
    expect(await tokensOf(account.email)).toBe(1)
    expect(proxied.logs.filter((l) => String(l.msg).startsWith('reset mail not sent')).length).toBe(39)

    // Still within the minute, from yet another address: nothing more.
    now += 59_000
    expect((await forgotFrom('203.0.113.100', account.email)).text).toBe(unknown.text)
    expect(await tokensOf(account.email)).toBe(1)

    // The minute is over: the next request mails a new link, and the first one stops working.
    now += 2_000
    expect((await forgotFrom('203.0.113.101', account.email)).text).toBe(unknown.text)
    const second = await mailbox.waitForMail((m) => m.to.includes(account.email) && m !== first)
    expect(await tokensOf(account.email)).toBe(2)
    expect(mailsTo(account.email)).toEqual([first, second])
    const token = (mail: CapturedMail) => mail.text.match(/\/reset-password\?token=([\w-]+)/)![1]!
    expect(token(second)).not.toBe(token(first))
    const stale = await proxied.api.post('/api/reset-password', { token: token(first), new_password: 'from the first mail' })
    expect(stale.body.error.code).toBe('invalid_token')
  })

  test('the minute is per account: another account is mailed at once', async () => {
    const [a, b] = [await proxied.api.register(), await proxied.api.register()]
    expect((await forgotFrom('198.51.100.1', a.email)).status).toBe(202)
    expect((await forgotFrom('198.51.100.1', b.email)).status).toBe(202)
    await mailbox.waitForMail((m) => m.to.includes(a.email))
    await mailbox.waitForMail((m) => m.to.includes(b.email))
  })
})
