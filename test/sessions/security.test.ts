// Browser sessions, the attacks: cross-site requests with the cookie, pages of other origins, the token at
// rest and in the log, the Secure flag behind https, and password guessing slowed per account without
// letting a stranger lock the owner out.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { expectApiError } from '../support/assertions'
import { CHEAP_PASSWORDS, FOREIGN_ORIGIN, fromConsole, OWN_ORIGIN, parseSetCookie, signIn } from '../support/session'
import { sqliteOnly } from '../support/postgres'
import { type RegisteredAccount, startTestService, type TestService } from '../support/service'

let now = Date.UTC(2026, 4, 1, 8, 0, 0)
let service: TestService
let account: RegisteredAccount

beforeAll(async () => {
  // Rate limits off: the per-address limit (5 a minute) would hide the per-account slow-down under test.
  // A trusted proxy lets a test speak for several client addresses.
  service = await startTestService({
    env: { ALTTEXT_RATE_LIMITS: 'off', ALTTEXT_TRUST_PROXY: '1' },
    overrides: { clock: () => now, passwords: CHEAP_PASSWORDS },
  })
  account = await service.api.register()
})
afterAll(async () => {
  await service.stop()
})

describe('cross-site requests with the session cookie', () => {
  test('a state change without a same-origin proof is 403 cross_site_request and changes nothing; the same request with a key is accepted', async () => {
    const { cookie } = await signIn(service, account.email, account.password)
    const before = (await service.api.get('/api/keys', account.apiKey)).body.keys.length
    const attempts: Record<string, string>[] = [
      { cookie },
      { cookie, origin: FOREIGN_ORIGIN },
      { cookie, origin: 'null' },
      { cookie, origin: 'http://alttext.test.evil.example' },
      { cookie, 'sec-fetch-site': 'cross-site' },
      { cookie, 'sec-fetch-site': 'same-site' },
      { cookie, origin: FOREIGN_ORIGIN, 'sec-fetch-site': 'same-origin' },
    ]
    for (const headers of attempts) {
      const res = await service.api.request('POST', '/api/keys', { body: { label: 'csrf' }, headers })
      expectApiError(res, 403, 'cross_site_request')
    }
    for (const path of ['/api/keys/revoke', '/api/keys/rotate']) {
      expectApiError(
        await service.api.request('POST', path, { body: { key_prefix: account.prefix }, headers: { cookie, origin: FOREIGN_ORIGIN } }),
        403,
        'cross_site_request',
      )
    }
    expectApiError(await service.api.request('POST', '/api/session/end-all', { headers: { cookie, origin: FOREIGN_ORIGIN } }), 403, 'cross_site_request')
    expect((await service.api.get('/api/keys', account.apiKey)).body.keys.length).toBe(before)
    expect((await service.api.request('GET', '/api/session', { headers: { cookie } })).status).toBe(200)

    // A program with a key is not a browser riding on a cookie: the Origin does not matter.
    const byKey = await service.api.request('POST', '/api/keys', { body: { label: 'by key' }, key: account.apiKey, headers: { origin: FOREIGN_ORIGIN } })
    expect(byKey.status).toBe(201)
    const byKeyWithCookie = await service.api.request('POST', '/api/keys/revoke', {
      body: { key_prefix: byKey.body.prefix },
      key: account.apiKey,
      headers: { cookie, origin: FOREIGN_ORIGIN },
    })
    expect(byKeyWithCookie.status).toBe(200)
  })

  test('a page of another origin never uses the cookie, not even to read: the request is as if it had none', async () => {
    const { cookie } = await signIn(service, account.email, account.password)
    expectApiError(await service.api.request('GET', '/api/keys', { headers: { cookie, origin: FOREIGN_ORIGIN } }), 401, 'missing_api_key')
    expectApiError(await service.api.request('GET', '/api/usage', { headers: { cookie, 'sec-fetch-site': 'cross-site' } }), 401, 'missing_api_key')
    expectApiError(await service.api.request('GET', '/api/session', { headers: { cookie, origin: FOREIGN_ORIGIN } }), 401, 'invalid_session')
    // The same cookie from the service's own page works.
    expect((await service.api.request('GET', '/api/keys', { headers: { cookie, origin: OWN_ORIGIN } })).status).toBe(200)
  })

  test('signing in from another origin is refused (no one is signed in to an account of the attacker)', async () => {
    const res = await service.api.request('POST', '/api/session', {
      body: { email: account.email, password: account.password },
      headers: { origin: FOREIGN_ORIGIN },
    })
    expectApiError(res, 403, 'cross_site_request')
    expect(res.headers.get('set-cookie')).toBeNull()
  })

  test('signing out from another origin is refused and the session lives on', async () => {
    const { cookie } = await signIn(service, account.email, account.password)
    expectApiError(await service.api.request('DELETE', '/api/session', { headers: { cookie, origin: FOREIGN_ORIGIN } }), 403, 'cross_site_request')
    expectApiError(await service.api.request('DELETE', '/api/session', { headers: { cookie } }), 403, 'cross_site_request')
    expect((await service.api.request('GET', '/api/session', { headers: { cookie } })).status).toBe(200)
  })

  test("one account's session never reaches another account's keys", async () => {
    const other = await service.api.register()
    const { cookie } = await signIn(service, account.email, account.password)
    expectApiError(await service.api.request('GET', `/api/keys/${other.prefix}`, { headers: { cookie } }), 404, 'key_not_found')
    expectApiError(
      await service.api.request('POST', '/api/keys/revoke', { body: { key_prefix: other.prefix }, headers: fromConsole(cookie) }),
      404,
      'key_not_found',
    )
    expect((await service.api.get('/api/usage', other.apiKey)).status).toBe(200)
  })
})

