// The account page against attacks: another site cannot change the password or delete the account with a
// visitor's cookie, a stolen session cannot take the account without the password, and no password or
// token reaches the log.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { expectApiError } from '../support/assertions'
import { CHEAP_PASSWORDS, FOREIGN_ORIGIN, fromConsole, readDb, signIn } from '../support/session'
import { startTestService, type TestService } from '../support/service'

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
    const bytes = await Bun.file(`${service.dbPath}-wal`)
      .arrayBuffer()
      .catch(() => new ArrayBuffer(0))
    const main = await Bun.file(service.dbPath).arrayBuffer()
    for (const file of [bytes, main]) expect(Buffer.from(file).includes(Buffer.from('stored only hashed'))).toBe(false)
    const stored = readDb(
      service,
      (db) => db.query<{ password_hash: string }, [string]>('SELECT password_hash FROM accounts WHERE email = ?').get(account.email)!,
    )
    expect(stored.password_hash).toStartWith('$argon2id$')
    expect(await Bun.password.verify('stored only hashed', stored.password_hash)).toBe(true)
  })
})
