// Helpers of the backup, restore and doctor tests: the commands run in-process (runCli), fresh folders, a
// database of the current schema made by the real store, and ways to damage one.
import { Database } from 'bun:sqlite'
import { afterAll } from 'bun:test'
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSqliteStore } from '../../src/store/sqlite/store'
import { runCli } from '../support/process'

/** A fresh temporary folder (the caller removes it). */
export const freshDir = (tag: string) => mkdtempSync(join(tmpdir(), `alttext-${tag}-`))

/** A fresh folder per call, all removed after the test file's last test. */
export function scratchDirs(): (tag: string) => string {
  const made: string[] = []
  afterAll(() => {
    for (const dir of made) rmSync(dir, { recursive: true, force: true })
  })
  return (tag) => {
    const dir = freshDir(tag)
    made.push(dir)
    return dir
  }
}

/** `alttext <command> ...args`, in this process, with only PATH, HOME and `env` in its environment. */
export const alttext = (args: string[], env: Record<string, string> = {}) => runCli(args, env)

/** A migrated database at `path` with `accounts` accounts (one key each), written by the real store and closed. */
export async function makeDatabase(path: string, accounts = 3): Promise<void> {
  const store = createSqliteStore(path)
  try {
    for (let i = 0; i < accounts; i++) {
      const created = await store.accounts.createWithKey(
        `made-${i}@example.com`,
        'not a real hash',
        'free',
        { prefix: `alt_made${String(i).padStart(4, '0')}`, keyHash: `hash-${i}`, label: null, expiresAt: null },
        Date.now(),
      )
      if (!created) throw new Error('account not created')
    }
  } finally {
    store.close()
  }
}

export function countRows(path: string, table: string): number {
  const db = new Database(path, { readonly: true })
  try {
    return db.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${table}`).get()!.n
  } finally {
    db.close()
  }
}

/**
 * Overwrites the body of an index's root page with garbage, past its page header: SQLite still opens the
 * file and reads its schema, but `PRAGMA integrity_check` finds the damage.
 */
export function damageIndex(path: string, index = 'sqlite_autoindex_accounts_1'): void {
  const db = new Database(path)
  const { rootpage } = db.query<{ rootpage: number }, [string]>('SELECT rootpage FROM sqlite_schema WHERE name = ?').get(index)!
  const pageSize = db.query<{ page_size: number }, []>('PRAGMA page_size').get()!.page_size
  db.exec('PRAGMA journal_mode = DELETE')
  db.close()
  const fd = openSync(path, 'r+')
  try {
    writeSync(fd, new Uint8Array(pageSize - 64).fill(0xa5), 0, pageSize - 64, (rootpage - 1) * pageSize + 32)
  } finally {
    closeSync(fd)
  }
}

/**
 * Rebuilds `table` from its CREATE TABLE statement as `edit` changes it, keeping its rows, indexes and
 * triggers (SQLite's twelve steps): how someone would change a column's type or kind outside alttext.
 */
export function rebuildTable(path: string, table: string, edit: (sql: string) => string): void {
  const db = new Database(path)
  try {
    db.exec('PRAGMA foreign_keys = OFF')
    // Triggers of other tables name this one: the rename must not check them while it is gone.
    db.exec('PRAGMA legacy_alter_table = ON')
    const { sql } = db.query<{ sql: string }, [string]>("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?").get(table)!
    const companions = db
      .query<{ sql: string }, [string]>("SELECT sql FROM sqlite_schema WHERE tbl_name = ? AND type IN ('index', 'trigger') AND sql IS NOT NULL")
      .all(table)
    const storedColumns = (name: string) =>
      db
        .query<{ name: string }, [string]>('SELECT name FROM pragma_table_xinfo(?) WHERE hidden = 0')
        .all(name)
        .map((column) => `"${column.name}"`)
    const before = storedColumns(table)
    db.transaction(() => {
      db.exec(edit(sql).replace(/^CREATE TABLE\s+("?)\w+\1/i, 'CREATE TABLE tampered'))
      const kept = storedColumns('tampered').filter((column) => before.includes(column))
      db.exec(`INSERT INTO tampered (${kept.join(', ')}) SELECT ${kept.join(', ')} FROM "${table}"`)
      db.exec(`DROP TABLE "${table}"`)
      db.exec(`ALTER TABLE tampered RENAME TO "${table}"`)
      for (const companion of companions) db.exec(companion.sql)
    })()
    db.exec('PRAGMA journal_mode = DELETE')
  } finally {
    db.close()
  }
}
