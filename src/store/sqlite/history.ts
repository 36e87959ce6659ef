// Per-account daily counts of alt-text outcomes and the account's latest generations, on bun:sqlite.
// Written in batches by the history recorder (modules/history/service.ts); both tables go with their
// account (ON DELETE CASCADE). No image bytes are ever stored: only what describes the image.
import type { Database } from 'bun:sqlite'
import { toHistoryRecord } from '../shared/rows'
import type { Write } from './connection'
import type { DailyCounts, HistoryBatch, HistoryStore, StoredImageFormat } from '../contract'

type HistoryRow = {
  id: string
  account_id: number
  created_at: number
  source: 'url' | 'upload'
  format: StoredImageFormat
  bytes: number
  width: number
  height: number
  alt_text: string
  decorative: number
  language: string
  style: string
  max_length: number
  cached: number
  character_count: number
}

// Newest first: by time, then by insertion (rowid) for records of the same millisecond.
const NEWEST_FIRST = 'ORDER BY created_at DESC, rowid DESC'

export function createHistoryStore(db: Database, write: Write): HistoryStore {
  const q = {
    // SQLite may give a deleted account's id to the next new account: that one was created later.
    owner: db.query<{ one: number }, [number, number]>('SELECT 1 AS one FROM accounts WHERE id = ? AND created_at <= ?'),
    addCounts: db.query<null, [number, string, number, number, number]>(
      `INSERT INTO usage_daily (account_id, day, generations, cached, failed) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT(account_id, day) DO UPDATE SET generations = generations + excluded.generations,
         cached = cached + excluded.cached, failed = failed + excluded.failed`,
    ),
    insert: db.query<null, [string, number, number, string, string, number, number, number, string, number, string, string, number, number, number]>(
      `INSERT INTO generation_history (id, account_id, created_at, source, format, bytes, width, height, alt_text, decorative, language, style,
         max_length, cached, character_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    prune: db.query<null, [number, number]>(
      `DELETE FROM generation_history WHERE account_id = ?1 AND rowid NOT IN
         (SELECT rowid FROM generation_history WHERE account_id = ?1 ${NEWEST_FIRST} LIMIT ?2)`,
    ),
    pruneDays: db.query<null, [number, string]>('DELETE FROM usage_daily WHERE account_id = ? AND day < ?'),
    days: db.query<DailyCounts, [number, string, string]>(
      'SELECT day, generations, cached, failed FROM usage_daily WHERE account_id = ? AND day >= ? AND day <= ? ORDER BY day',
    ),
    list: db.query<HistoryRow, [number, number]>(`SELECT * FROM generation_history WHERE account_id = ? ${NEWEST_FIRST} LIMIT ?`),
    remove: db.query<null, [number, string]>('DELETE FROM generation_history WHERE account_id = ? AND id = ?'),
    clear: db.query<null, [number]>('DELETE FROM generation_history WHERE account_id = ?'),
  }

  const apply = db.transaction((batch: HistoryBatch, keep: number, oldestDay: string) => {
    for (const [accountId, gathered] of batch) {
      if (q.owner.get(accountId, gathered.since) === null) continue
      for (const [day, c] of gathered.days) q.addCounts.run(accountId, day, c.generations, c.cached, c.failed)
      if (gathered.days.size > 0) q.pruneDays.run(accountId, oldestDay)
      for (const r of gathered.records) {
        q.insert.run(
          r.id,
          accountId,
          r.createdAt,
          r.source,
          r.format,
          r.bytes,
          r.width,
          r.height,
          r.altText,
          r.decorative ? 1 : 0,
          r.language,
          r.style,
          r.maxLength,
          r.cached ? 1 : 0,
          r.characterCount,
        )
      }
      if (gathered.records.length > 0) q.prune.run(accountId, keep)
    }
  })

  return {
    apply: (batch, keep, oldestDay) => write(() => apply.immediate(batch, keep, oldestDay)),
    days: async (accountId, from, to) => q.days.all(accountId, from, to),
    list: async (accountId, limit) => q.list.all(accountId, limit).map(toHistoryRecord),
    remove: (accountId, id) => write(() => q.remove.run(accountId, id).changes > 0),
    clear: (accountId) => write(() => q.clear.run(accountId).changes),
  }
}
