// The organisation webhook, the paths that work: set (the secret shown once), shown, replaced, removed; each
// decision (accept, edit, reject, accept several, reopen) reaches a real loopback HTTPS receiver as a signed
// `suggestion.decided` event carrying the suggestion as GET /api/suggestions/:id shows it; the deliveries are
// in the organisation's delivery log; the activity log records each change of the webhook. Migration 19
// keeps every batch delivery as it was.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { migrate } from '../../src/store/sqlite/migrations'
import { VERSION } from '../../src/version'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { waitUntil } from '../support/service'
import { deliveriesOf, makeOrg, setWebhook, suggestion, type TestOrg } from './org-support'
import { FAST_WEBHOOKS, type Receiver, startReceiver, verifySignature } from './support'

let env: AltTextEnv
let org: TestOrg
let receiver: Receiver
let secret: string

beforeAll(async () => {
  env = await startAltTextEnv({ overrides: FAST_WEBHOOKS })
  org = await makeOrg(env.service)
  receiver = startReceiver(env.images)
})
afterAll(() => env.stop())

const api = () => env.service.api

/** Waits for the next event at the receiver and checks it is delivered, signed, and about `id`. */
async function nextEvent(id: string, count: number) {
  await receiver.waitFor(count)
  const got = receiver.received[count - 1]!
  expect(got.verified).toBe(true)
  expect(got.json.suggestion.id).toBe(id)
  return got
}

describe('setting the webhook', () => {
  test('PUT answers the URL and a new secret, shown once; GET shows the URL only; the activity log has org.webhook_set', async () => {
    const set = await setWebhook(api(), org.id, org.owner.key, receiver.url)
    expect(set.url).toBe(receiver.url)
    expect(set.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/u)
    expect(Number.isNaN(Date.parse(set.created_at))).toBe(false)
    secret = set.secret
    receiver.useSecret(secret)

    const shown = await api().get(`/api/orgs/${org.id}/webhook`, org.owner.key)
    expect(shown.status).toBe(200)
    expect(shown.body).toEqual({ url: receiver.url, created_at: set.created_at })
    expect(shown.text).not.toContain('whsec_')
    // It is the organisation account's signing secret, as for batch webhooks.
    expect((await api().get('/api/webhook-secret', org.owner.key)).body).toEqual({ exists: true, created_at: set.created_at })

    const log = await api().get(`/api/orgs/${org.id}/activity`, org.owner.key)
    expect(log.body.entries[0]).toMatchObject({ action: 'org.webhook_set', actor: org.owner.email, detail: { url: receiver.url } })
    expect(log.text).not.toContain('whsec_')
  })
})

