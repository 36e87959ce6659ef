// Daily usage and the history, security: every route needs a key or a session (checked before the query),
// an account sees and deletes only its own entries (another's id is 404, never listed), ids say nothing
// about other accounts, a deleted account's unwritten outcomes never reach the next account,
// session requests that delete must come from the service's own origin, and the routes are rate limited.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createHistoryService } from '../../src/modules/history/service'
import { createLogger } from '../../src/shared/logger'
import { createSqliteStore } from '../../src/store/sqlite/store'
import { expectApiError } from '../support/assertions'
import { type RegisteredAccount, startTestService, type TestService } from '../support/service'
import { accountIdOf, entry } from './support'
import { createManualScheduler } from '../support/scheduler'

let service: TestService
let limited: TestService
let alice: RegisteredAccount & { id: number }
let bob: RegisteredAccount & { id: number }

const ROUTES: [string, string][] = [
  ['GET', '/api/usage/history'],
  ['GET', '/api/usage/history?days=abc'],
  ['GET', '/api/history'],
  ['DELETE', '/api/history'],
  ['DELETE', '/api/history/some-id'],
]

beforeAll(async () => {
  service = await startTestService({ env: { ALTTEXT_RATE_LIMITS: 'off' } })
  limited = await startTestService()
  const a = await service.api.register()
  const b = await service.api.register()
  alice = { ...a, id: await accountIdOf(service, a.email) }
  bob = { ...b, id: await accountIdOf(service, b.email) }
})
afterAll(async () => {
  await service.stop()
  await limited.stop()
})

const list = async (key: string) => (await service.api.get('/api/history', key)).body.items as { id: string; alt_text: string }[]

describe('authentication', () => {
  for (const [method, path] of ROUTES) {
    test(`${method} ${path} without a key or session is 401 missing_api_key`, async () => {
      expectApiError(await service.api.request(method, path), 401, 'missing_api_key')
    })
    test(`${method} ${path} with an unknown key is 401 invalid_api_key`, async () => {
      expectApiError(await service.api.request(method, path, { key: `alt_${'0'.repeat(64)}` }), 401, 'invalid_api_key')
    })
  }

  test('with a session cookie: reads work; a delete needs the service’s own Origin (403 otherwise)', async () => {
    const signIn = await service.api.request('POST', '/api/session', {
      body: { email: alice.email, password: alice.password },
      headers: { origin: 'http://alttext.test' },
    })
    expect(signIn.status).toBe(200)
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!
    service.running.history.record({ accountId: alice.id, at: Date.now(), outcome: 'generated', entry: entry({ altText: 'by session' }) })

    const read = await service.api.request('GET', '/api/history', { headers: { cookie } })
    expect(read.status).toBe(200)
    expect(read.body.items.map((i: { alt_text: string }) => i.alt_text)).toContain('by session')
    expect((await service.api.request('GET', '/api/usage/history?days=1', { headers: { cookie } })).status).toBe(200)

    expectApiError(await service.api.request('DELETE', '/api/history', { headers: { cookie } }), 403, 'cross_site_request')
    expectApiError(await service.api.request('DELETE', '/api/history', { headers: { cookie, origin: 'https://evil.example' } }), 403, 'cross_site_request')
    expect((await list(alice.apiKey)).map((i) => i.alt_text)).toContain('by session')
    const own = await service.api.request('DELETE', '/api/history', { headers: { cookie, origin: 'http://alttext.test' } })
    expect(own.status).toBe(200)
    expect(own.body.deleted).toBeGreaterThanOrEqual(1)
    expect(await list(alice.apiKey)).toEqual([])
  })
})

