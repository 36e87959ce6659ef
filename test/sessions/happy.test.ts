// Browser sessions, the paths that succeed: sign in, the cookie's attributes, the session on the keyed
// routes (also to make a key when every key is gone), sign out, sign out everywhere, idle and absolute expiry.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startAltTextEnv } from '../support/alt-text-env'
import { makePng } from '../support/images'
import { CHEAP_PASSWORDS, FOREIGN_ORIGIN, fromConsole, OWN_ORIGIN, parseSetCookie, signIn, withSession } from '../support/session'
import { startTestService, type TestService, waitUntil } from '../support/service'

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

// The service's time source: tests move it forward only.
let now = Date.UTC(2026, 2, 15, 12, 0, 0)
let service: TestService

beforeAll(async () => {
  service = await startTestService({ env: { ALTTEXT_RATE_LIMITS: 'off' }, overrides: { clock: () => now, passwords: CHEAP_PASSWORDS } })
})
afterAll(async () => {
  await service.stop()
})

const iso = (ms: number) => new Date(ms).toISOString()

describe('POST /api/session', () => {
  test('signs in: 200 {email, plan, expires_at, email_verified} and an HttpOnly, SameSite=Lax cookie for 7 days (no Secure behind http)', async () => {
    const account = await service.api.register()
    const signedIn = await signIn(service, account.email, account.password)
    expect(signedIn.res.body).toEqual({ email: account.email, plan: 'free', expires_at: iso(now + 7 * DAY), email_verified: true })
    const cookie = parseSetCookie(signedIn.setCookie)
    expect(cookie.name).toBe('alttext_session')
    // 32 random bytes, base64url.
    expect(cookie.value).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(cookie.attributes).toEqual({ 'max-age': String(7 * 24 * 3600), path: '/', httponly: true, samesite: 'Lax' })
  })

  test('each sign-in is a new session with its own token', async () => {
    const account = await service.api.register()
    const first = await signIn(service, account.email, account.password)
    const second = await signIn(service, account.email, account.password)
    expect(first.token).not.toBe(second.token)
    for (const { cookie } of [first, second]) expect((await service.api.request('GET', '/api/session', { headers: { cookie } })).status).toBe(200)
  })

  test('the email is normalised like login: trimmed and case-insensitive', async () => {
    const account = await service.api.register()
    const signedIn = await signIn(service, `  ${account.email.toUpperCase()} `, account.password)
    expect(signedIn.res.body.email).toBe(account.email)
  })
})

describe('GET /api/session', () => {
  test('answers who is signed in: {email, plan, created_at, expires_at, email_verified}', async () => {
    const account = await service.api.register()
    const signedInAt = now
    const { cookie } = await signIn(service, account.email, account.password)
    now += 5 * MINUTE
    const res = await service.api.request('GET', '/api/session', { headers: { cookie } })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      email: account.email,
      plan: 'free',
      created_at: iso(signedInAt),
      expires_at: iso(signedInAt + 7 * DAY),
      email_verified: true,
    })
  })
})