describe('decisions reach the receiver', () => {
  test('an accept is POSTed once, signed with the secret, with the suggestion as GET shows it', async () => {
    const start = receiver.received.length
    const made = await suggestion(api(), org.owner.key)
    const accepted = await api().post(`/api/suggestions/${made.id}/accept`, {}, org.owner.key)
    expect(accepted.status).toBe(200)
    const got = await nextEvent(made.id, start + 1)

    const [delivery] = await deliveriesOf(api(), org.owner.key, made.id)
    expect(got.headers.get('content-type')).toBe('application/json')
    expect(got.headers.get('user-agent')).toBe(`alttext-webhooks/${VERSION}`)
    expect(got.headers.get('alttext-delivery')).toBe(delivery.id)
    expect(got.headers.get('alttext-signature')).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/u)
    const now = await api().get(`/api/suggestions/${made.id}`, org.owner.key)
    expect(got.json).toEqual({
      event: 'suggestion.decided',
      org_id: org.id,
      suggestion: now.body,
      decision: 'accepted',
      decided_by: org.owner.email,
      decided_at: now.body.decided_at,
    })
    expect(got.json.suggestion).toMatchObject({ status: 'accepted', final_alt: made.proposed_alt })
  })

  test('the delivery is in the organisation log: no batch, the suggestion, delivered at the first attempt', async () => {
    const made = await suggestion(api(), org.owner.key)
    const start = receiver.received.length
    await api().post(`/api/suggestions/${made.id}/reject`, { reason: 'Says nothing about the chart.' }, org.owner.key)
    await nextEvent(made.id, start + 1)
    let delivery: any
    await waitUntil(async () => {
      ;[delivery] = await deliveriesOf(api(), org.owner.key, made.id)
      return delivery?.status === 'delivered'
    }, 'the delivery to be recorded as delivered')
    expect(delivery).toMatchObject({
      batch_id: null,
      suggestion_id: made.id,
      event: 'suggestion.decided',
      url: receiver.url,
      status: 'delivered',
      attempts: 1,
      last_status: 200,
      last_error: null,
      next_attempt_at: null,
    })
    expect(delivery.id).toMatch(/^whd_[0-9a-f]{24}$/u)
    expect(receiver.received.at(-1)!.json).toMatchObject({ decision: 'rejected', suggestion: { status: 'rejected', reason: 'Says nothing about the chart.' } })
  })

  test('an edit says edited with the final text; a reopen says reopened, by whoever reopened it', async () => {
    const reviewer = await org.member('reviewer')
    const made = await suggestion(api(), org.owner.key)
    const start = receiver.received.length
    await api().post(`/api/suggestions/${made.id}/accept`, { alt_text: 'A bar chart of sales by month.' }, reviewer.key)
    const edited = await nextEvent(made.id, start + 1)
    expect(edited.json).toMatchObject({
      decision: 'edited',
      decided_by: reviewer.email,
      suggestion: { status: 'edited', final_alt: 'A bar chart of sales by month.' },
    })

    const reopened = await api().post(`/api/suggestions/${made.id}/reopen`, {}, org.owner.key)
    expect(reopened.status).toBe(200)
    const undo = await nextEvent(made.id, start + 2)
    expect(undo.json).toMatchObject({
      decision: 'reopened',
      decided_by: org.owner.email,
      suggestion: { status: 'pending', final_alt: null, decided_by: null, decided_at: null },
    })
    expect(Number.isNaN(Date.parse(undo.json.decided_at))).toBe(false)
    // Two events, two deliveries, in the order they were decided.
    const logged = await deliveriesOf(api(), org.owner.key, made.id)
    expect(logged.map((d) => d.id)).toEqual([edited.headers.get('alttext-delivery'), undo.headers.get('alttext-delivery')])
  })

  test('accepting several sends one event for each accepted suggestion', async () => {
    const a = await suggestion(api(), org.owner.key)
    const b = await suggestion(api(), org.owner.key)
    const start = receiver.received.length
    const res = await api().post('/api/suggestions/accept', { ids: [a.id, b.id] }, org.owner.key)
    expect(res.body.accepted.toSorted()).toEqual([a.id, b.id].toSorted())
    await receiver.waitFor(start + 2)
    const got = receiver.received.slice(start)
    expect(got.map((r) => r.json.suggestion.id).toSorted()).toEqual([a.id, b.id].toSorted())
    expect(got.every((r) => r.verified && r.json.decision === 'accepted')).toBe(true)
  })
})

