// The store contract, the same assertions on every engine: SQLite always, PostgreSQL when the test
// harness can start it (under CI=true it must). Each test gets a fresh database. "Two instances" are two
// pools on one database: for SQLite the serving store and one opened beside it as alttext admin opens
// it; for PostgreSQL two replicas' stores. Credits, batches and webhooks have their own tests.
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { mintKey } from '../../src/modules/keys/material'
import { createPostgresStore, type PostgresStore } from '../../src/store/postgres/store'
import { createSqliteStore } from '../../src/store/sqlite'
import type { AccountChange, CachedAltText, HistoryBatch, HistoryRecord, NewKey, Store } from '../../src/store/types'
import { waitUntil } from '../support/service'
import { postgresUnavailable, sharedPostgres } from '../support/postgres'

/** What both engines implement. */
type ContractStore = Omit<Store, 'credits' | 'batches' | 'webhooks'>
type Opened = { store: ContractStore; second(): Promise<ContractStore>; close(): Promise<void> }
type Engine = { name: string; skip: boolean; fresh(): Promise<Opened> }

const MINUTE = 60_000
const NOW = Date.UTC(2026, 10, 23, 12)
const newKey = (label: string | null = null, expiresAt: number | null = null): NewKey => mintKey(label, expiresAt).record

const sqlite: Engine = {
  name: 'SQLite',
  skip: false,
  async fresh() {
    const dir = mkdtempSync(join(tmpdir(), 'alttext-contract-'))
    const path = join(dir, 'alttext.db')
    const store = createSqliteStore(path)
    const others: ContractStore[] = []
    return {
      store,
      second: async () => {
        const other = createSqliteStore(path, { processLock: false })
        others.push(other)
        return other
      },
      close: async () => {
        for (const other of others) await other.close()
        await store.close()
        rmSync(dir, { recursive: true, force: true })
      },
    }
  },
}

const unavailable = postgresUnavailable()
const ci = process.env.CI === 'true'
if (unavailable && !ci) console.warn(`[store contract] PostgreSQL SKIPPED: ${unavailable}`)

const postgres: Engine = {
  name: 'PostgreSQL',
  skip: unavailable !== null && !ci,
  async fresh() {
    const cluster = await sharedPostgres()
    const url = await cluster.createDatabase()
    const stores: PostgresStore[] = [await createPostgresStore(url)]
    return {
      store: stores[0]!,
      second: async () => {
        const other = await createPostgresStore(url)
        stores.push(other)
        return other
      },
      close: async () => {
        for (const store of stores) await store.close()
        await cluster.dropDatabase(url)
      },
    }
  },
}

const record = (id: string, createdAt: number, altText = `text ${id}`): HistoryRecord => ({
  id,
  accountId: 0,
  createdAt,
  source: 'url',
  format: 'png',
  bytes: 1234,
  width: 640,
  height: 480,
  altText,
  decorative: false,
  language: 'en',
  style: 'concise',
  maxLength: 125,
  cached: false,
  characterCount: altText.length,
})

const ENTRY: CachedAltText = {
  altText: 'A red kite over a beach.',
  decorativeReason: null,
  textInImage: 'KITE FESTIVAL',
  wcagCompliant: true,
  wcagIssues: ['one', 'two'],
  language: 'en',
  model: 'llava',
  width: 800,
  height: 600,
  format: 'jpeg',
}

