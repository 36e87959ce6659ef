// Credit counts and holds on PostgreSQL (see CreditStore). Other replicas charge too: each charge notifies
// `charged` on the account-change channel, in its transaction, so every replica's ledger may keep counts in
// memory and forget them when one is heard (keepCounts). A hold locks the account's row before it counts, so two holds of one
// account, from any replicas, count one after the other: a "check then insert" as one statement
// over-granted under concurrency. Holds of a killed replica lapse at their expiry, judged by the database's
// clock (clock.ts); none is ended at start.
import type { SQL } from 'bun'
import type { CreditStore, HeldCredit, HoldResult } from '../contract'
import { judgedNow, nowMs, type StoreClock } from './clock'
import { changed, type Db, first, lockAccount } from './connection'
import { num, numOrNull } from '../shared/rows'
import { ACCOUNT_CHANGES_CHANNEL } from './migrations'

/**
 * Charges one credit of the account's period; no row for an account that is gone. The account's row is
 * share-locked first, so a deletion under way finishes before (no row) or waits until this commits.
 */
export async function chargeCredit(tx: SQL, accountId: number, period: string): Promise<number | null> {
  if (!(await first(tx, 'SELECT id FROM accounts WHERE id = $1 FOR KEY SHARE', [accountId]))) return null
  // The notification goes out when the charge commits, never when it rolls back: one statement, no trigger.
  const row = await first(
    tx,
    `WITH charged AS (
       INSERT INTO credit_usage (account_id, period, used) VALUES ($1, $2, 1)
       ON CONFLICT (account_id, period) DO UPDATE SET used = credit_usage.used + 1 RETURNING used
     )
     SELECT used, pg_notify($3, $1::text || ':charged') FROM charged`,
    [accountId, period, ACCOUNT_CHANGES_CHANNEL],
  )
  return num(row!.used)
}

/** A hold ends with the charge it held the credit for, in the same transaction. */
export const deleteHold = (tx: SQL, holdId: number) => tx.unsafe('DELETE FROM credit_holds WHERE id = $1', [holdId])

export function createPostgresCreditStore({ transaction, accountTransaction, run }: Db, clock: StoreClock): CreditStore {
  return {
    keepCounts: true,
    counts: (accountId, period) =>
      run(async (s) => {
        const row = await first(s, 'SELECT used, granted FROM credit_usage WHERE account_id = $1 AND period = $2', [accountId, period])
        return row ? { used: num(row.used), granted: num(row.granted) } : { used: 0, granted: 0 }
      }),
    hold: (accountId, period, total, now, expiresAt, batchItemId = null) =>
      accountTransaction(accountId, async (tx): Promise<HoldResult> => {
        if (!(await lockAccount(tx, accountId))) return null
        // Read after the lock: a hold that waited sees the one before it. Expiry is judged by the database's clock (clock.ts).
        const counted = (await first(
          tx,
          `WITH t AS (SELECT ${nowMs('$3')} AS now)
           SELECT coalesce((SELECT used FROM credit_usage WHERE account_id = $1 AND period = $2), 0) AS used,
             (SELECT count(*) FROM credit_holds WHERE account_id = $1 AND period = $2 AND expires_at > t.now) AS held,
             (SELECT min(expires_at) FROM credit_holds WHERE account_id = $1 AND period = $2 AND expires_at > t.now) - t.now AS next_lapse,
             t.now FROM t`,
          [accountId, period, judgedNow(clock, now)],
        ))!
        const used = num(counted.used)
        if (used + num(counted.held) >= total) return { kind: 'exhausted', used, nextLapseInMs: numOrNull(counted.next_lapse) }
        const dbNow = num(counted.now)
        const row = await first(
          tx,
          'INSERT INTO credit_holds (account_id, period, expires_at, created_at, batch_item_id) VALUES ($1, $2, $3, $4, $5) RETURNING id',
          [accountId, period, dbNow + (expiresAt - now), dbNow, batchItemId],
        )
        return num(row!.id)
      }),
    held: (accountId, period, now) =>
      run(async (s) =>
        num(
          (await first(s, `SELECT count(*) AS held FROM credit_holds WHERE account_id = $1 AND period = $2 AND expires_at > ${nowMs('$3')}`, [
            accountId,
            period,
            judgedNow(clock, now),
          ]))!.held,
        ),
      ),
    commitHold: (held: HeldCredit) =>
      transaction(async (tx) => {
        await deleteHold(tx, held.id)
        return chargeCredit(tx, held.accountId, held.period)
      }),
    releaseHold: (holdId) => run(async (s) => void (await deleteHold(s, holdId))),
    renewHolds: async (holdIds, now, expiresAt) => {
      if (holdIds.length === 0) return
      await run((s) =>
        changed(
          s,
          `UPDATE credit_holds SET expires_at = ${nowMs('$3')} + $1 WHERE expires_at < ${nowMs('$3')} + $1
           AND id IN (SELECT jsonb_array_elements_text($2::text::jsonb)::bigint)`,
          [expiresAt - now, JSON.stringify(holdIds), judgedNow(clock, now)],
        ),
      )
    },
    purgeExpiredHolds: (now) => run((s) => changed(s, `DELETE FROM credit_holds WHERE expires_at <= ${nowMs('$1')}`, [judgedNow(clock, now)])),
    // Several replicas share the database: no hold found at start is known to be orphaned. They lapse.
    endOrphanedHolds: async () => 0,
  }
}
