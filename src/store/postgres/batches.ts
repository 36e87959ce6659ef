// Durable batches on PostgreSQL (see BatchStore in ../batches.ts for what each operation promises). Any
// number of replicas claim items of one batch at once: a claim takes the lowest claimable item with
// FOR UPDATE SKIP LOCKED and updates it in the same statement, so concurrent claims take different items
// and never one twice; a claimant's writes are fenced by its claim token. Claims of a killed replica end
// with their lease only: no replica can tell at start whose claims are orphaned. Leases are judged by the
// database's clock (clock.ts), so a replica whose clock runs ahead takes over no live claim.
//
// Locks are taken items first, then the batch's row: a claim (which may mark its batch running), a
// finish and a cancel all change items before they lock the batch. The batch's counts are recounted in a
// statement that starts after its row is locked, so it sees every item that an earlier finish recorded.
import type { SQL } from 'bun'
import type { BatchStore, ClaimWrite, CreateOutcome, FinishResult, ItemOutcome, NewBatch, PendingImageLimits } from '../contract'
import { randomHex } from '../../shared/crypto'
import { judgedNow, nowMs, type StoreClock } from './clock'
import { changed, type Db, first, lockAccount } from './connection'
import { BATCH_COLUMNS, num, toBatch, toItem, type Row } from '../shared/rows'
import { chargeCredit, deleteHold } from './credits'

/** Held while a batch with uploaded images checks the service-wide bound and inserts them ('altb' in ASCII). */
const PENDING_IMAGES_LOCK = 0x616c7462
/** Items per INSERT statement (5 parameters each, far below PostgreSQL's 65,535). */
const ITEMS_PER_INSERT = 500

const rows = async (s: SQL, text: string, values: unknown[] = []) => (await s.unsafe(text, values)) as Row[]

/** Recounts the batch and ends it (flagging its webhook) when no item is left to run; returns its id when this ended it. */
async function settle(tx: SQL, batchId: string, now: number): Promise<string | null> {
  // The lock first: the recount below then reads every item a finish before it recorded.
  if (!(await first(tx, 'SELECT id FROM batches WHERE id = $1 FOR NO KEY UPDATE', [batchId]))) return null
  const counted = await first(
    tx,
    `UPDATE batches SET
       succeeded = (SELECT count(*) FROM batch_items WHERE batch_id = $1 AND status = 'done'),
       failed = (SELECT count(*) FROM batch_items WHERE batch_id = $1 AND status = 'failed')
     WHERE id = $1
     RETURNING (SELECT count(*) FROM batch_items WHERE batch_id = $1 AND status IN ('pending', 'running')) AS left`,
    [batchId],
  )
  if (!counted || num(counted.left) > 0) return null
  const ended = await first(
    tx,
    `UPDATE batches SET completed_at = $1, status = CASE status WHEN 'cancelled' THEN 'cancelled' ELSE 'completed' END,
       webhook_state = CASE WHEN webhook_url IS NOT NULL THEN 'pending' ELSE webhook_state END
     WHERE id = $2 AND completed_at IS NULL RETURNING id`,
    [now, batchId],
  )
  return ended ? (ended.id as string) : null
}