describe('the token', () => {
  test('is stored only as its SHA-256', async () => {
    const { token } = await signIn(service, account.email, account.password)
    const hash = new Bun.CryptoHasher('sha256').update(token).digest('hex')
    const rows = await service.query<{ token_hash: string }>('SELECT token_hash FROM sessions')
    expect(rows.map((r) => r.token_hash)).toContain(hash)
    expect(JSON.stringify(await service.query('SELECT * FROM sessions'))).not.toContain(token)
  })

  sqliteOnly('the SQLite file and its write-ahead log on disk')('the database file never holds the token', async () => {
    const { token } = await signIn(service, account.email, account.password)
    for (const file of [service.dbPath, `${service.dbPath}-wal`]) {
      let bytes: Buffer
      try {
        bytes = readFileSync(file)
      } catch {
        continue
      }
      expect(bytes.includes(Buffer.from(token))).toBe(false)
    }
  })

  test('never reaches the log, nor does the password, in sign-in, use and sign-out', async () => {
    const { token, cookie } = await signIn(service, account.email, account.password)
    await service.api.request('GET', '/api/keys', { headers: { cookie } })
    await service.api.request('POST', '/api/keys', { body: {}, headers: { cookie } })
    await service.api.request('DELETE', '/api/session', { headers: fromConsole(cookie) })
    await service.api.request('GET', '/api/session', { headers: { cookie } })
    const log = service.logText()
    expect(log).toContain('session started')
    expect(log).not.toContain(token)
    expect(log).not.toContain(account.password)
    expect(log).not.toContain('alttext_session=')
  })
})