for (const engine of [sqlite, postgres]) {
  describe.skipIf(engine.skip)(`the ${engine.name} store`, () => {
    let opened: Opened
    let store: ContractStore
    beforeEach(async () => {
      opened = await engine.fresh()
      store = opened.store
    }, 60_000)
    afterEach(async () => {
      await opened.close()
    })

    /** A new account with its first key (labelled `first`), and that key's hash. */
    const account = async (email = `user-${crypto.randomUUID()}@example.com`, verifiedAt?: number | null) => {
      const first = newKey('first')
      const made = await store.accounts.createWithKey(email, 'hash', 'free', first, NOW, verifiedAt)
      if (!made) throw new Error('the account was not made')
      return { ...made, keyHash: first.keyHash }
    }

    describe('accounts', () => {
      test('made with its first key; the email is taken once; found by email and id', async () => {
        const made = await account('ada@example.com')
        expect(made.account).toEqual({
          id: expect.any(Number),
          email: 'ada@example.com',
          passwordHash: 'hash',
          plan: 'free',
          monthlyCredits: null,
          disabledAt: null,
          createdAt: NOW,
          emailVerifiedAt: NOW,
        })
        expect(made.key).toMatchObject({ accountId: made.account.id, label: 'first', createdAt: NOW, revokedAt: null, lastUsedAt: null })
        expect(await store.accounts.createWithKey('ada@example.com', 'other', 'free', newKey(), NOW)).toBeNull()
        expect(await store.accounts.findByEmail('ada@example.com')).toEqual(made.account)
        expect(await store.accounts.findById(made.account.id)).toEqual(made.account)
        expect(await store.accounts.findByEmail('nobody@example.com')).toBeNull()
        expect(await store.accounts.findById(made.account.id + 1000)).toBeNull()
        expect((await account(undefined, null)).account.emailVerifiedAt).toBeNull()
      })

      test('ids are never reused: the account and key after a deleted one get new ids', async () => {
        const first = await account()
        const second = await account()
        expect(await store.sessions.deleteAccount(second.account.id)).toEqual({ keys: 1, sessions: 0, history: 0 })
        const third = await account()
        expect(third.account.id).toBeGreaterThan(second.account.id)
        expect(third.key.id).toBeGreaterThan(second.key.id)
        expect(first.account.id).toBeLessThan(second.account.id)
      })

      test('the same email registered from two instances at once: one account', async () => {
        const other = await opened.second()
        const results = await Promise.all(
          Array.from({ length: 6 }, (_, i) => (i % 2 ? other : store).accounts.createWithKey('race@example.com', 'hash', 'free', newKey(), NOW)),
        )
        expect(results.filter((r) => r !== null)).toHaveLength(1)
      })
    })

    describe('keys', () => {
      test('found by hash with the account; active ones newest first; revoked and expired ones are not active', async () => {
        const { account: owner, key: firstKey } = await account()
        const later = newKey('later', NOW + MINUTE)
        const made = await store.keys.create(owner.id, later, NOW + 1, 25)
        if (made === 'limit') throw new Error('limit')
        expect(await store.keys.findByHash(later.keyHash)).toEqual({ key: made, account: owner })
        expect(await store.keys.findByHash('0'.repeat(64))).toBeNull()
        expect((await store.keys.listActive(owner.id, NOW + 2)).map((k) => k.prefix)).toEqual([later.prefix, firstKey.prefix])
        // Expired at its own time.
        expect((await store.keys.listActive(owner.id, NOW + MINUTE)).map((k) => k.prefix)).toEqual([firstKey.prefix])
        const revoked = await store.keys.revoke(owner.id, firstKey.prefix, NOW + 3)
        expect(revoked).toMatchObject({ id: firstKey.id, revokedAt: NOW + 3 })
        expect(await store.keys.revoke(owner.id, firstKey.prefix, NOW + 4)).toBeNull()
        expect((await store.keys.listActive(owner.id, NOW + 5)).map((k) => k.prefix)).toEqual([later.prefix])
        expect(await store.keys.prefixExists(firstKey.prefix)).toBe(true)
        expect(await store.keys.prefixExists('alt_ffffffff')).toBe(false)
        // Another account cannot revoke it.
        const stranger = await account()
        expect(await store.keys.revoke(stranger.account.id, later.prefix, NOW + 6)).toBeNull()
      })

      test('at most maxActive active keys', async () => {
        const { account: owner } = await account()
        expect(await store.keys.create(owner.id, newKey(), NOW, 2)).not.toBe('limit')
        expect(await store.keys.create(owner.id, newKey(), NOW, 2)).toBe('limit')
      })

      test('two instances racing key creation never exceed 25 active keys', async () => {
        const { account: owner } = await account()
        const other = await opened.second()
        const results = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? other : store).keys.create(owner.id, newKey(), NOW, 25)))
        expect(results.filter((r) => r !== 'limit')).toHaveLength(24)
        expect(await store.keys.listActive(owner.id, NOW)).toHaveLength(25)
      }, 30_000)

      test('rotation: at once, or with a grace that never lengthens the key; a key is rotated once', async () => {
        const { account: owner, key: first } = await account()
        const rotated = await store.keys.rotate(owner.id, first.prefix, NOW + 1, NOW + 1, (old) => ({ ...newKey(), label: old.label }))
        expect(rotated?.old).toMatchObject({ id: first.id, revokedAt: NOW + 1 })
        expect(rotated?.key).toMatchObject({ label: 'first', revokedAt: null })
        expect(await store.keys.rotate(owner.id, first.prefix, NOW + 2, NOW + 2, () => newKey())).toBeNull()

        const short = await store.keys.create(owner.id, newKey('short', NOW + MINUTE), NOW, 25)
        if (short === 'limit') throw new Error('limit')
        const graced = await store.keys.rotate(owner.id, short.prefix, NOW + 2, NOW + 10 * MINUTE, () => newKey())
        // The grace ends at the key's own, earlier, expiry.
        expect(graced?.old).toMatchObject({ revokedAt: null, expiresAt: NOW + MINUTE })
        expect(await store.keys.rotate(owner.id, short.prefix, NOW + 3, NOW + 3, () => newKey())).toBeNull()
        const long = await store.keys.create(owner.id, newKey('long'), NOW, 25)
        if (long === 'limit') throw new Error('limit')
        expect((await store.keys.rotate(owner.id, long.prefix, NOW + 2, NOW + 5 * MINUTE, () => newKey()))?.old.expiresAt).toBe(NOW + 5 * MINUTE)
      })

      test('two instances rotating one key at once: one rotation', async () => {
        const { account: owner, key } = await account()
        const other = await opened.second()
        const results = await Promise.all(
          Array.from({ length: 4 }, (_, i) => (i % 2 ? other : store).keys.rotate(owner.id, key.prefix, NOW + 1, NOW + 1, () => newKey())),
        )
        expect(results.filter((r) => r !== null)).toHaveLength(1)
        expect(await store.keys.listActive(owner.id, NOW + 2)).toHaveLength(1)
      })
    })

    describe('reset tokens', () => {
      test('a newer token ends the older; consuming sets the password, ends keys and sessions, verifies, and works once', async () => {
        const { account: owner, keyHash } = await account(undefined, null)
        await store.sessions.create(owner.id, 'session-hash', NOW, NOW + MINUTE)
        await store.resetTokens.issue(owner.id, 'token-1', NOW + MINUTE, NOW)
        expect(await store.resetTokens.isUsable('token-1', NOW)).toBe(true)
        await store.resetTokens.issue(owner.id, 'token-2', NOW + MINUTE, NOW + 1)
        expect(await store.resetTokens.isUsable('token-1', NOW + 1)).toBe(false)
        expect(await store.resetTokens.consume('token-1', NOW + 2, 'new-hash', newKey())).toBeNull()
        // Expired at its own time.
        expect(await store.resetTokens.isUsable('token-2', NOW + MINUTE)).toBe(false)

        const replacement = newKey('after reset')
        const done = await store.resetTokens.consume('token-2', NOW + 3, 'new-hash', replacement)
        expect(done?.account).toMatchObject({ id: owner.id, passwordHash: 'new-hash', emailVerifiedAt: NOW + 3 })
        expect(done?.key).toMatchObject({ prefix: replacement.prefix, label: 'after reset' })
        expect((await store.keys.listActive(owner.id, NOW + 4)).map((k) => k.prefix)).toEqual([replacement.prefix])
        expect((await store.keys.findByHash(keyHash))?.key.revokedAt).toBe(NOW + 3)
        expect(await store.sessions.findByHash('session-hash')).toBeNull()
        expect(await store.resetTokens.consume('token-2', NOW + 4, 'again', newKey())).toBeNull()
      })

      test('an unknown email rewrites the decoy and nothing else', async () => {
        await store.resetTokens.issue(null, 'decoy-1', NOW + MINUTE, NOW)
        await store.resetTokens.issue(null, 'decoy-2', NOW + MINUTE, NOW + 1)
        expect(await store.resetTokens.isUsable('decoy-2', NOW + 2)).toBe(false)
      })

      test('one token consumed from two instances at once: one reset', async () => {
        const { account: owner } = await account()
        await store.resetTokens.issue(owner.id, 'token-race', NOW + MINUTE, NOW)
        const other = await opened.second()
        const results = await Promise.all(
          Array.from({ length: 4 }, (_, i) => (i % 2 ? other : store).resetTokens.consume('token-race', NOW + 1, `hash-${i}`, newKey())),
        )
        expect(results.filter((r) => r !== null)).toHaveLength(1)
        expect(await store.keys.listActive(owner.id, NOW + 2)).toHaveLength(1)
      })

      test('two tokens issued from two instances at once: one stays usable', async () => {
        const { account: owner } = await account()
        const other = await opened.second()
        await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? other : store).resetTokens.issue(owner.id, `token-${i}`, NOW + MINUTE, NOW + i)))
        const usable = await Promise.all(Array.from({ length: 6 }, (_, i) => store.resetTokens.isUsable(`token-${i}`, NOW + 10)))
        expect(usable.filter(Boolean)).toHaveLength(1)
      })
    })

    describe('email verification', () => {
      test('the newest link works once and verifies the account', async () => {
        const { account: owner } = await account(undefined, null)
        expect(await store.verifications.lastIssuedAt(owner.id)).toBeNull()
        await store.verifications.issue(owner.id, 'verify-1', NOW + MINUTE, NOW)
        await store.verifications.issue(owner.id, 'verify-2', NOW + MINUTE, NOW + 5)
        expect(await store.verifications.lastIssuedAt(owner.id)).toBe(NOW + 5)
        expect(await store.verifications.consume('verify-1', NOW + 6)).toBeNull()
        expect(await store.verifications.consume('verify-2', NOW + 7)).toMatchObject({ id: owner.id, emailVerifiedAt: NOW + 7 })
        expect(await store.verifications.consume('verify-2', NOW + 8)).toBeNull()
      })
    })

    describe('activity', () => {
      test('calls add up per day; last use only moves forward; a deleted account is skipped, not an error', async () => {
        const { account: owner, key, keyHash } = await account()
        const gone = await account()
        await store.sessions.deleteAccount(gone.account.id)
        const batch = (n: number, at: number) => ({
          calls: new Map([
            [owner.id, new Map([['2026-11-23', n]])],
            [gone.account.id, new Map([['2026-11-23', 5]])],
          ]),
          lastUsed: new Map([[key.id, at]]),
        })
        await store.activity.apply(batch(3, NOW + 10))
        await store.activity.apply(batch(4, NOW + 5))
        expect(await store.activity.callsOn(owner.id, '2026-11-23')).toBe(7)
        expect(await store.activity.callsOn(owner.id, '2026-11-24')).toBe(0)
        expect((await store.keys.findByHash(keyHash))?.key.lastUsedAt).toBe(NOW + 10)
      })
    })

    describe('alt-text cache', () => {
      test('an entry comes back as it was put, until it expires; a put replaces; purge removes the expired', async () => {
        await store.cache.put('k1', ENTRY, NOW, NOW + MINUTE)
        expect(await store.cache.get('k1', NOW)).toEqual(ENTRY)
        expect(await store.cache.get('k1', NOW + MINUTE)).toBeNull()
        const decorative = { ...ENTRY, altText: '', decorativeReason: 'a divider', textInImage: null, wcagCompliant: false, wcagIssues: [] }
        await store.cache.put('k1', decorative, NOW, NOW + 2 * MINUTE)
        expect(await store.cache.get('k1', NOW + MINUTE)).toEqual(decorative)
        await store.cache.put('k2', ENTRY, NOW, NOW + MINUTE)
        expect(await store.cache.purgeExpired(NOW + MINUTE)).toBe(1)
        expect(await store.cache.get('k2', NOW)).toBeNull()
        expect(await store.cache.get('k1', NOW)).not.toBeNull()
      })
    })

    describe('sessions', () => {
      test('made, found with the account, touched forward only, ended one by one or all but one', async () => {
        const { account: owner } = await account()
        const session = await store.sessions.create(owner.id, 's1', NOW, NOW + MINUTE)
        expect(session).toEqual({ id: expect.any(Number), accountId: owner.id, createdAt: NOW, lastSeenAt: NOW, expiresAt: NOW + MINUTE })
        expect(await store.sessions.findByHash('s1')).toEqual({ session, account: owner })
        await store.sessions.touch(session.id, NOW + 10)
        await store.sessions.touch(session.id, NOW + 5)
        expect((await store.sessions.findByHash('s1'))?.session.lastSeenAt).toBe(NOW + 10)
        const s2 = await store.sessions.create(owner.id, 's2', NOW, NOW + MINUTE)
        await store.sessions.create(owner.id, 's3', NOW, NOW + MINUTE)
        expect(await store.sessions.end('s1')).toBe(true)
        expect(await store.sessions.end('s1')).toBe(false)
        expect(await store.sessions.endAll(owner.id, s2.id)).toBe(1)
        expect(await store.sessions.findByHash('s2')).not.toBeNull()
        expect(await store.sessions.endAll(owner.id, null)).toBe(1)
      })

      test('a password change keeps one session and the keys, ends the other sessions and the reset tokens', async () => {
        const { account: owner } = await account()
        const keep = await store.sessions.create(owner.id, 'keep', NOW, NOW + MINUTE)
        await store.sessions.create(owner.id, 'other', NOW, NOW + MINUTE)
        await store.resetTokens.issue(owner.id, 'reset', NOW + MINUTE, NOW)
        expect(await store.sessions.changePassword(owner.id, 'changed', keep.id, NOW + 1)).toBe(1)
        expect((await store.accounts.findById(owner.id))?.passwordHash).toBe('changed')
        expect(await store.resetTokens.isUsable('reset', NOW + 2)).toBe(false)
        expect(await store.keys.listActive(owner.id, NOW + 2)).toHaveLength(1)
      })

      test('deleting an account counts what went with it; purge removes expired and idle sessions', async () => {
        const { account: owner } = await account()
        await store.sessions.create(owner.id, 'a', NOW, NOW + MINUTE)
        await store.history.apply(new Map([[owner.id, { since: NOW, days: new Map(), records: [record('h1', NOW)] }]]), 50, '2026-01-01')
        expect(await store.sessions.deleteAccount(owner.id)).toEqual({ keys: 1, sessions: 1, history: 1 })
        expect(await store.sessions.deleteAccount(owner.id)).toBeNull()
        expect(await store.accounts.findById(owner.id)).toBeNull()

        const other = await account()
        await store.sessions.create(other.account.id, 'old', NOW, NOW + MINUTE)
        await store.sessions.create(other.account.id, 'idle', NOW, NOW + 10 * MINUTE)
        const fresh = await store.sessions.create(other.account.id, 'fresh', NOW, NOW + 10 * MINUTE)
        await store.sessions.touch(fresh.id, NOW + 2 * MINUTE)
        expect(await store.sessions.purgeExpired(NOW + 2 * MINUTE, MINUTE)).toBe(2)
        expect(await store.sessions.findByHash('fresh')).not.toBeNull()
      })
    })

    describe('history', () => {
      test('counts add up, the newest records are kept in order, days before the oldest go; one removed or all cleared', async () => {
        const { account: owner } = await account()
        const day = (generations: number) => new Map([['2026-11-23', { generations, cached: 1, failed: 0 }]])
        // Three of one millisecond: their order is the order they were written.
        const batch: HistoryBatch = new Map([[owner.id, { since: NOW, days: day(2), records: [record('a', NOW), record('b', NOW), record('c', NOW)] }]])
        await store.history.apply(batch, 2, '2026-11-01')
        await store.history.apply(new Map([[owner.id, { since: NOW, days: day(3), records: [] }]]), 2, '2026-11-01')
        expect(await store.history.days(owner.id, '2026-11-01', '2026-11-30')).toEqual([{ day: '2026-11-23', generations: 5, cached: 2, failed: 0 }])
        const listed = await store.history.list(owner.id, 10)
        expect(listed.map((r) => r.id)).toEqual(['c', 'b'])
        expect(listed[0]).toEqual({ ...record('c', NOW), accountId: owner.id })
        expect(await store.history.remove(owner.id, 'c')).toBe(true)
        expect(await store.history.remove(owner.id, 'c')).toBe(false)
        expect(await store.history.clear(owner.id)).toBe(1)
        expect(await store.history.list(owner.id, 10)).toEqual([])
        // Days before the oldest kept day go when new counts arrive.
        await store.history.apply(new Map([[owner.id, { since: NOW, days: day(1), records: [] }]]), 2, '2026-11-24')
        expect(await store.history.days(owner.id, '2026-01-01', '2026-12-31')).toEqual([])
      })

      test('a batch gathered before the account was made is not written to it', async () => {
        const { account: owner } = await account()
        await store.history.apply(new Map([[owner.id, { since: NOW - 1, days: new Map(), records: [record('x', NOW)] }]]), 50, '2026-01-01')
        expect(await store.history.list(owner.id, 10)).toEqual([])
      })
    })

    describe('admin and counts', () => {
      test('the overview, plans, grants and disabling, and the counts /metrics reads', async () => {
        const before = (await store.counts.counts()).accounts
        const { account: owner } = await account()
        const session = await store.sessions.create(owner.id, 'sess', NOW, NOW + MINUTE)
        await store.sessions.touch(session.id, NOW + 7)
        expect(await store.admin.overview(NOW + 8, owner.id)).toEqual([{ account: owner, activeKeys: 1, lastActiveAt: NOW + 7 }])
        expect((await store.admin.overview(NOW)).map((o) => o.account.id)).toContain(owner.id)
        expect(await store.counts.counts()).toEqual({ accounts: before + 1, batchItems: { pending: 0, running: 0 } })

        expect(await store.admin.setPlan(owner.id, 'team', 5000)).toMatchObject({ plan: 'team', monthlyCredits: 5000 })
        expect(await store.admin.grant(owner.id, '2026-11', 10)).toEqual({ used: 0, granted: 10 })
        expect(await store.admin.grant(owner.id, '2026-11', 5)).toEqual({ used: 0, granted: 15 })
        await store.resetTokens.issue(owner.id, 'reset', NOW + MINUTE, NOW)
        expect(await store.admin.setDisabled(owner.id, NOW + 9)).toMatchObject({ disabledAt: NOW + 9 })
        // Disabled once: the first time stays.
        expect(await store.admin.setDisabled(owner.id, NOW + 10)).toMatchObject({ disabledAt: NOW + 9 })
        expect(await store.sessions.findByHash('sess')).toBeNull()
        expect(await store.resetTokens.isUsable('reset', NOW + 11)).toBe(false)
        expect(await store.admin.setDisabled(owner.id, null)).toMatchObject({ disabledAt: null })

        const missing = owner.id + 1000
        expect(await store.admin.setPlan(missing, 'team', 1)).toBeNull()
        expect(await store.admin.grant(missing, '2026-11', 1)).toBeNull()
        expect(await store.admin.setDisabled(missing, NOW)).toBeNull()
        expect(await store.admin.overview(NOW, missing)).toEqual([])
      })
    })

    describe('the change feed', () => {
      test('a revocation by another instance reaches this one within a second', async () => {
        const { account: owner, key } = await account()
        const other = await opened.second()
        const start = await store.changes.latest()
        await store.changes.changedElsewhere()
        const sent = performance.now()
        await other.keys.revoke(owner.id, key.prefix, NOW + 1)
        let heard: AccountChange[] = []
        await waitUntil(
          async () => {
            if (!(await store.changes.changedElsewhere()) && heard.length === 0) return false
            heard = await store.changes.since(start)
            return heard.some((c) => c.accountId === owner.id && c.change === 'keys')
          },
          'the revocation in the feed',
          1000,
        )
        console.info(`[store contract] ${engine.name}: a revocation by another instance was in the feed after ${Math.round(performance.now() - sent)} ms`)
        expect(heard[0]!.seq).toBe(start + 1)
      })

      test('plan changes, disabling, grants, rotation with a grace, verification, a password reset and deletion are in the feed', async () => {
        const { account: owner, key } = await account(undefined, null)
        const other = await opened.second()
        const start = await store.changes.latest()
        await other.admin.setPlan(owner.id, 'team', 10)
        await other.admin.grant(owner.id, '2026-11', 3)
        await other.admin.setDisabled(owner.id, NOW)
        await other.keys.rotate(owner.id, key.prefix, NOW, NOW + MINUTE, () => newKey())
        await other.verifications.issue(owner.id, 'v', NOW + MINUTE, NOW)
        await other.verifications.consume('v', NOW + 1)
        await other.resetTokens.issue(owner.id, 'r', NOW + MINUTE, NOW)
        await other.resetTokens.consume('r', NOW + 2, 'new', newKey())
        await other.sessions.deleteAccount(owner.id)
        // One entry or more per change: SQLite's triggers write one per row (the reset revokes two keys),
        // PostgreSQL delivers one notification per transaction for identical ones.
        const expected = ['account', 'credits', 'account', 'keys', 'account', 'keys', 'deleted']
        let kinds: string[] = []
        await waitUntil(
          async () => {
            await store.changes.changedElsewhere()
            kinds = (await store.changes.since(start))
              .filter((c) => c.accountId === owner.id)
              .map((c) => c.change)
              .filter((kind, i, all) => kind !== all[i - 1])
            return kinds.at(-1) === 'deleted'
          },
          'every change in the feed',
          2000,
        )
        expect(kinds).toEqual(expected)
      })
    })

    test('the readiness probe writes', async () => {
      await store.probe()
    })
  })
}
