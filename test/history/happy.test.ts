// Daily usage and the generation history: GET /api/usage/history (one entry per UTC day through today,
// zeros included, following a moved clock), GET /api/history (newest first, at most 50), deleting one
// entry or all, shutdown writing what was recorded, and the tables going with their account.
// Outcomes are recorded through the recorder the app exposes, as the alt-text service will.
import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createLogger } from '../../src/shared/logger'
import { createHistoryService } from '../../src/modules/history/service'
import { MIGRATIONS } from '../../src/store/sqlite/migrations'
import { migrate } from '../../src/store/sqlite/migrations'
import { createSqliteStore } from '../../src/store/sqlite/store'
import { type RegisteredAccount, startTestService, type TestService } from '../support/service'
import { accountIdOf, DAY_MS, entry, historyRows } from './support'
import { createManualScheduler } from '../support/scheduler'

let now = Date.UTC(2026, 2, 15, 12, 0, 0) // 2026-03-15T12:00:00Z
const clock = () => now
let service: TestService

beforeAll(async () => {
  service = await startTestService({ env: { ALTTEXT_RATE_LIMITS: 'off' }, overrides: { clock } })
})
afterAll(async () => {
  await service.stop()
})

/** Registered long before `now`: outcomes are recorded at earlier times too, never before the account existed. */
async function account(): Promise<RegisteredAccount & { id: number }> {
  const saved = now
  now = Date.UTC(2025, 0, 1)
  try {
    const registered = await service.api.register()
    return { ...registered, id: await accountIdOf(service, registered.email) }
  } finally {
    now = saved
  }
}

const days = async (key: string, query = '') => {
  const res = await service.api.get(`/api/usage/history${query}`, key)
  expect(res.status).toBe(200)
  return res.body.days as { date: string; generations: number; cached: number; failed: number }[]
}

const items = async (key: string) => {
  const res = await service.api.get('/api/history', key)
  expect(res.status).toBe(200)
  return res.body.items as Record<string, any>[]
}

const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10)

