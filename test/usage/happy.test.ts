// GET /api/usage: the decided shape, the billing period (calendar month, UTC), today's call count over
// every key of the account, and the configured credit total.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openStore } from '../../src/app'
import { COUNTS_MAX_AGE_MS, createCreditLedger } from '../../src/credits/service'
import { createActivityRecorder, STORED_MAX_AGE_MS } from '../../src/modules/auth/activity'
import { createLogger } from '../../src/shared/logger'
import { createSqliteStore } from '../../src/store/sqlite/store'
import type { AccountRecord, ActivityBatch, CreditStore, PeriodCredits, Store } from '../../src/store/contract'
import { TEST_ENGINE } from '../support/postgres'
import { startTestService, waitUntil, type TestService } from '../support/service'
import { createManualScheduler } from '../support/scheduler'

let now = Date.UTC(2026, 2, 15, 12, 0, 0) // 2026-03-15T12:00:00Z
let service: TestService
let small: TestService

beforeAll(async () => {
  service = await startTestService({ env: { ALTTEXT_RATE_LIMITS: 'off' }, overrides: { clock: () => now } })
  small = await startTestService({ env: { ALTTEXT_RATE_LIMITS: 'off', ALTTEXT_FREE_CREDITS: '7' }, overrides: { clock: () => now } })
})
afterAll(async () => {
  await service.stop()
  await small.stop()
})

async function callsToday(key: string, api = service.api): Promise<number> {
  const res = await api.get('/api/usage', key)
  expect(res.status).toBe(200)
  expect(Number.isInteger(res.body.api_calls_today)).toBe(true)
  return res.body.api_calls_today
}

describe('GET /api/usage', () => {
  test('returns exactly {plan, credits, api_calls_today, period_start, period_end}; the period is the calendar month in UTC', async () => {
    const account = await service.api.register()
    const res = await service.api.get('/api/usage', account.apiKey)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('application/json')
    expect(res.body).toEqual({
      plan: 'free',
      credits: { total: 50, used: 0, remaining: 50 },
      // The usage call itself authenticated, so it counts.
      api_calls_today: 1,
      period_start: '2026-03-01T00:00:00.000Z',
      period_end: '2026-04-01T00:00:00.000Z',
    })
  })

  test('every key of the account reports the same account numbers', async () => {
    const account = await service.api.register()
    const second = await service.api.post('/api/keys', { label: 'second' }, account.apiKey)
    expect(second.status).toBe(201)
    const a = await service.api.get('/api/usage', account.apiKey)
    const b = await service.api.get('/api/usage', second.body.api_key)
    expect(b.status).toBe(200)
    expect(b.body.credits).toEqual(a.body.credits)
    expect(b.body.period_start).toBe(a.body.period_start)
    expect(b.body.period_end).toBe(a.body.period_end)
    expect(b.body.api_calls_today).toBe(a.body.api_calls_today + 1)
  })
})

