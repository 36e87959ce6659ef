// The account page against attacks: another site cannot change the password or delete the account with a
// visitor's cookie, a stolen session cannot take the account without the password, no password or token
// reaches the log, and a deleted account's ids never pass to the next account.
import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sha256Hex } from '../../src/shared/crypto'
import { MIGRATIONS } from '../../src/store/sqlite/migrations'
import { startAltTextEnv } from '../support/alt-text-env'
import { expectApiError } from '../support/assertions'
import { makePng } from '../support/images'
import { sqliteOnly } from '../support/postgres'
import { CHEAP_PASSWORDS, FOREIGN_ORIGIN, fromConsole, readDb, signIn } from '../support/session'
import { startTestService, type TestService, VALID_PASSWORD } from '../support/service'

let service: TestService

beforeAll(async () => {
  service = await startTestService({ env: { ALTTEXT_RATE_LIMITS: 'off' }, overrides: { passwords: CHEAP_PASSWORDS } })
})
afterAll(async () => {
  await service.stop()
})

describe('cross-site', () => {
  test('changing the password or deleting the account from another origin (or with no Origin) is 403 and changes nothing', async () => {
    const account = await service.api.register()
    const { cookie } = await signIn(service, account.email, account.password)
    const attempts: Record<string, string>[] = [{ cookie, origin: FOREIGN_ORIGIN }, { cookie }, { cookie, 'sec-fetch-site': 'cross-site' }]
    for (const headers of attempts) {
      const change = await service.api.request('POST', '/api/account/password', {
        body: { current_password: account.password, new_password: 'attacker chose this' },
        headers,
      })
      expectApiError(change, 403, 'cross_site_request')
      const remove = await service.api.request('DELETE', '/api/account', { body: { password: account.password }, headers })
      expectApiError(remove, 403, 'cross_site_request')
    }
    expect((await service.api.post('/api/login', { email: account.email, password: account.password })).status).toBe(200)
    expect((await service.api.get('/api/usage', account.apiKey)).status).toBe(200)
  })
})

describe('a session without the password', () => {
  test('cannot change the password nor delete the account', async () => {
    const account = await service.api.register()
    const { cookie } = await signIn(service, account.email, account.password)
    for (const guess of ['password123', 'correct horse', '']) {
      const change = await service.api.request('POST', '/api/account/password', {
        body: { current_password: guess, new_password: 'attacker chose this' },
        headers: fromConsole(cookie),
      })
      expect([400, 401]).toContain(change.status)
    }
    expect((await service.api.post('/api/login', { email: account.email, password: account.password })).status).toBe(200)
  })

  test("one account's session changes only that account", async () => {
    const mine = await service.api.register()
    const theirs = await service.api.register(undefined, 'their own password')
    const { cookie } = await signIn(service, mine.email, mine.password)
    // My session with their password: checked against my account, so refused; theirs is untouched.
    const res = await service.api.request('DELETE', '/api/account', { body: { password: theirs.password }, headers: fromConsole(cookie) })
    expectApiError(res, 401, 'invalid_credentials')
    expect((await service.api.get('/api/usage', theirs.apiKey)).status).toBe(200)
    expect((await service.api.get('/api/usage', mine.apiKey)).status).toBe(200)
  })
})

describe('secrets', () => {
  test('old and new passwords, the delete password and session tokens never reach the log', async () => {
    const account = await service.api.register(undefined, 'first secret password')
    const { cookie, token } = await signIn(service, account.email, account.password)
    await service.api.request('POST', '/api/account/password', {
      body: { current_password: 'first secret password', new_password: 'second secret password' },
      headers: fromConsole(cookie),
    })
    await service.api.request('DELETE', '/api/account', { body: { password: 'wrong secret password' }, headers: fromConsole(cookie) })
    await service.api.request('DELETE', '/api/account', { body: { password: 'second secret password' }, headers: fromConsole(cookie) })
    const log = service.logText()
    expect(log).toContain('account deleted')
    for (const secret of ['first secret password', 'second secret password', 'wrong secret password', token, account.apiKey]) expect(log).not.toContain(secret)
  })

  test('the new password is stored as argon2id, never in clear', async () => {
    const account = await service.api.register()
    const { cookie } = await signIn(service, account.email, account.password)
    await service.api.request('POST', '/api/account/password', {
      body: { current_password: account.password, new_password: 'stored only hashed' },
      headers: fromConsole(cookie),
    })
    const [stored] = await service.query<{ password_hash: string }>('SELECT password_hash FROM accounts WHERE email = ?', account.email)
    expect(JSON.stringify(await service.query('SELECT * FROM accounts'))).not.toContain('stored only hashed')
    expect(stored!.password_hash).toStartWith('$argon2id$')
    expect(await Bun.password.verify('stored only hashed', stored!.password_hash)).toBe(true)
  })

  sqliteOnly('the SQLite file and its write-ahead log on disk')('the new password is never in clear in the database file', async () => {
    const account = await service.api.register()
    const { cookie } = await signIn(service, account.email, account.password)
    await service.api.request('POST', '/api/account/password', {
      body: { current_password: account.password, new_password: 'stored only hashed on disk' },
      headers: fromConsole(cookie),
    })
    const bytes = await Bun.file(`${service.dbPath}-wal`)
      .arrayBuffer()
      .catch(() => new ArrayBuffer(0))
    const main = await Bun.file(service.dbPath).arrayBuffer()
    for (const file of [bytes, main]) expect(Buffer.from(file).includes(Buffer.from('stored only hashed on disk'))).toBe(false)
  })
})

