// Generic HTTP errors: unknown routes and methods, bodies that are not JSON objects, the 64 KiB body
// limit (with and without Content-Length), request ids, and the docs link of every structured error.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ERROR_CATALOGUE } from '../../src/shared/errors'
import { startTestService, uniqueEmail, VALID_PASSWORD, type ApiResponse, type TestService } from '../support/service'

const LIMIT = 64 * 1024
const DOCS = 'http://alttext.test/docs/errors#'
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

let service: TestService
let apiKey: string

beforeAll(async () => {
  service = await startTestService({ env: { ALTTEXT_RATE_LIMITS: 'off' } })
  apiKey = (await service.api.register()).apiKey
})
afterAll(async () => {
  await service.stop()
})

function expectError(res: ApiResponse, status: number, code: string): void {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code })
  expect(res.headers.get('content-type')).toContain('application/json')
  expect(res.body).toEqual({ error: { code, message: expect.any(String), docs: DOCS + code } })
  expect(res.body.error.message.length).toBeGreaterThan(0)
}

const raw = (method: string, path: string, rawBody: string, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
  service.api.request(method, path, { rawBody, headers })

/** A JSON object of exactly `size` bytes: {"email":"…","password":"…","pad":"xxxx…"}. */
function jsonOfSize(size: number): string {
  const head = JSON.stringify({ email: uniqueEmail('size'), password: VALID_PASSWORD, pad: '' })
  return `${head.slice(0, -2) + 'x'.repeat(size - head.length)}"}`
}

/** POSTs `bytes` as a stream, so no Content-Length is sent (chunked transfer encoding). */
async function postChunked(path: string, bytes: Uint8Array, chunkSize = 4096): Promise<ApiResponse> {
  let offset = 0
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.length) return controller.close()
      controller.enqueue(bytes.slice(offset, offset + chunkSize))
      offset += chunkSize
    },
  })
  const res = await fetch(service.url + path, { method: 'POST', body, duplex: 'half', headers: { 'content-type': 'application/json' } } as RequestInit)
  const text = await res.text()
  let parsed: any
  try {
    parsed = JSON.parse(text)
  } catch {
    parsed = undefined
  }
  return { status: res.status, body: parsed, headers: res.headers, text }
}

describe('unknown routes', () => {
  test('an unknown path is 404 not_found JSON, for GET, POST and other methods', async () => {
    expectError(await service.api.get('/no/such/thing'), 404, 'not_found')
    expectError(await service.api.post('/api/no-such-endpoint', { email: 'a@b.co' }), 404, 'not_found')
    expectError(await service.api.request('PUT', '/api/nothing'), 404, 'not_found')
    expectError(await service.api.request('DELETE', '/x'), 404, 'not_found')
    expectError(await service.api.get('/api'), 404, 'not_found')
    expectError(await service.api.get('/api/'), 404, 'not_found')
  })

  test('the 404 of an authenticated-looking path needs no key and reveals nothing', async () => {
    expectError(await service.api.get('/api/admin'), 404, 'not_found')
    expectError(await service.api.get('/api/keys/secret/more', apiKey), 404, 'not_found')
  })

  test('a wrong method on a known path is 404 not_found', async () => {
    const cases: [string, string][] = [
      ['GET', '/api/register'],
      ['GET', '/api/login'],
      ['GET', '/api/forgot-password'],
      ['GET', '/api/reset-password'],
      ['GET', '/api/alt-text'],
      ['GET', '/api/validate-key'],
      ['POST', '/api/usage'],
      ['PUT', '/api/keys'],
      ['DELETE', '/api/keys'],
      ['PATCH', '/api/keys/revoke'],
      ['GET', '/api/keys/rotate/now'],
    ]
    for (const [method, path] of cases) {
      const res = await service.api.request(method, path, { key: apiKey, ...(method === 'GET' ? {} : { body: {} }) })
      expectError(res, 404, 'not_found')
    }
  })
})

