// The store's operations that several processes share a database through: credit holds, claims on batch
// items and on webhook deliveries, the same assertions on every engine (test/support/store-engines.ts).
// Each process is a claimant here, and time is injected, so a lease or a hold that ends is reached without
// waiting: a claim whose lease ended is taken over with a new token, the old claimant's writes are refused
// and charge nothing, and a hold that lapsed stops counting. The races run two instances on one database
// (two replicas' pools on PostgreSQL).
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import type { ItemOutcome } from '../../src/store/contract'
import type { NewKey, Store } from '../../src/store/contract'
import { createPostgresStore } from '../../src/store/postgres/store'
import { sharedPostgres } from '../support/postgres'
import { type OpenedStore, storeEngines } from '../support/store-engines'

const NOW = Date.UTC(2026, 10, 21, 12, 0, 0)
const PERIOD = '2026-11'
const LEASE = 60_000
const LIMITS = { perAccountBytes: 1 << 20, totalBytes: 1 << 20 }

let keys = 0
const key = (): NewKey => ({ prefix: `alt_${String(++keys).padStart(4, '0')}`, keyHash: `hash-${keys}`, label: null, expiresAt: null })
const refused = (r: unknown) => typeof r === 'object' && r !== null && (r as { kind?: string }).kind === 'exhausted'
const answered = (holdId: number): ItemOutcome => ({ kind: 'done', result: (n) => JSON.stringify({ used: n }), charge: { period: PERIOD, holdIds: [holdId] } })

