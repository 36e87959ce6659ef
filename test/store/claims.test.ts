// The store's operations that several processes share a database through: credit holds. Time is
// injected, so a hold that ends is reached without waiting: a hold that lapsed stops counting.
import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSqliteStore } from '../../src/store/sqlite'
import type { NewKey } from '../../src/store/types'

const dir = mkdtempSync(join(tmpdir(), 'alttext-claims-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const NOW = Date.UTC(2026, 10, 21, 12, 0, 0)
const PERIOD = '2026-11'

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
