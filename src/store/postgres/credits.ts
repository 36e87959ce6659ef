// Credit counts and holds on PostgreSQL (see CreditStore). Other replicas charge too: each charge notifies
// `charged` on the account-change channel, in its transaction, so every replica's ledger may keep counts in
// memory and forget them when one is heard (keepCounts). A hold locks the account's row before it counts, so two holds of one
// account, from any replicas, count one after the other: a "check then insert" as one statement
// over-granted under concurrency. Holds of a killed replica lapse at their expiry; none is ended at start.
import type { SQL } from 'bun'
import type { CreditStore, HeldCredit } from '../types'
import { changed, type Db, first, lockAccount, num } from './connection'
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

export function createPostgresCreditStore({ transaction, run }: Db): CreditStore {
  return {
    keepCounts: true,
    counts: (accountId, period) =>
      run(async (s) => {
        const row = await first(s, 'SELECT used, granted FROM credit_usage WHERE account_id = $1 AND period = $2', [accountId, period])
        return row ? { used: num(row.used), granted: num(row.granted) } : { used: 0, granted: 0 }
      }),
    hold: (accountId, period, total, now, expiresAt) =>
      transaction(async (tx) => {
        if (!(await lockAccount(tx, accountId))) return null
        // Read after the lock: a hold that waited sees the one before it.
        const taken = num(
          (await first(
            tx,
            `SELECT coalesce((SELECT used FROM credit_usage WHERE account_id = $1 AND period = $2), 0)
               + (SELECT count(*) FROM credit_holds WHERE account_id = $1 AND period = $2 AND expires_at > $3) AS taken`,
            [accountId, period, now],
          ))!.taken,
        )
        if (taken >= total) return 'exhausted' as const
        const row = await first(tx, 'INSERT INTO credit_holds (account_id, period, expires_at, created_at) VALUES ($1, $2, $3, $4) RETURNING id', [
          accountId,
          period,
          expiresAt,
          now,
        ])
        return num(row!.id)
      }),
    commitHold: (held: HeldCredit) =>
      transaction(async (tx) => {
        await deleteHold(tx, held.id)
        return chargeCredit(tx, held.accountId, held.period)
      }),
    releaseHold: (holdId) => run(async (s) => void (await deleteHold(s, holdId))),
    renewHolds: async (holdIds, expiresAt) => {
      if (holdIds.length === 0) return
      await run((s) =>
        changed(s, 'UPDATE credit_holds SET expires_at = $1 WHERE expires_at < $1 AND id IN (SELECT jsonb_array_elements_text($2::text::jsonb)::bigint)', [
          expiresAt,
          JSON.stringify(holdIds),
        ]),
      )
    },
    purgeExpiredHolds: (now) => run((s) => changed(s, 'DELETE FROM credit_holds WHERE expires_at <= $1', [now])),
    // Several replicas share the database: no hold found at start is known to be orphaned. They lapse.
    endOrphanedHolds: async () => 0,
  }
}