describe('one account never sees or changes another’s history', () => {
  test("another account's entry id is 404 for bob and stays in alice's list; bob never lists it", async () => {
    service.running.history.record({ accountId: alice.id, at: Date.now(), outcome: 'generated', entry: entry({ altText: 'alice private' }) })
    service.running.history.record({ accountId: bob.id, at: Date.now(), outcome: 'cached', entry: entry({ altText: 'bob own' }) })
    const [mine] = await list(alice.apiKey)
    expect(mine!.alt_text).toBe('alice private')

    const res = await service.api.request('DELETE', `/api/history/${mine!.id}`, { key: bob.apiKey })
    expectApiError(res, 404, 'not_found')
    expect(res.text).not.toContain('alice private')
    const bobs = await service.api.get('/api/history', bob.apiKey)
    expect(bobs.body.items.map((i: { alt_text: string }) => i.alt_text)).toEqual(['bob own'])
    expect(bobs.text).not.toContain('alice private')
    expect(bobs.text).not.toContain(mine!.id)

    // Bob deleting all of his own leaves alice's alone.
    expect((await service.api.request('DELETE', '/api/history', { key: bob.apiKey })).body).toEqual({ deleted: 1 })
    expect((await list(alice.apiKey)).map((i) => i.id)).toContain(mine!.id)
  })

  test('daily counts are per account', async () => {
    const carol = await service.api.register()
    const carolId = await accountIdOf(service, carol.email)
    for (let i = 0; i < 3; i++) service.running.history.record({ accountId: carolId, at: Date.now(), outcome: 'failed' })
    const own = (await service.api.get('/api/usage/history?days=1', carol.apiKey)).body.days[0]
    expect(own.failed).toBe(3)
    const dave = await service.api.register()
    expect((await service.api.get('/api/usage/history?days=1', dave.apiKey)).body.days[0]).toMatchObject({ generations: 0, cached: 0, failed: 0 })
  })

  test('ids are random and opaque, not a counter of all generations', async () => {
    for (let i = 0; i < 5; i++) service.running.history.record({ accountId: bob.id, at: Date.now() + i, outcome: 'generated', entry: entry() })
    const ids = (await list(bob.apiKey)).map((i) => i.id)
    expect(new Set(ids).size).toBe(ids.length)
    for (const id of ids) {
      expect(id).toMatch(/^[A-Za-z0-9_-]{12}$/)
      expect(id).not.toMatch(/^[0-9]+$/)
    }
  })
})

describe("a deleted account's outcomes", () => {
  test('pending outcomes of a deleted account never reach the next new account', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'alttext-history-reuse-'))
    const store = createSqliteStore(join(dir, 'alttext.db'))
    let now = Date.now()
    const history = createHistoryService({ store: store.history, logger: createLogger(() => {}), clock: () => now, scheduler: createManualScheduler() })
    const key = (n: number) => ({ prefix: `alt_${String(n).padStart(8, '0')}`, keyHash: `hash-${n}`, label: null, expiresAt: null })
    try {
      const old = (await store.accounts.createWithKey('old@example.com', 'x', 'free', key(1), now - 1000))!.account
      history.record({ accountId: old.id, at: now, outcome: 'generated', entry: entry({ altText: 'of the old account' }) })
      // Deleted without telling the recorder (forget): the write itself must notice.
      store.db.query('DELETE FROM accounts WHERE id = ?').run(old.id)
      now += 1000
      const fresh = (await store.accounts.createWithKey('new@example.com', 'x', 'free', key(2), now))!.account
      // Ids are never reused (migration 12); the write must still notice the account is gone.
      expect(fresh.id).toBeGreaterThan(old.id)
      await history.flush()
      expect(await store.history.list(fresh.id, 50)).toEqual([])
      const day = new Date(now).toISOString().slice(0, 10)
      expect(await store.history.days(fresh.id, day, day)).toEqual([])

      // And what the new account records is its own.
      history.record({ accountId: fresh.id, at: now, outcome: 'cached', entry: entry({ altText: 'of the new account' }) })
      await history.flush()
      expect((await store.history.list(fresh.id, 50)).map((r) => r.altText)).toEqual(['of the new account'])
    } finally {
      await history.stop()
      store.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('forget drops what an account has pending', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'alttext-history-forget-'))
    const store = createSqliteStore(join(dir, 'alttext.db'))
    const now = Date.now()
    const history = createHistoryService({ store: store.history, logger: createLogger(() => {}), clock: () => now, scheduler: createManualScheduler() })
    try {
      const account = (await store.accounts.createWithKey(
        'f@example.com',
        'x',
        'free',
        { prefix: 'alt_00000009', keyHash: 'h9', label: null, expiresAt: null },
        now,
      ))!.account
      history.record({ accountId: account.id, at: now, outcome: 'generated', entry: entry() })
      history.forget(account.id)
      await history.flush()
      expect(await store.history.list(account.id, 50)).toEqual([])
    } finally {
      await history.stop()
      store.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('rate limits', () => {
  test('the history routes have the standard per-address limit: the 61st request in a minute is 429', async () => {
    const account = await limited.api.register()
    let last = await limited.api.get('/api/history', account.apiKey)
    for (let i = 1; i < 61 && last.status === 200; i++) last = await limited.api.get('/api/history', account.apiKey)
    expectApiError(last, 429, 'rate_limited')
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThan(0)
  })
})
