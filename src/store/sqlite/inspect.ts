// What the operator's commands (doctor) ask of a SQLite file before they trust it: whether it opens,
// whether it is an alttext database and at which schema version, whether a process serves it now, whether
// a write commits, whether its pages are sound, and the newest time it records. Nothing is migrated or
// created here: the file is looked at as it is.
import { Database } from 'bun:sqlite'
import { existsSync } from 'node:fs'
import { RECORD_TIMES } from '../shared/inspect'

/**
 * Opens an existing file for reading and one small write; a write waits at most `writeWaitMs` for the
 * lock (the doctor is not serving: blocking is fine). Throws when the file cannot be opened or read.
 */
export function openForInspection(file: string, writeWaitMs: number): Database {
  const db = new Database(file, { readwrite: true, create: false, strict: true })
  try {
    db.exec(`PRAGMA busy_timeout = ${writeWaitMs}`)
    db.query('SELECT count(*) FROM sqlite_schema').get()
  } catch (error) {
    db.close()
    throw error
  }
  return db
}

function tableExists(db: Database, name: string): boolean {
  return db.query<{ one: number }, [string]>("SELECT 1 AS one FROM sqlite_schema WHERE type = 'table' AND name = ?").get(name) !== null
}

/** The newest alttext migration applied, or null when the file has no alttext schema (no schema_migrations). */
export function sqliteSchemaVersion(db: Database): number | null {
  if (!tableExists(db, 'schema_migrations')) return null
  return db.query<{ v: number | null }, []>('SELECT max(version) AS v FROM schema_migrations').get()?.v ?? 0
}

/** Is an alttext process serving the file? Its lock file is exclusively locked then: even a read is refused at once. */
export function servedNow(file: string): boolean {
  if (!existsSync(`${file}.lock`)) return false
  let lock: Database | undefined
  try {
    lock = new Database(`${file}.lock`, { readonly: true })
    lock.exec('PRAGMA busy_timeout = 0')
    lock.query('SELECT count(*) FROM sqlite_schema').get()
    return false
  } catch {
    return true
  } finally {
    lock?.close()
  }
}

/** The write /ready makes: one row, committed. Without that table (an old schema), a write lock taken and let go. Throws when it fails. */
export function writeProbe(db: Database, now: number): void {
  if (tableExists(db, 'health_probe')) db.query('UPDATE health_probe SET checked_at = ? WHERE id = 1').run(now)
  else db.transaction(() => {}).immediate()
}

/** quick_check's findings, one line each: ['ok'] for a sound file. */
export function quickCheck(db: Database): string[] {
  return (
    db
      .query<{ quick_check: string }, []>('PRAGMA quick_check(5)')
      .all()
      // A report can span lines ("*** in database main ***\nTree 15 page 15: ..."): one line here.
      .map((r) => r.quick_check.replace(/\s+/g, ' ').trim())
  )
}

/** The newest time the service wrote (RECORD_TIMES); null when there is none. */
export function newestRecord(db: Database): number | null {
  const newest = RECORD_TIMES.filter(([table]) => tableExists(db, table))
    .map(([table, column]) => db.query<{ t: number | null }, []>(`SELECT max(${column}) AS t FROM ${table}`).get()?.t ?? null)
    .filter((t): t is number => t !== null)
  return newest.length > 0 ? Math.max(...newest) : null
}
