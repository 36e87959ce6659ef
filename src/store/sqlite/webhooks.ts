// Webhook secrets, organisation webhooks and deliveries on bun:sqlite. A delivery's state (attempts, the
// next attempt's time) lives here and nowhere else, so retries survive restarts; a batch's delivery is
// deleted with its batch. Decisions queue theirs in suggestions.ts, in the decision's transaction. The batches table (migration 8) is read and
// marked here only through its pinned columns: webhook_url, webhook_state, status, account_id, id.
// An attempt claims its delivery with a random token and a lease (migration 15): no other process
// attempts it until the attempt is recorded or the lease ends (its process died), and the attempt's
// outcome is recorded only under its token.
import type { Database } from 'bun:sqlite'
import { toDelivery } from '../shared/rows'
import type { Write } from './connection'
import { randomHex } from '../../shared/crypto'
import type { Actor, DeliveryClaim, DeliveryRecord, DeliveryStatus, WebhookEvent, WebhookStore } from '../contract'

type DeliveryRow = {
  seq: number
  id: string
  account_id: number
  batch_id: string | null
  suggestion_id: string | null
  payload: string | null
  event: WebhookEvent
  url: string
  status: DeliveryStatus
  attempts: number
  last_status: number | null
  last_error: string | null
  last_attempt_at: number | null
  next_attempt_at: number | null
  delivered_at: number | null
  created_at: number
}

type EndedBatchRow = { id: string; account_id: number; webhook_url: string | null; status: string; completed_at: number | null }