describe('GET /api/usage/history', () => {
  test('30 days by default, oldest first, through today (UTC), zeros for a new account', async () => {
    const a = await account()
    const list = await days(a.apiKey)
    expect(list).toHaveLength(30)
    expect(list[0]).toEqual({ date: '2026-02-14', generations: 0, cached: 0, failed: 0 })
    expect(list.at(-1)).toEqual({ date: '2026-03-15', generations: 0, cached: 0, failed: 0 })
    for (let i = 1; i < list.length; i++) expect(Date.parse(list[i]!.date) - Date.parse(list[i - 1]!.date)).toBe(DAY_MS)
  })

  test('days=1 is today alone; days=365 reaches back 364 days', async () => {
    const a = await account()
    expect(await days(a.apiKey, '?days=1')).toEqual([{ date: '2026-03-15', generations: 0, cached: 0, failed: 0 }])
    const year = await days(a.apiKey, '?days=365')
    expect(year).toHaveLength(365)
    expect(year[0]!.date).toBe('2025-03-16')
    expect(year.at(-1)!.date).toBe('2026-03-15')
  })

  test('counts each outcome on the UTC day it happened; the other days stay zero', async () => {
    const a = await account()
    const { history } = service.running
    const today = now
    history.record({ accountId: a.id, at: today, outcome: 'generated', entry: entry() })
    history.record({ accountId: a.id, at: today + 1000, outcome: 'generated', entry: entry() })
    history.record({ accountId: a.id, at: today + 2000, outcome: 'cached', entry: entry() })
    for (let i = 0; i < 3; i++) history.record({ accountId: a.id, at: today + 3000, outcome: 'failed' })
    // Yesterday 23:59:59.999 UTC and three days ago.
    history.record({ accountId: a.id, at: Date.UTC(2026, 2, 14, 23, 59, 59, 999), outcome: 'cached', entry: entry() })
    history.record({ accountId: a.id, at: today - 3 * DAY_MS, outcome: 'failed' })

    const list = await days(a.apiKey, '?days=5')
    expect(list).toEqual([
      { date: '2026-03-11', generations: 0, cached: 0, failed: 0 },
      { date: '2026-03-12', generations: 0, cached: 0, failed: 1 },
      { date: '2026-03-13', generations: 0, cached: 0, failed: 0 },
      { date: '2026-03-14', generations: 0, cached: 1, failed: 0 },
      { date: '2026-03-15', generations: 2, cached: 1, failed: 3 },
    ])
  })

  test('follows the clock: after midnight UTC a new zero day is today, across a year boundary', async () => {
    const before = now
    try {
      now = Date.UTC(2026, 11, 31, 23, 59, 59, 999)
      const a = await account()
      service.running.history.record({ accountId: a.id, at: now, outcome: 'generated', entry: entry() })
      expect((await days(a.apiKey, '?days=2')).map((d) => [d.date, d.generations])).toEqual([
        ['2026-12-30', 0],
        ['2026-12-31', 1],
      ])
      now = Date.UTC(2027, 0, 1, 0, 0, 0, 0)
      expect((await days(a.apiKey, '?days=2')).map((d) => [d.date, d.generations])).toEqual([
        ['2026-12-31', 1],
        ['2027-01-01', 0],
      ])
      now += 9 * DAY_MS
      const ten = await days(a.apiKey, '?days=12')
      expect(ten.map((d) => d.date)).toEqual(Array.from({ length: 12 }, (_, i) => isoDay(Date.UTC(2026, 11, 30) + i * DAY_MS)))
      expect(ten.map((d) => d.generations)).toEqual([0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
    } finally {
      now = before
    }
  })
})

describe('GET /api/history', () => {
  test('lists answered requests newest first with every field; failures are counted, not listed', async () => {
    const a = await account()
    const { history } = service.running
    history.record({ accountId: a.id, at: now - 2000, outcome: 'generated', entry: entry({ altText: 'first', characterCount: 5 }) })
    history.record({ accountId: a.id, at: now - 1000, outcome: 'failed', entry: entry({ altText: 'never shown' }) })
    history.record({
      accountId: a.id,
      at: now,
      outcome: 'cached',
      entry: entry({
        source: 'upload',
        format: 'webp',
        bytes: 1234,
        width: 10,
        height: 20,
        altText: '',
        decorative: true,
        language: 'de',
        style: 'concise',
        maxLength: 80,
        characterCount: 0,
      }),
    })
    const list = await items(a.apiKey)
    expect(list).toHaveLength(2)
    expect(list[0]).toEqual({
      id: expect.any(String),
      created_at: new Date(now).toISOString(),
      source: 'upload',
      image: { format: 'webp', bytes: 1234, width: 10, height: 20 },
      alt_text: '',
      decorative: true,
      language: 'de',
      style: 'concise',
      max_length: 80,
      cached: true,
      character_count: 0,
    })
    expect(list[1]).toEqual({
      id: expect.any(String),
      created_at: new Date(now - 2000).toISOString(),
      source: 'url',
      image: { format: 'jpeg', bytes: 48_213, width: 800, height: 600 },
      alt_text: 'first',
      decorative: false,
      language: 'en',
      style: 'descriptive',
      max_length: 125,
      cached: false,
      character_count: 5,
    })
    expect(list[0]!.id).not.toBe(list[1]!.id)
  })

  test('entries of the same millisecond keep the order they were recorded in', async () => {
    const a = await account()
    for (const altText of ['one', 'two', 'three']) service.running.history.record({ accountId: a.id, at: now, outcome: 'generated', entry: entry({ altText }) })
    expect((await items(a.apiKey)).map((i) => i.alt_text)).toEqual(['three', 'two', 'one'])
  })

  test('keeps the newest 50 per account: older ones are deleted, within one write and across writes', async () => {
    const a = await account()
    const { history } = service.running
    for (let i = 0; i < 55; i++) history.record({ accountId: a.id, at: now + i, outcome: 'generated', entry: entry({ altText: `n${i}` }) })
    let list = await items(a.apiKey)
    expect(list).toHaveLength(50)
    expect(list[0]!.alt_text).toBe('n54')
    expect(list.at(-1)!.alt_text).toBe('n5')
    expect(await historyRows(service, a.id)).toBe(50)

    // A second write of 30: the 30 oldest stored ones go.
    for (let i = 55; i < 85; i++) history.record({ accountId: a.id, at: now + i, outcome: 'cached', entry: entry({ altText: `n${i}` }) })
    list = await items(a.apiKey)
    expect(list.map((x) => x.alt_text)).toEqual(Array.from({ length: 50 }, (_, i) => `n${84 - i}`))
    expect(await historyRows(service, a.id)).toBe(50)
    // The counts are not pruned with the list.
    const today = (await days(a.apiKey, '?days=1'))[0]!
    expect(today.generations).toBe(55)
    expect(today.cached).toBe(30)
  })
})

describe('DELETE /api/history', () => {
  test('DELETE /api/history/:id removes that entry only (204, no body); the same id again is 404', async () => {
    const a = await account()
    for (const altText of ['keep', 'drop']) service.running.history.record({ accountId: a.id, at: now, outcome: 'generated', entry: entry({ altText }) })
    const [drop, keep] = await items(a.apiKey)
    expect(drop!.alt_text).toBe('drop')
    const res = await service.api.request('DELETE', `/api/history/${encodeURIComponent(drop!.id)}`, { key: a.apiKey })
    expect(res.status).toBe(204)
    expect(res.text).toBe('')
    expect(await items(a.apiKey)).toEqual([keep!])
    expect((await service.api.request('DELETE', `/api/history/${encodeURIComponent(drop!.id)}`, { key: a.apiKey })).status).toBe(404)
  })

  test('DELETE /api/history deletes every entry and says how many; the daily counts stay', async () => {
    const a = await account()
    for (let i = 0; i < 4; i++) service.running.history.record({ accountId: a.id, at: now, outcome: 'generated', entry: entry() })
    const res = await service.api.request('DELETE', '/api/history', { key: a.apiKey })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ deleted: 4 })
    expect(await items(a.apiKey)).toEqual([])
    expect((await days(a.apiKey, '?days=1'))[0]!.generations).toBe(4)
    const again = await service.api.request('DELETE', '/api/history', { key: a.apiKey })
    expect(again.body).toEqual({ deleted: 0 })
  })

  test('entries recorded after a deletion are listed again', async () => {
    const a = await account()
    service.running.history.record({ accountId: a.id, at: now, outcome: 'generated', entry: entry({ altText: 'old' }) })
    expect((await service.api.request('DELETE', '/api/history', { key: a.apiKey })).body).toEqual({ deleted: 1 })
    service.running.history.record({ accountId: a.id, at: now + 1, outcome: 'cached', entry: entry({ altText: 'new' }) })
    expect((await items(a.apiKey)).map((i) => i.alt_text)).toEqual(['new'])
  })
})

