// Generic HTTP security: no stack trace, file path, SQL or password in any body (a provoked 500
// included), junk request ids replaced, odd headers and content types handled without a 500.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { argon2idHasher } from '../../src/modules/accounts/service'
import { MAX_JSON_DEPTH, MAX_JSON_VALUES } from '../../src/shared/limits'
import { httpRequest, rawRequest } from '../support/raw-http'
import { startTestService, uniqueEmail, type ApiResponse, type TestService } from '../support/service'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const SECRET = 'Hush-Secret-Pa55word-8841'
/** A password that makes the injected verifier throw an error that looks like a leaky database failure. */
const EXPLODE = 'explode-now-please-1234'
const LEAKY_MESSAGE = 'SQLITE_ERROR: near "SELECT": syntax error in SELECT password_hash FROM accounts WHERE email = ?'

let service: TestService
let apiKey: string

beforeAll(async () => {
  service = await startTestService({
    env: { ALTTEXT_RATE_LIMITS: 'off' },
    overrides: {
      passwords: {
        hash: argon2idHasher.hash,
        verify: async (password, hash) => {
          if (password === EXPLODE) {
            const error = new Error(LEAKY_MESSAGE)
            error.stack = `Error: ${LEAKY_MESSAGE}\n    at query (/work/main/src/store/sqlite.ts:98:7)\n    at login (/work/main/src/modules/accounts/service.ts:64:24)`
            throw error
          }
          return argon2idHasher.verify(password, hash)
        },
      },
    },
  })
  apiKey = (await service.api.register(uniqueEmail('owner'), SECRET)).apiKey
})
afterAll(async () => {
  await service.stop()
})