describe('the session on the keyed routes', () => {
  test('reads keys and usage with the cookie alone', async () => {
    const account = await service.api.register()
    const { cookie } = await signIn(service, account.email, account.password)
    const keys = await service.api.request('GET', '/api/keys', { headers: { cookie } })
    expect(keys.status).toBe(200)
    expect(keys.body.keys.map((k: { prefix: string }) => k.prefix)).toEqual([account.prefix])
    const one = await service.api.request('GET', `/api/keys/${account.prefix}`, { headers: { cookie } })
    expect(one.status).toBe(200)
    expect(one.body.prefix).toBe(account.prefix)
    const usage = await service.api.request('GET', '/api/usage', { headers: { cookie } })
    expect(usage.status).toBe(200)
    expect(usage.body).toMatchObject({ plan: 'free', credits: { total: 50, used: 0, remaining: 50 } })
  })

  test('creates, rotates and revokes keys from the console page', async () => {
    const account = await service.api.register()
    const { cookie } = await signIn(service, account.email, account.password)
    const created = await withSession(service, cookie, 'POST', '/api/keys', { label: 'from the console' })
    expect(created.status).toBe(201)
    expect(created.body.label).toBe('from the console')
    expect((await service.api.get('/api/usage', created.body.api_key)).status).toBe(200)
    const rotated = await withSession(service, cookie, 'POST', '/api/keys/rotate', { key_prefix: created.body.prefix })
    expect(rotated.status).toBe(201)
    expect(rotated.body.revoked_prefix).toBe(created.body.prefix)
    expect((await service.api.get('/api/usage', created.body.api_key)).status).toBe(401)
    const revoked = await withSession(service, cookie, 'POST', '/api/keys/revoke', { key_prefix: rotated.body.prefix })
    expect(revoked.status).toBe(200)
    expect(revoked.body).toEqual({ prefix: rotated.body.prefix, revoked: true })
  })

  test('a person who revoked every key signs in and makes a new one', async () => {
    const account = await service.api.register()
    expect((await service.api.post('/api/keys/revoke', { key_prefix: account.prefix }, account.apiKey)).status).toBe(200)
    expect((await service.api.get('/api/keys', account.apiKey)).status).toBe(401)

    const { cookie } = await signIn(service, account.email, account.password)
    expect((await service.api.request('GET', '/api/keys', { headers: { cookie } })).body).toEqual({ keys: [] })
    const created = await withSession(service, cookie, 'POST', '/api/keys', { label: 'the new one' })
    expect(created.status).toBe(201)
    const keys = await service.api.get('/api/keys', created.body.api_key)
    expect(keys.status).toBe(200)
    expect(keys.body.keys.map((k: { prefix: string }) => k.prefix)).toEqual([created.body.prefix])
  })

  test('a state change is accepted with Sec-Fetch-Site: same-origin, or an Origin naming the address the request was sent to', async () => {
    const account = await service.api.register()
    const { cookie } = await signIn(service, account.email, account.password)
    const bySecFetch = await service.api.request('POST', '/api/keys', { body: {}, headers: { cookie, 'sec-fetch-site': 'same-origin' } })
    expect(bySecFetch.status).toBe(201)
    const byHost = await service.api.request('POST', '/api/keys', { body: {}, headers: { cookie, origin: service.url } })
    expect(byHost.status).toBe(201)
  })

  test('session calls are not counted in api_calls_today ("requests that authenticated with any key")', async () => {
    const account = await service.api.register()
    const { cookie } = await signIn(service, account.email, account.password)
    const first = await service.api.get('/api/usage', account.apiKey)
    expect(first.body.api_calls_today).toBe(1)
    for (let i = 0; i < 3; i++) {
      const bySession = await service.api.request('GET', '/api/usage', { headers: { cookie } })
      expect(bySession.body.api_calls_today).toBe(1)
    }
    expect((await service.api.get('/api/usage', account.apiKey)).body.api_calls_today).toBe(2)
  })

  test('a key, when sent, wins over the cookie: the key decides the account', async () => {
    const mine = await service.api.register()
    const other = await service.api.register()
    const { cookie } = await signIn(service, mine.email, mine.password)
    const res = await service.api.request('GET', '/api/keys', { key: other.apiKey, headers: { cookie } })
    expect(res.status).toBe(200)
    expect(res.body.keys.map((k: { prefix: string }) => k.prefix)).toEqual([other.prefix])
  })
})

