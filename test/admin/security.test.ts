// What `alttext admin` must not let through: secrets in its output, a disabled account getting back in by
// a side door (an old session, a reset token, a mail, a batch), or a deleted account's counts surviving
// in the running service's memory for whoever gets its id next.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { batchClient } from '../batches/support'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { type SmtpCapture, startSmtpCapture } from '../support/smtp'
import { readDb, signIn, withSession } from '../support/session'
import { uniqueEmail, waitUntil } from '../support/service'
import { type AdminResult, adminJson, adminOf, freshImage } from './support'

setDefaultTimeout(60_000)

let env: AltTextEnv
let smtp: SmtpCapture
let admin: (...args: string[]) => Promise<AdminResult>

beforeAll(async () => {
  smtp = await startSmtpCapture()
  const mail = { ALTTEXT_SMTP_URL: smtp.url, ALTTEXT_MAIL_FROM: 'alttext@alttext.test' }
  env = await startAltTextEnv({ env: mail })
  admin = adminOf(env.service, mail)
})
afterAll(async () => {
  await env?.stop()
  await smtp?.stop()
})

/** Resolves once the running service answers this key's usage with `status`. */
const answeredWith = (key: string, status: number) =>
  waitUntil(async () => (await env.service.api.get('/api/usage', key)).status === status, `the key to get ${status}`)

describe('output', () => {
  test('list and show never print a key, a key hash, a password hash or a token', async () => {
    const account = await env.service.api.register()
    const hashes = readDb(env.service, (db) => {
      const row = db.query<{ password_hash: string; key_hash: string }, [string]>(
        'SELECT a.password_hash, k.key_hash FROM accounts a JOIN api_keys k ON k.account_id = a.id WHERE a.email = ?',
      )
      return row.get(account.email)!
    })
    for (const args of [
      ['accounts', 'list'],
      ['accounts', 'list', '--json'],
      ['accounts', 'show', account.email],
      ['accounts', 'show', account.email, '--json'],
    ]) {
      const result = await admin(...args)
      expect(result.code).toBe(0)
      const output = result.stdout + result.stderr
      expect(output).not.toContain(account.apiKey)
      expect(output).not.toContain(hashes.key_hash)
      expect(output).not.toContain(hashes.password_hash)
      expect(output).not.toMatch(/alt_[0-9a-f]{64}|\$argon2/)
    }
  })

  test('a key printed by accounts create is stored only as its hash', async () => {
    const made = await adminJson(admin, 'accounts', 'create', uniqueEmail('hashed'), '--print-key')
    const stored = readDb(env.service, (db) => db.query<{ key_hash: string }, [string]>('SELECT key_hash FROM api_keys WHERE prefix = ?').get(made.prefix)!)
    expect(stored.key_hash).toMatch(/^[0-9a-f]{64}$/)
    expect(stored.key_hash).not.toBe(made.api_key)
    expect(new Bun.CryptoHasher('sha256').update(made.api_key).digest('hex')).toBe(stored.key_hash)
  })

  test('an account made by the operator has a password nobody knows', async () => {
    const email = uniqueEmail('nopass')
    expect((await admin('accounts', 'create', email, '--print-key')).code).toBe(0)
    for (const password of ['', 'password', email, 'correct horse battery'])
      expect((await env.service.api.post('/api/login', { email, password: password.padEnd(8, 'x') })).status).toBe(401)
  })
})

