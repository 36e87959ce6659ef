// Durable batches on bun:sqlite (migration 8): a batch row and one row per item. Items are claimed
// (`running`) with a random claim token and a lease (migration 15) that the claiming process renews while
// the item runs; an item whose lease ended is taken over by the next claim, with a new token. Every write
// of a claimant is fenced by its token, so a process whose claim was taken over cannot record, charge or
// put back the item. An item's outcome is written in one transaction with the batch's counts, the credit
// charge of a fresh answer (and the end of its hold), and (for the last item) the end of the batch and its
// webhook flag. Uploaded image bytes stay in the item's row only until the item is done or failed; what
// they add up to, per account and in all, is bounded when a batch is created.
import type { Database } from 'bun:sqlite'
import { BATCH_COLUMNS, toBatch, toItem } from '../shared/rows'
import type { Write } from './connection'
import { randomHex } from '../../shared/crypto'
import type {
  BatchStatus,
  BatchStore,
  ClaimedItem,
  ClaimWrite,
  CreateOutcome,
  FinishResult,
  ItemOutcome,
  ItemStatus,
  NewBatch,
  PendingImageLimits,
} from '../contract'
import { CHARGE_CREDIT_SQL, DELETE_HOLD_SQL } from './credits'

type BatchRow = {
  id: string
  account_id: number
  status: BatchStatus
  total: number
  succeeded: number
  failed: number
  created_at: number
  completed_at: number | null
  webhook_url: string | null
  webhook_state: string | null
  review: number
}

type ItemRow = {
  idx: number
  status: ItemStatus
  result: string | null
  error_code: string | null
  error_message: string | null
  metadata: string | null
  charged: number
  suggestion_id: string | null
}