/** Nothing a client should never see: stack frames, source paths, SQL, the password sent. */
function expectNoLeak(res: ApiResponse, secrets: string[] = [SECRET]): void {
  const where = `${res.status} ${res.text.slice(0, 300)}`
  expect({ where, stackFrame: /\n\s*at\s|\bat \S+ \(|\bat (async )?\S+:\d+:\d+/.test(res.text) }).toEqual({ where, stackFrame: false })
  expect({ where, path: /\/src\/|\/work\/|node_modules|\.ts:\d+|file:\/\//.test(res.text) }).toEqual({ where, path: false })
  expect({ where, sql: /\bSELECT\b|\bINSERT\b|\bUPDATE\b|sqlite|SQLITE_/i.test(res.text) }).toEqual({ where, sql: false })
  for (const secret of secrets) expect(res.text).not.toContain(secret)
}

describe('no leaks in bodies', () => {
  test('a provoked internal error is a bare 500 internal_error: no stack, no path, no SQL; details go to the log', async () => {
    const res = await service.api.post('/api/login', { email: uniqueEmail('boom'), password: EXPLODE })
    expect(res.status).toBe(500)
    expect(res.body).toEqual({ error: { code: 'internal_error', message: expect.any(String), docs: 'http://alttext.test/docs/errors#internal_error' } })
    expectNoLeak(res, [EXPLODE, LEAKY_MESSAGE])
    // The message points the operator at the log entry by request id.
    const id = res.headers.get('x-request-id')!
    expect(id).toMatch(UUID)
    expect(res.body.error.message).toContain(id)
    const logged = service.logs.find((l) => l.level === 'error' && l.request_id === id)
    expect(logged).toBeDefined()
    expect(JSON.stringify(logged)).toContain('SQLITE_ERROR')
    // The service is still up.
    expect((await service.api.get('/health')).status).toBe(200)
  })

  test('hostile and malformed requests answer without a leak and without a 500', async () => {
    const requests: [string, () => Promise<ApiResponse>][] = [
      ['sql in email', () => service.api.post('/api/login', { email: "x'; DROP TABLE accounts;--@example.com", password: SECRET })],
      ['sql in password', () => service.api.post('/api/login', { email: uniqueEmail('sql'), password: `' OR '1'='1' -- ${SECRET}` })],
      ['sql in prefix', () => service.api.post('/api/keys/revoke', { key_prefix: "alt_' OR 1=1 --" }, apiKey)],
      ['sql in key', () => service.api.get('/api/usage', "alt_' UNION SELECT * FROM api_keys --")],
      ['sql in validate-key', () => service.api.post('/api/validate-key', { api_key: "' OR ''='" })],
      ['sql in token', () => service.api.post('/api/reset-password', { token: "' OR 1=1 --", new_password: SECRET })],
      ['password too long', () => service.api.post('/api/register', { email: uniqueEmail('long'), password: SECRET.repeat(10) })],
      ['password as object', () => service.api.post('/api/register', { email: uniqueEmail('obj'), password: { secret: SECRET } })],
      ['password as array', () => service.api.post('/api/login', { email: uniqueEmail('arr'), password: [SECRET, SECRET] })],
      [
        'malformed with password',
        () =>
          service.api.request('POST', '/api/login', { rawBody: `{"email":"a@b.co","password":"${SECRET}"`, headers: { 'content-type': 'application/json' } }),
      ],
      [
        'form body with password',
        () =>
          service.api.request('POST', '/api/login', {
            rawBody: `email=a%40b.co&password=${SECRET}`,
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
          }),
      ],
      ['deeply nested arrays', () => service.api.request('POST', '/api/login', { rawBody: '['.repeat(20_000) + ']'.repeat(20_000) })],
      [
        'deeply nested email',
        () => service.api.request('POST', '/api/login', { rawBody: `{"email":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)},"password":"${SECRET}"}` }),
      ],
      [
        'prototype keys',
        () =>
          service.api.request('POST', '/api/login', {
            rawBody: `{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}},"email":"a@b.co","password":"${SECRET}"}`,
          }),
      ],
      ['huge number', () => service.api.request('POST', '/api/keys', { rawBody: '{"expires_in_days": 1e400}', key: apiKey })],
      ['negative zero and floats', () => service.api.post('/api/keys', { expires_in_days: 1.5, label: -0 }, apiKey)],
      ['unicode tricks', () => service.api.post('/api/register', { email: 'a\u0000b@example.com', password: `${SECRET}\u202e\ud800` })],
      ['percent junk path', () => service.api.get('/api/%')],
      ['encoded NUL path', () => service.api.get('/api/%00')],
      ['bad escape path', () => service.api.get('/api/%E0%A4%A')],
      ['traversal path', () => service.api.get('/docs/../../../etc/passwd')],
      ['encoded traversal', () => service.api.get('/docs/%2e%2e/%2e%2e/etc/passwd')],
      ['odd method', () => service.api.request('OPTIONS', '/api/login')],
      ['key with control chars', () => service.api.get('/api/usage', `alt_\t${'a'.repeat(63)}`)],
      ['very long key', () => service.api.get('/api/usage', `alt_${'f'.repeat(5000)}`)],
    ]
    const fiveHundreds: string[] = []
    for (const [what, send] of requests) {
      const res = await send()
      if (res.status >= 500) fiveHundreds.push(`${what}: ${res.status} ${res.text.slice(0, 200)}`)
      expectNoLeak(res, [SECRET])
      expect(res.text).not.toContain('root:x:0:0') // no file served by a traversal
      if (res.status >= 400 && res.text) expect(res.body?.error).toBeDefined()
    }
    expect(fiveHundreds).toEqual([])
    // The prototype keys polluted nothing in the (in-process) server.
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })

  test('the password never reaches the log, whatever the request looked like', () => {
    expect(service.logText()).not.toContain(SECRET)
  })
})

describe('the shape of a JSON body, checked before it is parsed', () => {
  const json = { 'content-type': 'application/json' }
  const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`
  const expectShapeRefused = (res: ApiResponse, limit: string) => {
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status: 400, code: 'invalid_request' })
    expect(res.body.error.message).toContain(limit)
    expectNoLeak(res)
  }

  test(`nested deeper than ${MAX_JSON_DEPTH} levels, in an unknown field too: 400 invalid_request naming the limit, on routes with and without a key`, async () => {
    const register = `{"email":"${uniqueEmail('deep')}","password":"${SECRET}","junk":${nested(30_000)}}`
    expectShapeRefused(await service.api.request('POST', '/api/register', { rawBody: register, headers: json }), `${MAX_JSON_DEPTH} levels`)
    const objects = `{"label":"deep","junk":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}`
    expectShapeRefused(await service.api.request('POST', '/api/keys', { rawBody: objects, key: apiKey, headers: json }), `${MAX_JSON_DEPTH} levels`)
    // The body's own object is the first level.
    const atLimit = `{"label":"at the limit","junk":${nested(MAX_JSON_DEPTH - 1)}}`
    expect((await service.api.request('POST', '/api/keys', { rawBody: atLimit, key: apiKey, headers: json })).status).toBe(201)
    const overLimit = `{"label":"over the limit","junk":${nested(MAX_JSON_DEPTH)}}`
    expectShapeRefused(await service.api.request('POST', '/api/keys', { rawBody: overLimit, key: apiKey, headers: json }), `${MAX_JSON_DEPTH} levels`)
  })

  test(`more than ${MAX_JSON_VALUES} elements and members: 400 invalid_request naming the limit`, async () => {
    const many = (n: number) => `{"email":"${uniqueEmail('many')}","password":"${SECRET}","junk":[${'0,'.repeat(n - 1)}0]}`
    // Email, password and junk are three members.
    expectShapeRefused(await service.api.request('POST', '/api/register', { rawBody: many(MAX_JSON_VALUES - 2), headers: json }), String(MAX_JSON_VALUES))
    expect((await service.api.request('POST', '/api/register', { rawBody: many(MAX_JSON_VALUES - 3), headers: json })).status).toBe(201)
    const members = `{"label":"members",${'"a":0,'.repeat(MAX_JSON_VALUES)}"a":0}`
    expectShapeRefused(await service.api.request('POST', '/api/keys', { rawBody: members, key: apiKey, headers: json }), String(MAX_JSON_VALUES))
  })

  test('brackets, braces, quotes and escapes inside strings are text, not structure', async () => {
    const label = `[{"\\"[[${'['.repeat(50)}`
    const body = `{"label":${JSON.stringify(label)},"note":${JSON.stringify(`${'[{'.repeat(20_000)}"`)}}`
    const res = await service.api.request('POST', '/api/keys', { rawBody: body, key: apiKey, headers: json })
    expect(res.status).toBe(201)
    expect(res.body.label).toBe(label)
  })

  test('POST /api/alt-text: in a small body and beside an uploaded image', async () => {
    const small = `{"image_url":"https://127.0.0.1:9/a.png","junk":${nested(1000)}}`
    expectShapeRefused(await service.api.request('POST', '/api/alt-text', { rawBody: small, key: apiKey, headers: json }), `${MAX_JSON_DEPTH} levels`)
    // Over 64 KiB: read as it arrives, the image taken out, the rest checked.
    const image = Buffer.alloc(96 * 1024, 7).toString('base64')
    const upload = `{"image_base64":"${image}","junk":${nested(1000)}}`
    const refused = await service.api.request('POST', '/api/alt-text', { rawBody: upload, key: apiKey, headers: json })
    expectShapeRefused(refused, `${MAX_JSON_DEPTH} levels`)
    expect(refused.headers.get('connection')).toBe('close')
    const values = `{"image_base64":"${image}","junk":[${'0,'.repeat(MAX_JSON_VALUES)}0]}`
    expectShapeRefused(await service.api.request('POST', '/api/alt-text', { rawBody: values, key: apiKey, headers: json }), String(MAX_JSON_VALUES))
  })

  test('the service answers as usual after them', async () => {
    expect((await service.api.get('/health')).status).toBe(200)
    expect((await service.api.get('/api/keys', apiKey)).status).toBe(200)
  })
})

describe('request ids', () => {
  test('a junk X-Request-Id is replaced by a generated one', async () => {
    const junk = [
      'a'.repeat(500),
      'x'.repeat(129),
      '<script>alert(1)</script>',
      'id with spaces',
      '"quoted"',
      'semi;colon',
      '{"json":1}',
      'ünïcode',
      '../../etc/passwd',
    ]
    for (const value of junk) {
      const res = await service.api.request('GET', '/health', { headers: { 'x-request-id': value } })
      expect(res.status).toBe(200)
      const id = res.headers.get('x-request-id')
      expect({ value, id: id ?? '' }).toEqual({ value, id: expect.stringMatching(UUID) })
    }
    // The junk did not reach the log either.
    const log = service.logText()
    expect(log).not.toContain('<script>')
    expect(log).not.toContain('a'.repeat(500))
  })

  test('an empty X-Request-Id is replaced too; the longest sane id (128) is kept', async () => {
    const empty = await service.api.request('GET', '/health', { headers: { 'x-request-id': '' } })
    expect(empty.headers.get('x-request-id')).toMatch(UUID)
    const longest = 'r'.repeat(128)
    expect((await service.api.request('GET', '/health', { headers: { 'x-request-id': longest } })).headers.get('x-request-id')).toBe(longest)
  })

  test('generated ids are unique per request', async () => {
    const ids = await Promise.all(Array.from({ length: 50 }, () => service.api.get('/health').then((r) => r.headers.get('x-request-id'))))
    expect(new Set(ids).size).toBe(50)
  })
})

describe('odd headers', () => {
  test('a request with many headers is served', async () => {
    const headers: Record<string, string> = {}
    for (let i = 0; i < 90; i++) headers[`x-filler-${i}`] = `value-${i}`
    const res = await service.api.request('GET', '/api/usage', { headers, key: apiKey })
    expect(res.status).toBe(200)
    expect(res.headers.get('x-request-id')).toMatch(UUID)
  })

  test('a huge number of headers, a huge header or a huge URL is refused without a 500, and the service lives on', async () => {
    for (const count of [200, 2000]) {
      const headers: Record<string, string> = {}
      for (let i = 0; i < count; i++) headers[`x-filler-${i}`] = `value-${i}`
      const res = await service.api.request('GET', '/health', { headers })
      expect(res.status).toBeLessThan(500)
    }
    const bigHeader = await service.api.request('GET', '/health', { headers: { 'x-big': 'a'.repeat(100_000) } })
    expect(bigHeader.status).toBeLessThan(500)
    const bigUrl = await service.api.get(`/${'a'.repeat(20_000)}`)
    expect(bigUrl.status).toBeLessThan(500)
    expectNoLeak(bigUrl)
    expect((await service.api.get('/health')).status).toBe(200)
  })

  test('duplicate and conflicting X-API-Key headers do not authenticate anyone by accident', async () => {
    const res = await service.api.request('GET', '/api/usage', { headers: { 'x-api-key': `${apiKey}, alt_${'0'.repeat(64)}` } })
    expect(res.status).toBe(401)
    expectNoLeak(res)
  })
})

describe('content types', () => {
  test('a JSON body is accepted with a JSON Content-Type, with or without parameters', async () => {
    const account = await service.api.register()
    const body = JSON.stringify({ email: account.email, password: account.password })
    for (const contentType of ['application/json', 'application/json; charset=utf-8', 'Application/JSON', 'application/vnd.api+json']) {
      const res = await service.api.request('POST', '/api/login', { rawBody: body, headers: { 'content-type': contentType } })
      expect({ contentType, status: res.status }).toEqual({ contentType, status: 200 })
      expect(res.body.email).toBe(account.email)
    }
  })

  test('a body not declared as JSON is 415 unsupported_media_type, never parsed: a cross-site form post cannot register or ask for a reset', async () => {
    const email = uniqueEmail('csrf')
    const body = JSON.stringify({ email, password: 'correct horse battery' })
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=zzz', 'application/xml', '']) {
      for (const path of ['/api/register', '/api/forgot-password', '/api/login']) {
        const res = await service.api.request('POST', path, { rawBody: body, headers: contentType === '' ? {} : { 'content-type': contentType } })
        expect({ contentType, path, status: res.status, code: res.body?.error?.code }).toEqual({
          contentType,
          path,
          status: 415,
          code: 'unsupported_media_type',
        })
        expectNoLeak(res)
      }
    }
    // Nothing was created by any of them.
    expect((await service.api.post('/api/login', { email, password: 'correct horse battery' })).status).toBe(401)
  })

  test('a body that is not JSON is 400 invalid_request under a JSON Content-Type, never 500', async () => {
    for (const rawBody of ['email=a%40b.co&password=correct+horse+battery', '<login/>', 'hello', '\u0000\u0001\u0002']) {
      const res = await service.api.request('POST', '/api/register', { rawBody, headers: { 'content-type': 'application/json' } })
      expect({ rawBody, status: res.status, code: res.body?.error?.code }).toEqual({ rawBody, status: 400, code: 'invalid_request' })
      expectNoLeak(res)
    }
  })

  test('two passwords that differ only in invalid UTF-8 bytes do not match: invalid UTF-8 is refused, not replaced', async () => {
    const email = uniqueEmail('utf8')
    const withBytes = (bytes: number[]) =>
      fetch(`${service.url}/api/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: Buffer.concat([Buffer.from(`{"email":"${email}","password":"password-`), Buffer.from(bytes), Buffer.from('"}')]),
      })
    const registered = await withBytes([0xff, 0xfe])
    expect(registered.status).toBe(400)
    expect(((await registered.json()) as { error: { code: string; message: string } }).error.message).toMatch(/UTF-8/)
  })

  test('responses are JSON with a JSON content type, also for errors', async () => {
    for (const res of [await service.api.get('/health'), await service.api.get('/nope'), await service.api.post('/api/login', {})]) {
      expect(res.headers.get('content-type')).toContain('application/json')
      expect(res.body).toBeDefined()
    }
  })
})

describe('routes that take a caller', () => {
  test('every operation the API document declares keyed answers 401 missing_api_key without a key (session-only ones session_required); no other does', async () => {
    const doc = (await service.api.get('/openapi.json')).body as { paths: Record<string, Record<string, { security?: Record<string, unknown>[] }>> }
    const keyed: string[] = []
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const concrete = path.replace(/\{[^}]+\}/g, 'alt_00000000')
        const res = await service.api.request(method.toUpperCase(), concrete, method === 'get' ? {} : { body: {} })
        // An empty alternative ({}) makes the credential optional (/metrics without a token answers loopback).
        const declared = (operation.security ?? []).length > 0 && !(operation.security ?? []).some((scheme) => Object.keys(scheme).length === 0)
        if (declared) keyed.push(`${method.toUpperCase()} ${path}`)
        // The account settings and GET /api/session take only a session (the cookie scheme alone).
        const code = operation.security?.some((scheme) => 'ApiKey' in scheme)
          ? 'missing_api_key'
          : expect.stringMatching(/^(session_required|invalid_session)$/)
        expect({ route: `${method} ${path}`, declared, status: res.status, code: res.body?.error?.code }).toEqual(
          declared ? { route: `${method} ${path}`, declared, status: 401, code } : expect.objectContaining({ declared: false }),
        )
        if (!declared) expect({ route: `${method} ${path}`, status: res.status }).not.toEqual({ route: `${method} ${path}`, status: 401 })
      }
    }
    // The contract's keyed routes, at the least; a new keyed route is covered by the walk above.
    expect(keyed).toEqual(
      expect.arrayContaining([
        'POST /api/alt-text',
        'GET /api/usage',
        'GET /api/keys',
        'POST /api/keys',
        'POST /api/keys/revoke',
        'POST /api/keys/rotate',
        'GET /api/keys/{prefix}',
      ]),
    )
  })
})

