// ALTTEXT_REGISTRATION, the sign-ups it lets through: everyone by default, the listed email domains
// (whatever the case of the address), and, when closed, the accounts the operator makes. Under domains:
// (and on open sites with ALTTEXT_VERIFY_EMAIL=on) a new account works once its owner followed the
// mailed link; accounts made before, and by the operator, count as verified.
import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SQL } from 'bun'
import { adminOf } from '../admin/support'
import { sha256Hex } from '../../src/shared/crypto'
import { MIGRATIONS } from '../../src/store/sqlite/migrations'
import { migratePostgres } from '../../src/store/postgres/migrations'
import { expectApiError } from '../support/assertions'
import { sharedPostgres, TEST_ENGINE } from '../support/postgres'
import { CHEAP_PASSWORDS, signIn, withSession } from '../support/session'
import { startTestService, type TestService, uniqueEmail, VALID_PASSWORD } from '../support/service'
import { type SmtpCapture, startSmtpCapture } from '../support/smtp'
import { verificationToken } from './support'

setDefaultTimeout(30_000)

const services: TestService[] = []
const captures: SmtpCapture[] = []
// The services' clock runs this far ahead of the real one: a test moves it past the wait between two mails.
let ahead = 0
const start = async (registration?: string, env: Record<string, string> = {}) => {
  const service = await startTestService({
    env: { ALTTEXT_RATE_LIMITS: 'off', ...(registration && { ALTTEXT_REGISTRATION: registration }), ...env },
    overrides: { passwords: CHEAP_PASSWORDS, clock: () => Date.now() + ahead },
  })
  services.push(service)
  return service
}
/** A service that mails through a loopback SMTP capture. */
const startMailing = async (registration: string | undefined, env: Record<string, string> = {}) => {
  const smtp = await startSmtpCapture()
  captures.push(smtp)
  const service = await start(registration, { ALTTEXT_SMTP_URL: smtp.url, ALTTEXT_MAIL_FROM: 'alttext@alttext.test', ...env })
  return { service, smtp }
}
afterAll(async () => {
  await Promise.all(services.map((service) => service.stop()))
  await Promise.all(captures.map((smtp) => smtp.stop()))
})

describe('open (the default)', () => {
  let service: TestService
  beforeAll(async () => {
    service = await start()
  })

  test('anyone signs up; GET /api/registration says so', async () => {
    expect((await service.api.post('/api/register', { email: uniqueEmail(), password: VALID_PASSWORD })).status).toBe(201)
    expect((await service.api.get('/api/registration')).body).toEqual({ policy: 'open', domains: [], message: null })
  })
})

describe('domains:', () => {
  let service: TestService
  beforeAll(async () => {
    service = await start('domains: Example.org , @staff.example.net')
  })

  test('an address at a listed domain signs up, in any case and with spaces around it', async () => {
    for (const email of [`dev-${Date.now()}@example.org`, `  Ops-${Date.now()}@EXAMPLE.ORG `, `lead-${Date.now()}@staff.example.net`]) {
      const res = await service.api.post('/api/register', { email, password: VALID_PASSWORD })
      expect({ email, status: res.status }).toEqual({ email, status: 201 })
      expect(res.body.email).toBe(email.trim().toLowerCase())
    }
  })

  test('GET /api/registration lists the domains as they are matched, and the message for the rest', async () => {
    const res = await service.api.get('/api/registration')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      policy: 'domains',
      domains: ['example.org', 'staff.example.net'],
      message: expect.stringContaining('example.org or staff.example.net'),
    })
  })
})

describe('closed', () => {
  let service: TestService
  beforeAll(async () => {
    service = await start('closed')
  })

  test('the operator still makes accounts, and their keys work', async () => {
    const email = uniqueEmail('by-operator')
    const made = await adminOf(service, { ALTTEXT_REGISTRATION: 'closed' })('accounts', 'create', email)
    expect(made.code).toBe(0)
    const key = made.stdout.match(/alt_[0-9a-f]{64}/)![0]
    expect((await service.api.get('/api/usage', key)).status).toBe(200)
  })

  test('GET /api/registration says it is closed and how to get an account', async () => {
    const res = await service.api.get('/api/registration')
    expect(res.body).toEqual({ policy: 'closed', domains: [], message: expect.stringContaining('alttext admin accounts create') })
  })
})