describe('api_calls_today', () => {
  test('counts each request authenticated with any key of the account, exactly one per call, the usage call included', async () => {
    const account = await service.api.register()
    expect(await callsToday(account.apiKey)).toBe(1)

    const second = await service.api.post('/api/keys', { label: 'second' }, account.apiKey) // 2
    expect(second.status).toBe(201)
    const key2 = second.body.api_key as string
    expect(await callsToday(key2)).toBe(3)
    expect(await callsToday(account.apiKey)).toBe(4)

    expect((await service.api.get('/api/keys', key2)).status).toBe(200) // 5
    expect((await service.api.get('/api/keys', account.apiKey)).status).toBe(200) // 6
    expect(await callsToday(key2)).toBe(7)

    // Authenticated requests that the endpoint then refuses still authenticated.
    expect((await service.api.post('/api/keys/revoke', { key_prefix: 'alt_00000000' }, key2)).status).toBe(404) // 8
    expect(await callsToday(account.apiKey)).toBe(9)

    let expected = 9
    for (let i = 0; i < 5; i++) {
      expected += 1
      expect(await callsToday(i % 2 ? account.apiKey : key2)).toBe(expected)
    }
  })

  test('failed authentications, validate-key and other accounts do not count', async () => {
    const account = await service.api.register()
    const other = await service.api.register()
    const spare = await service.api.post('/api/keys', { label: 'spare' }, account.apiKey) // 1
    expect((await service.api.post('/api/keys/revoke', { key_prefix: spare.body.prefix }, account.apiKey)).status).toBe(200) // 2
    expect(await callsToday(account.apiKey)).toBe(3)

    // Failures: a revoked key of the account, its key in upper case, a truncated key, no key, a guess.
    expect((await service.api.get('/api/usage', spare.body.api_key)).status).toBe(401)
    expect((await service.api.get('/api/keys', account.apiKey.toUpperCase())).status).toBe(401)
    expect((await service.api.get('/api/usage', account.apiKey.slice(0, -1))).status).toBe(401)
    expect((await service.api.get('/api/usage')).status).toBe(401)
    expect((await service.api.get('/api/usage', `${account.prefix}${'0'.repeat(56)}`)).status).toBe(401)
    // validate-key checks a key; it does not authenticate a request with it.
    expect((await service.api.post('/api/validate-key', { api_key: account.apiKey })).status).toBe(200)
    // Another account's calls.
    for (let i = 0; i < 3; i++) expect((await service.api.get('/api/keys', other.apiKey)).status).toBe(200)

    expect(await callsToday(account.apiKey)).toBe(4)
    expect(await callsToday(other.apiKey)).toBe(4)
  })

  test('the stored count and the pending count add up without loss or double counting', async () => {
    const account = await service.api.register()
    for (let i = 0; i < 4; i++) expect((await service.api.get('/api/keys', account.apiKey)).status).toBe(200)

    // Counts may be written in batches: wait until the database has them, then read again.
    const day = new Date(now).toISOString().slice(0, 10)
    await waitUntil(async () => {
      const [row] = await service.query<{ count: number }>(
        'SELECT c.count AS count FROM api_calls c JOIN accounts a ON a.id = c.account_id WHERE a.email = ? AND c.day = ?',
        account.email,
        day,
      )
      return row?.count === 4
    }, 'the call count to reach the database')
    expect(await callsToday(account.apiKey)).toBe(5)
    expect(await callsToday(account.apiKey)).toBe(6)
  })

  test('starts again from zero when the clock crosses midnight UTC', async () => {
    now = Date.UTC(2026, 2, 15, 23, 59, 30)
    const account = await service.api.register()
    for (let i = 0; i < 3; i++) expect((await service.api.get('/api/keys', account.apiKey)).status).toBe(200)
    expect(await callsToday(account.apiKey)).toBe(4)

    now = Date.UTC(2026, 2, 16, 0, 0, 5)
    expect(await callsToday(account.apiKey)).toBe(1)
    expect((await service.api.get('/api/keys', account.apiKey)).status).toBe(200)
    expect(await callsToday(account.apiKey)).toBe(3)
  })
})

describe('the billing period', () => {
  test('follows the clock across month and year boundaries, with period_end exclusive', async () => {
    now = Date.UTC(2026, 2, 31, 23, 59, 59, 999)
    const account = await service.api.register()
    let res = await service.api.get('/api/usage', account.apiKey)
    expect(res.body.period_start).toBe('2026-03-01T00:00:00.000Z')
    expect(res.body.period_end).toBe('2026-04-01T00:00:00.000Z')

    now = Date.UTC(2026, 3, 1, 0, 0, 0, 0)
    res = await service.api.get('/api/usage', account.apiKey)
    expect(res.body.period_start).toBe('2026-04-01T00:00:00.000Z')
    expect(res.body.period_end).toBe('2026-05-01T00:00:00.000Z')
    expect(res.body.credits).toEqual({ total: 50, used: 0, remaining: 50 })

    now = Date.UTC(2026, 11, 31, 18, 0, 0)
    res = await service.api.get('/api/usage', account.apiKey)
    expect(res.body.period_start).toBe('2026-12-01T00:00:00.000Z')
    expect(res.body.period_end).toBe('2027-01-01T00:00:00.000Z')

    now = Date.UTC(2028, 1, 29, 12, 0, 0) // a leap day
    res = await service.api.get('/api/usage', account.apiKey)
    expect(res.body.period_start).toBe('2028-02-01T00:00:00.000Z')
    expect(res.body.period_end).toBe('2028-03-01T00:00:00.000Z')
  })
})

describe('ALTTEXT_FREE_CREDITS', () => {
  test('sets credits.total of the free plan', async () => {
    const account = await small.api.register()
    const res = await small.api.get('/api/usage', account.apiKey)
    expect(res.status).toBe(200)
    expect(res.body.plan).toBe('free')
    expect(res.body.credits).toEqual({ total: 7, used: 0, remaining: 7 })
  })
})