describe('the Secure flag and the __Host- prefix', () => {
  test('behind https (ALTTEXT_PUBLIC_URL) the cookie is __Host-alttext_session: Secure, Path=/, no Domain; the https origin is the own one', async () => {
    const https = await startTestService({
      env: { ALTTEXT_RATE_LIMITS: 'off', ALTTEXT_PUBLIC_URL: 'https://alttext.example.org' },
      overrides: { passwords: CHEAP_PASSWORDS },
    })
    try {
      const mine = await https.api.register()
      const { setCookie, cookie } = await signIn(https, mine.email, mine.password)
      expect(parseSetCookie(setCookie).name).toBe('__Host-alttext_session')
      expect(parseSetCookie(setCookie).attributes).toEqual({ 'max-age': '604800', path: '/', httponly: true, samesite: 'Lax', secure: true })
      const created = await https.api.request('POST', '/api/keys', { body: {}, headers: { cookie, origin: 'https://alttext.example.org' } })
      expect(created.status).toBe(201)
      const signedOut = await https.api.request('DELETE', '/api/session', { headers: { cookie, origin: 'https://alttext.example.org' } })
      const cleared = parseSetCookie(signedOut.headers.get('set-cookie')!)
      expect(cleared).toEqual({
        name: '__Host-alttext_session',
        value: '',
        attributes: { 'max-age': '0', path: '/', httponly: true, samesite: 'Lax', secure: true },
      })
      // The http origin of the same host is another origin.
      expect((await https.api.request('POST', '/api/keys', { body: {}, headers: { cookie, origin: 'http://alttext.example.org' } })).status).toBe(403)
    } finally {
      await https.stop()
    }
  })

  test('behind https, a plain alttext_session cookie (which a sibling sub-domain could plant) is not a session', async () => {
    const https = await startTestService({
      env: { ALTTEXT_RATE_LIMITS: 'off', ALTTEXT_PUBLIC_URL: 'https://alttext.example.org' },
      overrides: { passwords: CHEAP_PASSWORDS },
    })
    try {
      const attacker = await https.api.register()
      const victim = await https.api.register()
      const planted = (await signIn(https, attacker.email, attacker.password)).token
      const own = (await signIn(https, victim.email, victim.password)).token
      const plain = await https.api.request('GET', '/api/session', { headers: { cookie: `alttext_session=${planted}` } })
      expect([plain.status, plain.body.error.code]).toEqual([401, 'invalid_session'])
      // Sent first, as a browser may order a cookie with a Domain before the host's own: still only the own one counts.
      const both = await https.api.request('GET', '/api/session', { headers: { cookie: `alttext_session=${planted}; __Host-alttext_session=${own}` } })
      expect(both.status).toBe(200)
      expect(both.body.email).toBe(victim.email)
    } finally {
      await https.stop()
    }
  })

  test('behind plain http the cookie keeps its plain name (browsers refuse __Host- without Secure)', async () => {
    const { setCookie, cookie } = await signIn(service, account.email, account.password)
    expect(parseSetCookie(setCookie).name).toBe('alttext_session')
    expect(parseSetCookie(setCookie).attributes.secure).toBeUndefined()
    expect((await service.api.request('GET', '/api/session', { headers: { cookie } })).status).toBe(200)
    expectApiError(await service.api.request('GET', '/api/session', { headers: { cookie: `__Host-${cookie}` } }), 401, 'invalid_session')
  })
})