describe("a deleted account's ids", () => {
  const idsOf = async (target: TestService, email: string) => ({
    account: (await target.query<{ id: number }>('SELECT id FROM accounts WHERE email = ?', email))[0]!.id,
    key: (await target.query<{ id: number }>('SELECT k.id FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE a.email = ?', email))[0]!.id,
  })

  test('deleting the newest account, then registering: the newcomer gets a new account id and a new key id', async () => {
    const gone = await service.api.register()
    const before = await idsOf(service, gone.email)
    const { cookie } = await signIn(service, gone.email, gone.password)
    expect((await service.api.request('DELETE', '/api/account', { body: { password: gone.password }, headers: fromConsole(cookie) })).status).toBe(200)
    const next = await service.api.register()
    const after = await idsOf(service, next.email)
    expect(after.account).toBeGreaterThan(before.account)
    expect(after.key).toBeGreaterThan(before.key)
  })

  test('a request of an account deleted while its image is with the model charges and records nothing for the next account', async () => {
    const env = await startAltTextEnv({ overrides: { passwords: CHEAP_PASSWORDS }, ollama: { hang: true } })
    try {
      const gone = await env.service.api.register()
      const { cookie } = await signIn(env.service, gone.email, gone.password)
      const pending = env.generate({ image_url: env.serve(makePng(35, 23)) }, gone.apiKey)
      await env.ollama.waitFor(() => env.ollama.inFlight() === 1)
      const deleted = await env.service.api.request('DELETE', '/api/account', { body: { password: gone.password }, headers: fromConsole(cookie) })
      expect(deleted.status).toBe(200)
      const next = await env.service.api.register()
      env.ollama.release()
      expectApiError(await pending, 401, 'invalid_api_key')
      const usage = await env.service.api.get('/api/usage', next.apiKey)
      expect(usage.body.credits.used).toBe(0)
      expect((await env.service.api.get('/api/history', next.apiKey)).body.items).toEqual([])
      const days = (await env.service.api.get('/api/usage/history?days=1', next.apiKey)).body.days
      expect(days[0]).toMatchObject({ generations: 0, cached: 0, failed: 0 })
    } finally {
      await env.stop()
    }
  })
})

describe('a database made before ids were kept from reuse', () => {
  sqliteOnly("SQLite's migration 13 rebuilding the tables of an older file")(
    'upgrading keeps every row and reference, and ids deleted before the upgrade stay unused',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'alttext-id-upgrade-'))
      const key = `alt_${'ab'.repeat(32)}`
      const db = new Database(join(dir, 'alttext.db'), { create: true, strict: true })
      db.exec('PRAGMA foreign_keys = ON')
      db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)')
      for (const m of MIGRATIONS.filter((m) => m.version <= 11)) {
        db.exec(m.sql)
        db.query('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(m.version, m.name, 0)
      }
      const hash = await Bun.password.hash(VALID_PASSWORD, { algorithm: 'argon2id', memoryCost: 1024, timeCost: 1 })
      for (const email of ['kept@example.com', 'other@example.com', 'gone@example.com'])
        db.query('INSERT INTO accounts (email, password_hash, created_at) VALUES (?, ?, 0)').run(email, hash)
      db.query('INSERT INTO api_keys (account_id, prefix, key_hash, created_at) VALUES (1, ?, ?, 0)').run(key.slice(0, 12), sha256Hex(key))
      db.query("INSERT INTO credit_usage (account_id, period, used) VALUES (1, '2020-01', 7)").run()
      db.query("INSERT INTO batches (id, account_id, total, created_at) VALUES ('b1', 2, 1, 0)").run()
      db.query("INSERT INTO batch_items (batch_id, idx, status, request) VALUES ('b1', 0, 'done', '{}')").run()
      db.query("DELETE FROM accounts WHERE email = 'gone@example.com'").run()
      db.close()

      const upgraded = await startTestService({ dir, env: { ALTTEXT_RATE_LIMITS: 'off' }, overrides: { passwords: CHEAP_PASSWORDS } })
      try {
        expect((await upgraded.api.get('/api/usage', key)).status).toBe(200)
        expect((await upgraded.api.post('/api/login', { email: 'kept@example.com', password: VALID_PASSWORD })).body.keys).toHaveLength(1)
        const next = await upgraded.api.register()
        readDb(upgraded, (read) => {
          expect(read.query<{ id: number }, [string]>('SELECT id FROM accounts WHERE email = ?').get(next.email)!.id).toBe(4)
          expect(read.query('PRAGMA foreign_key_check').all()).toEqual([])
          expect(read.query('SELECT account_id, used FROM credit_usage').all()).toEqual([{ account_id: 1, used: 7 }])
          expect(read.query('SELECT id, batch_id FROM batch_items').all()).toEqual([{ id: 1, batch_id: 'b1' }])
        })
        // The references still lead to the rebuilt tables: deleting an account still takes its keys and credits.
        const { cookie } = await signIn(upgraded, 'kept@example.com', VALID_PASSWORD)
        expect((await upgraded.api.request('DELETE', '/api/account', { body: { password: VALID_PASSWORD }, headers: fromConsole(cookie) })).status).toBe(200)
        readDb(upgraded, (read) => {
          expect(read.query('SELECT count(*) AS n FROM api_keys WHERE account_id = 1').get()).toEqual({ n: 0 })
          expect(read.query('SELECT count(*) AS n FROM credit_usage').get()).toEqual({ n: 0 })
        })
      } finally {
        await upgraded.stop()
        rmSync(dir, { recursive: true, force: true })
      }
    },
  )
})
