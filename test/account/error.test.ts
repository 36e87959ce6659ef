// The account page's refusals: a session is required (a key alone is not enough), the password must be
// right, bodies are validated, and the sign-in rate tier applies.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startAltTextEnv } from '../support/alt-text-env'
import { expectApiError } from '../support/assertions'
import { makePng } from '../support/images'
import { CHEAP_PASSWORDS, fromConsole, signIn, withSession } from '../support/session'
import { type RegisteredAccount, startTestService, type TestService } from '../support/service'

let service: TestService
let account: RegisteredAccount
let cookie: string

beforeAll(async () => {
  service = await startTestService({ env: { ALTTEXT_RATE_LIMITS: 'off' }, overrides: { passwords: CHEAP_PASSWORDS } })
  account = await service.api.register()
  cookie = (await signIn(service, account.email, account.password)).cookie
})
afterAll(async () => {
  await service.stop()
})

const CHANGE = { current_password: 'correct horse battery', new_password: 'another long password' }

describe('a session is required', () => {
  test('with a key only, or nothing at all: 401 session_required, and nothing changes', async () => {
    expectApiError(await service.api.post('/api/account/password', CHANGE, account.apiKey), 401, 'session_required')
    expectApiError(await service.api.post('/api/account/password', CHANGE), 401, 'session_required')
    expectApiError(await service.api.request('DELETE', '/api/account', { body: { password: account.password }, key: account.apiKey }), 401, 'session_required')
    expectApiError(await service.api.request('DELETE', '/api/account', { body: { password: account.password } }), 401, 'session_required')
    expect((await service.api.post('/api/login', { email: account.email, password: account.password })).status).toBe(200)
  })

  test('a session is checked before the body: an unknown cookie is 401 invalid_session even with a bad body', async () => {
    const headers = fromConsole(`alttext_session=${'C'.repeat(43)}`)
    expectApiError(await service.api.request('POST', '/api/account/password', { body: { nonsense: true }, headers }), 401, 'invalid_session')
    expectApiError(await service.api.request('DELETE', '/api/account', { body: {}, headers }), 401, 'invalid_session')
  })
})

describe('the password must be right', () => {
  test('a wrong current password is 401 invalid_credentials; the password stays and no session ends', async () => {
    const other = await signIn(service, account.email, account.password)
    const res = await withSession(service, cookie, 'POST', '/api/account/password', {
      current_password: 'not my password',
      new_password: 'another long password',
    })
    expectApiError(res, 401, 'invalid_credentials')
    expect(res.body.error.message).toBe('the password is wrong')
    expect((await service.api.request('GET', '/api/session', { headers: { cookie: other.cookie } })).status).toBe(200)
    expect((await service.api.post('/api/login', { email: account.email, password: account.password })).status).toBe(200)
  })

  test('a wrong password does not delete the account', async () => {
    const res = await service.api.request('DELETE', '/api/account', { body: { password: 'not my password' }, headers: fromConsole(cookie) })
    expectApiError(res, 401, 'invalid_credentials')
    expect(res.headers.get('set-cookie')).toBeNull()
    expect((await service.api.get('/api/usage', account.apiKey)).status).toBe(200)
    expect((await service.api.request('GET', '/api/session', { headers: { cookie } })).status).toBe(200)
  })
})

describe('bodies', () => {
  test('a missing or invalid field is 400 invalid_request naming it', async () => {
    const change = (body: unknown) => withSession(service, cookie, 'POST', '/api/account/password', body)
    expectApiError(await change({ new_password: 'another long password' }), 400, 'invalid_request', 'current_password')
    expectApiError(await change({ current_password: account.password }), 400, 'invalid_request', 'new_password')
    expectApiError(await change({ current_password: account.password, new_password: 'short' }), 400, 'invalid_request', 'new_password')
    expectApiError(await change({ current_password: account.password, new_password: 'x'.repeat(129) }), 400, 'invalid_request', 'new_password')
    expectApiError(await withSession(service, cookie, 'DELETE', '/api/account', {}), 400, 'invalid_request', 'password')
    expectApiError(await withSession(service, cookie, 'DELETE', '/api/account', { password: 42 }), 400, 'invalid_request', 'password')
  })

  test('a body not declared as JSON is 415', async () => {
    const res = await service.api.request('DELETE', '/api/account', {
      rawBody: `password=${encodeURIComponent(account.password)}`,
      headers: fromConsole(cookie, { 'content-type': 'application/x-www-form-urlencoded' }),
    })
    expectApiError(res, 415, 'unsupported_media_type')
  })
})

describe('rate limit', () => {
  test('the account settings are in the sign-in tier: 5 a minute per address', async () => {
    const limited = await startTestService({ overrides: { passwords: CHEAP_PASSWORDS } })
    try {
      const mine = await limited.api.register()
      const session = await signIn(limited, mine.email, mine.password)
      for (let i = 0; i < 5; i++) {
        const res = await withSession(limited, session.cookie, 'POST', '/api/account/password', {
          current_password: `wrong password ${i}`,
          new_password: 'whatever it is',
        })
        expect(res.status).toBe(401)
        expect(res.headers.get('ratelimit-limit')).toBe('5')
      }
      const sixth = await withSession(limited, session.cookie, 'POST', '/api/account/password', {
        current_password: mine.password,
        new_password: 'whatever it is',
      })
      expectApiError(sixth, 429, 'rate_limited')
      const deleteLimit = await withSession(limited, session.cookie, 'DELETE', '/api/account', { password: 'wrong password' })
      expect(deleteLimit.headers.get('ratelimit-limit')).toBe('5')
    } finally {
      await limited.stop()
    }
  })
})

describe('an account deleted while one of its images is with the model', () => {
  test('the request ends 401 invalid_api_key, not 500: nothing is charged or written for the gone account', async () => {
    const env = await startAltTextEnv({ overrides: { passwords: CHEAP_PASSWORDS }, ollama: { hang: true } })
    try {
      const gone = await env.service.api.register()
      const { cookie } = await signIn(env.service, gone.email, gone.password)
      const pending = env.generate({ image_url: env.serve(makePng(33, 21)) }, gone.apiKey)
      await env.ollama.waitFor(() => env.ollama.inFlight() === 1)
      const deleted = await env.service.api.request('DELETE', '/api/account', { body: { password: gone.password }, headers: fromConsole(cookie) })
      expect(deleted.status).toBe(200)
      env.ollama.release()
      expectApiError(await pending, 401, 'invalid_api_key')
      expect((await env.service.query<{ n: number }>('SELECT count(*) AS n FROM credit_usage'))[0]!.n).toBe(0)
    } finally {
      await env.stop()
    }
  })
})