describe('per-account slow-down of password guessing', () => {
  const from = (address: string) => ({ 'x-forwarded-for': address })
  const attempt = (path: '/api/session' | '/api/login', email: string, password: string, address: string) =>
    service.api.request('POST', path, { body: { email, password }, headers: from(address) })

  test('after 5 failures (login and sign-in alike) further attempts wait 1 s, 2 s, 4 s…, up to 30 s, with Retry-After and without a password check', async () => {
    const victim = await service.api.register()
    const attacker = '203.0.113.10'
    for (let i = 0; i < 5; i++) {
      const path = i % 2 === 0 ? '/api/session' : '/api/login'
      expectApiError(await attempt(path, victim.email, `wrong password ${i}`, attacker), 401, 'invalid_credentials')
    }
    // Even the right password is not checked while the account waits.
    const waiting = await attempt('/api/session', victim.email, victim.password, attacker)
    expectApiError(waiting, 429, 'rate_limited')
    expect(waiting.headers.get('retry-after')).toBe('1')
    expect(waiting.headers.get('set-cookie')).toBeNull()
    expectApiError(await attempt('/api/login', victim.email, victim.password, '203.0.113.11'), 429, 'rate_limited')

    const delays: string[] = []
    for (let failures = 5; failures < 12; failures++) {
      now += 30_000
      expectApiError(await attempt('/api/login', victim.email, 'still wrong', attacker), 401, 'invalid_credentials')
      delays.push((await attempt('/api/login', victim.email, 'still wrong', attacker)).headers.get('retry-after')!)
    }
    expect(delays).toEqual(['2', '4', '8', '16', '30', '30', '30'])

    // Once the wait is over, the right password signs in and resets the count.
    now += 30_000
    expect((await attempt('/api/session', victim.email, victim.password, attacker)).status).toBe(200)
    expectApiError(await attempt('/api/login', victim.email, 'wrong again', attacker), 401, 'invalid_credentials')
    expectApiError(await attempt('/api/login', victim.email, 'wrong again', attacker), 401, 'invalid_credentials')
  })

  test('change-password and delete-account count wrong passwords in the same slow-down: a stolen session cannot guess the password', async () => {
    const victim = await service.api.register()
    const { cookie } = await signIn(service, victim.email, victim.password, from('198.51.100.20'))
    // The cookie, used from another address (where nobody ever signed in with the password).
    const thief = '203.0.113.30'
    const changePassword = (current: string) =>
      service.api.request('POST', '/api/account/password', {
        body: { current_password: current, new_password: 'a new password of mine' },
        headers: fromConsole(cookie, from(thief)),
      })
    const deleteAccount = (password: string) => service.api.request('DELETE', '/api/account', { body: { password }, headers: fromConsole(cookie, from(thief)) })
    for (let i = 0; i < 5; i++) {
      const res = i % 2 === 0 ? await changePassword(`guess ${i}`) : await deleteAccount(`guess ${i}`)
      expectApiError(res, 401, 'invalid_credentials')
    }
    // Even the right password is not checked while the account waits: neither route changes anything.
    const waiting = await changePassword(victim.password)
    expectApiError(waiting, 429, 'rate_limited')
    expect(waiting.headers.get('retry-after')).toBe('1')
    expectApiError(await deleteAccount(victim.password), 429, 'rate_limited')
    // One count for the account: sign-in from a new address waits too.
    expectApiError(await attempt('/api/session', victim.email, victim.password, '203.0.113.31'), 429, 'rate_limited')
    expect((await service.api.request('GET', '/api/session', { headers: { cookie } })).body.email).toBe(victim.email)

    // Wrong sign-ins count toward the wait of these routes as well.
    now += 30_000
    expectApiError(await attempt('/api/login', victim.email, 'another guess', thief), 401, 'invalid_credentials')
    expectApiError(await changePassword(victim.password), 429, 'rate_limited')

    // Once the wait is over, the right password works.
    now += 30_000
    expect((await changePassword(victim.password)).status).toBe(200)
  })

  test('an address that signed in to the account before is not delayed: a stranger cannot lock the owner out', async () => {
    const owner = await service.api.register()
    const home = '198.51.100.7'
    expect((await attempt('/api/session', owner.email, owner.password, home)).status).toBe(200)

    const stranger = '203.0.113.99'
    for (let i = 0; i < 8; i++) await attempt('/api/session', owner.email, `wrong guess ${i}`, stranger)
    expectApiError(await attempt('/api/session', owner.email, 'wrong guess again', stranger), 429, 'rate_limited')

    // The owner's typo is checked (401, not 429), and the right password works at once.
    expectApiError(await attempt('/api/session', owner.email, 'a typo in it', home), 401, 'invalid_credentials')
    expect((await attempt('/api/session', owner.email, owner.password, home)).status).toBe(200)
    expect((await attempt('/api/login', owner.email, owner.password, home)).status).toBe(200)
  })

  test('failures older than 15 minutes are forgotten', async () => {
    const victim = await service.api.register()
    const address = '203.0.113.50'
    for (let i = 0; i < 5; i++) await attempt('/api/login', victim.email, `wrong password ${i}`, address)
    expectApiError(await attempt('/api/login', victim.email, 'wrong password', address), 429, 'rate_limited')
    now += 15 * 60_000
    for (let i = 0; i < 4; i++) expectApiError(await attempt('/api/login', victim.email, `wrong password ${i}`, address), 401, 'invalid_credentials')
  })

  test('an unknown email slows down like a real one: the 429 does not tell whether an account exists', async () => {
    const address = '203.0.113.77'
    const ghost = 'ghost-account@example.com'
    for (let i = 0; i < 5; i++) expectApiError(await attempt('/api/session', ghost, `wrong password ${i}`, address), 401, 'invalid_credentials')
    const res = await attempt('/api/session', ghost, 'wrong password', address)
    expectApiError(res, 429, 'rate_limited')
    expect(res.headers.get('retry-after')).toBe('1')
  })
})