describe('domains: a new account proves its mailbox first', () => {
  let service: TestService
  let smtp: SmtpCapture
  beforeAll(async () => {
    ;({ service, smtp } = await startMailing('domains:example.org'))
  })

  test('its key and session answer 403 email_not_verified until the mailed link is followed; then they work', async () => {
    const email = `dev-${Date.now()}@example.org`
    const res = await service.api.post('/api/register', { email, password: VALID_PASSWORD })
    expect(res.status).toBe(201)
    expect(res.body.message).toContain(`confirm your email address: a link is on its way to ${email}`)
    const key = res.body.api_key as string

    const mail = await smtp.waitForMail((m) => m.to.includes(email))
    expect(mail.subject).toBe('Confirm your email address for alttext')
    expect(mail.text).toContain('http://alttext.test/verify-email?token=')
    expect(mail.text).toContain('POST http://alttext.test/api/verify-email')
    const token = await verificationToken(smtp, email)

    expectApiError(await service.api.get('/api/usage', key), 403, 'email_not_verified')
    expectApiError(await service.api.get('/api/keys', key), 403, 'email_not_verified')
    // Signing in works, and says the address is not confirmed yet; the session can do nothing else.
    expect((await service.api.post('/api/login', { email, password: VALID_PASSWORD })).status).toBe(200)
    const session = await signIn(service, email, VALID_PASSWORD)
    expect(session.res.body.email_verified).toBe(false)
    expect((await service.api.request('GET', '/api/session', { headers: { cookie: session.cookie } })).body.email_verified).toBe(false)
    expectApiError(await withSession(service, session.cookie, 'GET', '/api/keys'), 403, 'email_not_verified')

    const verified = await service.api.post('/api/verify-email', { token })
    expect(verified.status).toBe(200)
    expect(verified.body).toEqual({ message: expect.stringContaining('confirmed'), email })

    expect((await service.api.get('/api/usage', key)).status).toBe(200)
    expect((await withSession(service, session.cookie, 'GET', '/api/keys')).status).toBe(200)
    expect((await service.api.request('GET', '/api/session', { headers: { cookie: session.cookie } })).body.email_verified).toBe(true)
  })

  test('the link can be mailed again with the key or the session; the newest link works, and the older no longer', async () => {
    const email = `again-${Date.now()}@example.org`
    const { apiKey } = await service.api.register(email)
    const first = await verificationToken(smtp, email)
    ahead += 60_000
    const byKey = await service.api.post('/api/verify-email/resend', {}, apiKey)
    expect(byKey.status).toBe(202)
    expect(byKey.body.message).toContain(email)
    const second = await verificationToken(smtp, email, 2)
    ahead += 60_000
    const { cookie } = await signIn(service, email, VALID_PASSWORD)
    expect((await withSession(service, cookie, 'POST', '/api/verify-email/resend')).status).toBe(202)
    const third = await verificationToken(smtp, email, 3)
    expect(new Set([first, second, third]).size).toBe(3)
    for (const old of [first, second]) expectApiError(await service.api.post('/api/verify-email', { token: old }), 400, 'invalid_token')
    expect((await service.api.post('/api/verify-email', { token: third })).status).toBe(200)
    expect((await service.api.get('/api/usage', apiKey)).status).toBe(200)
  })

  test('an account the operator makes counts as verified', async () => {
    const made = await adminOf(service, { ALTTEXT_REGISTRATION: 'domains:example.org' })('accounts', 'create', `made-${Date.now()}@example.org`)
    expect(made.code).toBe(0)
    const key = made.stdout.match(/alt_[0-9a-f]{64}/)![0]
    expect((await service.api.get('/api/usage', key)).status).toBe(200)
  })
})

describe('open sites', () => {
  test('by default a new key works at once and nothing is mailed', async () => {
    const { service, smtp } = await startMailing(undefined)
    const account = await service.api.register()
    expect((await service.api.get('/api/usage', account.apiKey)).status).toBe(200)
    expect((await signIn(service, account.email, account.password)).res.body.email_verified).toBe(true)
    expect(smtp.messages).toEqual([])
  })

  test("ALTTEXT_VERIFY_EMAIL=on asks an open site's new accounts for the same proof", async () => {
    const { service, smtp } = await startMailing(undefined, { ALTTEXT_VERIFY_EMAIL: 'on' })
    const account = await service.api.register()
    expectApiError(await service.api.get('/api/usage', account.apiKey), 403, 'email_not_verified')
    const token = await verificationToken(smtp, account.email)
    expect((await service.api.post('/api/verify-email', { token })).status).toBe(200)
    expect((await service.api.get('/api/usage', account.apiKey)).status).toBe(200)
  })
})

describe('accounts made before verification existed', () => {
  test('count as verified when the site turns to domains:', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'alttext-verify-upgrade-'))
    const key = `alt_${'cd'.repeat(32)}`
    // A database of schema version 12 (migration 13 brought verification), with an account and its key.
    let env: Record<string, string> = {}
    let drop = async () => {}
    if (TEST_ENGINE === 'postgres') {
      const cluster = await sharedPostgres()
      const databaseUrl = await cluster.createDatabase({ empty: true })
      const sql = new SQL(databaseUrl, { max: 1 })
      try {
        await migratePostgres(sql, 'the test database', 12)
        const [account] = await sql`INSERT INTO accounts (email, password_hash, created_at) VALUES ('early@example.org', 'x', 0) RETURNING id`
        await sql`INSERT INTO api_keys (account_id, prefix, key_hash, created_at) VALUES (${account.id}, ${key.slice(0, 12)}, ${sha256Hex(key)}, 0)`
      } finally {
        await sql.close()
      }
      env = { ALTTEXT_DATABASE_URL: databaseUrl }
      drop = () => cluster.dropDatabase(databaseUrl)
    } else {
      const db = new Database(join(dir, 'alttext.db'), { create: true, strict: true })
      db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)')
      for (const m of MIGRATIONS.filter((m) => m.version <= 12)) {
        db.exec(m.sql)
        db.query('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(m.version, m.name, 0)
      }
      db.query("INSERT INTO accounts (email, password_hash, created_at) VALUES ('early@example.org', 'x', 0)").run()
      db.query('INSERT INTO api_keys (account_id, prefix, key_hash, created_at) VALUES (1, ?, ?, 0)').run(key.slice(0, 12), sha256Hex(key))
      db.close()
    }
    const service = await startTestService({ dir, env: { ...env, ALTTEXT_RATE_LIMITS: 'off', ALTTEXT_REGISTRATION: 'domains:example.org' } })
    try {
      expect((await service.api.get('/api/usage', key)).status).toBe(200)
    } finally {
      await service.stop()
      await drop()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