// Counts are answered from memory once read (no await on the hot path); these are the reads that are not.
describe('counts that are not in memory', () => {
  const clock = () => Date.UTC(2026, 4, 20, 9, 0, 0)
  const env = { ALTTEXT_RATE_LIMITS: 'off', ALTTEXT_FREE_CREDITS: '10' }

  test('after a restart, usage and validate-key read the stored calls of the day and credits used', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'alttext-usage-restart-'))
    try {
      const first = await startTestService({ env, dir, overrides: { clock } })
      const account = await first.api.register()
      for (let i = 0; i < 3; i++) expect((await first.api.get('/api/keys', account.apiKey)).status).toBe(200)
      await first.stop() // writes the pending counts
      // Two credits charged by an earlier run.
      await first.query("INSERT INTO credit_usage (account_id, period, used) SELECT id, '2026-05', 2 FROM accounts WHERE email = ?", account.email)

      const second = await startTestService({ env, dir, overrides: { clock } })
      try {
        const usage = await second.api.get('/api/usage', account.apiKey)
        expect(usage.status).toBe(200)
        expect(usage.body.api_calls_today).toBe(4)
        expect(usage.body.credits).toEqual({ total: 10, used: 2, remaining: 8 })
      } finally {
        await second.stop()
      }

      const third = await startTestService({ env, dir, overrides: { clock } })
      try {
        const validated = await third.api.post('/api/validate-key', { api_key: account.apiKey })
        expect(validated.status).toBe(200)
        expect(validated.body).toEqual({ valid: true, plan: 'free', credits_total: 10, credits_used: 2, credits_remaining: 8 })
      } finally {
        await third.stop()
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test("a usage read while the day's counts are being written waits for the write and counts every call once", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'alttext-usage-flush-'))
    const real = createSqliteStore(join(dir, 'held.db'))
    // The batch written while `hold` is set waits for `release`: it is then in neither memory nor the database.
    let hold = false
    let writeStarted!: () => void
    const writing = new Promise<void>((resolve) => (writeStarted = resolve))
    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    const store: Store = {
      ...real,
      activity: {
        ...real.activity,
        apply: async (batch: ActivityBatch) => {
          if (hold) {
            writeStarted()
            await released
          }
          return real.activity.apply(batch)
        },
      },
    }
    // The usage request calls the clock twice (authentication, then usage) just before it reads the
    // day's count: that is when the write may be released, with the read waiting for it.
    let watching = false
    let clockCalls = 0
    let readingCounts!: () => void
    const reading = new Promise<void>((resolve) => (readingCounts = resolve))
    const watchedClock = () => {
      if (watching && ++clockCalls === 2) readingCounts()
      return clock()
    }
    const held = await startTestService({ env, overrides: { clock: watchedClock, store } })
    try {
      const account = await held.api.register()
      hold = true
      for (let i = 0; i < 2; i++) expect((await held.api.get('/api/keys', account.apiKey)).status).toBe(200)
      await writing // the once-a-second flush took the calls made so far
      watching = true
      const during = held.api.get('/api/usage', account.apiKey)
      await reading
      release()
      const answered = await during
      expect(answered.status).toBe(200)
      expect(answered.body.api_calls_today).toBe(3)
      expect((await held.api.get('/api/usage', account.apiKey)).body.api_calls_today).toBe(4)
    } finally {
      release()
      await held.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('repeated usage reads take the credit counts from the database once, on either engine', async () => {
    let reads = 0
    const counting = (store: Store): Store => ({
      ...store,
      credits: {
        ...store.credits,
        counts: (accountId, period) => {
          reads++
          return store.credits.counts(accountId, period)
        },
      },
    })
    const watched = await startTestService({ env, overrides: { clock }, wrapStore: counting })
    try {
      const account = await watched.api.register()
      reads = 0
      for (let i = 0; i < 5; i++) expect((await watched.api.get('/api/usage', account.apiKey)).body.credits.used).toBe(0)
      // Once, or not at all when the registration already read them.
      expect(reads).toBeLessThanOrEqual(1)
    } finally {
      await watched.stop()
    }
  })

  test('concurrent requests with a key not in memory read it from the database once', async () => {
    let reads = 0
    const counting = (store: Store): Store => ({
      ...store,
      keys: {
        ...store.keys,
        findByHash: (keyHash) => {
          reads++
          return store.keys.findByHash(keyHash)
        },
      },
    })
    const watched = await startTestService({ env, overrides: { clock }, wrapStore: counting })
    try {
      const account = await watched.api.register()
      reads = 0
      const answers = await Promise.all(Array.from({ length: 20 }, () => watched.api.get('/api/usage', account.apiKey)))
      expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200))
      expect(reads).toBe(1)
    } finally {
      await watched.stop()
    }
  })

  // Another replica on the same database charges: the counts kept in memory must follow within the 1 s the
  // other changes take (they are forgotten when the charge's notification is heard).
  test.skipIf(TEST_ENGINE !== 'postgres')('a credit charged by another replica shows in usage within a second', async () => {
    const replica = await startTestService({ env, overrides: { clock } })
    const other = await openStore(replica.config)
    try {
      const account = await replica.api.register()
      expect((await replica.api.get('/api/usage', account.apiKey)).body.credits.used).toBe(0)
      const [row] = await replica.query('SELECT id FROM accounts WHERE email = ?', account.email)
      const accountId = Number((row as { id: number | string }).id)
      const hold = await other.credits.hold(accountId, '2026-05', 10, clock(), clock() + 60_000)
      if (typeof hold !== 'number') throw new Error('no hold')
      await other.credits.commitHold({ id: hold, accountId, period: '2026-05' })
      const charged = performance.now()
      await waitUntil(async () => (await replica.api.get('/api/usage', account.apiKey)).body.credits.used === 1, 'the charge in usage', 1000)
      console.info(`[usage] a charge by another replica showed in usage after ${Math.round(performance.now() - charged)} ms`)
    } finally {
      await other.close()
      await replica.stop()
    }
  })
})