describe('signing out', () => {
  test('DELETE /api/session: 204, the cookie is removed, and the session no longer works anywhere', async () => {
    const account = await service.api.register()
    const { cookie } = await signIn(service, account.email, account.password)
    const res = await service.api.request('DELETE', '/api/session', { headers: fromConsole(cookie) })
    expect(res.status).toBe(204)
    expect(res.text).toBe('')
    const cleared = parseSetCookie(res.headers.get('set-cookie')!)
    expect(cleared).toEqual({ name: 'alttext_session', value: '', attributes: { 'max-age': '0', path: '/', httponly: true, samesite: 'Lax' } })
    expect((await service.api.request('GET', '/api/session', { headers: { cookie } })).body.error.code).toBe('invalid_session')
    expect((await service.api.request('GET', '/api/keys', { headers: { cookie } })).body.error.code).toBe('invalid_session')
    // The account's key is untouched.
    expect((await service.api.get('/api/keys', account.apiKey)).status).toBe(200)
  })

  test('signing out again, or without any cookie, is still 204 and removes the cookie', async () => {
    const account = await service.api.register()
    const { cookie } = await signIn(service, account.email, account.password)
    expect((await service.api.request('DELETE', '/api/session', { headers: fromConsole(cookie) })).status).toBe(204)
    const again = await service.api.request('DELETE', '/api/session', { headers: fromConsole(cookie) })
    expect(again.status).toBe(204)
    expect(again.headers.get('set-cookie')).toContain('Max-Age=0')
    const none = await service.api.request('DELETE', '/api/session')
    expect(none.status).toBe(204)
    expect(none.headers.get('set-cookie')).toContain('Max-Age=0')
  })

  test('POST /api/session/end-all signs out every browser, this one included: {ended: n}; keys keep working', async () => {
    const account = await service.api.register()
    const other = await service.api.register()
    const sessions = [
      await signIn(service, account.email, account.password),
      await signIn(service, account.email, account.password),
      await signIn(service, account.email, account.password),
    ]
    const untouched = await signIn(service, other.email, other.password)
    const res = await withSession(service, sessions[0]!.cookie, 'POST', '/api/session/end-all')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ ended: 3 })
    expect(res.headers.get('set-cookie')).toContain('Max-Age=0')
    for (const { cookie } of sessions) expect((await service.api.request('GET', '/api/session', { headers: { cookie } })).status).toBe(401)
    expect((await service.api.request('GET', '/api/session', { headers: { cookie: untouched.cookie } })).status).toBe(200)
    expect((await service.api.get('/api/keys', account.apiKey)).status).toBe(200)
  })

  test('a program can sign every browser out with a key', async () => {
    const account = await service.api.register()
    const { cookie } = await signIn(service, account.email, account.password)
    const res = await service.api.post('/api/session/end-all', undefined, account.apiKey)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ ended: 1 })
    expect(res.headers.get('set-cookie')).toBeNull()
    expect((await service.api.request('GET', '/api/session', { headers: { cookie } })).status).toBe(401)
  })
})

describe('expiry', () => {
  /**
   * Waits until the session's use at `at` is recorded: it is written after the answer (on PostgreSQL a
   * moment later), and these tests move the clock by hours at once, which a real one would not.
   */
  const recorded = (token: string, at: number) => {
    const hash = new Bun.CryptoHasher('sha256').update(token).digest('hex')
    return waitUntil(
      async () => (await service.query<{ last_seen_at: number }>('SELECT last_seen_at FROM sessions WHERE token_hash = ?', hash))[0]?.last_seen_at === at,
      'the use of the session recorded',
    )
  }

  test('idle: a session used within 12 hours lives on; 12 hours without a request end it', async () => {
    const account = await service.api.register()
    const { token, cookie } = await signIn(service, account.email, account.password)
    const get = () => service.api.request('GET', '/api/session', { headers: { cookie } })
    for (let i = 0; i < 3; i++) {
      now += 12 * HOUR - MINUTE
      expect((await get()).status).toBe(200)
      await recorded(token, now)
    }
    now += 12 * HOUR
    const expired = await get()
    expect(expired.status).toBe(401)
    expect(expired.body.error.code).toBe('invalid_session')
    expect((await service.api.request('GET', '/api/keys', { headers: { cookie } })).body.error.code).toBe('invalid_session')
  })

  test('absolute: 7 days after sign-in the session ends however busy it was', async () => {
    const account = await service.api.register()
    const signedInAt = now
    const { token, cookie } = await signIn(service, account.email, account.password)
    const get = () => service.api.request('GET', '/api/usage', { headers: { cookie } })
    while (now + 6 * HOUR < signedInAt + 7 * DAY) {
      now += 6 * HOUR
      expect((await get()).status).toBe(200)
      await recorded(token, now)
    }
    now = signedInAt + 7 * DAY - 1
    expect((await get()).status).toBe(200)
    now = signedInAt + 7 * DAY
    expect((await get()).body.error.code).toBe('invalid_session')
  })

  test('the last use is written at most once a minute', async () => {
    const account = await service.api.register()
    const signedInAt = now
    const { token, cookie } = await signIn(service, account.email, account.password)
    const hash = new Bun.CryptoHasher('sha256').update(token).digest('hex')
    const lastSeen = async () =>
      (await service.query<{ last_seen_at: number }>('SELECT last_seen_at FROM sessions WHERE token_hash = ?', hash))[0]!.last_seen_at
    const get = () => service.api.request('GET', '/api/session', { headers: { cookie } })
    now += 30_000
    expect((await get()).status).toBe(200)
    expect(await lastSeen()).toBe(signedInAt)
    now += 30_000
    expect((await get()).status).toBe(200)
    // The use is recorded after the answer (PostgreSQL's write may land a moment later).
    await waitUntil(async () => (await lastSeen()) === now, 'the last use written')
  })

  test('expired sessions are not listed among live ones: a new sign-in after expiry works', async () => {
    const account = await service.api.register()
    await signIn(service, account.email, account.password)
    now += 8 * DAY
    const again = await signIn(service, account.email, account.password)
    expect((await service.api.request('GET', '/api/session', { headers: { cookie: again.cookie } })).status).toBe(200)
    expect(again.res.body.expires_at).toBe(iso(now + 7 * DAY))
  })
})

