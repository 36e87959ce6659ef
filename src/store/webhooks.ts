// Webhook secrets and deliveries on bun:sqlite. A delivery's state (attempts, the next attempt's time)
// lives here and nowhere else, so retries survive restarts; a delivery is deleted with its batch. The batches table (migration 8) is read and
// marked here only through its pinned columns: webhook_url, webhook_state, status, account_id, id.
import type { Database } from 'bun:sqlite'

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
   * Up to `limit` pending deliveries due at `now` that may start: none of `busy` (the attempts under way,
   * delivery id → account id), and no more of an account than brings it to `perAccount` under way. Taken
   * in turns: each account's earliest, then each account's second, …, earliest first within a turn.
   */
  due(now: number, limit: number, perAccount: number, busy: ReadonlyMap<string, number>): Promise<DeliveryRecord[]>
  /** When the earliest pending delivery is due; null when none is pending. */
  nextDueAt(): Promise<number | null>
  /**
   * Counts an attempt before it is made: attempts + 1, and the next attempt at `retryAt` (null: this is
   * the last). Null when the delivery is no longer pending and due (another claim, a retry request).
   */
  beginAttempt(id: string, now: number, retryAt: (attempts: number) => number | null): Promise<DeliveryRecord | null>
  /** The receiver answered 2xx. */
  delivered(id: string, status: number, now: number): Promise<void>
  /** The attempt failed; a delivery with no next attempt scheduled, or a `final` failure, becomes 'failed'. */
  attemptFailed(id: string, status: number | null, error: string, final: boolean): Promise<void>
  /** The account's deliveries, newest first, after the cursor `beforeSeq` (null: from the newest). */
  list(accountId: number, limit: number, beforeSeq: number | null): Promise<DeliveryRecord[]>
  /** Makes a delivery of the account pending and due now (one more attempt); null when it has none with that id. */
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
    // Ranked within each account, so one account's backlog cannot fill the answer.
    due: db.query<DeliveryRow, [number, string, number, number]>(
      `SELECT * FROM (
         SELECT *, row_number() OVER (PARTITION BY account_id ORDER BY next_attempt_at, seq) AS turn
         FROM webhook_deliveries
         WHERE status = 'pending' AND next_attempt_at <= ? AND id NOT IN (SELECT value FROM json_each(?))
       ) WHERE turn <= ? ORDER BY turn, next_attempt_at, seq LIMIT ?`,
    ),
    nextDue: db.query<{ at: number | null }, []>("SELECT min(next_attempt_at) AS at FROM webhook_deliveries WHERE status = 'pending'"),
    byId: db.query<DeliveryRow, [string]>('SELECT * FROM webhook_deliveries WHERE id = ?'),
    begin: db.query<DeliveryRow, [number, number | null, string, number]>(
      `UPDATE webhook_deliveries SET attempts = attempts + 1, last_attempt_at = ?, next_attempt_at = ?
       WHERE id = ? AND status = 'pending' AND next_attempt_at <= ? RETURNING *`,
    ),
    delivered: db.query<null, [number, number, string]>(
      "UPDATE webhook_deliveries SET status = 'delivered', last_status = ?, last_error = NULL, delivered_at = ?, next_attempt_at = NULL WHERE id = ?",
    ),
    // A retry asked for meanwhile (next_attempt_at set again) keeps the delivery pending.
    failed: db.query<null, [number | null, string, number, string]>(
      `UPDATE webhook_deliveries SET last_status = ?1, last_error = ?2,
         status = CASE WHEN status = 'pending' AND (?3 OR next_attempt_at IS NULL) THEN 'failed' ELSE status END,
         next_attempt_at = CASE WHEN ?3 THEN NULL ELSE next_attempt_at END
       WHERE id = ?4`,
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

  const begin = db.transaction((id: string, now: number, retryAt: (attempts: number) => number | null) => {
    const row = q.byId.get(id)
    if (row === null || row.status !== 'pending' || row.next_attempt_at === null || row.next_attempt_at > now) return null
    const updated = q.begin.get(now, retryAt(row.attempts + 1), id, now)
    return updated === null ? null : toRecord(updated)
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
      for (const accountId of busy.values()) underWay.set(accountId, (underWay.get(accountId) ?? 0) + 1)
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
    beginAttempt: (id, now, retryAt) => write(() => begin.immediate(id, now, retryAt)),
    delivered: (id, status, now) =>
      write(() => {
        q.delivered.run(status, now, id)
      }),
    attemptFailed: (id, status, error, final) =>
      write(() => {
        q.failed.run(status, error, final ? 1 : 0, id)
      }),
    list: async (accountId, limit, beforeSeq) => q.list.all(accountId, beforeSeq ?? Number.MAX_SAFE_INTEGER, limit).map(toRecord),
    retry: (accountId, id, now) =>
      write(() => {
        const row = q.retry.get(accountId, id, now)
        return row === null ? null : toRecord(row)
      }),
  }
}