describe('credit counts kept in memory', () => {
  const account: AccountRecord = {
    id: 1,
    email: 'a@example.com',
    passwordHash: '',
    plan: 'free',
    monthlyCredits: null,
    disabledAt: null,
    createdAt: 0,
    emailVerifiedAt: 0,
  }
  /** A credit store whose counts the test changes behind the ledger's back (as a change the feed missed would). */
  const storeWith = (counts: PeriodCredits) => {
    let reads = 0
    const store: CreditStore = {
      keepCounts: true,
      counts: async () => {
        reads++
        return { ...counts }
      },
      hold: async () => 1,
      held: async () => 0,
      commitHold: async () => counts.used,
      releaseHold: async () => {},
      renewHolds: async () => {},
      purgeExpiredHolds: async () => 0,
      endOrphanedHolds: async () => 0,
    }
    return { store, reads: () => reads }
  }

  test('are read again once they are COUNTS_MAX_AGE_MS old, so a change nobody reported heals', async () => {
    let clock = Date.UTC(2026, 2, 15, 12)
    const counts = { used: 0, granted: 0 }
    const { store, reads } = storeWith(counts)
    const ledger = createCreditLedger(store, 10, () => clock)
    expect((await ledger.balance(account, clock)).total).toBe(10)
    counts.granted = 5
    clock += COUNTS_MAX_AGE_MS - 1
    expect((await ledger.balance(account, clock)).total).toBe(10)
    expect(reads()).toBe(1)
    clock += 1
    expect((await ledger.balance(account, clock)).total).toBe(15)
    expect(reads()).toBe(2)
  })

  test('are neither used nor kept while the change feed is not heard', async () => {
    const clock = Date.UTC(2026, 2, 15, 12)
    const counts = { used: 0, granted: 0 }
    const { store, reads } = storeWith(counts)
    let trusted = true
    const ledger = createCreditLedger(
      store,
      10,
      () => clock,
      () => trusted,
    )
    await ledger.balance(account, clock)
    trusted = false
    counts.granted = 5
    expect((await ledger.balance(account, clock)).total).toBe(15)
    expect((await ledger.balance(account, clock)).total).toBe(15)
    expect(reads()).toBe(3)
    // Heard again: read once more, then kept.
    trusted = true
    await ledger.balance(account, clock)
    await ledger.balance(account, clock)
    expect(reads()).toBe(4)
  })
})

test('api_calls_today: a stored count is read again once STORED_MAX_AGE_MS old, so other replicas’ calls show', async () => {
  let stored = 2
  let reads = 0
  const recorder = createActivityRecorder(
    {
      apply: async () => {},
      callsOn: async () => {
        reads++
        return stored
      },
    },
    createLogger(() => {}),
    { scheduler: createManualScheduler() },
  )
  try {
    const at = Date.UTC(2026, 2, 15, 12)
    expect(await recorder.callsToday(1, at)).toBe(2)
    // Another replica's flush, which this one is never told of.
    stored = 5
    expect(await recorder.callsToday(1, at + STORED_MAX_AGE_MS - 1)).toBe(2)
    expect(await recorder.callsToday(1, at + STORED_MAX_AGE_MS)).toBe(5)
    expect(reads).toBe(2)
  } finally {
    await recorder.stop()
  }
})