describe('the document', () => {
  test('the cookie scheme sits beside the key scheme; keyed routes accept either, the account settings only the cookie', async () => {
    const doc = (await service.api.get('/openapi.json')).body
    expect(doc.components.securitySchemes.cookieAuth).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'alttext_session' })
    expect(doc.paths['/api/keys'].get.security).toEqual([{ ApiKey: [] }, { cookieAuth: [] }])
    expect(doc.paths['/api/alt-text'].post.security).toEqual([{ ApiKey: [] }, { cookieAuth: [] }])
    expect(doc.paths['/api/account/password'].post.security).toEqual([{ cookieAuth: [] }])
    expect(doc.paths['/api/account'].delete.security).toEqual([{ cookieAuth: [] }])
    expect(doc.paths['/api/session'].post.responses['200'].headers['Set-Cookie']).toBeDefined()
    expect(doc.paths['/api/session'].delete.responses['204'].content).toBeUndefined()
    expect(Object.keys(doc.paths['/api/keys'].post.responses)).toEqual(expect.arrayContaining(['401', '403']))
    expect(OWN_ORIGIN).toBe(service.config.publicUrl)
  })
})

describe('POST /api/alt-text with the session', () => {
  test('the console generates alt text with the cookie alone, charged like a keyed call', async () => {
    const env = await startAltTextEnv({ overrides: { passwords: CHEAP_PASSWORDS } })
    try {
      const account = await env.service.api.register()
      const { cookie } = await signIn(env.service, account.email, account.password)
      const image = env.serve(makePng(64, 48))
      const res = await withSession(env.service, cookie, 'POST', '/api/alt-text', { image_url: image })
      expect(res.status).toBe(200)
      expect(res.body.alt_text).toBe('Two children flying a red kite on a windy beach.')
      expect(res.body.credits_remaining).toBe(49)
      const usage = await env.service.api.get('/api/usage', account.apiKey)
      expect(usage.body.credits).toEqual({ total: 50, used: 1, remaining: 49 })
      // A cached answer costs nothing, by session as by key.
      const cached = await withSession(env.service, cookie, 'POST', '/api/alt-text', { image_url: image })
      expect(cached.body.cached).toBe(true)
      expect(cached.body.credits_remaining).toBe(49)
      // Another site's page cannot spend the credits.
      const crossSite = await env.service.api.request('POST', '/api/alt-text', { body: { image_url: image }, headers: { cookie, origin: FOREIGN_ORIGIN } })
      expect(crossSite.status).toBe(403)
    } finally {
      await env.stop()
    }
  })
})