describe('a disabled account has no side door', () => {
  test('its sessions end for good: enabling it again does not bring an old cookie back', async () => {
    const account = await env.service.api.register()
    const { cookie } = await signIn(env.service, account.email, account.password)
    expect((await admin('accounts', 'disable', account.email)).code).toBe(0)
    expect(
      readDb(
        env.service,
        (db) =>
          db.query<{ n: number }, [string]>('SELECT count(*) AS n FROM sessions s JOIN accounts a ON a.id = s.account_id WHERE a.email = ?').get(account.email)!
            .n,
      ),
    ).toBe(0)
    expect((await withSession(env.service, cookie, 'GET', '/api/usage')).status).toBe(401)
    expect((await admin('accounts', 'enable', account.email)).code).toBe(0)
    await answeredWith(account.apiKey, 200)
    expect((await withSession(env.service, cookie, 'GET', '/api/usage')).body.error.code).toBe('invalid_session')
  })

  test('a reset token issued before it was disabled no longer works, and forgot-password mails nothing (same 202)', async () => {
    const account = await env.service.api.register()
    expect((await env.service.api.post('/api/forgot-password', { email: account.email })).status).toBe(202)
    const mail = await smtp.waitForMail((m) => m.to.includes(account.email))
    const token = mail.text.match(/reset-password\?token=([\w-]+)/)![1]
    expect((await admin('accounts', 'disable', account.email)).code).toBe(0)

    const reset = await env.service.api.post('/api/reset-password', { token, new_password: 'taking it back now' })
    expect(reset.status).toBe(400)
    expect(reset.body.error.code).toBe('invalid_token')

    const before = smtp.messages.length
    const forgot = await env.service.api.post('/api/forgot-password', { email: account.email })
    const unknown = await env.service.api.post('/api/forgot-password', { email: uniqueEmail('unknown') })
    expect({ status: forgot.status, body: forgot.body }).toEqual({ status: unknown.status, body: unknown.body })
    // A mail to another account afterwards proves the capture is not merely slow.
    const other = await env.service.api.register()
    await env.service.api.post('/api/forgot-password', { email: other.email })
    await smtp.waitForMail((m) => m.to.includes(other.email))
    expect(smtp.messages.slice(before).some((m) => m.to.includes(account.email))).toBe(false)
  })

  test('a right password gets 403 account_disabled; a wrong one still gets 401, as for anyone', async () => {
    const account = await env.service.api.register()
    expect((await admin('accounts', 'disable', account.email)).code).toBe(0)
    const right = await env.service.api.request('POST', '/api/session', { body: { email: account.email, password: account.password } })
    expect(right.status).toBe(403)
    expect(right.body.error.code).toBe('account_disabled')
    expect(right.headers.get('set-cookie')).toBeNull()
    const wrong = await env.service.api.post('/api/login', { email: account.email, password: 'not the password' })
    expect(wrong.status).toBe(401)
    expect(wrong.body.error.code).toBe('invalid_credentials')
  })

  test('its batch stops: items not started fail with account_disabled, and only the answered ones are charged', async () => {
    const account = await env.service.api.register()
    const batches = batchClient(env.service.api, account.apiKey)
    env.ollama.behave({ hang: true })
    try {
      const created = await batches.create({ items: Array.from({ length: 8 }, () => freshImage()) })
      expect(created.status).toBe(202)
      await env.ollama.waitFor(() => env.ollama.inFlight() > 0)
      expect((await admin('accounts', 'disable', account.email)).code).toBe(0)
    } finally {
      env.ollama.behave({ hang: false })
      env.ollama.release()
    }
    const id = readDb(
      env.service,
      (db) => db.query<{ id: string }, [string]>('SELECT b.id FROM batches b JOIN accounts a ON a.id = b.account_id WHERE a.email = ?').get(account.email)!.id,
    )
    await waitUntil(
      () =>
        readDb(
          env.service,
          (db) => db.query<{ done: number }, [string]>('SELECT completed_at IS NOT NULL AS done FROM batches WHERE id = ?').get(id)!.done === 1,
        ),
      'the batch to end',
      20_000,
    )
    expect((await admin('accounts', 'enable', account.email)).code).toBe(0)
    await answeredWith(account.apiKey, 200)
    const batch = (await batches.get(id)).body
    const failed = batch.items.filter((item: any) => item.status === 'failed')
    expect(failed.length).toBeGreaterThan(0)
    expect(failed.every((item: any) => item.error.code === 'account_disabled')).toBe(true)
    expect(batch.succeeded + failed.length).toBe(8)
    expect((await env.service.api.get('/api/usage', account.apiKey)).body.credits.used).toBe(batch.succeeded)
  })
})

describe('a deleted account leaves nothing in memory', () => {
  test('the next account gets a new id and starts with no credits used and no calls counted', async () => {
    // The newest account: without AUTOINCREMENT, SQLite would give its id to the next one once it is deleted.
    const account = await env.service.api.register()
    for (let i = 0; i < 2; i++) expect((await env.generate(freshImage(), account.apiKey)).status).toBe(200)
    const oldId = readDb(env.service, (db) => db.query<{ id: number }, [string]>('SELECT id FROM accounts WHERE email = ?').get(account.email)!.id)
    expect((await admin('accounts', 'delete', account.email, '--yes')).code).toBe(0)
    await answeredWith(account.apiKey, 401)
    const next = await env.service.api.register()
    const nextId = readDb(env.service, (db) => db.query<{ id: number }, [string]>('SELECT id FROM accounts WHERE email = ?').get(next.email)!.id)
    expect(nextId).toBeGreaterThan(oldId)
    const usage = (await env.service.api.get('/api/usage', next.apiKey)).body
    expect(usage.credits.used).toBe(0)
    expect(usage.api_calls_today).toBe(1)
  })
})
