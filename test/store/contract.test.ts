// The store contract, the same assertions on every engine (test/support/store-engines.ts): SQLite always,
// PostgreSQL when the test harness can start it (under CI=true it must). Each test gets a fresh database.
// Claims, holds and their races across two instances are in claims.test.ts.
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { mintKey } from '../../src/modules/keys/material'
import type { NewBatch } from '../../src/store/contract'
import type { AccountChange, CachedAltText, HistoryBatch, HistoryRecord, NewKey, Store } from '../../src/store/contract'
import { waitUntil } from '../support/service'
import { type OpenedStore, storeEngines } from '../support/store-engines'

const MINUTE = 60_000
const NOW = Date.UTC(2026, 10, 23, 12)
const newKey = (label: string | null = null, expiresAt: number | null = null): NewKey => mintKey(label, expiresAt).record

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
  longDescription: 'A bar chart of kites sold per month. January 3, February 5. Sales rose.',
  wcagCompliant: true,
  wcagIssues: ['one', 'two'],
  language: 'en',
  model: 'llava',
  width: 800,
  height: 600,
  format: 'jpeg',
  animated: false,
}

for (const engine of storeEngines('store contract')) {
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
        expect(await store.accounts.deleteAccount(second.account.id)).toEqual({ keys: 1, sessions: 0, history: 0 })
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
        expect(await store.keys.findByHash(later.keyHash)).toEqual({
          key: made,
          account: owner,
          org: expect.objectContaining({ id: owner.id, personal: true, account: owner }),
          role: 'owner',
        })
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
        const rotated = await store.keys.rotate(owner.id, first.prefix, NOW + 1, NOW + 1, (old) => ({ ...newKey(), label: old.label }), 25)
        expect(rotated).toMatchObject({ old: { id: first.id, revokedAt: NOW + 1 }, key: { label: 'first', revokedAt: null } })
        expect(await store.keys.rotate(owner.id, first.prefix, NOW + 2, NOW + 2, () => newKey(), 25)).toBeNull()

        const short = await store.keys.create(owner.id, newKey('short', NOW + MINUTE), NOW, 25)
        if (short === 'limit') throw new Error('limit')
        const graced = await store.keys.rotate(owner.id, short.prefix, NOW + 2, NOW + 10 * MINUTE, () => newKey(), 25)
        // The grace ends at the key's own, earlier, expiry.
        expect(graced).toMatchObject({ old: { revokedAt: null, expiresAt: NOW + MINUTE } })
        expect(await store.keys.rotate(owner.id, short.prefix, NOW + 3, NOW + 3, () => newKey(), 25)).toBeNull()
        const long = await store.keys.create(owner.id, newKey('long'), NOW, 25)
        if (long === 'limit') throw new Error('limit')
        expect(await store.keys.rotate(owner.id, long.prefix, NOW + 2, NOW + 5 * MINUTE, () => newKey(), 25)).toMatchObject({
          old: { expiresAt: NOW + 5 * MINUTE },
        })
      })

      test('a rotation with a grace needs room beside the old key: at maxActive it is refused and changes nothing', async () => {
        const { account: owner, key: first } = await account()
        const second = await store.keys.create(owner.id, newKey('second'), NOW, 3)
        if (second === 'limit') throw new Error('limit')
        // Two active of three: the graced old key and its replacement make three.
        const graced = await store.keys.rotate(owner.id, first.prefix, NOW + 1, NOW + MINUTE, () => newKey(), 3)
        expect(graced).not.toBe('limit')
        expect(await store.keys.rotate(owner.id, second.prefix, NOW + 2, NOW + MINUTE, () => newKey(), 3)).toBe('limit')
        expect(await store.keys.listActive(owner.id, NOW + 2)).toHaveLength(3)
        expect((await store.keys.listActive(owner.id, NOW + 2)).find((k) => k.prefix === second.prefix)).toMatchObject({ revokedAt: null, expiresAt: null })
        // A prefix it does not know is still null, not the limit.
        expect(await store.keys.rotate(owner.id, 'alt_ffffffff', NOW + 2, NOW + MINUTE, () => newKey(), 3)).toBeNull()
        // Without a grace the old key stops at once: allowed at the limit.
        expect(await store.keys.rotate(owner.id, second.prefix, NOW + 3, NOW + 3, () => newKey(), 3)).toMatchObject({ old: { revokedAt: NOW + 3 } })
        // The grace over, the old key no longer counts.
        const [newest] = await store.keys.listActive(owner.id, NOW + MINUTE)
        expect(await store.keys.rotate(owner.id, newest!.prefix, NOW + MINUTE, NOW + 2 * MINUTE, () => newKey(), 3)).not.toBe('limit')
      })

      test('two instances rotating two keys with a grace at once, with room for one: one rotation', async () => {
        const { account: owner, key: first } = await account()
        const second = await store.keys.create(owner.id, newKey('second'), NOW, 3)
        if (second === 'limit') throw new Error('limit')
        const other = await opened.second()
        const results = await Promise.all(
          [first.prefix, second.prefix].map((prefix, i) => (i % 2 ? other : store).keys.rotate(owner.id, prefix, NOW + 1, NOW + MINUTE, () => newKey(), 3)),
        )
        expect(results.filter((r) => r === 'limit')).toHaveLength(1)
        expect(await store.keys.listActive(owner.id, NOW + 2)).toHaveLength(3)
      })

      test('two instances rotating one key at once: one rotation', async () => {
        const { account: owner, key } = await account()
        const other = await opened.second()
        const results = await Promise.all(
          Array.from({ length: 4 }, (_, i) => (i % 2 ? other : store).keys.rotate(owner.id, key.prefix, NOW + 1, NOW + 1, () => newKey(), 25)),
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

      test('with a cooldown, a token of the account issued within it stops the next, which changes nothing', async () => {
        const { account: owner } = await account()
        expect(await store.resetTokens.issue(owner.id, 'cool-1', NOW + 60 * MINUTE, NOW, MINUTE)).toBe(true)
        expect(await store.resetTokens.issue(owner.id, 'cool-2', NOW + 60 * MINUTE, NOW + MINUTE - 1, MINUTE)).toBe(false)
        expect(await store.resetTokens.isUsable('cool-1', NOW + MINUTE)).toBe(true)
        expect(await store.resetTokens.isUsable('cool-2', NOW + MINUTE)).toBe(false)
        expect(await store.resetTokens.issue(owner.id, 'cool-3', NOW + 60 * MINUTE, NOW + MINUTE, MINUTE)).toBe(true)
        expect(await store.resetTokens.isUsable('cool-1', NOW + MINUTE)).toBe(false)
        expect(await store.resetTokens.isUsable('cool-3', NOW + MINUTE)).toBe(true)
        // Without a cooldown every request issues; an unknown email never does.
        expect(await store.resetTokens.issue(owner.id, 'cool-4', NOW + 60 * MINUTE, NOW + MINUTE)).toBe(true)
        expect(await store.resetTokens.issue(null, 'cool-5', NOW + 60 * MINUTE, NOW + MINUTE, MINUTE)).toBe(false)
      })

      test('with a cooldown, six requests from two instances at once issue one token', async () => {
        const { account: owner } = await account()
        const other = await opened.second()
        const issued = await Promise.all(
          Array.from({ length: 6 }, (_, i) => (i % 2 ? other : store).resetTokens.issue(owner.id, `burst-${i}`, NOW + MINUTE, NOW + i, MINUTE)),
        )
        expect(issued.filter(Boolean)).toHaveLength(1)
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
        await store.accounts.deleteAccount(gone.account.id)
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
        const decorative = {
          ...ENTRY,
          altText: '',
          decorativeReason: 'a divider',
          textInImage: null,
          longDescription: null,
          wcagCompliant: false,
          wcagIssues: [],
          format: 'gif' as const,
          animated: true,
        }
        await store.cache.put('k1', decorative, NOW, NOW + 2 * MINUTE)
        expect(await store.cache.get('k1', NOW + MINUTE)).toEqual(decorative)
        await store.cache.put('k2', ENTRY, NOW, NOW + MINUTE)
        expect(await store.cache.purgeExpired(NOW + MINUTE)).toBe(1)
        expect(await store.cache.get('k2', NOW)).toBeNull()
        expect(await store.cache.get('k1', NOW)).not.toBeNull()
      })

      test('an entry put without animated (as before the column) comes back with animated null, which answers as false', async () => {
        const { animated: _animated, ...before } = ENTRY
        await store.cache.put('k3', before, NOW, NOW + MINUTE)
        expect(await store.cache.get('k3', NOW)).toEqual({ ...before, animated: null })
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
        expect(await store.accounts.changePassword(owner.id, 'changed', keep.id, NOW + 1)).toBe(1)
        expect((await store.accounts.findById(owner.id))?.passwordHash).toBe('changed')
        expect(await store.resetTokens.isUsable('reset', NOW + 2)).toBe(false)
        expect(await store.keys.listActive(owner.id, NOW + 2)).toHaveLength(1)
      })

      test('deleting an account counts what went with it; purge removes expired and idle sessions', async () => {
        const { account: owner } = await account()
        await store.sessions.create(owner.id, 'a', NOW, NOW + MINUTE)
        await store.history.apply(new Map([[owner.id, { since: NOW, days: new Map(), records: [record('h1', NOW)] }]]), 50, '2026-01-01')
        expect(await store.accounts.deleteAccount(owner.id)).toEqual({ keys: 1, sessions: 1, history: 1 })
        expect(await store.accounts.deleteAccount(owner.id)).toBeNull()
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

    describe('credits', () => {
      test('counts are zero until charged or granted; they may be kept in memory (every other change is in the feed)', async () => {
        const { account: owner } = await account()
        expect(await store.credits.counts(owner.id, '2026-11')).toEqual({ used: 0, granted: 0 })
        await store.admin.grant(owner.id, '2026-11', 4)
        const hold = await store.credits.hold(owner.id, '2026-11', 10, NOW, NOW + MINUTE)
        if (typeof hold !== 'number') throw new Error('no hold')
        expect(await store.credits.commitHold({ id: hold, accountId: owner.id, period: '2026-11' })).toBe(1)
        expect(await store.credits.counts(owner.id, '2026-11')).toEqual({ used: 1, granted: 4 })
        expect(await store.credits.counts(owner.id, '2026-12')).toEqual({ used: 0, granted: 0 })
        expect(store.credits.keepCounts).toBe(true)
      })
    })

    describe('batches', () => {
      const LIMITS = { perAccountBytes: 1000, totalBytes: 1500 }
      const newBatch = (accountId: number, id: string, createdAt: number, extra: Partial<NewBatch> = {}): NewBatch => ({
        id,
        accountId,
        createdAt,
        webhookUrl: null,
        idempotency: null,
        items: [
          { request: '{"n":0}', image: null, metadata: '{"a":1}' },
          { request: '{"n":1}', image: null, metadata: null },
        ],
        ...extra,
      })
      const created = async (batch: NewBatch) => {
        const outcome = await store.batches.create(batch, LIMITS)
        if (outcome.kind !== 'created') throw new Error(`not created: ${outcome.kind}`)
        return outcome.batch
      }
      const failed = { kind: 'failed', code: 'upstream_error', message: 'x' } as const

      test('made with its items, read back by its account only, listed newest first after a cursor', async () => {
        const { account: owner } = await account()
        const first = await created(newBatch(owner.id, 'bat_a', NOW, { webhookUrl: 'https://hooks.example.com/a' }))
        expect(first).toEqual({
          id: 'bat_a',
          accountId: owner.id,
          status: 'queued',
          total: 2,
          succeeded: 0,
          failed: 0,
          createdAt: NOW,
          completedAt: null,
          webhookUrl: 'https://hooks.example.com/a',
          webhookState: null,
          review: false,
        })
        await created(newBatch(owner.id, 'bat_b', NOW + 1))
        await created(newBatch(owner.id, 'bat_c', NOW + 1))
        expect(await store.batches.get(owner.id, 'bat_a')).toEqual(first)
        const stranger = await account()
        expect(await store.batches.get(stranger.account.id, 'bat_a')).toBeNull()
        expect(await store.batches.items('bat_a')).toEqual([
          { index: 0, status: 'pending', result: null, errorCode: null, errorMessage: null, metadata: '{"a":1}', charged: false, suggestionId: null },
          { index: 1, status: 'pending', result: null, errorCode: null, errorMessage: null, metadata: null, charged: false, suggestionId: null },
        ])
        expect((await store.batches.list(owner.id, 2, null)).map((b) => b.id)).toEqual(['bat_c', 'bat_b'])
        expect((await store.batches.list(owner.id, 2, { createdAt: NOW + 1, id: 'bat_b' })).map((b) => b.id)).toEqual(['bat_a'])
        expect(await store.batches.list(stranger.account.id, 10, null)).toEqual([])
      })

      test('an idempotency key replays or conflicts while it is recent; an older batch gives it up', async () => {
        const { account: owner } = await account()
        const key = (requestHash: string, since: number) => ({ idempotency: { key: 'k1', requestHash, since } })
        const first = await created(newBatch(owner.id, 'bat_1', NOW, key('h1', NOW - MINUTE)))
        expect(await store.batches.create(newBatch(owner.id, 'bat_2', NOW + 1, key('h1', NOW - MINUTE)), LIMITS)).toEqual({ kind: 'replay', batch: first })
        expect(await store.batches.create(newBatch(owner.id, 'bat_3', NOW + 1, key('h2', NOW - MINUTE)), LIMITS)).toEqual({ kind: 'conflict', batch: first })
        // Older than `since`: the key goes to the new batch.
        const later = await created(newBatch(owner.id, 'bat_4', NOW + 2, key('h2', NOW + 1)))
        expect(await store.batches.create(newBatch(owner.id, 'bat_5', NOW + 3, key('h2', NOW + 1)), LIMITS)).toEqual({ kind: 'replay', batch: later })
        // Another account's key of the same name is its own.
        const other = await account()
        expect((await store.batches.create(newBatch(other.account.id, 'bat_6', NOW, key('h1', NOW - MINUTE)), LIMITS)).kind).toBe('created')
      })

      test('uploaded images wait within a bound per account and one in all; a claim gets them back', async () => {
        const withImage = (accountId: number, id: string, bytes: number) =>
          store.batches.create(newBatch(accountId, id, NOW, { items: [{ request: '{}', image: new Uint8Array(bytes).fill(7), metadata: null }] }), LIMITS)
        const a = (await account()).account.id
        const b = (await account()).account.id
        const c = (await account()).account.id
        expect((await withImage(a, 'bat_i1', 600)).kind).toBe('created')
        expect(await withImage(a, 'bat_i2', 600)).toEqual({ kind: 'images_full', scope: 'account', pending: 600, adding: 600 })
        expect((await withImage(b, 'bat_i3', 600)).kind).toBe('created')
        expect(await withImage(c, 'bat_i4', 400)).toEqual({ kind: 'images_full', scope: 'service', pending: 1200, adding: 400 })
        const claimed = await store.batches.claim('bat_i1', NOW, MINUTE)
        expect(claimed?.image).toEqual(new Uint8Array(600).fill(7))
        // Recorded, the item drops its image: the account may upload again.
        await store.batches.finish(claimed!.id, claimed!.token, failed, NOW)
        expect((await withImage(a, 'bat_i5', 600)).kind).toBe('created')
      })

      test('a cancel fails the pending items and ends the batch once none runs; a completed batch is finished; ended ones are purged', async () => {
        const { account: owner } = await account()
        await created(newBatch(owner.id, 'bat_x', NOW, { webhookUrl: 'https://hooks.example.com/x' }))
        expect(await store.batches.openBatches(NOW)).toEqual(['bat_x'])
        const running = (await store.batches.claim('bat_x', NOW, MINUTE))!
        expect((await store.batches.get(owner.id, 'bat_x'))?.status).toBe('running')
        expect(await store.counts.counts()).toMatchObject({ batchItems: { pending: 1, running: 1 } })
        const cancelled = await store.batches.cancel(owner.id, 'bat_x', NOW + 1, 'batch_cancelled', 'the batch was cancelled')
        expect(cancelled).toMatchObject({ status: 'cancelled', failed: 1, completedAt: null, webhookState: null })
        expect((await store.batches.items('bat_x'))[1]).toMatchObject({
          status: 'failed',
          errorCode: 'batch_cancelled',
          errorMessage: 'the batch was cancelled',
        })
        expect(await store.batches.openBatches(NOW + 1)).toEqual([])
        expect(await store.batches.finish(running.id, running.token, failed, NOW + 2)).toEqual({ status: 'written', used: null, ended: 'bat_x' })
        expect(await store.batches.get(owner.id, 'bat_x')).toMatchObject({ status: 'cancelled', failed: 2, completedAt: NOW + 2, webhookState: 'pending' })
        expect(await store.batches.cancel(owner.id, 'bat_x', NOW + 3, 'batch_cancelled', 'again')).toMatchObject({ status: 'cancelled', completedAt: NOW + 2 })

        await created(newBatch(owner.id, 'bat_y', NOW + 5))
        for (let n = 0; n < 2; n++) {
          const item = (await store.batches.claim('bat_y', NOW + 5, MINUTE))!
          await store.batches.finish(item.id, item.token, { kind: 'done', result: () => '{"alt_text":"x"}', charge: null }, NOW + 6)
        }
        expect(await store.batches.get(owner.id, 'bat_y')).toMatchObject({ status: 'completed', succeeded: 2, completedAt: NOW + 6, webhookState: null })
        expect((await store.batches.items('bat_y'))[0]).toMatchObject({ status: 'done', result: '{"alt_text":"x"}', charged: false })
        expect(await store.batches.cancel(owner.id, 'bat_y', NOW + 7, 'batch_cancelled', 'late')).toBe('finished')
        expect(await store.batches.cancel(owner.id, 'bat_none', NOW + 7, 'batch_cancelled', 'none')).toBeNull()

        expect(await store.batches.purgeEnded(NOW + 3)).toBe(1)
        expect(await store.batches.get(owner.id, 'bat_x')).toBeNull()
        expect(await store.batches.purgeEnded(NOW + 7)).toBe(1)
        expect(await store.counts.counts()).toMatchObject({ batchItems: { pending: 0, running: 0 } })
      })
    })

    describe('webhooks', () => {
      /** A batch of one item, ended now (failed), with a webhook URL. */
      const endedBatch = async (accountId: number, id: string, at: number) => {
        await store.batches.create(
          {
            id,
            accountId,
            createdAt: at,
            webhookUrl: `https://hooks.example.com/${id}`,
            idempotency: null,
            items: [{ request: '{}', image: null, metadata: null }],
          },
          { perAccountBytes: 1, totalBytes: 1 },
        )
        const item = (await store.batches.claim(id, at, MINUTE))!
        await store.batches.finish(item.id, item.token, { kind: 'failed', code: 'upstream_error', message: 'x' }, at)
      }

      test("an account's signing secret is made, then replaced; a deleted account gets none", async () => {
        const { account: owner } = await account()
        expect(await store.webhooks.secret(owner.id)).toBeNull()
        expect(await store.webhooks.putSecret(owner.id, 'whsec_1', NOW)).toEqual({ replaced: false })
        expect(await store.webhooks.putSecret(owner.id, 'whsec_2', NOW + 1)).toEqual({ replaced: true })
        expect(await store.webhooks.secret(owner.id)).toEqual({ secret: 'whsec_2', createdAt: NOW + 1 })
        await store.accounts.deleteAccount(owner.id)
        expect(await store.webhooks.putSecret(owner.id, 'whsec_3', NOW + 2)).toBeNull()
        expect(await store.webhooks.secret(owner.id)).toBeNull()
      })

      test('an ended batch is queued once, due at once; attempts are recorded; listed newest first; retried by its account', async () => {
        const { account: owner } = await account()
        await endedBatch(owner.id, 'bat_w1', NOW)
        await endedBatch(owner.id, 'bat_w2', NOW + 1)
        let made = 0
        expect(await store.webhooks.queueEndedBatches(NOW + 5, () => `whd_${++made}`, 10)).toBe(2)
        expect(await store.webhooks.queueEndedBatches(NOW + 5, () => `whd_${++made}`, 10)).toBe(0)
        const listed = await store.webhooks.list(owner.id, 10, null)
        expect(listed.map((d) => d.batchId)).toEqual(['bat_w2', 'bat_w1'])
        expect(listed[1]).toEqual({
          seq: expect.any(Number),
          id: expect.stringMatching(/^whd_[12]$/),
          accountId: owner.id,
          batchId: 'bat_w1',
          suggestionId: null,
          payload: null,
          event: 'batch.completed',
          url: 'https://hooks.example.com/bat_w1',
          status: 'pending',
          attempts: 0,
          lastStatus: null,
          lastError: null,
          lastAttemptAt: null,
          nextAttemptAt: NOW + 5,
          deliveredAt: null,
          createdAt: NOW,
        })
        expect((await store.webhooks.list(owner.id, 10, listed[0]!.seq)).map((d) => d.batchId)).toEqual(['bat_w1'])
        expect(await store.webhooks.nextDueAt()).toBe(NOW + 5)
        expect(await store.webhooks.due(NOW + 4, 10, 2, new Map())).toEqual([])
        const id = listed[1]!.id
        expect((await store.webhooks.due(NOW + 5, 10, 2, new Map([[listed[0]!.id, owner.id]]))).map((d) => d.id)).toEqual([id])

        const attempt = (await store.webhooks.beginAttempt(id, NOW + 5, MINUTE, () => NOW + 100))!
        expect(attempt.delivery).toMatchObject({ id, attempts: 1, lastAttemptAt: NOW + 5, nextAttemptAt: NOW + 100 })
        expect(await store.webhooks.attemptFailed(id, attempt.token, 503, 'the receiver answered 503', 'retry', NOW + 6)).toBe('written')
        expect((await store.webhooks.list(owner.id, 10, null))[1]).toMatchObject({ status: 'pending', lastStatus: 503, lastError: 'the receiver answered 503' })
        const last = (await store.webhooks.beginAttempt(id, NOW + 100, MINUTE, () => null))!
        expect(await store.webhooks.attemptFailed(id, last.token, null, 'no answer', 'retry', NOW + 101)).toBe('written')
        expect((await store.webhooks.list(owner.id, 10, null))[1]).toMatchObject({ status: 'failed', attempts: 2, lastStatus: null, nextAttemptAt: null })

        const stranger = await account()
        expect(await store.webhooks.retry(stranger.account.id, id, NOW + 200)).toBeNull()
        expect(await store.webhooks.retry(owner.id, id, NOW + 200)).toMatchObject({ id, status: 'pending', nextAttemptAt: NOW + 200 })
        const again = (await store.webhooks.beginAttempt(id, NOW + 200, MINUTE, () => null))!
        expect(await store.webhooks.delivered(id, again.token, 204, NOW + 201)).toBe('written')
        expect((await store.webhooks.list(owner.id, 10, null))[1]).toMatchObject({
          status: 'delivered',
          attempts: 3,
          lastStatus: 204,
          lastError: null,
          deliveredAt: NOW + 201,
          nextAttemptAt: null,
        })
      })

      test('due deliveries are taken in turns across accounts, earliest first within a turn', async () => {
        const a = (await account()).account.id
        const b = (await account()).account.id
        for (const [n, owner] of [a, a, a, b].entries()) {
          await endedBatch(owner, `bat_t${n}`, NOW + n)
          await store.webhooks.queueEndedBatches(NOW + n, () => `whd_t${n}`, 10)
        }
        expect((await store.webhooks.due(NOW + 10, 10, 10, new Map())).map((d) => d.id)).toEqual(['whd_t0', 'whd_t3', 'whd_t1', 'whd_t2'])
        expect((await store.webhooks.due(NOW + 10, 3, 1, new Map())).map((d) => d.id)).toEqual(['whd_t0', 'whd_t3'])
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

      // SQLite has one charging process per file (alttext admin grants but never charges): nothing to announce.
      test.skipIf(engine.name === 'SQLite')('a charge by another instance is in the feed, so counts kept in memory follow it', async () => {
        const { account: owner } = await account()
        const other = await opened.second()
        const start = await store.changes.latest()
        const hold = await other.credits.hold(owner.id, '2026-11', 10, NOW, NOW + MINUTE)
        if (typeof hold !== 'number') throw new Error('no hold')
        await other.credits.commitHold({ id: hold, accountId: owner.id, period: '2026-11' })
        await waitUntil(
          async () => {
            await store.changes.changedElsewhere()
            return (await store.changes.since(start)).some((c) => c.accountId === owner.id && c.change === 'charged')
          },
          'the charge in the feed',
          1000,
        )
      })

      test('plan changes, disabling, grants, rotation with a grace, verification, a password reset and deletion are in the feed', async () => {
        const { account: owner, key } = await account(undefined, null)
        const other = await opened.second()
        const start = await store.changes.latest()
        await other.admin.setPlan(owner.id, 'team', 10)
        await other.admin.grant(owner.id, '2026-11', 3)
        await other.admin.setDisabled(owner.id, NOW)
        await other.keys.rotate(owner.id, key.prefix, NOW, NOW + MINUTE, () => newKey(), 25)
        await other.verifications.issue(owner.id, 'v', NOW + MINUTE, NOW)
        await other.verifications.consume('v', NOW + 1)
        await other.resetTokens.issue(owner.id, 'r', NOW + MINUTE, NOW)
        await other.resetTokens.consume('r', NOW + 2, 'new', newKey())
        await other.accounts.deleteAccount(owner.id)
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
