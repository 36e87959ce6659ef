// Helpers of the backup, restore and doctor tests: the commands as subprocesses, fresh folders, a
// database of the current schema made by the real store, and ways to damage one.
import { Database } from 'bun:sqlite'
import { afterAll } from 'bun:test'
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSqliteStore } from '../../src/store/sqlite'
import { runCommand } from '../support/process'

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

/** `alttext <command> ...args` from source, with only PATH, HOME and `env` in its environment. */
export const alttext = (args: string[], env: Record<string, string> = {}) => runCommand(args, env)

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
