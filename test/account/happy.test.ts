// The account page of a signed-in browser: change the password (the other sessions end, keys stay), delete
// the account (everything of it goes, and the answer says what), and a password reset ending every session.
import { describe, expect, test } from 'bun:test'
import { startAltTextEnv } from '../support/alt-text-env'
import { makePng } from '../support/images'
import { CHEAP_PASSWORDS, fromConsole, parseSetCookie, signIn, withSession } from '../support/session'
import { type StartedForFile, serviceForFile, type TestService } from '../support/service'

let service: TestService
let smtp: StartedForFile['smtp']

serviceForFile({ env: { ALTTEXT_RATE_LIMITS: 'off' }, overrides: { passwords: CHEAP_PASSWORDS }, smtp: true }, (started) => {
  service = started.service
  smtp = started.smtp
})

const alive = async (cookie: string) => (await service.api.request('GET', '/api/session', { headers: { cookie } })).status === 200

describe('POST /api/account/password', () => {
  test('changes the password: this session and every key keep working, the other sessions end', async () => {
    const account = await service.api.register()
    const here = await signIn(service, account.email, account.password)
    const elsewhere = [await signIn(service, account.email, account.password), await signIn(service, account.email, account.password)]
    const second = await service.api.post('/api/keys', { label: 'second' }, account.apiKey)

    const res = await withSession(service, here.cookie, 'POST', '/api/account/password', {
      current_password: account.password,
      new_password: 'a brand new password',
    })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ message: 'Password changed. 2 other sessions were signed out; this session and your API keys still work.' })
    expect(await alive(here.cookie)).toBe(true)
    for (const { cookie } of elsewhere) expect(await alive(cookie)).toBe(false)
    expect((await service.api.get('/api/keys', account.apiKey)).status).toBe(200)
    expect((await service.api.get('/api/keys', second.body.api_key)).status).toBe(200)

    expect((await service.api.post('/api/login', { email: account.email, password: account.password })).status).toBe(401)
    expect((await service.api.post('/api/login', { email: account.email, password: 'a brand new password' })).status).toBe(200)
  })

  test('unused reset tokens stop working after a change', async () => {
    const account = await service.api.register()
    expect((await service.api.post('/api/forgot-password', { email: account.email })).status).toBe(202)
    const mail = await smtp.waitForMail((m) => m.to.includes(account.email))
    const token = /token=([A-Za-z0-9_-]+)/.exec(mail.text)![1]!
    const { cookie } = await signIn(service, account.email, account.password)
    const changed = await withSession(service, cookie, 'POST', '/api/account/password', {
      current_password: account.password,
      new_password: 'changed meanwhile',
    })
    expect(changed.status).toBe(200)
    const reset = await service.api.post('/api/reset-password', { token, new_password: 'from the old mail' })
    expect(reset.status).toBe(400)
    expect(reset.body.error.code).toBe('invalid_token')
  })
})

describe('password reset', () => {
  test('ends every session of the account (and only of that account)', async () => {
    const account = await service.api.register()
    const other = await service.api.register()
    const sessions = [await signIn(service, account.email, account.password), await signIn(service, account.email, account.password)]
    const others = await signIn(service, other.email, other.password)
    expect((await service.api.post('/api/forgot-password', { email: account.email })).status).toBe(202)
    const mail = await smtp.waitForMail((m) => m.to.includes(account.email))
    const token = /token=([A-Za-z0-9_-]+)/.exec(mail.text)![1]!
    const reset = await service.api.post('/api/reset-password', { token, new_password: 'reset to this one' })
    expect(reset.status).toBe(200)
    for (const { cookie } of sessions) expect(await alive(cookie)).toBe(false)
    expect(await alive(others.cookie)).toBe(true)
    expect((await signIn(service, account.email, 'reset to this one')).res.status).toBe(200)
  })
})

