// The feed of account changes by which the serving process learns of writes made by another process
// (alttext admin): migration 11's triggers write a row of account_changes in the transaction of the change,
// whoever the writer is, and the feed reads the rows after the last it saw.
import type { Database } from 'bun:sqlite'
import type { AccountChangeFeed, AccountChangeKind } from '../contract'

export function createChangeFeed(db: Database): AccountChangeFeed {
  const q = {
    dataVersion: db.query<{ data_version: number }, []>('PRAGMA data_version'),
    latest: db.query<{ seq: number | null }, []>('SELECT max(seq) AS seq FROM account_changes'),
    since: db.query<{ seq: number; account_id: number; change: AccountChangeKind }, [number]>(
      'SELECT seq, account_id, change FROM account_changes WHERE seq > ? ORDER BY seq',
    ),
  }
  let version = q.dataVersion.get()!.data_version
  return {
    latest: async () => q.latest.get()?.seq ?? 0,
    changedElsewhere: async () => {
      const now = q.dataVersion.get()!.data_version
      if (now === version) return false
      version = now
      return true
    },
    since: async (seq) => q.since.all(seq).map((r) => ({ seq: r.seq, accountId: r.account_id, change: r.change })),
  }
}
