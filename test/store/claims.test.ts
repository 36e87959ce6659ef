// The store's operations that several processes share a database through: credit holds, claims on batch
// items and on webhook deliveries. Each process is a claimant here, and time is injected, so a lease or a
// hold that ends is reached without waiting: a claim whose lease ended is taken over with a new token, the
// old claimant's writes are refused and charge nothing, and a hold that lapsed stops counting.
import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ItemOutcome } from '../../src/store/batches'
import { createSqliteStore } from '../../src/store/sqlite'
import type { NewKey } from '../../src/store/types'

const dir = mkdtempSync(join(tmpdir(), 'alttext-claims-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const NOW = Date.UTC(2026, 10, 21, 12, 0, 0)
const PERIOD = '2026-11'
const LEASE = 60_000
const LIMITS = { perAccountBytes: 1 << 20, totalBytes: 1 << 20 }

let store: ReturnType<typeof createSqliteStore>
let files = 0
let keys = 0
beforeEach(() => {
  store?.close()
  store = createSqliteStore(join(dir, `claims-${++files}.db`))
})

const key = (): NewKey => ({ prefix: `alt_${String(++keys).padStart(4, '0')}`, keyHash: `hash-${keys}`, label: null, expiresAt: null })
const account = async (email = `a${keys}@example.com`) => (await store.accounts.createWithKey(email, 'x', 'free', key(), NOW))!.account.id
const used = (accountId: number) => store.db.query<{ used: number }, [number]>('SELECT used FROM credit_usage WHERE account_id = ?').get(accountId)?.used ?? 0
const holdRows = () => store.db.query<{ n: number }, []>('SELECT count(*) AS n FROM credit_holds').get()!.n

async function batch(accountId: number, items: number, webhookUrl: string | null = null): Promise<string> {
  const id = `bat_${++keys}`
  const created = await store.batches.create(
    {
      id,
      accountId,
      createdAt: NOW,
      webhookUrl,
      idempotency: null,
      items: Array.from({ length: items }, (_, n) => ({ request: JSON.stringify({ n }), image: null, metadata: null })),
    },
    LIMITS,
  )
  expect(created.kind).toBe('created')
  return id
}

const answered = (holdId: number): ItemOutcome => ({ kind: 'done', result: (n) => JSON.stringify({ used: n }), charge: { period: PERIOD, holdId } })

describe('credit holds', () => {
  test('a hold counts until it is charged or released; charged credits and live holds together reach the total', async () => {
    const id = await account()
    const first = await store.credits.hold(id, PERIOD, 2, NOW, NOW + 1000)
    const second = await store.credits.hold(id, PERIOD, 2, NOW, NOW + 1000)
    expect(typeof first).toBe('number')
    expect(typeof second).toBe('number')
    expect(await store.credits.hold(id, PERIOD, 2, NOW, NOW + 1000)).toBe('exhausted')

    await store.credits.releaseHold(second as number)
    const third = await store.credits.hold(id, PERIOD, 2, NOW, NOW + 1000)
    expect(typeof third).toBe('number')

    expect(await store.credits.commitHold({ id: first as number, accountId: id, period: PERIOD })).toBe(1)
    expect(used(id)).toBe(1)
    // One charged and one held: still nothing left.
    expect(await store.credits.hold(id, PERIOD, 2, NOW, NOW + 1000)).toBe('exhausted')
    await store.credits.releaseHold(third as number)
    expect(await store.credits.hold(id, PERIOD, 2, NOW, NOW + 1000)).toBeNumber()
    // Another period's holds and charges do not count.
    expect(await store.credits.hold(id, '2026-12', 1, NOW, NOW + 1000)).toBeNumber()
  })

  test('a hold that lapsed (its process died) stops counting at its expiry; renewing moves the expiry on', async () => {
    const id = await account()
    const dead = await store.credits.hold(id, PERIOD, 1, NOW, NOW + 1000)
    expect(dead).toBeNumber()
    expect(await store.credits.hold(id, PERIOD, 1, NOW + 999, NOW + 2000)).toBe('exhausted')
    const next = await store.credits.hold(id, PERIOD, 1, NOW + 1000, NOW + 2000)
    expect(next).toBeNumber()

    await store.credits.renewHolds([next as number], NOW + 5000)
    // Never earlier: a late renewal does not shorten a hold.
    await store.credits.renewHolds([next as number], NOW + 3000)
    expect(await store.credits.hold(id, PERIOD, 1, NOW + 4999, NOW + 6000)).toBe('exhausted')
    expect(await store.credits.hold(id, PERIOD, 1, NOW + 5000, NOW + 6000)).toBeNumber()

    // The purge drops the rows that lapsed, and only those.
    expect(await store.credits.purgeExpiredHolds(NOW + 5000)).toBe(2)
    expect(holdRows()).toBe(1)
  })

  test('a hold purged after it lapsed is still charged once when its answer comes; a deleted account is charged nothing', async () => {
    const id = await account()
    const hold = (await store.credits.hold(id, PERIOD, 5, NOW, NOW + 1000)) as number
    expect(await store.credits.purgeExpiredHolds(NOW + 1000)).toBe(1)
    expect(await store.credits.commitHold({ id: hold, accountId: id, period: PERIOD })).toBe(1)
    expect(used(id)).toBe(1)

    const gone = await account()
    const held = (await store.credits.hold(gone, PERIOD, 5, NOW, NOW + 1000)) as number
    store.db.query('DELETE FROM accounts WHERE id = ?').run(gone)
    expect(holdRows()).toBe(0)
    expect(await store.credits.commitHold({ id: held, accountId: gone, period: PERIOD })).toBeNull()
    expect(await store.credits.hold(gone, PERIOD, 5, NOW, NOW + 1000)).toBeNull()
  })
})

describe('batch item claims', () => {
  test('an item is held by one claim at a time; once its lease ends it is taken over with a new token', async () => {
    const id = await account()
    const batchId = await batch(id, 2)
    const a = (await store.batches.claim(batchId, NOW, LEASE))!
    expect(a).toMatchObject({ index: 0, takenOver: false, leaseUntil: NOW + LEASE })
    const b = (await store.batches.claim(batchId, NOW, LEASE))!
    expect(b).toMatchObject({ index: 1, takenOver: false })
    expect(a.token).not.toBe(b.token)
    // Both held: nothing to claim until a lease ends.
    expect(await store.batches.claim(batchId, NOW + LEASE - 1, LEASE)).toBeNull()
    expect(await store.batches.openBatches(NOW + LEASE - 1)).toEqual([])

    // b renews; a does not.
    expect(await store.batches.renew(b.id, b.token, NOW + 10_000, LEASE)).toBe('written')
    expect(await store.batches.openBatches(NOW + LEASE)).toEqual([batchId])
    const c = (await store.batches.claim(batchId, NOW + LEASE, LEASE))!
    expect(c).toMatchObject({ id: a.id, index: 0, takenOver: true, leaseUntil: NOW + 2 * LEASE })
    expect(c.token).not.toBe(a.token)
    expect(await store.batches.claim(batchId, NOW + LEASE, LEASE)).toBeNull()
  })

  test('the claimant whose item was taken over cannot renew, put back, record or charge it; the new claimant records and charges it once', async () => {
    const id = await account()
    const batchId = await batch(id, 1)
    const old = (await store.batches.claim(batchId, NOW, LEASE))!
    const taken = (await store.batches.claim(batchId, NOW + LEASE, LEASE))!
    expect(taken.takenOver).toBe(true)

    const oldHold = (await store.credits.hold(id, PERIOD, 10, NOW, NOW + 1000)) as number
    expect(await store.batches.renew(old.id, old.token, NOW + LEASE, LEASE)).toBe('lost')
    expect(await store.batches.unclaim(old.id, old.token)).toBe('lost')
    expect(await store.batches.finish(old.id, old.token, answered(oldHold), NOW + LEASE)).toEqual({ status: 'lost', used: null, ended: null })
    expect(await store.batches.finish(old.id, old.token, { kind: 'failed', code: 'internal_error', message: 'x' }, NOW + LEASE)).toMatchObject({
      status: 'lost',
    })
    expect(used(id)).toBe(0)
    // The refused answer's hold is gone with it: the credit is free again.
    expect(holdRows()).toBe(0)
    expect((await store.batches.items(batchId))[0]).toMatchObject({ status: 'running', result: null, charged: false })

    const hold = (await store.credits.hold(id, PERIOD, 10, NOW + LEASE, NOW + LEASE + 1000)) as number
    const finished = await store.batches.finish(taken.id, taken.token, answered(hold), NOW + LEASE + 1)
    expect(finished).toEqual({ status: 'written', used: 1, ended: batchId })
    expect(holdRows()).toBe(0)
    // Recorded once: the same token cannot record or charge it again.
    const again = (await store.credits.hold(id, PERIOD, 10, NOW + LEASE, NOW + LEASE + 1000)) as number
    expect((await store.batches.finish(taken.id, taken.token, answered(again), NOW + LEASE + 2)).status).toBe('lost')
    expect(used(id)).toBe(1)
    expect((await store.batches.items(batchId))[0]).toMatchObject({ status: 'done', result: JSON.stringify({ used: 1 }), charged: true })
  })

  test('put back under its token, an item is pending for any claimant; a deleted item is gone', async () => {
    const id = await account()
    const batchId = await batch(id, 1)
    const claim = (await store.batches.claim(batchId, NOW, LEASE))!
    expect(await store.batches.unclaim(claim.id, claim.token)).toBe('written')
    const next = (await store.batches.claim(batchId, NOW, LEASE))!
    expect(next).toMatchObject({ id: claim.id, takenOver: false })
    store.db.query('DELETE FROM batches WHERE id = ?').run(batchId)
    expect(await store.batches.renew(next.id, next.token, NOW, LEASE)).toBe('gone')
    expect((await store.batches.finish(next.id, next.token, { kind: 'failed', code: 'internal_error', message: 'x' }, NOW)).status).toBe('gone')
  })

  test('an item that had started when its batch was cancelled is still taken over and finished after its lease', async () => {
    const id = await account()
    const batchId = await batch(id, 2)
    const started = (await store.batches.claim(batchId, NOW, LEASE))!
    const cancelled = await store.batches.cancel(id, batchId, NOW, 'batch_cancelled', 'cancelled')
    expect(cancelled).toMatchObject({ status: 'cancelled', completedAt: null })
    expect(await store.batches.openBatches(NOW + LEASE)).toEqual([batchId])
    const taken = (await store.batches.claim(batchId, NOW + LEASE, LEASE))!
    expect(taken).toMatchObject({ id: started.id, takenOver: true })
    const finished = await store.batches.finish(taken.id, taken.token, { kind: 'failed', code: 'upstream_error', message: 'x' }, NOW + LEASE)
    expect(finished).toMatchObject({ status: 'written', ended: batchId })
  })

  test('SQLite at start: every claim found belongs to a process that died, and its lease ends at once', async () => {
    const id = await account()
    const batchId = await batch(id, 3)
    const claims = [(await store.batches.claim(batchId, NOW, LEASE))!, (await store.batches.claim(batchId, NOW, LEASE))!]
    expect(await store.batches.endOrphanedClaims()).toBe(2)
    const taken = (await store.batches.claim(batchId, NOW, LEASE))!
    expect(taken).toMatchObject({ id: claims[0]!.id, takenOver: true })
    expect(await store.batches.renew(claims[0]!.id, claims[0]!.token, NOW, LEASE)).toBe('lost')
  })

  test('SQLite at start drops every hold and ends every claim; opened beside the serving process (alttext admin), it ends none', async () => {
    const id = await account()
    const batchId = await batch(id, 1)
    const claim = (await store.batches.claim(batchId, NOW, LEASE))!
    await store.credits.hold(id, PERIOD, 5, NOW, NOW + 1000)
    const beside = createSqliteStore(store.db.filename, { processLock: false })
    try {
      expect(await beside.credits.endOrphanedHolds()).toBe(0)
      expect(await beside.batches.endOrphanedClaims()).toBe(0)
    } finally {
      beside.close()
    }
    expect(holdRows()).toBe(1)
    expect(await store.batches.renew(claim.id, claim.token, NOW, LEASE)).toBe('written')
    expect(await store.credits.endOrphanedHolds()).toBe(1)
    expect(await store.batches.endOrphanedClaims()).toBe(1)
    expect(holdRows()).toBe(0)
  })
})

describe('webhook delivery claims', () => {
  /** A delivery of an ended one-item batch of `accountId`. */
  async function delivery(accountId: number): Promise<string> {
    const batchId = await batch(accountId, 1, 'https://hooks.example.com/alttext')
    const item = (await store.batches.claim(batchId, NOW, LEASE))!
    await store.batches.finish(item.id, item.token, { kind: 'failed', code: 'internal_error', message: 'x' }, NOW)
    expect(await store.webhooks.queueEndedBatches(NOW, () => `whd_${batchId}`, 10)).toBe(1)
    return `whd_${batchId}`
  }
  const retryAt = (now: number) => (attempts: number) => (attempts < 3 ? now + 1000 : null)

  test('an attempt holds its delivery: nobody else attempts it until the claim ends; a dead attempt is taken over with the same id', async () => {
    const id = await account()
    const whd = await delivery(id)
    const first = (await store.webhooks.beginAttempt(whd, NOW, LEASE, retryAt(NOW)))!
    expect(first.delivery).toMatchObject({ id: whd, attempts: 1, nextAttemptAt: NOW + 1000 })
    // Its retry time passes while it is under way: still not due, for any process.
    expect(await store.webhooks.beginAttempt(whd, NOW + 2000, LEASE, retryAt(NOW + 2000))).toBeNull()
    expect(await store.webhooks.due(NOW + 2000, 10, 2, new Map())).toEqual([])
    expect(await store.webhooks.nextDueAt()).toBe(NOW + LEASE)

    // Its process died: at the lease's end another takes it over, under the same delivery id.
    expect((await store.webhooks.due(NOW + LEASE, 10, 2, new Map())).map((d) => d.id)).toEqual([whd])
    const second = (await store.webhooks.beginAttempt(whd, NOW + LEASE, LEASE, retryAt(NOW + LEASE)))!
    expect(second.delivery).toMatchObject({ id: whd, attempts: 2 })
    expect(second.token).not.toBe(first.token)

    // The first attempt's late outcome is not recorded; the second's is.
    expect(await store.webhooks.delivered(whd, first.token, 200, NOW + LEASE)).toBe('lost')
    expect(await store.webhooks.attemptFailed(whd, first.token, 500, 'late', 'final', NOW + LEASE)).toBe('lost')
    expect((await store.webhooks.list(id, 10, null))[0]).toMatchObject({ status: 'pending', deliveredAt: null })
    expect(await store.webhooks.delivered(whd, second.token, 204, NOW + LEASE + 1)).toBe('written')
    expect((await store.webhooks.list(id, 10, null))[0]).toMatchObject({ status: 'delivered', lastStatus: 204, attempts: 2 })
    expect(await store.webhooks.nextDueAt()).toBeNull()
  })

  test('a last attempt that died is made again after its lease; one cut short by shutdown is due at once', async () => {
    const id = await account()
    const whd = await delivery(id)
    const last = (await store.webhooks.beginAttempt(whd, NOW, LEASE, () => null))!
    expect(last.delivery.nextAttemptAt).toBeNull()
    expect(await store.webhooks.due(NOW + LEASE - 1, 10, 2, new Map())).toEqual([])
    const again = (await store.webhooks.beginAttempt(whd, NOW + LEASE, LEASE, () => null))!
    expect(again.delivery.attempts).toBe(2)
    expect(await store.webhooks.attemptFailed(whd, again.token, null, 'the service stopped during the attempt', 'interrupted', NOW + LEASE + 5)).toBe('written')
    expect((await store.webhooks.due(NOW + LEASE + 5, 10, 2, new Map())).map((d) => d.id)).toEqual([whd])
    const final = (await store.webhooks.beginAttempt(whd, NOW + LEASE + 5, LEASE, () => null))!
    expect(await store.webhooks.attemptFailed(whd, final.token, 500, 'the receiver answered 500', 'retry', NOW + LEASE + 6)).toBe('written')
    expect((await store.webhooks.list(id, 10, null))[0]).toMatchObject({ status: 'failed', attempts: 3 })
  })

  test("an account's share counts the attempts every process has under way", async () => {
    const busyAccount = await account()
    const other = await account()
    const mine = [await delivery(busyAccount), await delivery(busyAccount), await delivery(busyAccount)]
    const theirs = await delivery(other)
    // Another process attempts two of the first account's deliveries: its share of 2 is used up.
    await store.webhooks.beginAttempt(mine[0]!, NOW, LEASE, retryAt(NOW))
    await store.webhooks.beginAttempt(mine[1]!, NOW, LEASE, retryAt(NOW))
    expect((await store.webhooks.due(NOW, 10, 2, new Map())).map((d) => d.id)).toEqual([theirs])
    // With a share of 3, one more of it may start.
    expect((await store.webhooks.due(NOW, 10, 3, new Map())).map((d) => d.id).sort()).toEqual([mine[2]!, theirs].sort())
  })
})
