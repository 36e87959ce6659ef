// Daily usage and the history, failures: a bad `days` is 400 invalid_request naming the field, an unknown
// entry is 404 not_found, and a write the database refuses keeps the outcomes in memory for the next one.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createHistoryService } from '../../src/modules/history/service'
import { ApiError } from '../../src/shared/errors'
import { createLogger } from '../../src/shared/logger'
import type { HistoryStore } from '../../src/store/contract'
import { createSqliteStore } from '../../src/store/sqlite/store'
import { expectApiError } from '../support/assertions'
import { type RegisteredAccount, startTestService, type TestService } from '../support/service'
import { accountIdOf, entry } from './support'
import { createManualScheduler } from '../support/scheduler'

let service: TestService
let alice: RegisteredAccount

beforeAll(async () => {
  service = await startTestService({ env: { ALTTEXT_RATE_LIMITS: 'off' } })
  alice = await service.api.register()
})
afterAll(async () => {
  await service.stop()
})

describe('GET /api/usage/history?days=', () => {
  for (const bad of ['0', '366', '-1', '1000', 'abc', '1.5', '1e2', '', '+3', ' 3', '0x10', '30abc']) {
    test(`days=${JSON.stringify(bad)} is 400 invalid_request naming days`, async () => {
      const res = await service.api.get(`/api/usage/history?days=${encodeURIComponent(bad)}`, alice.apiKey)
      expectApiError(res, 400, 'invalid_request', 'days')
      expect(res.body.error.message).toBe('days: must be a whole number from 1 to 365')
    })
  }

  test('days given twice is 400 invalid_request naming days', async () => {
    expectApiError(await service.api.get('/api/usage/history?days=3&days=4', alice.apiKey), 400, 'invalid_request', 'days')
  })

  test('the bounds themselves are accepted; other query parameters are ignored', async () => {
    expect((await service.api.get('/api/usage/history?days=1', alice.apiKey)).body.days).toHaveLength(1)
    expect((await service.api.get('/api/usage/history?days=365', alice.apiKey)).body.days).toHaveLength(365)
    expect((await service.api.get('/api/usage/history?days=007&unknown=1', alice.apiKey)).body.days).toHaveLength(7)
  })
})

describe('DELETE /api/history/:id', () => {
  test('an id that never existed is 404 not_found', async () => {
    for (const id of ['nope', 'AAAAAAAAAAAA', '1', `${'x'.repeat(300)}`, "'; DROP TABLE generation_history; --"]) {
      const res = await service.api.request('DELETE', `/api/history/${encodeURIComponent(id)}`, { key: alice.apiKey })
      expectApiError(res, 404, 'not_found')
      expect(res.body.error.message).toBe('no history entry with that id in this account')
    }
  })

  test('a deleted entry is 404 the second time; the list is unchanged by the failed call', async () => {
    const id = await accountIdOf(service, alice.email)
    service.running.history.record({ accountId: id, at: Date.now(), outcome: 'generated', entry: entry({ altText: 'one' }) })
    service.running.history.record({ accountId: id, at: Date.now(), outcome: 'generated', entry: entry({ altText: 'two' }) })
    const items = (await service.api.get('/api/history', alice.apiKey)).body.items as { id: string }[]
    expect(items).toHaveLength(2)
    expect((await service.api.request('DELETE', `/api/history/${items[0]!.id}`, { key: alice.apiKey })).status).toBe(204)
    expectApiError(await service.api.request('DELETE', `/api/history/${items[0]!.id}`, { key: alice.apiKey }), 404, 'not_found')
    expect((await service.api.get('/api/history', alice.apiKey)).body.items).toEqual([items[1]])
  })
})

describe('the recorder when the database refuses a write', () => {
  test('a failed write keeps every outcome in memory, warns once, and the next write stores them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'alttext-history-busy-'))
    const store = createSqliteStore(join(dir, 'alttext.db'))
    const lines: string[] = []
    const now = Date.now()
    let refuse = 2
    const flaky: HistoryStore = {
      ...store.history,
      apply: (batch, keep, oldestDay) => {
        if (refuse-- > 0) return Promise.reject(new ApiError('database_busy', 'the database is locked by another process'))
        return store.history.apply(batch, keep, oldestDay)
      },
    }
    const history = createHistoryService({
      store: flaky,
      logger: createLogger((line) => lines.push(line)),
      clock: () => now,
      scheduler: createManualScheduler(),
    })
    try {
      const key = { prefix: 'alt_00000001', keyHash: 'hash-1', label: null, expiresAt: null }
      const account = (await store.accounts.createWithKey('busy@example.com', 'x', 'free', key, now - 1000))!.account
      history.record({ accountId: account.id, at: now, outcome: 'generated', entry: entry({ altText: 'before' }) })
      history.record({ accountId: account.id, at: now, outcome: 'failed' })
      await history.flush()
      // Recorded while the first batch waits in memory: both go in the same later write, in order.
      history.record({ accountId: account.id, at: now + 1, outcome: 'cached', entry: entry({ altText: 'after' }) })
      await history.flush()
      expect((await store.history.list(account.id, 50)).length).toBe(0)
      await history.flush()

      expect((await store.history.list(account.id, 50)).map((r) => [r.altText, r.cached])).toEqual([
        ['after', true],
        ['before', false],
      ])
      const day = new Date(now).toISOString().slice(0, 10)
      expect(await store.history.days(account.id, day, day)).toEqual([{ day, generations: 1, cached: 1, failed: 1 }])
      const warnings = lines.map((l) => JSON.parse(l) as { msg: string }).filter((l) => l.msg.startsWith('history flush failed'))
      expect(warnings).toHaveLength(1)
      expect(lines.some((l) => (JSON.parse(l) as { msg: string }).msg === 'history flush succeeded again')).toBe(true)
    } finally {
      await history.stop()
      store.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('a list read while the write fails answers 200 with what is stored, not an error', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'alttext-history-busy-'))
    const store = createSqliteStore(join(dir, 'alttext.db'))
    const now = Date.now()
    const history = createHistoryService({
      store: { ...store.history, apply: () => Promise.reject(new ApiError('database_busy', 'locked')) },
      logger: createLogger(() => {}),
      clock: () => now,
      scheduler: createManualScheduler(),
    })
    try {
      const account = (await store.accounts.createWithKey(
        'r@example.com',
        'x',
        'free',
        { prefix: 'alt_00000002', keyHash: 'h2', label: null, expiresAt: null },
        now,
      ))!.account
      history.record({ accountId: account.id, at: now, outcome: 'generated', entry: entry() })
      expect(await history.list(account)).toEqual({ items: [] })
      expect((await history.usageHistory(account, 1)).days[0]!.generations).toBe(0)
    } finally {
      await history.stop()
      store.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