describe('changing the webhook', () => {
  test('a second PUT sets the new URL with a new secret: later events go there, signed with it only', async () => {
    const second = startReceiver(env.images)
    const replaced = await setWebhook(api(), org.id, org.owner.key, second.url)
    expect(replaced.secret).not.toBe(secret)
    second.useSecret(replaced.secret)
    const made = await suggestion(api(), org.owner.key)
    const before = receiver.received.length
    await api().post(`/api/suggestions/${made.id}/accept`, {}, org.owner.key)
    await second.waitFor(1)
    const got = second.received[0]!
    expect(got.verified).toBe(true)
    expect(verifySignature(got.headers.get('alttext-signature'), got.body, secret)).toBe(false)
    expect(receiver.received.length).toBe(before)
    expect((await api().get(`/api/orgs/${org.id}/webhook`, org.owner.key)).body.url).toBe(second.url)
  })

  test('DELETE removes it: GET is 404, a later decision queues nothing, the log records it', async () => {
    const removed = await api().delete(`/api/orgs/${org.id}/webhook`, org.owner.key)
    expect(removed.status).toBe(200)
    expect(removed.body).toEqual({ deleted: true })
    const gone = await api().get(`/api/orgs/${org.id}/webhook`, org.owner.key)
    expect(gone.status).toBe(404)
    expect(gone.body.error.code).toBe('not_found')

    const made = await suggestion(api(), org.owner.key)
    expect((await api().post(`/api/suggestions/${made.id}/accept`, {}, org.owner.key)).status).toBe(200)
    // The delivery would be queued in the decision's transaction: none is there once it answered.
    expect(await deliveriesOf(api(), org.owner.key, made.id)).toEqual([])
    const log = await api().get(`/api/orgs/${org.id}/activity?limit=5`, org.owner.key)
    expect(log.body.entries.find((e: { action: string }) => e.action === 'org.webhook_set')).toMatchObject({ detail: { url: null } })
  })
})

describe('schema version 19', () => {
  test('keeps every delivery of a database at version 18, its claim and its batch; a delivery needs a batch or a payload', () => {
    const dir = mkdtempSync(join(tmpdir(), 'alttext-org-webhook-'))
    const db = new Database(join(dir, 'alttext.db'))
    try {
      db.exec('PRAGMA foreign_keys = ON')
      migrate(db, undefined, undefined, 18)
      db.exec(`INSERT INTO accounts (id, email, password_hash, created_at) VALUES (1, 'a@example.com', '', 1);
        INSERT INTO batches (id, account_id, total, created_at, webhook_url, webhook_state) VALUES ('bat_1', 1, 1, 1, 'https://hooks.example.com/a', 'queued');
        INSERT INTO webhook_deliveries (id, account_id, batch_id, event, url, status, attempts, next_attempt_at, created_at, claim_token, lease_until)
          VALUES ('whd_1', 1, 'bat_1', 'batch.completed', 'https://hooks.example.com/a', 'pending', 2, 50, 10, 'tok', 60)`)
      const before = db.query('SELECT * FROM webhook_deliveries').all()
      expect(migrate(db, undefined, undefined, 19)).toEqual([19])
      expect(db.query('SELECT * FROM webhook_deliveries').all()).toEqual(before.map((row) => ({ ...(row as object), suggestion_id: null, payload: null })))
      expect(
        db
          .query<{ name: string }, []>(
            "SELECT name FROM sqlite_master WHERE tbl_name = 'webhook_deliveries' AND type = 'index' AND sql IS NOT NULL ORDER BY name",
          )
          .all()
          .map((r) => r.name),
      ).toEqual(['webhook_deliveries_account', 'webhook_deliveries_due'])
      expect(() =>
        db.exec(
          "INSERT INTO webhook_deliveries (id, account_id, event, url, status, created_at) VALUES ('whd_2', 1, 'suggestion.decided', 'https://x.example', 'pending', 1)",
        ),
      ).toThrow(/CHECK constraint failed/u)
      // Still one delivery per batch, and deleted with it.
      expect(() =>
        db.exec(
          "INSERT INTO webhook_deliveries (id, account_id, batch_id, event, url, status, created_at) VALUES ('whd_3', 1, 'bat_1', 'batch.completed', 'https://x.example', 'pending', 1)",
        ),
      ).toThrow(/UNIQUE constraint failed/u)
      db.exec("DELETE FROM batches WHERE id = 'bat_1'")
      expect(db.query('SELECT count(*) AS n FROM webhook_deliveries').get()).toEqual({ n: 0 })
    } finally {
      db.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
