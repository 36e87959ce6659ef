// Counts of what the database holds, for /metrics: read at each scrape, so each is one indexed or small
// query (accounts and keys are counted whole; batch items only while open, through their partial index).
import type { Database } from 'bun:sqlite'

export type StoreCounts = {
  accounts: number
  /** Keys neither revoked nor expired at `now`. */
  activeKeys: number
  /** Batch items waiting for the runner, and claimed by it. */
  batchItems: { pending: number; running: number }
}

export interface CountsStore {
  counts(now: number): Promise<StoreCounts>
}

export function createCountsStore(db: Database): CountsStore {
  const q = {
    accounts: db.query<{ n: number }, []>('SELECT count(*) AS n FROM accounts'),
    activeKeys: db.query<{ n: number }, [number]>('SELECT count(*) AS n FROM api_keys WHERE revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)'),
    openItems: db.query<{ status: 'pending' | 'running'; n: number }, []>(
      `SELECT status, count(*) AS n FROM batch_items WHERE status IN ('pending', 'running') GROUP BY status`,
    ),
  }
  return {
    counts: async (now) => {
      const batchItems = { pending: 0, running: 0 }
      for (const row of q.openItems.all()) batchItems[row.status] = row.n
      return { accounts: q.accounts.get()?.n ?? 0, activeKeys: q.activeKeys.get(now)?.n ?? 0, batchItems }
    },
  }
}
