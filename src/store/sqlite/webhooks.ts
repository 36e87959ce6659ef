// Webhook secrets and deliveries on bun:sqlite. A delivery's state (attempts, the next attempt's time)
// lives here and nowhere else, so retries survive restarts; a delivery is deleted with its batch. The batches table (migration 8) is read and
// marked here only through its pinned columns: webhook_url, webhook_state, status, account_id, id.
// An attempt claims its delivery with a random token and a lease (migration 15): no other process
// attempts it until the attempt is recorded or the lease ends (its process died), and the attempt's
// outcome is recorded only under its token.
import type { Database } from 'bun:sqlite'
import { randomHex } from '../shared/crypto'

export type DeliveryStatus = 'pending' | 'delivered' | 'failed'
export type WebhookEvent = 'batch.completed' | 'batch.cancelled'

/** One delivery of one ended batch's event. Times are Unix ms. */
export type DeliveryRecord = {
  /** Insertion order: the delivery log's cursor. */
  seq: number
  id: string
  accountId: number
  batchId: string
  event: WebhookEvent
  url: string
  status: DeliveryStatus
  attempts: number
  /** The receiver's HTTP status at the last attempt; null when it did not answer (or none was made). */
  lastStatus: number | null
  lastError: string | null
  lastAttemptAt: number | null
  nextAttemptAt: number | null
  deliveredAt: number | null
  createdAt: number
}

export type WebhookSecretRecord = { secret: string; createdAt: number }

/** An attempt under way: the delivery as it was claimed (attempts counted, next attempt scheduled) and the claim's token. */
export type DeliveryClaim = { delivery: DeliveryRecord; token: string }

/**
 * How an attempt that failed leaves its delivery: `retry`: pending until its next attempt, or failed when
 * it has none; `final`: failed, no attempt left; `interrupted` (cut short by shutdown, which says nothing
 * of the receiver): pending, due at once when it had no next attempt.
 */
export type AttemptEnd = 'retry' | 'final' | 'interrupted'

/** `written`, or `lost`: the delivery is not claimed with this token any more (nothing was written). */
export type AttemptWrite = 'written' | 'lost'

export interface WebhookStore {
  /** The account's signing secret, or null when it has none. */
  secret(accountId: number): Promise<WebhookSecretRecord | null>
  /** Creates or replaces the account's secret; null when the account no longer exists. */
  putSecret(accountId: number, secret: string, now: number): Promise<{ replaced: boolean } | null>
  /**
   * For each ended batch whose webhook_state is 'pending' (at most `limit`), in one transaction: marks
   * it 'queued' and inserts its delivery, due at `now`. Returns how many were queued.
   */
  queueEndedBatches(now: number, makeId: () => string, limit: number): Promise<number>
  /**
   * Up to `limit` pending deliveries that may start at `now`: due (not claimed and its next attempt's time
   * reached, or claimed under a lease that ended: its attempt died), none of `busy` (this process's
   * attempts, delivery id → account id), and no more of an account than brings it to `perAccount` under
   * way, counting `busy` and the unexpired claims of every process. Taken in turns: each account's
   * earliest, then each account's second, …, earliest first within a turn.
   */
  due(now: number, limit: number, perAccount: number, busy: ReadonlyMap<string, number>): Promise<DeliveryRecord[]>
  /** When the earliest pending delivery is due (or its claim's lease ends); null when none is pending. */
  nextDueAt(): Promise<number | null>
  /**
   * Claims a delivery due at `now` (see `due`) for one attempt, counted before it is made, in one
   * transaction: attempts + 1, the next attempt at `retryAt` (null: this is the last), a new random claim
   * token and a lease until `now + leaseMs`. Null when the delivery is not due (another process claimed
   * it, it was delivered). A delivery is attempted by one claim at a time; a claim whose lease ended is
   * taken over by the next beginAttempt, so a killed process's attempt is made again (at least once).
   */
  beginAttempt(id: string, now: number, leaseMs: number, retryAt: (attempts: number) => number | null): Promise<DeliveryClaim | null>
  /**
   * Moves the lease of an attempt still claimed with `token` to `now + leaseMs`: its process renews it
   * while the attempt runs, so the lease may be shorter than the attempt. Fenced by the claim's token.
   */
  renewAttempt(id: string, token: string, now: number, leaseMs: number): Promise<AttemptWrite>
  /** The receiver answered 2xx: delivered, the claim ends. Fenced by the claim's token. */
  delivered(id: string, token: string, status: number, now: number): Promise<AttemptWrite>
  /** The attempt failed (see AttemptEnd; `now` dates an interrupted one's next attempt); the claim ends. Fenced by the claim's token. */
  attemptFailed(id: string, token: string, status: number | null, error: string, end: AttemptEnd, now: number): Promise<AttemptWrite>
  /** The account's deliveries, newest first, after the cursor `beforeSeq` (null: from the newest). */
  list(accountId: number, limit: number, beforeSeq: number | null): Promise<DeliveryRecord[]>
  /**
   * Makes a delivery of the account pending and due now (one more attempt); null when it has none with that
   * id. An attempt under way keeps its claim: the next one starts when it ends.
   */
  retry(accountId: number, id: string, now: number): Promise<DeliveryRecord | null>
}

/** A write that waits (bounded) while another process holds the database lock; see sqlite.ts. */
type Write = <T>(attempt: () => T) => Promise<T>

type DeliveryRow = {
  seq: number
  id: string
  account_id: number
  batch_id: string
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

const toRecord = (r: DeliveryRow): DeliveryRecord => ({
  seq: r.seq,
  id: r.id,
  accountId: r.account_id,
  batchId: r.batch_id,
  event: r.event,
  url: r.url,
  status: r.status,
  attempts: r.attempts,
  lastStatus: r.last_status,
  lastError: r.last_error,
  lastAttemptAt: r.last_attempt_at,
  nextAttemptAt: r.next_attempt_at,
  deliveredAt: r.delivered_at,
  createdAt: r.created_at,
})

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
    return { delivery: toRecord(q.schedule.get(retryAt(claimed.attempts), id)!), token }
  })

  return {
    secret: async (accountId) => {
      const row = q.secret.get(accountId)
      return row === null ? null : { secret: row.secret, createdAt: row.created_at }
    },
    putSecret: (accountId, secret, now) => write(() => putSecret.immediate(accountId, secret, now)),
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
        picked.push(toRecord(row))
      }
      return picked
    },
    nextDueAt: async () => q.nextDue.get()?.at ?? null,
    beginAttempt: (id, now, leaseMs, retryAt) => write(() => begin.immediate(id, now, leaseMs, retryAt)),
    renewAttempt: (id, token, now, leaseMs) => write(() => (q.renew.run(now + leaseMs, id, token).changes === 1 ? 'written' : 'lost')),
    delivered: (id, token, status, now) => write(() => (q.delivered.run(status, now, id, token).changes === 1 ? 'written' : 'lost')),
    attemptFailed: (id, token, status, error, end, now) => write(() => (q.failed.run(status, error, end, now, id, token).changes === 1 ? 'written' : 'lost')),
    list: async (accountId, limit, beforeSeq) => q.list.all(accountId, beforeSeq ?? Number.MAX_SAFE_INTEGER, limit).map(toRecord),
    retry: (accountId, id, now) =>
      write(() => {
        const row = q.retry.get(accountId, id, now)
        return row === null ? null : toRecord(row)
      }),
  }
}