for (const engine of storeEngines('claims')) {
  describe.skipIf(engine.skip)(`the ${engine.name} store`, () => {
    let opened: OpenedStore
    let store: Store
    beforeEach(async () => {
      opened = await engine.fresh()
      store = opened.store
    }, 60_000)
    afterEach(async () => {
      await opened.close()
    })

    const account = async (email = `a${keys}@example.com`) => (await store.accounts.createWithKey(email, 'x', 'free', key(), NOW))!.account.id
    const used = async (accountId: number) => (await store.credits.counts(accountId, PERIOD)).used

    async function batch(accountId: number, items: number, webhookUrl: string | null = null, on: Store = store): Promise<string> {
      const id = `bat_${++keys}`
      const created = await on.batches.create(
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

    describe('credit holds', () => {
      test("a batch item's answer in several languages: one credit per hold, all charged and ended with the record", async () => {
        const id = await account()
        const batchId = await batch(id, 1)
        const taken = (await store.batches.claim(batchId, NOW, LEASE))!
        const holds = [] as number[]
        for (let n = 0; n < 3; n++) holds.push((await store.credits.hold(id, PERIOD, 10, NOW, NOW + 1000, taken.id)) as number)
        const outcome: ItemOutcome = { kind: 'done', result: (n) => JSON.stringify({ used: n }), charge: { period: PERIOD, holdIds: holds } }
        expect(await store.batches.finish(taken.id, taken.token, outcome, NOW + 1)).toEqual({ status: 'written', used: 3, ended: batchId })
        expect(await used(id)).toBe(3)
        expect(await opened.holdRows()).toBe(0)
        expect((await store.batches.items(batchId))[0]).toMatchObject({ status: 'done', result: JSON.stringify({ used: 3 }), charged: true })
      })

      test('a hold counts until it is charged or released; charged credits and live holds together reach the total', async () => {
        const id = await account()
        const first = await store.credits.hold(id, PERIOD, 2, NOW, NOW + 1000)
        const second = await store.credits.hold(id, PERIOD, 2, NOW, NOW + 1000)
        expect(typeof first).toBe('number')
        expect(typeof second).toBe('number')
        expect(await store.credits.hold(id, PERIOD, 2, NOW, NOW + 1000)).toMatchObject({ kind: 'exhausted' })

        await store.credits.releaseHold(second as number)
        const third = await store.credits.hold(id, PERIOD, 2, NOW, NOW + 1000)
        expect(typeof third).toBe('number')

        expect(await store.credits.commitHold({ id: first as number, accountId: id, period: PERIOD })).toBe(1)
        expect(await used(id)).toBe(1)
        // One charged and one held: still nothing left.
        expect(await store.credits.hold(id, PERIOD, 2, NOW, NOW + 1000)).toMatchObject({ kind: 'exhausted' })
        await store.credits.releaseHold(third as number)
        expect(await store.credits.hold(id, PERIOD, 2, NOW, NOW + 1000)).toBeNumber()
        // Another period's holds and charges do not count.
        expect(await store.credits.hold(id, '2026-12', 1, NOW, NOW + 1000)).toBeNumber()
      })

      test('a hold that lapsed (its process died) stops counting at its expiry; renewing moves the expiry on', async () => {
        const id = await account()
        const dead = await store.credits.hold(id, PERIOD, 1, NOW, NOW + 1000)
        expect(dead).toBeNumber()
        expect(await store.credits.hold(id, PERIOD, 1, NOW + 999, NOW + 2000)).toMatchObject({ kind: 'exhausted' })
        const next = await store.credits.hold(id, PERIOD, 1, NOW + 1000, NOW + 2000)
        expect(next).toBeNumber()

        await store.credits.renewHolds([next as number], NOW, NOW + 5000)
        // Never earlier: a late renewal does not shorten a hold.
        await store.credits.renewHolds([next as number], NOW, NOW + 3000)
        expect(await store.credits.hold(id, PERIOD, 1, NOW + 4999, NOW + 6000)).toMatchObject({ kind: 'exhausted' })
        expect(await store.credits.hold(id, PERIOD, 1, NOW + 5000, NOW + 6000)).toBeNumber()

        // The purge drops the rows that lapsed, and only those.
        expect(await store.credits.purgeExpiredHolds(NOW + 5000)).toBe(2)
        expect(await opened.holdRows()).toBe(1)
      })

      test('a hold purged after it lapsed is still charged once when its answer comes; a deleted account is charged nothing', async () => {
        const id = await account()
        const hold = (await store.credits.hold(id, PERIOD, 5, NOW, NOW + 1000)) as number
        expect(await store.credits.purgeExpiredHolds(NOW + 1000)).toBe(1)
        expect(await store.credits.commitHold({ id: hold, accountId: id, period: PERIOD })).toBe(1)
        expect(await used(id)).toBe(1)

        const gone = await account()
        const held = (await store.credits.hold(gone, PERIOD, 5, NOW, NOW + 1000)) as number
        await store.accounts.deleteAccount(gone)
        expect(await opened.holdRows()).toBe(0)
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
        expect(await used(id)).toBe(0)
        // The refused answer's hold is gone with it: the credit is free again.
        expect(await opened.holdRows()).toBe(0)
        expect((await store.batches.items(batchId))[0]).toMatchObject({ status: 'running', result: null, charged: false })

        const hold = (await store.credits.hold(id, PERIOD, 10, NOW + LEASE, NOW + LEASE + 1000)) as number
        const finished = await store.batches.finish(taken.id, taken.token, answered(hold), NOW + LEASE + 1)
        expect(finished).toEqual({ status: 'written', used: 1, ended: batchId })
        expect(await opened.holdRows()).toBe(0)
        // Recorded once: the same token cannot record or charge it again.
        const again = (await store.credits.hold(id, PERIOD, 10, NOW + LEASE, NOW + LEASE + 1000)) as number
        expect((await store.batches.finish(taken.id, taken.token, answered(again), NOW + LEASE + 2)).status).toBe('lost')
        expect(await used(id)).toBe(1)
        expect((await store.batches.items(batchId))[0]).toMatchObject({ status: 'done', result: JSON.stringify({ used: 1 }), charged: true })
      })

      test('a takeover ends the credit hold of the claim it replaces: on the last credit, the new claimant holds it and the item is charged once', async () => {
        const id = await account()
        const batchId = await batch(id, 2)
        const other = await opened.second()
        // The first claimant holds the last credit for its item and dies; its hold would last long after its lease.
        const dead = (await store.batches.claim(batchId, NOW, LEASE))!
        const deadHold = await store.credits.hold(id, PERIOD, 1, NOW, NOW + 10 * LEASE, dead.id)
        expect(deadHold).toBeNumber()
        // A single call's hold and another item's claim keep theirs.
        const single = (await store.credits.hold(id, '2026-12', 1, NOW, NOW + 10 * LEASE)) as number
        const neighbour = (await store.batches.claim(batchId, NOW, LEASE))!
        const neighbourHold = (await store.credits.hold(id, '2026-12', 2, NOW, NOW + 10 * LEASE, neighbour.id)) as number
        expect(await store.credits.renewHolds([neighbourHold], NOW, NOW + 10 * LEASE)).toBeUndefined()

        const taken = (await other.batches.claim(batchId, NOW + LEASE, LEASE))!
        expect(taken).toMatchObject({ id: dead.id, takenOver: true })
        expect(await opened.holdRows()).toBe(2)
        const hold = await other.credits.hold(id, PERIOD, 1, NOW + LEASE, NOW + LEASE + 1000, taken.id)
        expect(hold).toBeNumber()
        expect(await other.batches.finish(taken.id, taken.token, answered(hold as number), NOW + LEASE + 1)).toMatchObject({ status: 'written', used: 1 })
        // The dead claimant's late answer is refused and charges nothing.
        expect((await store.batches.finish(dead.id, dead.token, answered(deadHold as number), NOW + LEASE + 2)).status).toBe('lost')
        expect(await used(id)).toBe(1)
        expect(await store.credits.held(id, '2026-12', NOW + LEASE)).toBe(2)
        await store.credits.releaseHold(single)
        expect(await store.credits.held(id, '2026-12', NOW + LEASE)).toBe(1)
      })

      test('a hold refused while held credits take the rest says how many were charged and when the earliest hold lapses', async () => {
        const id = await account()
        const first = (await store.credits.hold(id, PERIOD, 3, NOW, NOW + 40_000)) as number
        await store.credits.hold(id, PERIOD, 3, NOW + 1000, NOW + 21_000)
        await store.credits.commitHold({ id: first, accountId: id, period: PERIOD })
        await store.credits.hold(id, PERIOD, 3, NOW + 2000, NOW + 30_000)
        expect(await store.credits.held(id, PERIOD, NOW + 5000)).toBe(2)
        // One charged, two held: the one that lapses first is 16 s away.
        expect(await store.credits.hold(id, PERIOD, 3, NOW + 5000, NOW + 65_000)).toEqual({ kind: 'exhausted', used: 1, nextLapseInMs: 16_000 })
        expect(await store.credits.hold(id, PERIOD, 1, NOW + 5000, NOW + 65_000)).toEqual({ kind: 'exhausted', used: 1, nextLapseInMs: 16_000 })
      })

      test('put back under its token, an item is pending for any claimant; a deleted item is gone', async () => {
        const id = await account()
        const batchId = await batch(id, 1)
        const claim = (await store.batches.claim(batchId, NOW, LEASE))!
        expect(await store.batches.unclaim(claim.id, claim.token)).toBe('written')
        const next = (await store.batches.claim(batchId, NOW, LEASE))!
        expect(next).toMatchObject({ id: claim.id, takenOver: false })
        await opened.deleteBatch(batchId)
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

      test.skipIf(engine.name !== 'SQLite')('SQLite at start: every claim found belongs to a process that died, and its lease ends at once', async () => {
        const id = await account()
        const batchId = await batch(id, 3)
        const claims = [(await store.batches.claim(batchId, NOW, LEASE))!, (await store.batches.claim(batchId, NOW, LEASE))!]
        expect(await store.batches.endOrphanedClaims()).toBe(2)
        const taken = (await store.batches.claim(batchId, NOW, LEASE))!
        expect(taken).toMatchObject({ id: claims[0]!.id, takenOver: true })
        expect(await store.batches.renew(claims[0]!.id, claims[0]!.token, NOW, LEASE)).toBe('lost')
      })

      test.skipIf(engine.name !== 'SQLite')(
        'SQLite at start drops every hold and ends every claim; opened beside the serving process (alttext admin), it ends none',
        async () => {
          const id = await account()
          const batchId = await batch(id, 1)
          const claim = (await store.batches.claim(batchId, NOW, LEASE))!
          await store.credits.hold(id, PERIOD, 5, NOW, NOW + 1000)
          const beside = await opened.second()
          expect(await beside.credits.endOrphanedHolds()).toBe(0)
          expect(await beside.batches.endOrphanedClaims()).toBe(0)
          expect(await opened.holdRows()).toBe(1)
          expect(await store.batches.renew(claim.id, claim.token, NOW, LEASE)).toBe('written')
          expect(await store.credits.endOrphanedHolds()).toBe(1)
          expect(await store.batches.endOrphanedClaims()).toBe(1)
          expect(await opened.holdRows()).toBe(0)
        },
      )

      test.skipIf(engine.name !== 'PostgreSQL')('PostgreSQL at start ends no claim and drops no hold: a live replica may own them; they lapse', async () => {
        const id = await account()
        const batchId = await batch(id, 1)
        const claim = (await store.batches.claim(batchId, NOW, LEASE))!
        await store.credits.hold(id, PERIOD, 5, NOW, NOW + 1000)
        const starting = await opened.second()
        expect(await starting.credits.endOrphanedHolds()).toBe(0)
        expect(await starting.batches.endOrphanedClaims()).toBe(0)
        expect(await opened.holdRows()).toBe(1)
        expect(await starting.batches.claim(batchId, NOW, LEASE)).toBeNull()
        expect(await store.batches.renew(claim.id, claim.token, NOW, LEASE)).toBe('written')
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

      test('a renewed attempt keeps its delivery past the first lease; a renewal under a lost claim writes nothing', async () => {
        const id = await account()
        const whd = await delivery(id)
        const first = (await store.webhooks.beginAttempt(whd, NOW, LEASE, retryAt(NOW)))!
        expect(await store.webhooks.renewAttempt(whd, first.token, NOW + LEASE / 2, LEASE)).toBe('written')
        // Not due at the first lease's end: the renewal moved it on.
        expect(await store.webhooks.due(NOW + LEASE, 10, 2, new Map())).toEqual([])
        expect(await store.webhooks.beginAttempt(whd, NOW + LEASE, LEASE, retryAt(NOW + LEASE))).toBeNull()
        expect(await store.webhooks.nextDueAt()).toBe(NOW + LEASE / 2 + LEASE)
        // Taken over once the renewed lease ends: the first claim's renewal is refused.
        const later = NOW + LEASE / 2 + LEASE
        const second = (await store.webhooks.beginAttempt(whd, later, LEASE, retryAt(later)))!
        expect(await store.webhooks.renewAttempt(whd, first.token, later + 1, LEASE)).toBe('lost')
        expect(await store.webhooks.nextDueAt()).toBe(later + LEASE)
        expect(await store.webhooks.delivered(whd, second.token, 200, later + 2)).toBe('written')
        expect(await store.webhooks.renewAttempt(whd, second.token, later + 3, LEASE)).toBe('lost')
      })

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
        expect(await store.webhooks.attemptFailed(whd, again.token, null, 'the service stopped during the attempt', 'interrupted', NOW + LEASE + 5)).toBe(
          'written',
        )
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

      test('deliveries sought and begun by two instances at once: each attempted once', async () => {
        const owners = [await account(), await account(), await account()]
        const ids = new Set<string>()
        for (let n = 0; n < 12; n++) ids.add(await delivery(owners[n % 3]!))
        const other = await opened.second()
        const begun: string[] = []
        // Two dispatchers, each attempting everything due that it sees, twice over.
        const dispatcher = async (s: Store) => {
          for (let round = 0; round < 2; round++) {
            const due = await s.webhooks.due(NOW, 50, 50, new Map())
            await Promise.all(
              due.map(async (d) => {
                if (await s.webhooks.beginAttempt(d.id, NOW, LEASE, retryAt(NOW))) begun.push(d.id)
              }),
            )
          }
        }
        await Promise.all([dispatcher(store), dispatcher(other), dispatcher(store), dispatcher(other)])
        expect(begun.toSorted()).toEqual([...ids].toSorted())
      })
    })

    describe('races between two instances', () => {
      test('2N holds at once on N credits, half from each instance: exactly N are held', async () => {
        const id = await account()
        const other = await opened.second()
        const n = 10
        const results = await Promise.all(Array.from({ length: 2 * n }, (_, i) => (i % 2 ? other : store).credits.hold(id, PERIOD, n, NOW, NOW + LEASE)))
        expect(results.filter((r) => typeof r === 'number')).toHaveLength(n)
        expect(results.filter((r) => refused(r))).toHaveLength(n)
        expect(await opened.holdRows()).toBe(n)
      })

      test('holds charged while new ones are asked for, from both instances: charged and held never pass the total', async () => {
        const id = await account()
        const other = await opened.second()
        const n = 8
        const held = await Promise.all(Array.from({ length: n }, () => store.credits.hold(id, PERIOD, n, NOW, NOW + LEASE)))
        const asked = await Promise.all([
          ...held.map((hold, i) => (i % 2 ? other : store).credits.commitHold({ id: hold as number, accountId: id, period: PERIOD })),
          ...Array.from({ length: n }, (_, i) => (i % 2 ? store : other).credits.hold(id, PERIOD, n, NOW, NOW + LEASE)),
        ])
        expect(asked.slice(0, n).toSorted((a, b) => (a as number) - (b as number))).toEqual(Array.from({ length: n }, (_, i) => i + 1))
        expect(asked.slice(n).every((r) => refused(r))).toBe(true)
        expect(await used(id)).toBe(n)
        expect(await opened.holdRows()).toBe(0)
      })

      test('200 items claimed by two instances at once: each claimed once; finished at once, charged once each, the batch ended once', async () => {
        const id = await account()
        const batchId = await batch(id, 200)
        const other = await opened.second()
        const claims: { on: Store; id: number; token: string; index: number }[] = []
        const worker = async (on: Store) => {
          for (;;) {
            const claim = await on.batches.claim(batchId, NOW, LEASE)
            if (!claim) return
            claims.push({ on, ...claim })
          }
        }
        await Promise.all([store, other].flatMap((on) => Array.from({ length: 4 }, () => worker(on))))
        expect(claims).toHaveLength(200)
        expect(new Set(claims.map((c) => c.index)).size).toBe(200)
        console.info(
          `[claims] ${engine.name}: of 200 items, ${claims.filter((c) => c.on === store).length} were claimed by one instance, the rest by the other`,
        )

        const finished = await Promise.all(
          claims.map(async (c) => {
            const hold = await c.on.credits.hold(id, PERIOD, 1000, NOW, NOW + LEASE)
            return c.on.batches.finish(c.id, c.token, answered(hold as number), NOW + 1)
          }),
        )
        expect(finished.every((f) => f.status === 'written')).toBe(true)
        expect(finished.filter((f) => f.ended === batchId)).toHaveLength(1)
        expect(finished.map((f) => f.used).toSorted((a, b) => a! - b!)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1))
        expect(await used(id)).toBe(200)
        expect(await store.batches.get(id, batchId)).toMatchObject({ status: 'completed', succeeded: 200, failed: 0, completedAt: NOW + 1 })
        expect(await opened.holdRows()).toBe(0)
      }, 60_000)

      test('the last two items of a batch finished at once by two instances: the batch ends once, with both counted', async () => {
        const id = await account()
        const other = await opened.second()
        const batches = await Promise.all(Array.from({ length: 30 }, () => batch(id, 2)))
        const claims = await Promise.all(batches.map(async (b) => [(await store.batches.claim(b, NOW, LEASE))!, (await other.batches.claim(b, NOW, LEASE))!]))
        const failed = { kind: 'failed', code: 'upstream_error', message: 'x' } as const
        const finished = await Promise.all(
          claims.flatMap(([mine, theirs]) => [
            store.batches.finish(mine!.id, mine!.token, failed, NOW + 1),
            other.batches.finish(theirs!.id, theirs!.token, failed, NOW + 1),
          ]),
        )
        expect(
          finished
            .map((f) => f.ended)
            .filter((e) => e !== null)
            .toSorted(),
        ).toEqual(batches.toSorted())
        for (const b of batches) expect(await store.batches.get(id, b)).toMatchObject({ status: 'completed', failed: 2, completedAt: NOW + 1 })
      }, 60_000)

      test('a finish under a stale token races the claimant that took the item over: lost, charged nothing; the other records it once', async () => {
        const id = await account()
        const batchId = await batch(id, 1)
        const other = await opened.second()
        const stale = (await store.batches.claim(batchId, NOW, LEASE))!
        const taken = (await other.batches.claim(batchId, NOW + LEASE, LEASE))!
        const [staleHold, takenHold] = [
          await store.credits.hold(id, PERIOD, 10, NOW, NOW + 2 * LEASE),
          await other.credits.hold(id, PERIOD, 10, NOW, NOW + 2 * LEASE),
        ]
        const [lost, written] = await Promise.all([
          store.batches.finish(stale.id, stale.token, answered(staleHold as number), NOW + LEASE + 1),
          other.batches.finish(taken.id, taken.token, answered(takenHold as number), NOW + LEASE + 1),
        ])
        expect(lost).toEqual({ status: 'lost', used: null, ended: null })
        expect(written).toEqual({ status: 'written', used: 1, ended: batchId })
        expect(await used(id)).toBe(1)
        expect(await opened.holdRows()).toBe(0)
        expect((await store.batches.items(batchId))[0]).toMatchObject({ status: 'done', charged: true })
      })
    })
  })
}

// Replicas' clocks drift apart. On PostgreSQL the database's clock judges leases and holds (the stores
// here are opened as the service opens them): a replica whose clock runs 50 s ahead passes its own `now`,
// and it changes nothing of what is live.
const postgresEngine = storeEngines('claims').find((engine) => engine.name === 'PostgreSQL')!
describe.skipIf(postgresEngine.skip)('PostgreSQL judges leases and holds by its own clock', () => {
  const AHEAD = 50_000
  const SHORT = 30_000
  let url: string
  let stores: Store[] = []
  beforeEach(async () => {
    url = await (await sharedPostgres()).createDatabase()
    stores = [await createPostgresStore(url), await createPostgresStore(url)]
  }, 60_000)
  afterEach(async () => {
    for (const store of stores) await store.close()
    await (await sharedPostgres()).dropDatabase(url)
  })

  test('a replica 50 s ahead takes over no live claim, overspends no credit and re-sends no running webhook attempt; a lease that ended is taken over by one 50 s behind', async () => {
    const [live, ahead] = stores as [Store, Store]
    const now = Date.now()
    const later = now + AHEAD
    const accountId = (await live.accounts.createWithKey('skew@example.com', 'x', 'free', key(), now))!.account.id
    const period = new Date(now).toISOString().slice(0, 7)
    const items = (n: number) => Array.from({ length: n }, (_, i) => ({ request: JSON.stringify({ i }), image: null, metadata: null }))
    const created = await live.batches.create({ id: 'bat_skew', accountId, createdAt: now, webhookUrl: null, idempotency: null, items: items(2) }, LIMITS)
    expect(created.kind).toBe('created')

    // A claim under a 30 s lease, and the last credit held for 30 s.
    const claim = (await live.batches.claim('bat_skew', now, SHORT))!
    expect(await live.credits.hold(accountId, period, 1, now, now + SHORT, claim.id)).toBeNumber()
    expect(await ahead.batches.openBatches(later)).toEqual(['bat_skew'])
    const next = (await ahead.batches.claim('bat_skew', later, SHORT))!
    expect(next).toMatchObject({ index: 1, takenOver: false })
    expect(await ahead.batches.claim('bat_skew', later, SHORT)).toBeNull()
    expect(await ahead.batches.openBatches(later)).toEqual([])
    expect(await ahead.credits.hold(accountId, period, 1, later, later + SHORT)).toMatchObject({ kind: 'exhausted', used: 0 })
    expect(await ahead.credits.held(accountId, period, later)).toBe(1)
    expect(await ahead.credits.purgeExpiredHolds(later)).toBe(0)
    expect(await live.batches.renew(claim.id, claim.token, now, SHORT)).toBe('written')

    // A webhook attempt under way under a 30 s lease.
    await live.batches.finish(claim.id, claim.token, { kind: 'failed', code: 'internal_error', message: 'x' }, now)
    await live.batches.finish(next.id, next.token, { kind: 'failed', code: 'internal_error', message: 'x' }, now)
    const hooked = await live.batches.create(
      { id: 'bat_hook', accountId, createdAt: now, webhookUrl: 'https://hooks.example.com/a', idempotency: null, items: items(1) },
      LIMITS,
    )
    expect(hooked.kind).toBe('created')
    const only = (await live.batches.claim('bat_hook', now, SHORT))!
    await live.batches.finish(only.id, only.token, { kind: 'failed', code: 'internal_error', message: 'x' }, now)
    expect(await live.webhooks.queueEndedBatches(now, () => 'whd_skew', 10)).toBe(1)
    const attempt = (await live.webhooks.beginAttempt('whd_skew', now, SHORT, () => now + 1000))!
    expect(attempt).not.toBeNull()
    expect(await ahead.webhooks.due(later, 10, 10, new Map())).toEqual([])
    expect(await ahead.webhooks.beginAttempt('whd_skew', later, SHORT, () => later + 1000)).toBeNull()
    expect(await live.webhooks.renewAttempt('whd_skew', attempt.token, now, SHORT)).toBe('written')

    // A lease that ended by the database's clock (0 ms) is taken over, also by a replica whose clock lags.
    const behind = now - AHEAD
    const ended = await live.batches.create({ id: 'bat_ended', accountId, createdAt: now, webhookUrl: null, idempotency: null, items: items(1) }, LIMITS)
    expect(ended.kind).toBe('created')
    await live.batches.claim('bat_ended', now, 0)
    expect(await ahead.batches.claim('bat_ended', behind, SHORT)).toMatchObject({ index: 0, takenOver: true })
  })
})