describe('any Host header', () => {
  // Bun leaves the URL relative when the Host is missing or not a valid authority: routing, limits and the
  // log must not depend on it.
  const odd = ['', 'a@b', 'x', 'a b', 'ä.example', 'exa mple:99999']

  test.each(odd)('Host "%s": a 404, a keyed route and a path-parameter route answer as usual, never 500', async (host) => {
    const errorsBefore = service.logs.filter((l) => l.level === 'error').length
    const headers = [`Host: ${host}`]
    expect((await rawRequest(service.url, httpRequest('GET', '/api/nope', headers))).status).toBe(404)
    const usage = await rawRequest(service.url, httpRequest('GET', '/api/usage', [...headers, `X-API-Key: ${apiKey}`]))
    expect(usage.status).toBe(200)
    const keyless = await rawRequest(service.url, httpRequest('GET', '/api/keys/alt_00000000', headers))
    expect(JSON.parse(keyless.body).error.code).toBe('missing_api_key')
    expect(service.logs.filter((l) => l.level === 'error')).toHaveLength(errorsBefore)
  })

  test('HTTP/1.0 without a Host: the access log names the real path', async () => {
    const res = await rawRequest(service.url, httpRequest('GET', '/api/keys/alt_00000000', ['X-Request-Id: no-host-path'], '', 'HTTP/1.0'))
    expect(res.status).toBe(401)
    expect((await service.accessLine('no-host-path')).path).toBe('/api/keys/alt_00000000')
  })
})