describe('DELETE /api/account', () => {
  test('removes the account with its keys, sessions, usage and history, says so, and clears the cookie', async () => {
    const account = await service.api.register()
    const here = await signIn(service, account.email, account.password)
    const elsewhere = await signIn(service, account.email, account.password)
    const second = await service.api.post('/api/keys', { label: 'second' }, account.apiKey)
    const revoked = await service.api.post('/api/keys', { label: 'revoked' }, account.apiKey)
    await service.api.post('/api/keys/revoke', { key_prefix: revoked.body.prefix }, account.apiKey)
    await service.api.get('/api/usage', account.apiKey)
    const accountId = (await service.query<{ id: number }>('SELECT id FROM accounts WHERE email = ?', account.email))[0]!.id

    const res = await service.api.request('DELETE', '/api/account', { body: { password: account.password }, headers: fromConsole(here.cookie) })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      message: 'Your account was deleted with 3 API keys, 2 sessions and 0 history entries, its usage and its credits.',
      deleted: { keys: 3, sessions: 2, history: 0 },
    })
    expect(parseSetCookie(res.headers.get('set-cookie')!).attributes['max-age']).toBe('0')

    // Nothing of it works any more.
    for (const cookie of [here.cookie, elsewhere.cookie]) {
      expect((await service.api.request('GET', '/api/session', { headers: { cookie } })).body.error.code).toBe('invalid_session')
      expect((await service.api.request('GET', '/api/keys', { headers: { cookie } })).body.error.code).toBe('invalid_session')
    }
    for (const key of [account.apiKey, second.body.api_key]) expect((await service.api.get('/api/usage', key)).body.error.code).toBe('invalid_api_key')
    expect((await service.api.post('/api/login', { email: account.email, password: account.password })).status).toBe(401)

    // Nothing of it is left in the database.
    const left = await Promise.all(
      [
        'accounts WHERE id',
        'api_keys WHERE account_id',
        'sessions WHERE account_id',
        'reset_tokens WHERE account_id',
        'credit_usage WHERE account_id',
        'api_calls WHERE account_id',
      ].map(async (from) => (await service.query<{ n: number }>(`SELECT count(*) AS n FROM ${from} = ?`, accountId))[0]!.n),
    )
    expect(left).toEqual([0, 0, 0, 0, 0, 0])

    // The email is free again.
    const again = await service.api.register(account.email, 'starting over again')
    expect((await service.api.get('/api/usage', again.apiKey)).body.api_calls_today).toBe(1)
  })

  test('the next new account gets a new id and starts from zero: no credits, calls or sessions carried over', async () => {
    const env = await startAltTextEnv({ env: { ALTTEXT_FREE_CREDITS: '5' }, overrides: { passwords: CHEAP_PASSWORDS } })
    try {
      const gone = await env.service.api.register()
      for (let i = 0; i < 2; i++) expect((await env.generate({ image_url: env.serve(makePng(40 + i, 30)) }, gone.apiKey)).status).toBe(200)
      expect((await env.service.api.get('/api/usage', gone.apiKey)).body).toMatchObject({ credits: { used: 2 }, api_calls_today: 3 })
      const { cookie } = await signIn(env.service, gone.email, gone.password)
      const idOf = async (email: string) => (await env.service.query<{ id: number }>('SELECT id FROM accounts WHERE email = ?', email))[0]?.id
      const goneId = (await idOf(gone.email))!
      const deleted = await env.service.api.request('DELETE', '/api/account', { body: { password: gone.password }, headers: fromConsole(cookie) })
      expect(deleted.status).toBe(200)

      // Without AUTOINCREMENT SQLite would hand the highest id out again once its row is gone.
      const next = await env.service.api.register()
      expect(await idOf(next.email)).toBeGreaterThan(goneId)
      const usage = await env.service.api.get('/api/usage', next.apiKey)
      expect(usage.body).toMatchObject({ credits: { total: 5, used: 0, remaining: 5 }, api_calls_today: 1 })
      expect((await env.service.api.request('GET', '/api/session', { headers: { cookie } })).status).toBe(401)
    } finally {
      await env.stop()
    }
  })
})