export function createPostgresBatchStore({ transaction, run }: Db, clock: StoreClock): BatchStore {
  const getBatch = async (s: SQL, accountId: number, id: string) => {
    const row = await first(s, `SELECT ${BATCH_COLUMNS} FROM batches WHERE account_id = $1 AND id = $2`, [accountId, id])
    return row ? toBatch(row) : null
  }

  /** Why a fenced write changed no row: the item is there under another claim, or not there at all. */
  const fenced = async (s: SQL, text: string, values: unknown[]): Promise<ClaimWrite> => {
    // One statement: the write, and whether the item is there at all.
    const row = await first(
      s,
      `WITH written AS (${text} RETURNING id) SELECT EXISTS (SELECT 1 FROM written) AS written, EXISTS (${ITEM_EXISTS}) AS present`,
      values,
    )
    if (row!.written === true) return 'written'
    return row!.present === true ? 'lost' : 'gone'
  }

  return {
    create: (batch: NewBatch, limits: PendingImageLimits) =>
      transaction(async (tx): Promise<CreateOutcome> => {
        // One create of an account at a time: the idempotency key and the account's image bound are checked, then written.
        await lockAccount(tx, batch.accountId)
        const idem = batch.idempotency
        const earlier = idem
          ? await first(tx, `SELECT ${BATCH_COLUMNS}, request_hash FROM batches WHERE account_id = $1 AND idempotency_key = $2`, [batch.accountId, idem.key])
          : null
        if (idem && earlier && num(earlier.created_at) >= idem.since) {
          return { kind: earlier.request_hash === idem.requestHash ? 'replay' : 'conflict', batch: toBatch(earlier) }
        }
        const adding = batch.items.reduce((sum, item) => sum + (item.image?.byteLength ?? 0), 0)
        if (adding > 0) {
          // The service-wide bound counts every account's images: one such create at a time, in all.
          await tx.unsafe('SELECT pg_advisory_xact_lock($1)', [PENDING_IMAGES_LOCK])
          const mine = num((await first(tx, 'SELECT bytes FROM batch_image_bytes WHERE account_id = $1', [batch.accountId]))?.bytes ?? 0)
          if (mine + adding > limits.perAccountBytes) return { kind: 'images_full', scope: 'account', pending: mine, adding }
          const all = num((await first(tx, 'SELECT coalesce(sum(bytes), 0) AS bytes FROM batch_image_bytes'))!.bytes)
          if (all + adding > limits.totalBytes) return { kind: 'images_full', scope: 'service', pending: all, adding }
        }
        if (earlier) await tx.unsafe('UPDATE batches SET idempotency_key = NULL, request_hash = NULL WHERE id = $1', [earlier.id])
        const row = await first(
          tx,
          `INSERT INTO batches (id, account_id, status, total, created_at, webhook_url, idempotency_key, request_hash, review)
           VALUES ($1, $2, 'queued', $3, $4, $5, $6, $7, $8) RETURNING ${BATCH_COLUMNS}`,
          [
            batch.id,
            batch.accountId,
            batch.items.length,
            batch.createdAt,
            batch.webhookUrl,
            idem?.key ?? null,
            idem?.requestHash ?? null,
            batch.review === true,
          ],
        )
        for (let start = 0; start < batch.items.length; start += ITEMS_PER_INSERT) {
          const chunk = batch.items.slice(start, start + ITEMS_PER_INSERT)
          const values: unknown[] = []
          const tuples = chunk.map((item, n) => {
            values.push(batch.id, start + n, item.request, item.image, item.metadata)
            const p = n * 5
            return `($${p + 1}, $${p + 2}, 'pending', $${p + 3}, $${p + 4}::bytea, $${p + 5})`
          })
          await tx.unsafe(`INSERT INTO batch_items (batch_id, idx, status, request, image, metadata) VALUES ${tuples.join(', ')}`, values)
        }
        return { kind: 'created', batch: toBatch(row!) }
      }),

    get: (accountId, id) => run((s) => getBatch(s, accountId, id)),

    items: (batchId) =>
      run(async (s) =>
        (
          await rows(
            s,
            'SELECT idx, status, result, error_code, error_message, metadata, charged, suggestion_id FROM batch_items WHERE batch_id = $1 ORDER BY idx',
            [batchId],
          )
        ).map(toItem),
      ),

    list: (accountId, limit, cursor) =>
      run(async (s) =>
        (cursor
          ? await rows(
              s,
              `SELECT ${BATCH_COLUMNS} FROM batches WHERE account_id = $1 AND (created_at < $2 OR (created_at = $2 AND id < $3))
               ORDER BY created_at DESC, id DESC LIMIT $4`,
              [accountId, cursor.createdAt, cursor.id, limit],
            )
          : await rows(s, `SELECT ${BATCH_COLUMNS} FROM batches WHERE account_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`, [accountId, limit])
        ).map(toBatch),
      ),

    cancel: (accountId, id, now, code, message) =>
      transaction(async (tx) => {
        const batch = await getBatch(tx, accountId, id)
        if (!batch) return null
        if (batch.status === 'completed') return 'finished' as const
        if (batch.status !== 'cancelled') {
          // Items first, then the batch's row (see the top of this file).
          await tx.unsafe(
            `UPDATE batch_items SET status = 'failed', error_code = $1, error_message = $2, finished_at = $3, image = NULL
             WHERE batch_id = $4 AND status = 'pending'`,
            [code, message, now, id],
          )
          // The last item may have ended the batch meanwhile: a completed batch stays completed.
          const marked = await first(tx, `UPDATE batches SET status = 'cancelled' WHERE id = $1 AND status <> 'completed' RETURNING id`, [id])
          if (!marked) return 'finished' as const
          await settle(tx, id, now)
        }
        return getBatch(tx, accountId, id)
      }),

    openBatches: (now) =>
      run(async (s) =>
        (
          await rows(
            s,
            `SELECT b.id FROM batches b
             WHERE b.id IN (SELECT batch_id FROM batch_items WHERE status IN ('pending', 'running') AND (status = 'pending' OR lease_until <= ${nowMs('$1')}))
               AND b.completed_at IS NULL
             ORDER BY b.created_at, b.id`,
            [judgedNow(clock, now)],
          )
        ).map((r) => r.id as string),
      ),

    claim: (batchId, now, leaseMs) =>
      transaction(async (tx) => {
        const token = randomHex(16)
        // Locked items (another replica's claim under way) are skipped, not waited for: each claim takes a different one.
        // The lease is judged and drawn by the database's clock (clock.ts). The holds of the item's earlier
        // claims end with them: the new claim holds the item's credit itself.
        const row = await first(
          tx,
          `WITH t AS (SELECT ${nowMs('$2')} AS now), candidate AS (
             SELECT id, status FROM batch_items, t
             WHERE batch_id = $1 AND status IN ('pending', 'running') AND (status = 'pending' OR lease_until <= t.now)
             ORDER BY idx LIMIT 1 FOR UPDATE OF batch_items SKIP LOCKED
           ), claimed AS (
             UPDATE batch_items i SET status = 'running', claim_token = $3, lease_until = t.now + $4 FROM candidate c, t WHERE i.id = c.id
             RETURNING i.id, i.batch_id, i.idx, i.request, i.image, i.lease_until, c.status AS was
           ), started AS (
             UPDATE batches SET status = 'running' WHERE id = $1 AND status = 'queued' AND EXISTS (SELECT 1 FROM claimed)
           ), released AS (
             DELETE FROM credit_holds WHERE batch_item_id IN (SELECT id FROM claimed)
           )
           SELECT claimed.*, b.account_id, b.review FROM claimed JOIN batches b ON b.id = claimed.batch_id`,
          [batchId, judgedNow(clock, now), token, leaseMs],
        )
        if (!row) return null
        return {
          id: num(row.id),
          token,
          leaseUntil: num(row.lease_until),
          takenOver: row.was === 'running',
          batchId: row.batch_id as string,
          accountId: num(row.account_id),
          index: num(row.idx),
          request: row.request as string,
          image: (row.image as Uint8Array | null) ?? null,
          review: row.review === true,
        }
      }),

    renew: (itemId, token, now, leaseMs) =>
      run((s) =>
        fenced(s, `UPDATE batch_items SET lease_until = ${nowMs('$4')} + $3 WHERE id = $1 AND status = 'running' AND claim_token = $2`, [
          itemId,
          token,
          leaseMs,
          judgedNow(clock, now),
        ]),
      ),

    unclaim: (itemId, token) =>
      run((s) =>
        fenced(
          s,
          `UPDATE batch_items SET status = 'pending', claim_token = NULL, lease_until = NULL WHERE id = $1 AND status = 'running' AND claim_token = $2`,
          [itemId, token],
        ),
      ),

    // Several replicas share the database: a claim found at start may be a live replica's. Claims lapse.
    endOrphanedClaims: async () => 0,

    finish: (itemId, token, outcome: ItemOutcome, now) =>
      transaction(async (tx): Promise<FinishResult> => {
        // The hold ends here whatever happens: charged with the answer, or released with it.
        if (outcome.kind === 'done' && outcome.charge) for (const holdId of outcome.charge.holdIds) await deleteHold(tx, holdId)
        // The item's row is locked: a takeover waits until this is recorded, or this sees the new token.
        const item = await first(
          tx,
          `SELECT i.batch_id, b.account_id FROM batch_items i JOIN batches b ON b.id = i.batch_id
           WHERE i.id = $1 AND i.status = 'running' AND i.claim_token = $2 FOR UPDATE OF i`,
          [itemId, token],
        )
        if (!item) return { status: (await first(tx, ITEM_EXISTS, [itemId])) ? 'lost' : 'gone', used: null, ended: null }
        const batchId = item.batch_id as string
        let used: number | null = null
        if (outcome.kind === 'done') {
          if (outcome.charge) {
            for (const _ of outcome.charge.holdIds) used = await chargeCredit(tx, num(item.account_id), outcome.charge.period)
            // The account is gone (its batches go with it): nothing to charge or write.
            if (used === null) return { status: 'gone', used: null, ended: null }
          }
          await tx.unsafe(
            `UPDATE batch_items SET status = 'done', result = $1, charged = $2, finished_at = $3, suggestion_id = $5, image = NULL, claim_token = NULL,
               lease_until = NULL WHERE id = $4`,
            [outcome.result(used), outcome.charge !== null, now, itemId, outcome.suggestionId ?? null],
          )
        } else {
          await tx.unsafe(
            `UPDATE batch_items SET status = 'failed', error_code = $1, error_message = $2, finished_at = $3, image = NULL, claim_token = NULL,
               lease_until = NULL WHERE id = $4`,
            [outcome.code, outcome.message, now, itemId],
          )
        }
        return { status: 'written', used, ended: await settle(tx, batchId, now) }
      }),

    purgeEnded: (before) => run((s) => changed(s, 'DELETE FROM batches WHERE completed_at IS NOT NULL AND completed_at < $1', [before])),
  }
}

const ITEM_EXISTS = 'SELECT 1 FROM batch_items WHERE id = $1'
