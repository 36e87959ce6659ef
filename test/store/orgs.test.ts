// Organisations, members, invitations, the activity log and the review queue: the same assertions on every
// engine (test/support/store-engines.ts). The races run on two instances of one database, as two replicas
// (PostgreSQL) or the service and alttext admin (SQLite) would.
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { mintKey } from '../../src/modules/keys/material'
import type { AccountChange, AccountRecord, ActivityEntry, Actor, NewKey, NewSuggestion, OrgRecord, Store, SuggestionRecord } from '../../src/store/contract'
import { waitUntil } from '../support/service'
import { type OpenedStore, storeEngines } from '../support/store-engines'

const MINUTE = 60_000
const DAY = 24 * 60 * MINUTE
const NOW = Date.UTC(2026, 11, 6, 12)
const newKey = (label: string | null = null): NewKey => mintKey(label, null).record
const hex = (bytes: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString('hex')
const orgId = () => `org_${hex(12)}`

const suggestion = (over: Partial<NewSuggestion> = {}): NewSuggestion => ({
  publicId: `sug_${hex(8)}`,
  target: { kind: 'file', ref: 'index.html:3:5', site: '/srv/site', fingerprint: 'fp1' },
  currentAlt: null,
  proposedAlt: 'A red kite over a beach.',
  language: 'en',
  image: { url: 'https://example.com/kite.png', format: 'png', width: 640, height: 480, thumbnail: new Uint8Array([1, 2, 3]) },
  checks: { wcagCompliant: true, wcagIssues: ['short'], verdict: { score: 4 }, decorative: false },
  batchId: null,
  ...over,
})

for (const engine of storeEngines('store orgs')) {
  describe.skipIf(engine.skip)(`organisations on the ${engine.name} store`, () => {
    let opened: OpenedStore
    let store: Store
    beforeEach(async () => {
      opened = await engine.fresh()
      store = opened.store
    }, 60_000)
    afterEach(async () => {
      await opened.close()
    })

    /** A new person with its first key. */
    const person = async (email = `user-${hex(6)}@example.com`) => {
      const first = newKey('first')
      const made = await store.accounts.createWithKey(email, 'hash', 'free', first, NOW)
      if (!made) throw new Error('the account was not made')
      return { ...made, keyHash: first.keyHash }
    }
    const actor = (account: AccountRecord, now = NOW): Actor & { accountId: number; email: string } => ({ accountId: account.id, email: account.email, now })
    /** A team organisation owned by `owner`. */
    const team = (owner: AccountRecord, name = 'Acme', plan = 'team') => store.orgs.create(name, orgId(), plan, actor(owner))
    const member = async (org: OrgRecord, owner: AccountRecord, role: 'owner' | 'admin' | 'reviewer' | 'author' = 'reviewer') => {
      const { account } = await person()
      const added = await store.orgs.addMember(org.id, account.id, role, actor(owner))
      if (added === null || added === 'exists') throw new Error('not added')
      return account
    }

    describe('organisations', () => {
      test('a person is its own personal organisation, of which it is the one owner; its key is of it', async () => {
        const { account, key } = await person('ada@example.com')
        const org = await store.orgs.byId(account.id)
        expect(org).toEqual({
          id: account.id,
          publicId: expect.stringMatching(/^org_[0-9a-f]{24}$/),
          name: 'Personal',
          personal: true,
          account,
          createdAt: NOW,
        })
        expect(await store.orgs.byPublicId(org!.publicId)).toEqual(org)
        expect(await store.orgs.memberships(account.id)).toEqual([{ org: org!, role: 'owner', joinedAt: NOW }])
        expect(await store.orgs.members(account.id)).toEqual([{ accountId: account.id, email: 'ada@example.com', role: 'owner', joinedAt: NOW }])
        expect(key.orgId).toBe(account.id)
        expect(await store.orgs.byPublicId(orgId())).toBeNull()
      })

      test('an organisation is a billing account of its own, with its creator as owner and its first entry', async () => {
        const { account: owner } = await person()
        const pid = orgId()
        const org = await store.orgs.create('Acme', pid, 'team', actor(owner, NOW + 5))
        expect(org).toMatchObject({ publicId: pid, name: 'Acme', personal: false, createdAt: NOW + 5 })
        expect(org.account).toMatchObject({ id: org.id, email: `org:${pid}`, passwordHash: '', plan: 'team', emailVerifiedAt: NOW + 5, disabledAt: null })
        expect(org.id).toBeGreaterThan(owner.id)
        expect(await store.orgs.byPublicId(pid)).toEqual(org)
        expect(await store.accounts.findById(org.id)).toEqual(org.account)
        expect(await store.orgs.members(org.id)).toEqual([{ accountId: owner.id, email: owner.email, role: 'owner', joinedAt: NOW + 5 }])
        const [entry] = await store.orgs.activity(org.id, 10, null)
        expect(entry).toMatchObject({ orgId: org.id, at: NOW + 5, actorId: owner.id, actorEmail: owner.email, action: 'org.created' })
        // Its id came from the accounts' sequence: the next person's is after it.
        const { account: later } = await person()
        expect(later.id).toBeGreaterThan(org.id)
      })

      test('memberships: the personal one first, then by name; one membership by public id', async () => {
        const { account: owner } = await person()
        const zeta = await team(owner, 'Zeta')
        const alpha = await team(owner, 'Alpha')
        const memberships = await store.orgs.memberships(owner.id)
        expect(memberships.map((m) => m.org.name)).toEqual(['Personal', 'Alpha', 'Zeta'])
        expect(memberships.map((m) => m.role)).toEqual(['owner', 'owner', 'owner'])
        expect(await store.orgs.membership(owner.id, alpha.publicId)).toEqual({ org: alpha, role: 'owner', joinedAt: NOW })
        const { account: stranger } = await person()
        expect(await store.orgs.membership(stranger.id, zeta.publicId)).toBeNull()
      })

      test('addMember: once; exists when a member already; null for an account or organisation that is not there', async () => {
        const { account: owner } = await person()
        const org = await team(owner)
        const { account: bob } = await person('bob@example.com')
        expect(await store.orgs.addMember(org.id, bob.id, 'author', actor(owner, NOW + 1))).toEqual({
          accountId: bob.id,
          email: 'bob@example.com',
          role: 'author',
          joinedAt: NOW + 1,
        })
        expect(await store.orgs.addMember(org.id, bob.id, 'admin', actor(owner))).toBe('exists')
        expect(await store.orgs.addMember(org.id, 999_999, 'admin', actor(owner))).toBeNull()
        expect(await store.orgs.addMember(999_999, bob.id, 'admin', actor(owner))).toBeNull()
        // Only a person joins, and only a team organisation.
        expect(await store.orgs.addMember(owner.id, bob.id, 'admin', actor(owner))).toBeNull()
        expect(await store.orgs.addMember(org.id, org.id, 'admin', actor(owner))).toBeNull()
        expect((await store.orgs.members(org.id)).map((m) => m.role).toSorted()).toEqual(['author', 'owner'])
      })

      test('the operator overview lists organisations with members and active keys; the accounts overview and counts only people', async () => {
        const { account: owner } = await person()
        const org = await team(owner)
        await member(org, owner)
        await store.keys.create(owner.id, newKey(), NOW, 25, org.id)
        expect(await store.orgs.overview(NOW + 1)).toEqual([{ org: (await store.orgs.byId(org.id))!, members: 2, activeKeys: 1 }])
        const accounts = await store.admin.overview(NOW + 1)
        expect(accounts.map((a) => a.account.id).includes(org.id)).toBe(false)
        expect(accounts).toHaveLength(2)
        expect((await store.counts.counts()).accounts).toBe(2)
      })

      test('deleting an organisation takes its keys, suggestions and log with it; a personal one is not deleted', async () => {
        const { account: owner } = await person()
        const org = await team(owner)
        const k = newKey()
        await store.keys.create(owner.id, k, NOW, 25, org.id)
        const s = await store.suggestions.create(org.id, suggestion(), actor(owner))
        expect(await store.orgs.delete(owner.id)).toBe(false)
        expect(await store.orgs.delete(org.id)).toBe(true)
        expect(await store.orgs.delete(org.id)).toBe(false)
        expect(await store.keys.findByHash(k.keyHash)).toBeNull()
        expect(await store.suggestions.get(org.id, s.publicId)).toBeNull()
        expect(await store.orgs.activity(org.id, 10, null)).toEqual([])
        expect(await store.orgs.byId(org.id)).toBeNull()
        expect((await store.orgs.memberships(owner.id)).map((m) => m.org.id)).toEqual([owner.id])
        // The owner and its own keys stay.
        expect(await store.keys.listActive(owner.id, NOW)).toHaveLength(1)
      })
    })

    describe('invitations', () => {
      const WEEK = 7 * DAY

      test('an invitation is accepted once, by the address it names, before it expires', async () => {
        const { account: owner } = await person()
        const org = await team(owner)
        const { account: bob } = await person('bob@example.com')
        const { account: eve } = await person('eve@example.com')
        const invitation = await store.orgs.invite(org.id, 'bob@example.com', 'reviewer', 'tok-1', NOW + WEEK, actor(owner))
        expect(invitation).toEqual({
          id: expect.any(Number),
          orgId: org.id,
          email: 'bob@example.com',
          role: 'reviewer',
          invitedBy: owner.id,
          createdAt: NOW,
          expiresAt: NOW + WEEK,
          acceptedAt: null,
        })
        expect(await store.orgs.invitations(org.id, NOW)).toEqual([invitation as never])
        expect(await store.orgs.isInvited('bob@example.com', NOW)).toBe(true)
        expect(await store.orgs.isInvited('bob@example.com', NOW + WEEK)).toBe(false)
        expect(await store.orgs.isInvited('eve@example.com', NOW)).toBe(false)
        expect(await store.orgs.acceptInvitation('tok-1', actor(eve, NOW + 1))).toBe('wrong_email')
        expect(await store.orgs.acceptInvitation('nope', actor(bob, NOW + 1))).toBe('invalid')
        expect(await store.orgs.acceptInvitation('tok-1', actor(bob, NOW + WEEK))).toBe('invalid')
        expect(await store.orgs.acceptInvitation('tok-1', actor(bob, NOW + 2))).toEqual({ org, role: 'reviewer', joinedAt: NOW + 2 })
        expect(await store.orgs.acceptInvitation('tok-1', actor(bob, NOW + 3))).toBe('invalid')
        expect(await store.orgs.invitations(org.id, NOW + 3)).toEqual([])
        expect(await store.orgs.isInvited('bob@example.com', NOW + 3)).toBe(false)
        expect(await store.orgs.membership(bob.id, org.publicId)).toMatchObject({ role: 'reviewer' })
        // A member is not invited again; an invitation to one who became a member meanwhile stays unused.
        expect(await store.orgs.invite(org.id, 'bob@example.com', 'admin', 'tok-2', NOW + WEEK, actor(owner))).toBe('member')
        const { account: carol } = await person('carol@example.com')
        await store.orgs.invite(org.id, 'carol@example.com', 'author', 'tok-3', NOW + WEEK, actor(owner))
        await store.orgs.addMember(org.id, carol.id, 'author', actor(owner))
        expect(await store.orgs.acceptInvitation('tok-3', actor(carol, NOW + 4))).toBe('member')
        expect(await store.orgs.invitations(org.id, NOW + 4)).toHaveLength(1)
        const actions = (await store.orgs.activity(org.id, 20, null)).map((e) => e.action)
        expect(actions).toEqual(['member.joined', 'member.invited', 'member.joined', 'member.invited', 'org.created'])
      })

      test('a new invitation of the same email replaces the old one; a withdrawn one cannot be accepted', async () => {
        const { account: owner } = await person()
        const org = await team(owner)
        const { account: bob } = await person('bob@example.com')
        await store.orgs.invite(org.id, 'bob@example.com', 'reviewer', 'old', NOW + WEEK, actor(owner))
        const fresh = await store.orgs.invite(org.id, 'bob@example.com', 'admin', 'new', NOW + WEEK, actor(owner, NOW + 1))
        if (fresh === 'member') throw new Error('member')
        expect((await store.orgs.invitations(org.id, NOW + 1)).map((i) => i.id)).toEqual([fresh.id])
        expect(await store.orgs.acceptInvitation('old', actor(bob, NOW + 2))).toBe('invalid')
        expect(await store.orgs.revokeInvitation(org.id + 1, fresh.id, actor(owner))).toBe(false)
        expect(await store.orgs.revokeInvitation(org.id, fresh.id, actor(owner))).toBe(true)
        expect(await store.orgs.revokeInvitation(org.id, fresh.id, actor(owner))).toBe(false)
        expect(await store.orgs.acceptInvitation('new', actor(bob, NOW + 2))).toBe('invalid')
        expect(await store.orgs.membership(bob.id, org.publicId)).toBeNull()
      })

      test('two accepts of one invitation at once, on two instances: one membership', async () => {
        const { account: owner } = await person()
        const org = await team(owner)
        const { account: bob } = await person('bob@example.com')
        await store.orgs.invite(org.id, 'bob@example.com', 'author', 'tok', NOW + WEEK, actor(owner))
        const other = await opened.second()
        const results = await Promise.all([store.orgs.acceptInvitation('tok', actor(bob, NOW + 1)), other.orgs.acceptInvitation('tok', actor(bob, NOW + 1))])
        expect(results.filter((r) => typeof r === 'object')).toHaveLength(1)
        expect(results.filter((r) => typeof r === 'string').toSorted()).toEqual([expect.stringMatching(/^(invalid|member)$/)])
        expect(await store.orgs.members(org.id)).toHaveLength(2)
        expect((await store.orgs.activity(org.id, 10, null)).filter((e) => e.action === 'member.joined')).toHaveLength(1)
      })
    })

    describe('roles and removal', () => {
      test('setRole changes a role with its entry; never leaves the organisation without an owner', async () => {
        const { account: owner } = await person()
        const org = await team(owner)
        const bob = await member(org, owner, 'author')
        expect(await store.orgs.setRole(org.id, owner.id, 'admin', actor(owner))).toBe('last_owner')
        expect(await store.orgs.setRole(org.id, 999_999, 'admin', actor(owner))).toBeNull()
        expect(await store.orgs.setRole(org.id, bob.id, 'owner', actor(owner, NOW + 1))).toMatchObject({ accountId: bob.id, role: 'owner' })
        expect(await store.orgs.setRole(org.id, owner.id, 'admin', actor(owner, NOW + 2))).toMatchObject({ accountId: owner.id, role: 'admin' })
        expect(await store.orgs.setRole(org.id, bob.id, 'reviewer', actor(owner))).toBe('last_owner')
        const [latest] = await store.orgs.activity(org.id, 1, null)
        expect(latest).toMatchObject({ action: 'member.role_changed', subject: owner.email, detail: { from: 'owner', to: 'admin' }, at: NOW + 2 })
        // The personal organisation's one owner stays one.
        expect(await store.orgs.setRole(owner.id, owner.id, 'admin', actor(owner))).toBe('last_owner')
      })

      test('two owners demoting each other at once, on two instances: one passes', async () => {
        const { account: owner } = await person()
        const org = await team(owner)
        const bob = await member(org, owner, 'owner')
        const other = await opened.second()
        const results = await Promise.all([
          store.orgs.setRole(org.id, owner.id, 'admin', actor(bob)),
          other.orgs.setRole(org.id, bob.id, 'admin', actor(owner)),
        ])
        expect(results.filter((r) => r === 'last_owner')).toHaveLength(1)
        expect((await store.orgs.members(org.id)).filter((m) => m.role === 'owner')).toHaveLength(1)
      })

      test('two owners removing each other at once, on two instances: one passes', async () => {
        const { account: owner } = await person()
        const org = await team(owner)
        const bob = await member(org, owner, 'owner')
        const other = await opened.second()
        const results = await Promise.all([store.orgs.removeMember(org.id, owner.id, actor(bob)), other.orgs.removeMember(org.id, bob.id, actor(owner))])
        expect(results.filter((r) => r === 'last_owner')).toHaveLength(1)
        expect(await store.orgs.members(org.id)).toEqual([expect.objectContaining({ role: 'owner' })])
      })

      test("removeMember revokes the member's keys of that organisation only, and logs how many", async () => {
        const { account: owner } = await person()
        const org = await team(owner)
        const bob = await member(org, owner, 'author')
        const personal = newKey()
        await store.keys.create(bob.id, personal, NOW, 25)
        const teamKeys = [newKey(), newKey()]
        for (const k of teamKeys) await store.keys.create(bob.id, k, NOW, 25, org.id)
        const ownerKey = newKey()
        await store.keys.create(owner.id, ownerKey, NOW, 25, org.id)
        expect(await store.orgs.removeMember(org.id, owner.id, actor(owner))).toBe('last_owner')
        expect(await store.orgs.removeMember(org.id, bob.id, actor(owner, NOW + 1))).toEqual({ revokedKeys: 2 })
        expect(await store.orgs.removeMember(org.id, bob.id, actor(owner))).toBeNull()
        for (const k of teamKeys) expect((await store.keys.findByHash(k.keyHash))!.key.revokedAt).toBe(NOW + 1)
        expect((await store.keys.findByHash(personal.keyHash))!.key.revokedAt).toBeNull()
        expect((await store.keys.findByHash(ownerKey.keyHash))!.key.revokedAt).toBeNull()
        expect(await store.orgs.membership(bob.id, org.publicId)).toBeNull()
        const [latest] = await store.orgs.activity(org.id, 1, null)
        expect(latest).toMatchObject({ action: 'member.removed', subject: bob.email, detail: { role: 'author', revoked_keys: 2 } })
      })

      test("a role change and a removal are in the feed as the member's keys changing", async () => {
        const { account: owner } = await person()
        const org = await team(owner)
        const bob = await member(org, owner, 'author')
        const other = await opened.second()
        const start = await store.changes.latest()
        await store.changes.changedElsewhere()
        await other.orgs.setRole(org.id, bob.id, 'reviewer', actor(owner))
        await other.orgs.removeMember(org.id, bob.id, actor(owner))
        let heard: AccountChange[] = []
        await waitUntil(
          async () => {
            await store.changes.changedElsewhere()
            heard = (await store.changes.since(start)).filter((c) => c.accountId === bob.id && c.change === 'keys')
            return heard.length >= 2
          },
          'both changes in the feed',
          2000,
        )
      })
    })

    describe('keys of organisations', () => {
      test("findByHash gives the key's organisation and its maker's role there", async () => {
        const { account: owner, keyHash } = await person()
        const org = await team(owner)
        const bob = await member(org, owner, 'reviewer')
        const k = newKey()
        const made = await store.keys.create(bob.id, k, NOW, 25, org.id)
        if (made === 'limit') throw new Error('limit')
        expect(made.orgId).toBe(org.id)
        expect(await store.keys.findByHash(k.keyHash)).toEqual({ key: made, account: bob, org, role: 'reviewer' })
        await store.orgs.setRole(org.id, bob.id, 'admin', actor(owner))
        expect((await store.keys.findByHash(k.keyHash))?.role).toBe('admin')
        expect(await store.keys.findByHash(keyHash)).toMatchObject({ org: { id: owner.id, personal: true }, role: 'owner' })
        // Rotation keeps the organisation.
        const rotated = await store.keys.rotate(bob.id, made.prefix, NOW + 1, NOW + 1, () => newKey(), 25)
        if (rotated === null || rotated === 'limit') throw new Error('not rotated')
        expect(rotated.key.orgId).toBe(org.id)
      })

      test("listActiveInOrg lists every member's active keys of the organisation; revokeInOrg revokes only its own", async () => {
        const { account: owner } = await person()
        const org = await team(owner)
        const bob = await member(org, owner, 'author')
        const a = await store.keys.create(owner.id, newKey('a'), NOW, 25, org.id)
        const b = await store.keys.create(bob.id, newKey('b'), NOW + 1, 25, org.id)
        if (a === 'limit' || b === 'limit') throw new Error('limit')
        expect((await store.keys.listActiveInOrg(org.id, NOW + 2)).map((k) => k.label)).toEqual(['b', 'a'])
        // A key of another organisation (bob's personal one) is not this one's to revoke.
        const [bobPersonal] = await store.keys.listActive(bob.id, NOW + 2).then((keys) => keys.filter((k) => k.orgId === bob.id))
        expect(await store.keys.revokeInOrg(org.id, bobPersonal!.prefix, NOW + 2)).toBeNull()
        expect(await store.keys.revokeInOrg(org.id, b.prefix, NOW + 3)).toMatchObject({ id: b.id, revokedAt: NOW + 3 })
        expect(await store.keys.revokeInOrg(org.id, b.prefix, NOW + 4)).toBeNull()
        expect((await store.keys.listActiveInOrg(org.id, NOW + 5)).map((k) => k.label)).toEqual(['a'])
        // The maker's keys of every organisation count towards its limit.
        expect(await store.keys.create(bob.id, newKey(), NOW, 1, org.id)).toBe('limit')
      })
    })

    describe('suggestions', () => {
      test('made pending with its entry; read back whole; its thumbnail apart; not seen by another organisation', async () => {
        const { account: owner } = await person()
        const org = await team(owner)
        const input = suggestion({ currentAlt: 'kite', batchId: 'bat_1' })
        const made = await store.suggestions.create(org.id, input, actor(owner, NOW + 1))
        expect(made).toEqual({
          id: expect.any(Number),
          orgId: org.id,
          publicId: input.publicId,
          status: 'pending',
          target: input.target,
          currentAlt: 'kite',
          proposedAlt: input.proposedAlt,
          language: 'en',
          image: { url: 'https://example.com/kite.png', format: 'png', width: 640, height: 480, hasThumbnail: true },
          checks: input.checks,
          batchId: 'bat_1',
          createdBy: owner.id,
          createdByEmail: owner.email,
          createdAt: NOW + 1,
          decidedBy: null,
          decidedByEmail: null,
          decidedAt: null,
          finalAlt: null,
          reason: null,
        })
        expect(await store.suggestions.get(org.id, input.publicId)).toEqual(made)
        expect(await store.suggestions.get(owner.id, input.publicId)).toBeNull()
        expect(await store.suggestions.thumbnail(org.id, input.publicId)).toEqual(new Uint8Array([1, 2, 3]))
        expect(await store.suggestions.thumbnail(owner.id, input.publicId)).toBeNull()
        const bare = await store.suggestions.create(
          org.id,
          suggestion({
            image: { url: null, format: null, width: null, height: null, thumbnail: null },
            checks: { wcagCompliant: null, wcagIssues: [], verdict: null, decorative: true },
          }),
          actor(owner),
        )
        expect(bare.image).toEqual({ url: null, format: null, width: null, height: null, hasThumbnail: false })
        expect(bare.checks).toEqual({ wcagCompliant: null, wcagIssues: [], verdict: null, decorative: true })
        expect(await store.suggestions.thumbnail(org.id, bare.publicId)).toBeNull()
        expect((await store.orgs.activity(org.id, 1, null))[0]).toMatchObject({ action: 'suggestion.created', subject: bare.publicId })
      })

      test('listed newest first by filter, a page at a time before an id; counted by the same filter', async () => {
        const { account: owner } = await person()
        const org = await team(owner)
        const bob = await member(org, owner, 'author')
        const made: SuggestionRecord[] = []
        for (let i = 0; i < 5; i++)
          made.push(
            await store.suggestions.create(
              org.id,
              suggestion({ target: { kind: i % 2 === 0 ? 'file' : 'url', ref: `r${i}`, site: null, fingerprint: null }, language: i < 4 ? 'en' : 'de' }),
              actor(i < 3 ? owner : bob),
            ),
          )
        await store.suggestions.decide(org.id, made[0]!.publicId, { status: 'rejected', reason: null }, actor(owner))
        const ids = (list: { publicId: string }[]) => list.map((s) => s.publicId)
        const p = (i: number) => made[i]!.publicId
        expect(ids(await store.suggestions.list(org.id, {}, 10, null))).toEqual([p(4), p(3), p(2), p(1), p(0)])
        const page = await store.suggestions.list(org.id, {}, 2, null)
        expect(ids(page)).toEqual([p(4), p(3)])
        expect(ids(await store.suggestions.list(org.id, {}, 2, page.at(-1)!.id))).toEqual([p(2), p(1)])
        expect(ids(await store.suggestions.list(org.id, { status: 'pending' }, 10, null))).toEqual([p(4), p(3), p(2), p(1)])
        expect(ids(await store.suggestions.list(org.id, { targetKind: 'file' }, 10, null))).toEqual([p(4), p(2), p(0)])
        expect(ids(await store.suggestions.list(org.id, { createdBy: bob.id }, 10, null))).toEqual([p(4), p(3)])
        expect(ids(await store.suggestions.list(org.id, { language: 'de' }, 10, null))).toEqual([p(4)])
        expect(ids(await store.suggestions.list(org.id, { status: 'pending', targetKind: 'file', createdBy: owner.id }, 10, null))).toEqual([p(2)])
        expect(await store.suggestions.count(org.id, {}, 100)).toBe(5)
        expect(await store.suggestions.count(org.id, { status: 'pending', targetKind: 'url' }, 100)).toBe(2)
        expect(await store.suggestions.count(owner.id, {}, 100)).toBe(0)
        // Counted up to the cap and no further.
        expect(await store.suggestions.count(org.id, {}, 3)).toBe(3)
        expect(await store.suggestions.list(owner.id, {}, 10, null)).toEqual([])
      })

      test('decided once, with its entry; reopened when decided; not found in another organisation', async () => {
        const { account: owner } = await person()
        const org = await team(owner)
        const s = await store.suggestions.create(org.id, suggestion(), actor(owner))
        expect(await store.suggestions.reopen(org.id, s.publicId, actor(owner))).toBe('not_decided')
        const edited = await store.suggestions.decide(org.id, s.publicId, { status: 'edited', finalAlt: 'A kite.' }, actor(owner, NOW + 1))
        expect(edited).toMatchObject({
          status: 'edited',
          finalAlt: 'A kite.',
          reason: null,
          decidedBy: owner.id,
          decidedByEmail: owner.email,
          decidedAt: NOW + 1,
        })
        expect(await store.suggestions.decide(org.id, s.publicId, { status: 'rejected', reason: 'no' }, actor(owner))).toBe('already_decided')
        expect(await store.suggestions.decide(owner.id, s.publicId, { status: 'rejected', reason: 'no' }, actor(owner))).toBeNull()
        expect((await store.orgs.activity(org.id, 1, null))[0]).toMatchObject({
          action: 'suggestion.edited',
          subject: s.publicId,
          detail: { final_alt: 'A kite.' },
        })
        const reopened = await store.suggestions.reopen(org.id, s.publicId, actor(owner, NOW + 2))
        expect(reopened).toMatchObject({ status: 'pending', finalAlt: null, decidedBy: null, decidedAt: null })
        expect((await store.orgs.activity(org.id, 1, null))[0]).toMatchObject({ action: 'suggestion.reopened', subject: s.publicId })
        expect(await store.suggestions.reopen(owner.id, s.publicId, actor(owner))).toBeNull()
        const rejected = await store.suggestions.decide(org.id, s.publicId, { status: 'rejected', reason: 'blurry' }, actor(owner, NOW + 3))
        expect(rejected).toMatchObject({ status: 'rejected', finalAlt: null, reason: 'blurry' })
        expect((await store.orgs.activity(org.id, 1, null))[0]).toMatchObject({ action: 'suggestion.rejected', detail: { reason: 'blurry' } })
      })

      test('two decisions at once, on two instances: one wins, the other finds it decided', async () => {
        const { account: owner } = await person()
        const org = await team(owner)
        const s = await store.suggestions.create(org.id, suggestion(), actor(owner))
        const other = await opened.second()
        const results = await Promise.all([
          store.suggestions.decide(org.id, s.publicId, { status: 'accepted', finalAlt: s.proposedAlt }, actor(owner, NOW + 1)),
          other.suggestions.decide(org.id, s.publicId, { status: 'rejected', reason: null }, actor(owner, NOW + 1)),
        ])
        expect(results.filter((r) => r === 'already_decided')).toHaveLength(1)
        const winner = results.find((r) => typeof r === 'object')!
        expect(await store.suggestions.get(org.id, s.publicId)).toEqual(winner as never)
        expect((await store.orgs.activity(org.id, 10, null)).filter((e) => e.action !== 'suggestion.created' && e.action !== 'org.created')).toHaveLength(1)
      })
    })

    describe('the activity log', () => {
      test('newest first, a page at a time before a seq, within [since, until); record appends', async () => {
        const { account: owner } = await person()
        const org = await team(owner)
        for (let i = 1; i <= 4; i++)
          await store.orgs.record(org.id, 'org.plan_changed', `plan${i}`, { n: i }, { accountId: null, email: null, now: NOW + i * MINUTE })
        const subjects = (entries: ActivityEntry[]) => entries.map((e) => (e.action === 'org.created' ? 'created' : e.subject))
        const all = await store.orgs.activity(org.id, 10, null)
        expect(subjects(all)).toEqual(['plan4', 'plan3', 'plan2', 'plan1', 'created'])
        expect(all[0]).toEqual({
          seq: expect.any(Number),
          orgId: org.id,
          at: NOW + 4 * MINUTE,
          actorId: null,
          actorEmail: null,
          action: 'org.plan_changed',
          subject: 'plan4',
          detail: { n: 4 },
        })
        const page = await store.orgs.activity(org.id, 2, null)
        expect((await store.orgs.activity(org.id, 2, page.at(-1)!.seq)).map((e) => e.subject)).toEqual(['plan2', 'plan1'])
        const within = await store.orgs.activity(org.id, 10, null, { since: NOW + 2 * MINUTE, until: NOW + 4 * MINUTE })
        expect(within.map((e) => e.subject)).toEqual(['plan3', 'plan2'])
        expect((await store.orgs.activity(org.id, 10, null, { since: NOW + 3 * MINUTE })).map((e) => e.subject)).toEqual(['plan4', 'plan3'])
        expect(subjects(await store.orgs.activity(org.id, 10, null, { until: NOW + MINUTE }))).toEqual(['created'])
        expect(await store.orgs.activity(owner.id, 10, null)).toEqual([])
      })
    })
  })
}
