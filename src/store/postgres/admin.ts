// What the operator's commands (alttext admin) change on PostgreSQL, and the counts /metrics reads. The
// account-change triggers of the schema tell every replica (feed.ts).
import type { AdminStore, CountsStore } from '../contract'
import { type Db, first } from './connection'
import { ACCOUNT_COLUMNS, num, type Row, toAccount, toOverview } from '../shared/rows'

const OVERVIEW = `
  SELECT a.*,
    (SELECT count(*) FROM api_keys k WHERE k.account_id = a.id AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > $1)) AS active_keys,
    GREATEST(coalesce((SELECT max(last_used_at) FROM api_keys WHERE account_id = a.id), 0),
             coalesce((SELECT max(last_seen_at) FROM sessions WHERE account_id = a.id), 0)) AS last_active
  FROM accounts a WHERE a.kind = 'person'`

export function createPostgresAdminStore({ transaction, run }: Db): AdminStore {
  return {
    overview: (now, accountId) =>
      run(async (s) =>
        (
          (accountId === undefined
            ? await s.unsafe(`${OVERVIEW} ORDER BY a.id`, [now])
            : await s.unsafe(`${OVERVIEW} AND a.id = $2`, [now, accountId])) as Row[]
        ).map(toOverview),
      ),
    setDisabled: (accountId, disabledAt) =>
      transaction(async (tx) => {
        if (disabledAt === null) {
          const row = await first(tx, `UPDATE accounts SET disabled_at = NULL WHERE id = $1 RETURNING ${ACCOUNT_COLUMNS}`, [accountId])
          return row ? toAccount(row) : null
        }
        const row = await first(tx, `UPDATE accounts SET disabled_at = coalesce(disabled_at, $1) WHERE id = $2 RETURNING ${ACCOUNT_COLUMNS}`, [
          disabledAt,
          accountId,
        ])
        if (!row) return null
        await tx.unsafe('DELETE FROM sessions WHERE account_id = $1', [accountId])
        await tx.unsafe('UPDATE reset_tokens SET used_at = $1 WHERE account_id = $2 AND used_at IS NULL', [disabledAt, accountId])
        return toAccount(row)
      }),
    setPlan: (accountId, plan, monthlyCredits) =>
      run(async (s) => {
        const row = await first(s, `UPDATE accounts SET plan = $1, monthly_credits = $2 WHERE id = $3 RETURNING ${ACCOUNT_COLUMNS}`, [
          plan,
          monthlyCredits,
          accountId,
        ])
        return row ? toAccount(row) : null
      }),
    grant: (accountId, period, credits) =>
      run(async (s) => {
        const row = await first(
          s,
          `INSERT INTO credit_usage (account_id, period, used, granted) SELECT $1, $2, 0, $3 WHERE EXISTS (SELECT 1 FROM accounts WHERE id = $1)
           ON CONFLICT (account_id, period) DO UPDATE SET granted = credit_usage.granted + excluded.granted RETURNING used, granted`,
          [accountId, period, credits],
        )
        return row ? { used: num(row.used), granted: num(row.granted) } : null
      }),
  }
}

export function createPostgresCountsStore({ run }: Db): CountsStore {
  return {
    counts: () =>
      run(async (s) => {
        const batchItems = { pending: 0, running: 0 }
        for (const row of (await s.unsafe(`SELECT status, count(*) AS n FROM batch_items WHERE status IN ('pending', 'running') GROUP BY status`)) as Row[])
          batchItems[row.status as 'pending' | 'running'] = num(row.n)
        const accounts = await first(s, "SELECT count(*) AS n FROM accounts WHERE kind = 'person'")
        return { accounts: num(accounts?.n ?? 0), batchItems }
      }),
  }
}
