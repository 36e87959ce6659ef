// Per-account daily counts of alt-text outcomes and the account's latest generations, on PostgreSQL. No
// image bytes are ever stored. Records of one millisecond keep their order by `seq` (SQLite's rowid).
import type { DailyCounts, HistoryStore } from '../contract'
import { changed, type Db, first } from './connection'
import { num, toHistoryRecord, type Row } from '../shared/rows'

const NEWEST_FIRST = 'ORDER BY created_at DESC, seq DESC'

export function createPostgresHistoryStore({ transaction, run }: Db): HistoryStore {
  return {
    apply: (batch, keep, oldestDay) =>
      transaction(async (tx) => {
        // In id order, so replicas writing the same accounts take their locks in one order. The lock also
        // keeps "insert, then keep the newest" exact when two replicas write one account at once.
        for (const accountId of [...batch.keys()].toSorted((a, b) => a - b)) {
          const gathered = batch.get(accountId)!
          // An account deleted since the batch was gathered is skipped (ids are never reused, but a check of the time costs nothing).
          if (!(await first(tx, 'SELECT id FROM accounts WHERE id = $1 AND created_at <= $2 FOR NO KEY UPDATE', [accountId, gathered.since]))) continue
          for (const [day, c] of gathered.days)
            await tx.unsafe(
              `INSERT INTO usage_daily (account_id, day, generations, cached, failed) VALUES ($1, $2, $3, $4, $5)
               ON CONFLICT (account_id, day) DO UPDATE SET generations = usage_daily.generations + excluded.generations,
                 cached = usage_daily.cached + excluded.cached, failed = usage_daily.failed + excluded.failed`,
              [accountId, day, c.generations, c.cached, c.failed],
            )
          if (gathered.days.size > 0) await tx.unsafe('DELETE FROM usage_daily WHERE account_id = $1 AND day < $2', [accountId, oldestDay])
          for (const r of gathered.records)
            await tx.unsafe(
              `INSERT INTO generation_history (id, account_id, created_at, source, format, bytes, width, height, alt_text, decorative, language, style,
                 max_length, cached, character_count) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
              [
                r.id,
                accountId,
                r.createdAt,
                r.source,
                r.format,
                r.bytes,
                r.width,
                r.height,
                r.altText,
                r.decorative,
                r.language,
                r.style,
                r.maxLength,
                r.cached,
                r.characterCount,
              ],
            )
          if (gathered.records.length > 0)
            await tx.unsafe(
              `DELETE FROM generation_history WHERE account_id = $1 AND seq NOT IN
                 (SELECT seq FROM generation_history WHERE account_id = $1 ${NEWEST_FIRST} LIMIT $2)`,
              [accountId, keep],
            )
        }
      }),
    days: (accountId, from, to) =>
      run(async (s) =>
        (
          (await s.unsafe('SELECT day, generations, cached, failed FROM usage_daily WHERE account_id = $1 AND day >= $2 AND day <= $3 ORDER BY day', [
            accountId,
            from,
            to,
          ])) as Row[]
        ).map((r): DailyCounts => ({ day: r.day as string, generations: num(r.generations), cached: num(r.cached), failed: num(r.failed) })),
      ),
    list: (accountId, limit) =>
      run(async (s) =>
        ((await s.unsafe(`SELECT * FROM generation_history WHERE account_id = $1 ${NEWEST_FIRST} LIMIT $2`, [accountId, limit])) as Row[]).map(toHistoryRecord),
      ),
    remove: (accountId, id) => run(async (s) => (await changed(s, 'DELETE FROM generation_history WHERE account_id = $1 AND id = $2', [accountId, id])) > 0),
    clear: (accountId) => run((s) => changed(s, 'DELETE FROM generation_history WHERE account_id = $1', [accountId])),
  }
}
