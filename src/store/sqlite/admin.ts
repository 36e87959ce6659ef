// What the operator's commands (alttext admin) change besides what the service itself does: an account's
// plan, one-off credits, its disabled state; and the counts of what the database holds, for /metrics.
import type { Database } from 'bun:sqlite'
import type { Write } from './connection'
import { type Row, toAccount, toOverview } from '../shared/rows'
import type { AdminStore, CountsStore, PeriodCredits } from '../contract'

const OVERVIEW = `
  SELECT a.*,
    (SELECT count(*) FROM api_keys k WHERE k.account_id = a.id AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > ?1)) AS active_keys,
    max(coalesce((SELECT max(last_used_at) FROM api_keys WHERE account_id = a.id), 0),
        coalesce((SELECT max(last_seen_at) FROM sessions WHERE account_id = a.id), 0)) AS last_active
  FROM accounts a WHERE a.kind = 'person'`

export function createAdminStore(db: Database, write: Write): AdminStore {
  const q = {
    all: db.query<Row, [number]>(`${OVERVIEW} ORDER BY a.id`),
    one: db.query<Row, [number, number]>(`${OVERVIEW} AND a.id = ?2`),
    disable: db.query<Row, [number, number]>('UPDATE accounts SET disabled_at = coalesce(disabled_at, ?) WHERE id = ? RETURNING *'),
    enable: db.query<Row, [number]>('UPDATE accounts SET disabled_at = NULL WHERE id = ? RETURNING *'),
    endSessions: db.query<null, [number]>('DELETE FROM sessions WHERE account_id = ?'),
    invalidateTokens: db.query<null, [number, number]>('UPDATE reset_tokens SET used_at = ? WHERE account_id = ? AND used_at IS NULL'),
    setPlan: db.query<Row, [string, number | null, number]>('UPDATE accounts SET plan = ?, monthly_credits = ? WHERE id = ? RETURNING *'),
    grant: db.query<PeriodCredits, [number, string, number]>(
      `INSERT INTO credit_usage (account_id, period, used, granted) SELECT ?1, ?2, 0, ?3 WHERE EXISTS (SELECT 1 FROM accounts WHERE id = ?1)
       ON CONFLICT(account_id, period) DO UPDATE SET granted = granted + excluded.granted RETURNING used, granted`,
    ),
  }

  const setDisabled = db.transaction((accountId: number, disabledAt: number | null) => {
    if (disabledAt === null) return q.enable.get(accountId)
    const row = q.disable.get(disabledAt, accountId)
    if (row) {
      q.endSessions.run(accountId)
      q.invalidateTokens.run(disabledAt, accountId)
    }
    return row
  })

  return {
    overview: async (now, accountId) => (accountId === undefined ? q.all.all(now) : q.one.all(now, accountId)).map(toOverview),
    setDisabled: (accountId, disabledAt) =>
      write(() => {
        const row = setDisabled.immediate(accountId, disabledAt)
        return row ? toAccount(row) : null
      }),
    setPlan: (accountId, plan, monthlyCredits) =>
      write(() => {
        const row = q.setPlan.get(plan, monthlyCredits, accountId)
        return row ? toAccount(row) : null
      }),
    grant: (accountId, period, credits) => write(() => q.grant.get(accountId, period, credits)),
  }
}

// Counts of what the database holds, for /metrics: read at each scrape, so each must stay cheap however
// large the installation grows. Accounts are counted whole (SQLite counts an index's entries without
// reading rows); batch items only while open, through their partial index. Active keys are not counted:
// with no index on revocation and expiry that is a scan of every key (milliseconds at 20 000 keys).
export function createCountsStore(db: Database): CountsStore {
  const q = {
    accounts: db.query<{ n: number }, []>("SELECT count(*) AS n FROM accounts WHERE kind = 'person'"),
    openItems: db.query<{ status: 'pending' | 'running'; n: number }, []>(
      `SELECT status, count(*) AS n FROM batch_items WHERE status IN ('pending', 'running') GROUP BY status`,
    ),
  }
  return {
    counts: async () => {
      const batchItems = { pending: 0, running: 0 }
      for (const row of q.openItems.all()) batchItems[row.status] = row.n
      return { accounts: q.accounts.get()?.n ?? 0, batchItems }
    },
  }
}
