// The organisation webhook in the store, the same assertions on every engine (test/support/store-engines.ts):
// setting it replaces the account's secret with its log entry in one transaction; a decision and a reopen
// queue their delivery with the decision (the payload fixed then), an organisation without a webhook none;
// removing it stops later events and keeps the queued ones; deleting the organisation takes both along.
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { mintKey } from '../../src/modules/keys/material'
import type { AccountRecord, Actor, NewSuggestion, OrgRecord, Store } from '../../src/store/contract'
import { suggestionView } from '../../src/store/shared/suggestion-view'
import { type OpenedStore, storeEngines } from '../support/store-engines'

const NOW = Date.UTC(2026, 11, 6, 12)
const hex = (bytes: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString('hex')

const newSuggestion = (): NewSuggestion => ({
  publicId: `sug_${hex(12)}`,
  target: { kind: 'file', ref: 'index.html:3:5', site: '/srv/site', fingerprint: 'fp1' },
  currentAlt: null,
  proposedAlt: 'A red kite over a beach.',
  language: 'en',
  image: { url: 'https://example.com/kite.png', format: 'png', width: 640, height: 480, thumbnail: new Uint8Array([1, 2, 3]) },
  checks: { wcagCompliant: true, wcagIssues: [], verdict: null, decorative: false },
  batchId: null,
})

for (const engine of storeEngines('org webhook store')) {
  describe.skipIf(engine.skip)(`the organisation webhook on the ${engine.name} store`, () => {
    let opened: OpenedStore
    let store: Store
    let owner: AccountRecord
    let org: OrgRecord
    beforeEach(async () => {
      opened = await engine.fresh()
      store = opened.store
      const made = await store.accounts.createWithKey(`owner-${hex(4)}@example.com`, 'hash', 'free', mintKey('first', null).record, NOW)
      if (!made) throw new Error('no account')
      owner = made.account
      org = await store.orgs.create('Acme', `org_${hex(12)}`, 'team', actor())
    }, 60_000)
    afterEach(async () => {
      await opened.close()
    })

    const actor = (now = NOW): Actor & { accountId: number; email: string } => ({ accountId: owner.id, email: owner.email, now })
    const pending = () => store.suggestions.create(org.id, newSuggestion(), actor())

    test('set: the URL, the account secret replaced and org.webhook_set, at once; got back; a gone organisation gets none', async () => {
      await store.webhooks.putSecret(org.id, 'whsec_old', NOW - 1)
      expect(await store.webhooks.putOrgWebhook(org.id, 'https://hooks.example.com/a', 'whsec_new', actor(NOW + 1))).toEqual({
        url: 'https://hooks.example.com/a',
        createdAt: NOW + 1,
      })
      expect(await store.webhooks.secret(org.id)).toEqual({ secret: 'whsec_new', createdAt: NOW + 1 })
      expect(await store.webhooks.orgWebhook(org.id)).toEqual({ url: 'https://hooks.example.com/a', createdAt: NOW + 1 })
      const [entry] = await store.orgs.activity(org.id, 1, null)
      expect(entry).toMatchObject({ action: 'org.webhook_set', actorEmail: owner.email, detail: { url: 'https://hooks.example.com/a' } })
      expect(await store.webhooks.putOrgWebhook(org.id + 1000, 'https://hooks.example.com/a', 'whsec_x', actor())).toBeNull()
    })

    test('a decision and a reopen queue their delivery, due at once, with the event as it was then', async () => {
      await store.webhooks.putOrgWebhook(org.id, 'https://hooks.example.com/a', 'whsec_a', actor())
      const made = await pending()
      const decided = await store.suggestions.decide(org.id, made.publicId, { status: 'edited', finalAlt: 'A kite.' }, actor(NOW + 10))
      if (decided === null || decided === 'already_decided') throw new Error('not decided')
      await store.suggestions.reopen(org.id, made.publicId, actor(NOW + 20))
      const [reopened, first] = await store.webhooks.list(org.id, 10, null)
      expect(first).toMatchObject({
        accountId: org.id,
        batchId: null,
        suggestionId: made.publicId,
        event: 'suggestion.decided',
        url: 'https://hooks.example.com/a',
        status: 'pending',
        attempts: 0,
        nextAttemptAt: NOW + 10,
        createdAt: NOW + 10,
      })
      expect(JSON.parse(first!.payload!)).toEqual({
        event: 'suggestion.decided',
        org_id: org.publicId,
        suggestion: suggestionView(decided),
        decision: 'edited',
        decided_by: owner.email,
        decided_at: new Date(NOW + 10).toISOString(),
      })
      expect(JSON.parse(reopened!.payload!)).toMatchObject({
        decision: 'reopened',
        suggestion: { status: 'pending', final_alt: null },
        decided_at: new Date(NOW + 20).toISOString(),
      })
      // Refused decisions queue nothing.
      expect(await store.suggestions.reopen(org.id, made.publicId, actor())).toBe('not_decided')
      expect(await store.webhooks.list(org.id, 10, null)).toHaveLength(2)
      // And the dispatcher finds them due.
      expect((await store.webhooks.due(NOW + 20, 10, 2, new Map())).map((d) => d.id).toSorted()).toEqual([first!.id, reopened!.id].toSorted())
    })

    test('without a webhook nothing is queued; removed, later decisions queue nothing and queued ones stay', async () => {
      const a = await pending()
      await store.suggestions.decide(org.id, a.publicId, { status: 'rejected', reason: null }, actor())
      expect(await store.webhooks.list(org.id, 10, null)).toEqual([])
      expect(await store.webhooks.deleteOrgWebhook(org.id, actor())).toBe(false)

      await store.webhooks.putOrgWebhook(org.id, 'https://hooks.example.com/a', 'whsec_a', actor())
      const b = await pending()
      await store.suggestions.decide(org.id, b.publicId, { status: 'accepted', finalAlt: b.proposedAlt }, actor())
      expect(await store.webhooks.deleteOrgWebhook(org.id, actor(NOW + 5))).toBe(true)
      expect(await store.webhooks.orgWebhook(org.id)).toBeNull()
      const [entry] = await store.orgs.activity(org.id, 1, null)
      expect(entry).toMatchObject({ action: 'org.webhook_set', detail: { url: null } })
      const c = await pending()
      await store.suggestions.decide(org.id, c.publicId, { status: 'accepted', finalAlt: c.proposedAlt }, actor())
      expect((await store.webhooks.list(org.id, 10, null)).map((d) => d.suggestionId)).toEqual([b.publicId])
    })

    test('deleting the organisation deletes its webhook and its deliveries', async () => {
      await store.webhooks.putOrgWebhook(org.id, 'https://hooks.example.com/a', 'whsec_a', actor())
      const made = await pending()
      await store.suggestions.decide(org.id, made.publicId, { status: 'accepted', finalAlt: made.proposedAlt }, actor())
      expect(await store.orgs.delete(org.id)).toBe(true)
      expect(await store.webhooks.orgWebhook(org.id)).toBeNull()
      expect(await store.webhooks.list(org.id, 10, null)).toEqual([])
      expect(await store.webhooks.nextDueAt()).toBeNull()
    })
  })
}
