// Credit counts and holds on bun:sqlite (see CreditStore). SQLite admits one writer at a time, so a
// hold's count and insert in one IMMEDIATE transaction are exact however many requests race. Holds,
// their renewals and releases skip the fsync (synchronous=NORMAL): a hold lost to a power cut belonged
// to a request that the cut ended too. A charge is always a FULL commit, which makes them durable with it.
import type { Database } from 'bun:sqlite'
import type { Write } from './connection'
import type { CreditStore, HeldCredit, HoldResult } from '../contract'

// The statements that charge a credit and end its hold, shared by the credit store and the batch store
// (which charges in the same transaction that records a batch item's answer). No row comes back for an
// account deleted while its request ran: nothing to charge, no foreign-key failure.
export const CHARGE_CREDIT_SQL =
  'INSERT INTO credit_usage (account_id, period, used) SELECT ?1, ?2, 1 WHERE EXISTS (SELECT 1 FROM accounts WHERE id = ?1) ON CONFLICT(account_id, period) DO UPDATE SET used = used + 1 RETURNING used'
/** A hold ends with the charge it held the credit for, in the same transaction. */
export const DELETE_HOLD_SQL = 'DELETE FROM credit_holds WHERE id = ?'

/** `serving`: this store belongs to the process that holds the file's lock (see endOrphanedHolds). */
export function createCreditStore(db: Database, write: Write, serving: boolean): CreditStore {
  const q = {
    counts: db.query<{ used: number; granted: number }, [number, string]>('SELECT used, granted FROM credit_usage WHERE account_id = ? AND period = ?'),
    taken: db.query<{ present: number; used: number; held: number; next_lapse: number | null }, [number, string, number]>(
      `SELECT EXISTS (SELECT 1 FROM accounts WHERE id = ?1) AS present,
         coalesce((SELECT used FROM credit_usage WHERE account_id = ?1 AND period = ?2), 0) AS used,
         (SELECT count(*) FROM credit_holds WHERE account_id = ?1 AND period = ?2 AND expires_at > ?3) AS held,
         (SELECT min(expires_at) FROM credit_holds WHERE account_id = ?1 AND period = ?2 AND expires_at > ?3) AS next_lapse`,
    ),
    held: db.query<{ held: number }, [number, string, number]>(
      'SELECT count(*) AS held FROM credit_holds WHERE account_id = ? AND period = ? AND expires_at > ?',
    ),
    insertHold: db.query<{ id: number }, [number, string, number, number, number | null]>(
      'INSERT INTO credit_holds (account_id, period, expires_at, created_at, batch_item_id) VALUES (?, ?, ?, ?, ?) RETURNING id',
    ),
    charge: db.query<{ used: number }, [number, string]>(CHARGE_CREDIT_SQL),
    deleteHold: db.query<null, [number]>(DELETE_HOLD_SQL),
    renew: db.query<null, [number, string]>('UPDATE credit_holds SET expires_at = ?1 WHERE expires_at < ?1 AND id IN (SELECT value FROM json_each(?2))'),
    purge: db.query<null, [number]>('DELETE FROM credit_holds WHERE expires_at <= ?'),
    purgeAll: db.query<null, []>('DELETE FROM credit_holds'),
    syncNormal: db.query<null, []>('PRAGMA synchronous = NORMAL'),
    syncFull: db.query<null, []>('PRAGMA synchronous = FULL'),
  }

  /** Runs a write that need not survive a power cut without the fsync (see the top of this file). */
  const lightly = <T>(work: () => T): T => {
    q.syncNormal.run()
    try {
      return work()
    } finally {
      q.syncFull.run()
    }
  }

  const hold = db.transaction((accountId: number, period: string, total: number, now: number, expiresAt: number, batchItemId: number | null): HoldResult => {
    const { present, used, held, next_lapse } = q.taken.get(accountId, period, now)!
    if (present === 0) return null
    if (used + held >= total) return { kind: 'exhausted', used, nextLapseInMs: next_lapse === null ? null : next_lapse - now }
    return q.insertHold.get(accountId, period, expiresAt, now, batchItemId)!.id
  })

  const commit = db.transaction((held: HeldCredit): number | null => {
    q.deleteHold.run(held.id)
    return q.charge.get(held.accountId, held.period)?.used ?? null
  })

  return {
    keepCounts: true,
    counts: async (accountId, period) => q.counts.get(accountId, period) ?? { used: 0, granted: 0 },
    hold: (accountId, period, total, now, expiresAt, batchItemId = null) =>
      write(() => lightly(() => hold.immediate(accountId, period, total, now, expiresAt, batchItemId))),
    held: async (accountId, period, now) => q.held.get(accountId, period, now)!.held,
    commitHold: (held) => write(() => commit.immediate(held)),
    releaseHold: (holdId) => write(() => lightly(() => void q.deleteHold.run(holdId))),
    renewHolds: async (holdIds, _now, expiresAt) => {
      if (holdIds.length > 0) await write(() => lightly(() => void q.renew.run(expiresAt, JSON.stringify(holdIds))))
    },
    purgeExpiredHolds: (now) => write(() => lightly(() => q.purge.run(now).changes)),
    endOrphanedHolds: async () => (serving ? write(() => lightly(() => q.purgeAll.run().changes)) : 0),
  }
}