describe('durability and the account', () => {
  test('what was recorded just before shutdown is written by close() and served after a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'alttext-history-'))
    try {
      const first = await startTestService({ dir, env: { ALTTEXT_RATE_LIMITS: 'off' }, overrides: { clock } })
      const a = await first.api.register()
      const id = await accountIdOf(first, a.email)
      first.running.history.record({ accountId: id, at: now, outcome: 'generated', entry: entry({ altText: 'survives' }) })
      first.running.history.record({ accountId: id, at: now, outcome: 'failed' })
      await first.stop()

      const second = await startTestService({ dir, env: { ALTTEXT_RATE_LIMITS: 'off' }, overrides: { clock } })
      try {
        const list = await second.api.get('/api/history', a.apiKey)
        expect(list.body.items.map((i: { alt_text: string }) => i.alt_text)).toEqual(['survives'])
        const today = await second.api.get('/api/usage/history?days=1', a.apiKey)
        expect(today.body.days).toEqual([{ date: '2026-03-15', generations: 1, cached: 0, failed: 1 }])
      } finally {
        await second.stop()
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('migration 6 creates both tables; deleting the account deletes its rows (ON DELETE CASCADE)', async () => {
    expect(MIGRATIONS.some((m) => m.version === 6)).toBe(true)
    const dir = mkdtempSync(join(tmpdir(), 'alttext-history-store-'))
    const store = createSqliteStore(join(dir, 'alttext.db'))
    const history = createHistoryService({ store: store.history, logger: createLogger(() => {}), clock, scheduler: createManualScheduler() })
    try {
      const key = (n: number) => ({ prefix: `alt_${String(n).padStart(8, '0')}`, keyHash: `hash-${n}`, label: null, expiresAt: null })
      const mine = (await store.accounts.createWithKey('mine@example.com', 'x', 'free', key(1), now - 10_000))!.account
      const other = (await store.accounts.createWithKey('other@example.com', 'x', 'free', key(2), now - 10_000))!.account
      for (const id of [mine.id, other.id]) {
        history.record({ accountId: id, at: now, outcome: 'generated', entry: entry() })
        history.record({ accountId: id, at: now, outcome: 'failed' })
      }
      await history.flush()
      const count = (table: string, id: number) => store.db.query<{ n: number }, [number]>(`SELECT count(*) AS n FROM ${table} WHERE account_id = ?`).get(id)!.n
      expect(count('generation_history', mine.id)).toBe(1)
      expect(count('usage_daily', mine.id)).toBe(1)

      store.db.query('DELETE FROM accounts WHERE id = ?').run(mine.id)
      expect(count('generation_history', mine.id)).toBe(0)
      expect(count('usage_daily', mine.id)).toBe(0)
      expect(count('generation_history', other.id)).toBe(1)
      expect(count('usage_daily', other.id)).toBe(1)
    } finally {
      await history.stop()
      store.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('the migrations are applied in version order, whatever the order of the list', () => {
    const listed = [...MIGRATIONS]
    const db = new Database(':memory:')
    // Reversed, "drop credit_holds" (3) would come before the table exists (2): only version order works.
    MIGRATIONS.reverse()
    try {
      expect(migrate(db, 0, ':memory:')).toEqual(listed.map((m) => m.version).sort((a, b) => a - b))
    } finally {
      MIGRATIONS.splice(0, MIGRATIONS.length, ...listed)
      db.close()
    }
  })
})