export function createWebhookStore(db: Database, write: Write): WebhookStore {
  const q = {
    secret: db.query<{ secret: string; created_at: number }, [number]>('SELECT secret, created_at FROM webhook_secrets WHERE account_id = ?'),
    hasSecret: db.query<{ one: number }, [number]>('SELECT 1 AS one FROM webhook_secrets WHERE account_id = ?'),
    // An account deleted meanwhile has no row to attach to: nothing is written, no foreign-key failure.
    putSecret: db.query<{ account_id: number }, [number, string, number]>(
      `INSERT INTO webhook_secrets (account_id, secret, created_at) SELECT ?1, ?2, ?3 WHERE EXISTS (SELECT 1 FROM accounts WHERE id = ?1)
       ON CONFLICT(account_id) DO UPDATE SET secret = excluded.secret, created_at = excluded.created_at RETURNING account_id`,
    ),
    orgWebhook: db.query<{ url: string; created_at: number }, [number]>('SELECT url, created_at FROM org_webhooks WHERE org_id = ?'),
    // Only an organisation's (or a person's own, which is its personal organisation) row gets one.
    putOrgWebhook: db.query<{ url: string; created_at: number }, [number, string, number]>(
      `INSERT INTO org_webhooks (org_id, url, created_at) SELECT ?1, ?2, ?3 WHERE EXISTS (SELECT 1 FROM accounts WHERE id = ?1)
       ON CONFLICT(org_id) DO UPDATE SET url = excluded.url, created_at = excluded.created_at RETURNING url, created_at`,
    ),
    deleteOrgWebhook: db.query<null, [number]>('DELETE FROM org_webhooks WHERE org_id = ?'),
    append: db.query<null, [number, number, number | null, string | null, string]>(
      "INSERT INTO org_activity (org_id, at, actor_id, actor_email, action, subject, detail) VALUES (?, ?, ?, ?, 'org.webhook_set', NULL, ?)",
    ),
    ended: db.query<EndedBatchRow, [number]>("SELECT id, account_id, webhook_url, status, completed_at FROM batches WHERE webhook_state = 'pending' LIMIT ?"),
    markQueued: db.query<null, [string]>("UPDATE batches SET webhook_state = 'queued' WHERE id = ? AND webhook_state = 'pending'"),
    insertDelivery: db.query<null, [string, number, string, string, string, number, number]>(
      `INSERT INTO webhook_deliveries (id, account_id, batch_id, event, url, status, next_attempt_at, created_at)
       VALUES (?, ?, ?, ?, ?, 'pending', ?, ?) ON CONFLICT(batch_id) DO NOTHING`,
    ),
    // Ranked within each account, so one account's backlog cannot fill the answer. When a delivery's
    // attempt is due again: at its next attempt's time while unclaimed, at the end of its claim's lease.
    due: db.query<DeliveryRow, [number, string, number, number]>(
      `SELECT * FROM (
         SELECT *, row_number() OVER (PARTITION BY account_id ORDER BY coalesce(lease_until, next_attempt_at), seq) AS turn
         FROM webhook_deliveries
         WHERE status = 'pending' AND coalesce(lease_until, next_attempt_at) <= ?1 AND id NOT IN (SELECT value FROM json_each(?2))
       ) WHERE turn <= ?3 ORDER BY turn, coalesce(lease_until, next_attempt_at), seq LIMIT ?4`,
    ),
    // Attempts under way in any process: what each account's share is counted from.
    claimed: db.query<{ id: string; account_id: number }, [number]>(
      "SELECT id, account_id FROM webhook_deliveries WHERE status = 'pending' AND lease_until > ?",
    ),
    nextDue: db.query<{ at: number | null }, []>("SELECT min(coalesce(lease_until, next_attempt_at)) AS at FROM webhook_deliveries WHERE status = 'pending'"),
    begin: db.query<DeliveryRow, [number, string, number, string, number]>(
      `UPDATE webhook_deliveries SET attempts = attempts + 1, last_attempt_at = ?1, claim_token = ?2, lease_until = ?3
       WHERE id = ?4 AND status = 'pending' AND coalesce(lease_until, next_attempt_at) <= ?5 RETURNING *`,
    ),
    schedule: db.query<DeliveryRow, [number | null, string]>('UPDATE webhook_deliveries SET next_attempt_at = ? WHERE id = ? RETURNING *'),
    renew: db.query<null, [number, string, string]>("UPDATE webhook_deliveries SET lease_until = ? WHERE id = ? AND claim_token = ? AND status = 'pending'"),
    delivered: db.query<null, [number, number, string, string]>(
      `UPDATE webhook_deliveries SET status = 'delivered', last_status = ?, last_error = NULL, delivered_at = ?, next_attempt_at = NULL,
         claim_token = NULL, lease_until = NULL
       WHERE id = ? AND claim_token = ? AND status = 'pending'`,
    ),
    // A retry asked for meanwhile (next_attempt_at set again) keeps the delivery pending.
    failed: db.query<null, [number | null, string, string, number, string, string]>(
      `UPDATE webhook_deliveries SET last_status = ?1, last_error = ?2,
         status = CASE WHEN ?3 = 'final' OR (?3 = 'retry' AND next_attempt_at IS NULL) THEN 'failed' ELSE status END,
         next_attempt_at = CASE ?3 WHEN 'final' THEN NULL WHEN 'interrupted' THEN coalesce(next_attempt_at, ?4) ELSE next_attempt_at END,
         claim_token = NULL, lease_until = NULL
       WHERE id = ?5 AND claim_token = ?6 AND status = 'pending'`,
    ),
    list: db.query<DeliveryRow, [number, number, number]>('SELECT * FROM webhook_deliveries WHERE account_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?'),
    retry: db.query<DeliveryRow, [number, string, number]>(
      "UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?3 WHERE account_id = ?1 AND id = ?2 RETURNING *",
    ),
  }

  const putSecret = db.transaction((accountId: number, secret: string, now: number) => {
    const replaced = q.hasSecret.get(accountId) !== null
    return q.putSecret.get(accountId, secret, now) === null ? null : { replaced }
  })

  const putOrgWebhook = db.transaction((orgId: number, url: string, secret: string, actor: Actor) => {
    const row = q.putOrgWebhook.get(orgId, url, actor.now)
    if (row === null) return null
    q.putSecret.get(orgId, secret, actor.now)
    q.append.run(orgId, actor.now, actor.accountId, actor.email, JSON.stringify({ url }))
    return { url: row.url, createdAt: row.created_at }
  })

  const deleteOrgWebhook = db.transaction((orgId: number, actor: Actor) => {
    if (q.deleteOrgWebhook.run(orgId).changes !== 1) return false
    q.append.run(orgId, actor.now, actor.accountId, actor.email, JSON.stringify({ url: null }))
    return true
  })

  const queueEnded = db.transaction((now: number, makeId: () => string, limit: number) => {
    let queued = 0
    for (const batch of q.ended.all(limit)) {
      if (q.markQueued.run(batch.id).changes !== 1) continue
      // A batch that ended without a URL (or not as completed/cancelled) has nothing to send.
      if (batch.webhook_url === null || (batch.status !== 'completed' && batch.status !== 'cancelled')) continue
      // The event's time is when the batch ended, however late its delivery is queued (after a crash).
      q.insertDelivery.run(makeId(), batch.account_id, batch.id, `batch.${batch.status}`, batch.webhook_url, now, batch.completed_at ?? now)
      queued++
    }
    return queued
  })

  const begin = db.transaction((id: string, now: number, leaseMs: number, retryAt: (attempts: number) => number | null): DeliveryClaim | null => {
    const token = randomHex(16)
    const claimed = q.begin.get(now, token, now + leaseMs, id, now)
    if (claimed === null) return null
    return { delivery: toDelivery(q.schedule.get(retryAt(claimed.attempts), id)!), token }
  })

  return {
    secret: async (accountId) => {
      const row = q.secret.get(accountId)
      return row === null ? null : { secret: row.secret, createdAt: row.created_at }
    },
    putSecret: (accountId, secret, now) => write(() => putSecret.immediate(accountId, secret, now)),
    orgWebhook: async (orgId) => {
      const row = q.orgWebhook.get(orgId)
      return row === null ? null : { url: row.url, createdAt: row.created_at }
    },
    putOrgWebhook: (orgId, url, secret, actor) => write(() => putOrgWebhook.immediate(orgId, url, secret, actor)),
    deleteOrgWebhook: (orgId, actor) => write(() => deleteOrgWebhook.immediate(orgId, actor)),
    // Looked for every second: a read first, so an idle service takes no write lock for it.
    queueEndedBatches: async (now, makeId, limit) => (q.ended.all(1).length === 0 ? 0 : write(() => queueEnded.immediate(now, makeId, limit))),
    due: async (now, limit, perAccount, busy) => {
      const underWay = new Map<number, number>()
      const tally = (accountId: number) => underWay.set(accountId, (underWay.get(accountId) ?? 0) + 1)
      for (const accountId of busy.values()) tally(accountId)
      for (const row of q.claimed.all(now)) if (!busy.has(row.id)) tally(row.account_id)
      // Only rows of accounts with attempts under way are passed over, at most perAccount of each: so many
      // more rows hold the first `limit` that may start.
      const rows = q.due.all(now, JSON.stringify([...busy.keys()]), perAccount, limit + underWay.size * perAccount)
      const picked: DeliveryRecord[] = []
      for (const row of rows) {
        if (picked.length >= limit) break
        const count = underWay.get(row.account_id) ?? 0
        if (count >= perAccount) continue
        underWay.set(row.account_id, count + 1)
        picked.push(toDelivery(row))
      }
      return picked
    },
    nextDueAt: async () => q.nextDue.get()?.at ?? null,
    beginAttempt: (id, now, leaseMs, retryAt) => write(() => begin.immediate(id, now, leaseMs, retryAt)),
    renewAttempt: (id, token, now, leaseMs) => write(() => (q.renew.run(now + leaseMs, id, token).changes === 1 ? 'written' : 'lost')),
    delivered: (id, token, status, now) => write(() => (q.delivered.run(status, now, id, token).changes === 1 ? 'written' : 'lost')),
    attemptFailed: (id, token, status, error, end, now) => write(() => (q.failed.run(status, error, end, now, id, token).changes === 1 ? 'written' : 'lost')),
    list: async (accountId, limit, beforeSeq) => q.list.all(accountId, beforeSeq ?? Number.MAX_SAFE_INTEGER, limit).map(toDelivery),
    retry: (accountId, id, now) =>
      write(() => {
        const row = q.retry.get(accountId, id, now)
        return row === null ? null : toDelivery(row)
      }),
  }
}
