// Shared by the history tests: a history entry as the alt-text service would record it, and a look at the
// tables themselves (a second connection; the service's own stays open, WAL lets both read).
import { Database } from 'bun:sqlite'
import type { HistoryEntry } from '../../src/modules/history/service'

export function entry(overrides: Partial<HistoryEntry> = {}): HistoryEntry {
  return {
    source: 'url',
    format: 'jpeg',
    bytes: 48_213,
    width: 800,
    height: 600,
    altText: 'A red bicycle leaning against a brick wall',
    decorative: false,
    language: 'en',
    style: 'descriptive',
    maxLength: 125,
    characterCount: 42,
    ...overrides,
  }
}

/** Runs one read on the database file and closes the connection. */
export function readDb<T>(dbPath: string, read: (db: Database) => T): T {
  const db = new Database(dbPath, { readonly: true })
  try {
    return read(db)
  } finally {
    db.close()
  }
}

export const historyRows = (dbPath: string, accountId: number) =>
  readDb(dbPath, (db) => db.query<{ n: number }, [number]>('SELECT count(*) AS n FROM generation_history WHERE account_id = ?').get(accountId)!.n)

/** The account id behind an email (the API never shows it; the recorder is called with it). */
export const accountIdOf = (dbPath: string, email: string) =>
  readDb(dbPath, (db) => db.query<{ id: number }, [string]>('SELECT id FROM accounts WHERE email = ?').get(email)!.id)

export const DAY_MS = 86_400_000
