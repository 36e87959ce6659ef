// Counts of what the database holds, for /metrics: read at each scrape, so each must stay cheap however
// large the installation grows. Accounts are counted whole (SQLite counts an index's entries without
// reading rows); batch items only while open, through their partial index. Active keys are not counted:
// with no index on revocation and expiry that is a scan of every key (milliseconds at 20 000 keys).
import type { Database } from 'bun:sqlite'
import type { CountsStore } from './types'

export function createCountsStore(db: Database): CountsStore {
  const q = {
    accounts: db.query<{ n: number }, []>('SELECT count(*) AS n FROM accounts'),
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