/** `serving`: this store belongs to the process that holds the file's lock (see endOrphanedClaims). */
export function createBatchStore(db: Database, write: Write, serving: boolean): BatchStore {
  const q = {
    byKey: db.query<BatchRow & { request_hash: string }, [number, string]>(
      `SELECT ${BATCH_COLUMNS}, request_hash FROM batches WHERE account_id = ? AND idempotency_key = ?`,
    ),
    dropKey: db.query<null, [string]>('UPDATE batches SET idempotency_key = NULL, request_hash = NULL WHERE id = ?'),
    insertBatch: db.query<BatchRow, [string, number, number, number, string | null, string | null, string | null, number]>(
      `INSERT INTO batches (id, account_id, status, total, created_at, webhook_url, idempotency_key, request_hash, review)
       VALUES (?, ?, 'queued', ?, ?, ?, ?, ?, ?) RETURNING ${BATCH_COLUMNS}`,
    ),
    insertItem: db.query<null, [string, number, string, Uint8Array | null, string | null]>(
      `INSERT INTO batch_items (batch_id, idx, status, request, image, metadata) VALUES (?, ?, 'pending', ?, ?, ?)`,
    ),
    get: db.query<BatchRow, [number, string]>(`SELECT ${BATCH_COLUMNS} FROM batches WHERE account_id = ? AND id = ?`),
    items: db.query<ItemRow, [string]>(
      'SELECT idx, status, result, error_code, error_message, metadata, charged, suggestion_id FROM batch_items WHERE batch_id = ? ORDER BY idx',
    ),
    listFirst: db.query<BatchRow, [number, number]>(`SELECT ${BATCH_COLUMNS} FROM batches WHERE account_id = ? ORDER BY created_at DESC, id DESC LIMIT ?`),
    listAfter: db.query<BatchRow, [number, number, number, string, number]>(
      `SELECT ${BATCH_COLUMNS} FROM batches WHERE account_id = ?1 AND (created_at < ?2 OR (created_at = ?3 AND id < ?4))
       ORDER BY created_at DESC, id DESC LIMIT ?5`,
    ),
    cancelPending: db.query<null, [string, string, number, string]>(
      `UPDATE batch_items SET status = 'failed', error_code = ?, error_message = ?, finished_at = ?, image = NULL
       WHERE batch_id = ? AND status = 'pending'`,
    ),
    markCancelled: db.query<null, [string]>(`UPDATE batches SET status = 'cancelled' WHERE id = ?`),
    // Read through the open-items index: the status terms are the index's own.
    openBatches: db.query<{ id: string }, [number]>(
      `SELECT b.id FROM batches b
       WHERE b.id IN (SELECT batch_id FROM batch_items WHERE status IN ('pending', 'running') AND (status = 'pending' OR lease_until <= ?))
         AND b.completed_at IS NULL
       ORDER BY b.created_at, b.id`,
    ),
    claimable: db.query<{ id: number; status: ItemStatus }, [string, number]>(
      `SELECT id, status FROM batch_items WHERE batch_id = ? AND status IN ('pending', 'running') AND (status = 'pending' OR lease_until <= ?)
       ORDER BY idx LIMIT 1`,
    ),
    claim: db.query<{ id: number; batch_id: string; idx: number; request: string; image: Uint8Array | null }, [string, number, number]>(
      `UPDATE batch_items SET status = 'running', claim_token = ?, lease_until = ? WHERE id = ? RETURNING id, batch_id, idx, request, image`,
    ),
    startBatch: db.query<{ account_id: number; review: number }, [string]>(
      `UPDATE batches SET status = CASE status WHEN 'queued' THEN 'running' ELSE status END WHERE id = ? RETURNING account_id, review`,
    ),
    renew: db.query<null, [number, number, string]>(`UPDATE batch_items SET lease_until = ? WHERE id = ? AND status = 'running' AND claim_token = ?`),
    unclaim: db.query<null, [number, string]>(
      `UPDATE batch_items SET status = 'pending', claim_token = NULL, lease_until = NULL WHERE id = ? AND status = 'running' AND claim_token = ?`,
    ),
    exists: db.query<{ one: number }, [number]>('SELECT 1 AS one FROM batch_items WHERE id = ?'),
    // A claim ends the credit holds of the item's earlier claims: a claim taken over holds the credit itself.
    endClaimHolds: db.query<null, [number]>('DELETE FROM credit_holds WHERE batch_item_id = ?'),
    endOrphaned: db.query<null, []>(`UPDATE batch_items SET lease_until = 0 WHERE status = 'running'`),
    claimed: db.query<{ batch_id: string; account_id: number }, [number, string]>(
      `SELECT i.batch_id, b.account_id FROM batch_items i JOIN batches b ON b.id = i.batch_id
       WHERE i.id = ? AND i.status = 'running' AND i.claim_token = ?`,
    ),
    charge: db.query<{ used: number }, [number, string]>(CHARGE_CREDIT_SQL),
    deleteHold: db.query<null, [number]>(DELETE_HOLD_SQL),
    done: db.query<null, [string, number, number, string | null, number]>(
      `UPDATE batch_items SET status = 'done', result = ?, charged = ?, finished_at = ?, suggestion_id = ?, image = NULL, claim_token = NULL, lease_until = NULL
       WHERE id = ?`,
    ),
    failed: db.query<null, [string, string, number, number]>(
      `UPDATE batch_items SET status = 'failed', error_code = ?, error_message = ?, finished_at = ?, image = NULL, claim_token = NULL, lease_until = NULL
       WHERE id = ?`,
    ),
    // The counts follow the items: recounted from them, so no path can make them drift.
    recount: db.query<{ left: number }, [string]>(
      `UPDATE batches SET
         succeeded = (SELECT count(*) FROM batch_items WHERE batch_id = ?1 AND status = 'done'),
         failed = (SELECT count(*) FROM batch_items WHERE batch_id = ?1 AND status = 'failed')
       WHERE id = ?1
       RETURNING (SELECT count(*) FROM batch_items WHERE batch_id = ?1 AND status IN ('pending', 'running')) AS left`,
    ),
    // The transaction that ends a batch also flags its webhook (the dispatcher claims 'pending' ones).
    end: db.query<{ id: string }, [number, string]>(
      `UPDATE batches SET completed_at = ?, status = CASE status WHEN 'cancelled' THEN 'cancelled' ELSE 'completed' END,
         webhook_state = CASE WHEN webhook_url IS NOT NULL THEN 'pending' ELSE webhook_state END
       WHERE id = ? AND completed_at IS NULL RETURNING id`,
    ),
    purge: db.query<null, [number]>('DELETE FROM batches WHERE completed_at IS NOT NULL AND completed_at < ?'),
    // Kept by the triggers of migration 12.
    pendingImages: db.query<{ bytes: number }, [number]>('SELECT bytes FROM batch_image_bytes WHERE account_id = ?'),
    allPendingImages: db.query<{ bytes: number }, []>('SELECT coalesce(sum(bytes), 0) AS bytes FROM batch_image_bytes'),
  }

  const create = db.transaction((batch: NewBatch, limits: PendingImageLimits): CreateOutcome => {
    const idem = batch.idempotency
    const earlier = idem ? q.byKey.get(batch.accountId, idem.key) : null
    if (idem && earlier && earlier.created_at >= idem.since) {
      return { kind: earlier.request_hash === idem.requestHash ? 'replay' : 'conflict', batch: toBatch(earlier) }
    }
    const adding = batch.items.reduce((sum, item) => sum + (item.image?.byteLength ?? 0), 0)
    if (adding > 0) {
      const mine = q.pendingImages.get(batch.accountId)?.bytes ?? 0
      if (mine + adding > limits.perAccountBytes) return { kind: 'images_full', scope: 'account', pending: mine, adding }
      const all = q.allPendingImages.get()?.bytes ?? 0
      if (all + adding > limits.totalBytes) return { kind: 'images_full', scope: 'service', pending: all, adding }
    }
    if (earlier) q.dropKey.run(earlier.id)
    const row = q.insertBatch.get(
      batch.id,
      batch.accountId,
      batch.items.length,
      batch.createdAt,
      batch.webhookUrl,
      idem?.key ?? null,
      idem?.requestHash ?? null,
      batch.review ? 1 : 0,
    )!
    for (const [index, item] of batch.items.entries()) q.insertItem.run(batch.id, index, item.request, item.image, item.metadata)
    return { kind: 'created', batch: toBatch(row) }
  })

  /** Recounts the batch and ends it when no item is left to run. */
  const settle = (batchId: string, now: number): string | null => {
    const counted = q.recount.get(batchId)
    if (!counted || counted.left > 0) return null
    return q.end.get(now, batchId)?.id ?? null
  }

  const cancel = db.transaction((accountId: number, id: string, now: number, code: string, message: string) => {
    const row = q.get.get(accountId, id)
    if (!row) return null
    if (row.status === 'completed') return 'finished' as const
    if (row.status !== 'cancelled') {
      q.cancelPending.run(code, message, now, id)
      q.markCancelled.run(id)
      settle(id, now)
    }
    return toBatch(q.get.get(accountId, id)!)
  })

  const claim = db.transaction((batchId: string, now: number, leaseMs: number): ClaimedItem | null => {
    const candidate = q.claimable.get(batchId, now)
    if (!candidate) return null
    const token = randomHex(16)
    const leaseUntil = now + leaseMs
    const row = q.claim.get(token, leaseUntil, candidate.id)!
    q.endClaimHolds.run(candidate.id)
    const batch = q.startBatch.get(batchId)!
    const takenOver = candidate.status === 'running'
    return {
      id: row.id,
      token,
      leaseUntil,
      takenOver,
      batchId: row.batch_id,
      accountId: batch.account_id,
      index: row.idx,
      request: row.request,
      image: row.image,
      review: batch.review === 1,
    }
  })

  /** Why a fenced write changed no row: the item is there under another claim, or not there at all. */
  const refused = (itemId: number): ClaimWrite => (q.exists.get(itemId) === null ? 'gone' : 'lost')

  const finish = db.transaction((itemId: number, token: string, outcome: ItemOutcome, now: number): FinishResult => {
    // The hold ends here whatever happens: charged with the answer, or released with it.
    if (outcome.kind === 'done' && outcome.charge) for (const holdId of outcome.charge.holdIds) q.deleteHold.run(holdId)
    const item = q.claimed.get(itemId, token)
    if (!item) return { status: refused(itemId), used: null, ended: null }
    let used: number | null = null
    if (outcome.kind === 'done') {
      if (outcome.charge) {
        for (const _ of outcome.charge.holdIds) used = q.charge.get(item.account_id, outcome.charge.period)?.used ?? null
        // The account is gone (its batches go with it): nothing to charge or write.
        if (used === null) return { status: 'gone', used: null, ended: null }
      }
      q.done.run(outcome.result(used), outcome.charge ? 1 : 0, now, outcome.suggestionId ?? null, itemId)
    } else {
      q.failed.run(outcome.code, outcome.message, now, itemId)
    }
    return { status: 'written', used, ended: settle(item.batch_id, now) }
  })

  return {
    create: (batch, limits) => write(() => create.immediate(batch, limits)),
    get: async (accountId, id) => {
      const row = q.get.get(accountId, id)
      return row ? toBatch(row) : null
    },
    items: async (batchId) => q.items.all(batchId).map(toItem),
    list: async (accountId, limit, cursor) =>
      (cursor ? q.listAfter.all(accountId, cursor.createdAt, cursor.createdAt, cursor.id, limit) : q.listFirst.all(accountId, limit)).map(toBatch),
    cancel: (accountId, id, now, code, message) => write(() => cancel.immediate(accountId, id, now, code, message)),
    openBatches: async (now) => q.openBatches.all(now).map((r) => r.id),
    claim: (batchId, now, leaseMs) => write(() => claim.immediate(batchId, now, leaseMs)),
    renew: (itemId, token, now, leaseMs) => write(() => (q.renew.run(now + leaseMs, itemId, token).changes === 1 ? 'written' : refused(itemId))),
    unclaim: (itemId, token) => write(() => (q.unclaim.run(itemId, token).changes === 1 ? 'written' : refused(itemId))),
    endOrphanedClaims: async () => (serving ? write(() => q.endOrphaned.run().changes) : 0),
    finish: (itemId, token, outcome, now) => write(() => finish.immediate(itemId, token, outcome, now)),
    purgeEnded: (before) => write(() => q.purge.run(before).changes),
  }
}