describe('bodies that are not a JSON object', () => {
  const endpoints = ['/api/register', '/api/login', '/api/forgot-password', '/api/reset-password', '/api/validate-key']
  const bodies: [string, string][] = [
    ['malformed JSON', '{"email": "a@b.co", '],
    ['a trailing comma', '{"email": "a@b.co",}'],
    ['single quotes', "{'email': 'a@b.co'}"],
    ['two objects', '{"a":1}{"b":2}'],
    ['a JSON array', '[{"email": "a@b.co", "password": "correct horse battery"}]'],
    ['an empty array', '[]'],
    ['null', 'null'],
    ['a string', '"hello"'],
    ['a number', '42'],
    ['true', 'true'],
    ['an empty body', ''],
    ['only whitespace', ' \n\t '],
    ['a form-encoded body', 'email=a%40b.co&password=correct+horse'],
  ]

  test('is 400 invalid_request on every endpoint without a key, never 422 or 500', async () => {
    for (const path of endpoints) {
      for (const [what, body] of bodies) {
        const res = await raw('POST', path, body)
        if (res.status !== 400) throw new Error(`${what} to ${path}: ${res.status} ${res.text}`)
        expectError(res, 400, 'invalid_request')
      }
    }
  })

  test('is 400 invalid_request on authenticated endpoints too', async () => {
    for (const path of ['/api/keys', '/api/keys/revoke', '/api/keys/rotate', '/api/alt-text']) {
      for (const [what, body] of bodies) {
        // Every field of key creation is optional: no body at all is a valid request (see below).
        if (path === '/api/keys' && what === 'an empty body') continue
        const res = await service.api.request('POST', path, { rawBody: body, key: apiKey, headers: { 'content-type': 'application/json' } })
        if (res.status !== 400) throw new Error(`${what} to ${path}: ${res.status} ${res.text}`)
        expectError(res, 400, 'invalid_request')
      }
    }
  })

  test('a POST without a body to a route that needs none is served, not refused as "not a JSON object"', async () => {
    const bare = await fetch(`${service.url}/api/keys`, { method: 'POST', headers: { 'x-api-key': apiKey } })
    expect(bare.status).toBe(201)
    expect(((await bare.json()) as { label: unknown }).label).toBeNull()
  })

  test('the message says what is wrong with the body', async () => {
    expect((await raw('POST', '/api/login', '{"email":')).body.error.message).toMatch(/json/i)
    expect((await raw('POST', '/api/login', '[]')).body.error.message).toMatch(/object/i)
    // An empty body is an empty object: the message names what is missing.
    expect((await raw('POST', '/api/login', '')).body.error.message).toMatch(/email is required/)
  })

  test('a body with invalid UTF-8 is 400 invalid_request', async () => {
    const res = await fetch(`${service.url}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: new Uint8Array([0x7b, 0x22, 0x65, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]),
    })
    expect(res.status).toBe(400)
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid_request')
  })
})

describe('the 64 KiB body limit', () => {
  test('a body over 64 KiB with Content-Length is 413 payload_too_large', async () => {
    const res = await raw('POST', '/api/login', jsonOfSize(LIMIT + 1))
    expectError(res, 413, 'payload_too_large')
    expectError(await raw('POST', '/api/register', jsonOfSize(200 * 1024)), 413, 'payload_too_large')
    const keyed = await service.api.request('POST', '/api/keys', {
      rawBody: jsonOfSize(LIMIT + 100),
      key: apiKey,
      headers: { 'content-type': 'application/json' },
    })
    expectError(keyed, 413, 'payload_too_large')
  })

  test('a body over 64 KiB sent chunked, without Content-Length, is 413 payload_too_large', async () => {
    const res = await postChunked('/api/login', new TextEncoder().encode(jsonOfSize(LIMIT + 1)))
    expectError(res, 413, 'payload_too_large')
    expectError(await postChunked('/api/register', new TextEncoder().encode(jsonOfSize(512 * 1024)), 16 * 1024), 413, 'payload_too_large')
  })

  test('a body just under or at 64 KiB is not a 413', async () => {
    for (const size of [LIMIT - 1, LIMIT]) {
      const body = jsonOfSize(size)
      expect(new TextEncoder().encode(body).length).toBe(size)
      const res = await raw('POST', '/api/login', body)
      expect(res.status).not.toBe(413)
      expect(res.status).toBe(401) // parsed and checked: no such account
      const chunked = await postChunked('/api/login', new TextEncoder().encode(body))
      expect(chunked.status).toBe(401)
    }
  })

  test('a small body sent chunked is parsed normally', async () => {
    const account = await service.api.register()
    const res = await postChunked('/api/login', new TextEncoder().encode(JSON.stringify({ email: account.email, password: account.password })), 7)
    expect(res.status).toBe(200)
    expect(res.body.email).toBe(account.email)
  })

  test('a body of several MiB is a structured 413 payload_too_large too', async () => {
    expectError(await raw('POST', '/api/login', jsonOfSize(2 * 1024 * 1024)), 413, 'payload_too_large')
    // Larger than the server's hard backstop (8 MiB): the client still gets the contract's body.
    expectError(await raw('POST', '/api/login', jsonOfSize(9 * 1024 * 1024)), 413, 'payload_too_large')
  })

  test('the service still answers after large bodies', async () => {
    expect((await service.api.get('/health')).status).toBe(200)
  })
})

describe('request ids', () => {
  test('every response carries X-Request-Id: successes, errors, 404s and 413s', async () => {
    const responses = [
      await service.api.get('/health'),
      await service.api.get('/api/usage', apiKey),
      await service.api.get('/api/usage'),
      await service.api.post('/api/login', {}),
      await service.api.get('/nope'),
      await raw('POST', '/api/login', jsonOfSize(LIMIT + 1)),
      await service.api.get('/docs/errors'),
    ]
    expect(responses.map((r) => r.status)).toEqual([200, 200, 401, 400, 404, 413, 200])
    const ids = responses.map((r) => r.headers.get('x-request-id'))
    for (const id of ids) expect(id).toMatch(UUID)
    expect(new Set(ids).size).toBe(ids.length)
  })

  test('a sane incoming X-Request-Id is echoed back, on success and on error', async () => {
    for (const [path, id] of [
      ['/health', 'req-12345'],
      ['/nope', 'trace.abc:def-42'],
      ['/api/usage', '0f8fad5b-d9cb-469f-a165-70867728950e'],
    ] as const) {
      const res = await service.api.request('GET', path, { headers: { 'x-request-id': id } })
      expect(res.headers.get('x-request-id')).toBe(id)
    }
  })

  test('the request id of a response is the one in the access log', async () => {
    const res = await service.api.get('/api/usage')
    const id = res.headers.get('x-request-id')
    const line = await service.accessLine(id!)
    expect(line).toMatchObject({ path: '/api/usage', status: 401, method: 'GET' })
  })
})

describe('docs links', () => {
  test('every structured error links to <ALTTEXT_PUBLIC_URL>/docs/errors#<code>, and its status is the catalogue status', async () => {
    const account = await service.api.register()
    const responses = [
      await service.api.post('/api/login', {}),
      await service.api.post('/api/login', { email: account.email, password: 'wrong password' }),
      await service.api.post('/api/register', { email: account.email, password: VALID_PASSWORD }),
      await service.api.post('/api/reset-password', { token: 'nope', new_password: 'a new password' }),
      await service.api.get('/api/usage'),
      await service.api.get('/api/usage', `alt_${'0'.repeat(64)}`),
      await service.api.post('/api/keys/revoke', { key_prefix: 'alt_00000000' }, account.apiKey),
      await service.api.get('/nope'),
      await raw('POST', '/api/login', jsonOfSize(LIMIT + 1)),
      await service.api.post('/api/alt-text', { image_url: 'http://127.0.0.1:9/a.png' }, account.apiKey), // refused (not https) whatever the build
    ]
    const codes = responses.map((r) => r.body?.error?.code)
    expect(codes).toEqual([
      'invalid_request',
      'invalid_credentials',
      'email_taken',
      'invalid_token',
      'missing_api_key',
      'invalid_api_key',
      'key_not_found',
      'not_found',
      'payload_too_large',
      expect.any(String),
    ])
    for (const res of responses) {
      const code = res.body.error.code as keyof typeof ERROR_CATALOGUE
      expect(res.body.error.docs).toBe(DOCS + code)
      expect(res.status).toBe(ERROR_CATALOGUE[code].status)
    }
  })

  test('the page the docs links point at has an entry for each code', async () => {
    const res = await fetch(`${service.url}/docs/errors`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/html')
    const html = await res.text()
    for (const code of Object.keys(ERROR_CATALOGUE)) expect(html).toContain(`id="${code}"`)
  })
})
