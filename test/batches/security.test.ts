// Batches, security: every route needs a key or a session (checked before the body); an account sees,
// lists and cancels only its own batches (another's id is 404, never listed); Idempotency-Keys are per
// account; ids are random; a session's create and cancel must come from the service's own pages; image
// bytes and metadata never reach the log; creation is rate limited as one request.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { expectApiError } from '../support/assertions'
import { makePng } from '../support/images'
import { FOREIGN_ORIGIN, fromConsole, signIn } from '../support/session'
import { type RegisteredAccount, startTestService, type TestService } from '../support/service'
import { batchClient } from './support'

let env: AltTextEnv
let alice: RegisteredAccount
let bob: RegisteredAccount

beforeAll(async () => {
  env = await startAltTextEnv()
  alice = await env.service.api.register()
  bob = await env.service.api.register()
})
afterAll(async () => {
  await env.stop()
})

const ROUTES: [string, string][] = [
  ['POST', '/api/batches'],
  ['GET', '/api/batches'],
  ['GET', '/api/batches/bat_000000000000000000000000'],
  ['POST', '/api/batches/bat_000000000000000000000000/cancel'],
]

describe('authentication', () => {
  for (const [method, path] of ROUTES) {
    test(`${method} ${path}: 401 without credentials, before the body`, async () => {
      expectApiError(
        await env.service.api.request(method, path, path === '/api/batches' && method === 'POST' ? { rawBody: '{not json' } : {}),
        401,
        'missing_api_key',
      )
      expectApiError(await env.service.api.request(method, path, { key: `alt_${'0'.repeat(64)}` }), 401, 'invalid_api_key')
    })
  }
})

describe("one account cannot reach another account's batches", () => {
  test("another account's batch is 404 to read and to cancel, and never listed; it runs on untouched", async () => {
    const mine = batchClient(env.service.api, alice.apiKey)
    const theirs = batchClient(env.service.api, bob.apiKey)
    const created = await mine.create({ items: [{ image_url: env.serve(makePng(21, 21)), metadata: { secret: 'alice-only' } }] })
    expect(created.status).toBe(202)
    const read = await theirs.get(created.body.id)
    expectApiError(read, 404, 'not_found')
    expect(read.text).not.toContain('alice-only')
    expectApiError(await theirs.cancel(created.body.id), 404, 'not_found')
    expect((await theirs.list()).body.items).toEqual([])
    const ended = await mine.ended(created.body.id)
    expect(ended.body.status).toBe('completed')
    // A cursor made from another account's batch pages only through one's own.
    const cursor = Buffer.from(JSON.stringify([Date.now() + 1000, 'bat_zzzzzzzzzzzzzzzzzzzzzzzz'])).toString('base64url')
    expect((await theirs.list(`?cursor=${cursor}`)).body.items).toEqual([])
  })

  test('the same Idempotency-Key in two accounts makes two batches, and says nothing about the other', async () => {
    const key = crypto.randomUUID()
    const body = { items: [{ image_url: env.serve(makePng(22, 22)) }] }
    const a = await batchClient(env.service.api, alice.apiKey).create(body, { 'idempotency-key': key })
    const b = await batchClient(env.service.api, bob.apiKey).create({ items: [{ image_url: env.serve(makePng(23, 22)) }] }, { 'idempotency-key': key })
    expect(a.status).toBe(202)
    expect(b.status).toBe(202)
    expect(b.headers.get('idempotent-replayed')).toBeNull()
    expect(b.body.id).not.toBe(a.body.id)
  })

  test('ids are bat_ and 24 random hex characters', async () => {
    const client = batchClient(env.service.api, alice.apiKey)
    const ids = new Set<string>()
    for (let i = 0; i < 5; i++) ids.add((await client.create({ items: [{ image_url: env.serve(makePng(24 + i, 9)) }] })).body.id)
    expect(ids.size).toBe(5)
    for (const id of ids) expect(id).toMatch(/^bat_[0-9a-f]{24}$/)
  })
})

describe('sessions', () => {
  test('a session creates and cancels from its own pages; from another origin it is refused', async () => {
    const { cookie } = await signIn(env.service, alice.email, alice.password, fromConsole(''))
    const body = { items: [{ image_url: env.serve(makePng(30, 30)) }] }
    const created = await env.service.api.request('POST', '/api/batches', { body, headers: fromConsole(cookie) })
    expect(created.status).toBe(202)
    const read = await env.service.api.request('GET', `/api/batches/${created.body.id}`, { headers: { cookie } })
    expect(read.status).toBe(200)
    const foreign = await env.service.api.request('POST', '/api/batches', { body, headers: { cookie, origin: FOREIGN_ORIGIN } })
    expect([401, 403]).toContain(foreign.status)
    const noOrigin = await env.service.api.request('POST', `/api/batches/${created.body.id}/cancel`, { headers: { cookie } })
    expectApiError(noOrigin, 403, 'cross_site_request')
  })
})

describe('the log', () => {
  test('never holds image bytes or metadata', async () => {
    const client = batchClient(env.service.api, alice.apiKey)
    const base64 = Buffer.from(makePng(41, 41)).toString('base64')
    const created = await client.create({ items: [{ image_base64: base64, metadata: { marker: 'metadata-marker-7f3a' } }] })
    await client.ended(created.body.id)
    const log = env.service.logText()
    expect(log).not.toContain(base64.slice(20, 60))
    expect(log).not.toContain('metadata-marker-7f3a')
    expect(log).not.toContain(alice.apiKey)
  })
})

describe('rate limit', () => {
  let limited: TestService
  beforeAll(async () => {
    limited = await startTestService()
  })
  afterAll(async () => {
    await limited.stop()
  })

  test('creation counts as one request of the standard bucket (60 a minute)', async () => {
    const { apiKey } = await limited.api.register()
    let last = await limited.api.post('/api/batches', { items: [] }, apiKey)
    expect(last.headers.get('ratelimit-limit')).toBe('60')
    for (let i = 1; i < 60; i++) last = await limited.api.post('/api/batches', { items: [] }, apiKey)
    expect(last.status).toBe(400)
    expectApiError(await limited.api.post('/api/batches', { items: [] }, apiKey), 429, 'rate_limited')
  })
})
