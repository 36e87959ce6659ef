// Per-account daily counts of alt-text outcomes and the account's latest generations. No image bytes.
import type { StoredImageFormat } from './cache'

/** One generation as kept in the history. `createdAt` is Unix ms. */
export type HistoryRecord = {
  /** Opaque, random: says nothing about how many generations the service has made. */
  id: string
  accountId: number
  createdAt: number
  source: 'url' | 'upload'
  format: StoredImageFormat
  /** Size of the image file as received. */
  bytes: number
  width: number
  height: number
  altText: string
  decorative: boolean
  language: string
  style: string
  maxLength: number
  cached: boolean
  characterCount: number
}

/** Outcome counts of one account on one UTC day (`YYYY-MM-DD`). */
export type DailyCounts = { day: string; generations: number; cached: number; failed: number }

/** What one account gathered since the last write. */
export type AccountBatch = {
  /** The earliest time of anything in it: an account created after that is not the one it belongs to. */
  since: number
  /** day → counts to add */
  days: Map<string, Omit<DailyCounts, 'day'>>
  /** New history records, oldest first. */
  records: HistoryRecord[]
}

/** account id → what it gathered */
export type HistoryBatch = Map<number, AccountBatch>

export interface HistoryStore {
  /**
   * In one transaction: adds the counts, inserts the records, keeps only the newest `keep` records of
   * every account in the batch and drops its daily rows before `oldestDay`. An account deleted since
   * the batch was gathered is skipped, also when a new account has been given its id since.
   */
  apply(batch: HistoryBatch, keep: number, oldestDay: string): Promise<void>
  /** The account's stored daily rows from `from` to `to` (both included, `YYYY-MM-DD`); days without a row are absent. */
  days(accountId: number, from: string, to: string): Promise<DailyCounts[]>
  /** The account's records, newest first, at most `limit`. */
  list(accountId: number, limit: number): Promise<HistoryRecord[]>
  /** Deletes one record of the account; false when it has none with that id. */
  remove(accountId: number, id: string): Promise<boolean>
  /** Deletes every record of the account (the daily counts stay); returns how many. */
  clear(accountId: number): Promise<number>
}
