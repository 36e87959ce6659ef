// Opening a SQLite file, its one-process-per-file lock, and the bounded wait of a busy write.
//
// No busy timeout: on a synchronous driver SQLite's own wait would stop the event loop while another
// process (a backup, the sqlite3 shell) holds the write lock. A busy write is retried on timers instead,
// for at most `busyWaitMs`, then fails with StoreBusyError (503 database_busy to a client). Reads need no lock in WAL mode.
import { Database, SQLiteError } from 'bun:sqlite'
import { accessSync, constants, existsSync, mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { StoreBusyError } from '../contract'

/** How long a write waits for another process's lock by default before it gives up. */
export const DEFAULT_BUSY_WAIT_MS = 3000

/** A write that waits (bounded) while another process holds the database lock: busyRetry's result. */
export type Write = <T>(attempt: () => T) => Promise<T>

export const isBusy = (error: unknown) => error instanceof SQLiteError && (error.errno & 0xff) === 5 // SQLITE_BUSY and its extended codes

const reason = (error: unknown): string => {
  const code = (error as { code?: unknown }).code
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied'
  if (code === 'EROFS') return 'the file system is read-only'
  return error instanceof Error ? error.message : String(error)
}

/** Backoff between attempts of a busy write: short at first (most locks are brief), then at most 50 ms. */
const nextDelay = (delay: number) => Math.min(delay * 2, 50)

/** Runs a write at once; while it is busy, again on a timer, until `busyWaitMs` have passed. */
export function busyRetry(busyWaitMs: number, path: string) {
  const busy = () => new StoreBusyError(Math.max(1, Math.ceil(busyWaitMs / 1000)), `database ${path} stayed locked by another process for ${busyWaitMs} ms`)
  return async <T>(attempt: () => T): Promise<T> => {
    try {
      return attempt()
    } catch (error) {
      if (!isBusy(error)) throw error
    }
    const deadline = performance.now() + busyWaitMs
    for (let delay = 2; ; delay = nextDelay(delay)) {
      const left = deadline - performance.now()
      if (left <= 0) throw busy()
      await Bun.sleep(Math.min(delay, left))
      try {
        return attempt()
      } catch (error) {
        if (!isBusy(error)) throw error
      }
    }
  }
}

/**
 * The same bounded wait for start-up (migrations), which is synchronous: nothing is served yet, so
 * sleeping the thread between attempts holds up no request.
 */
export function busyRetrySync<T>(attempt: () => T, busyWaitMs: number, path: string): T {
  const deadline = performance.now() + busyWaitMs
  for (let delay = 2; ; delay = nextDelay(delay)) {
    try {
      return attempt()
    } catch (error) {
      if (!isBusy(error)) throw error
    }
    const left = deadline - performance.now()
    if (left <= 0)
      throw new Error(`the database ${path} stayed locked by another process for ${busyWaitMs} ms during start-up; end the other writer and start again`)
    Bun.sleepSync(Math.min(delay, left))
  }
}

/** SQLite says only "unable to open database file": name the path and why. WAL also creates <db>-wal and <db>-shm beside it. */
export function checkPath(path: string): void {
  const dir = dirname(path)
  try {
    mkdirSync(dir, { recursive: true })
  } catch (error) {
    throw new Error(`cannot create the directory ${dir} for the database file ${path}: ${reason(error)}`)
  }
  try {
    accessSync(dir, constants.W_OK)
  } catch (error) {
    throw new Error(`cannot create or open the database file ${path}: the directory ${dir} is not writable (${reason(error)})`)
  }
  if (existsSync(path)) {
    try {
      accessSync(path, constants.R_OK | constants.W_OK)
    } catch (error) {
      throw new Error(`cannot open the database file ${path}: it is not readable and writable by this user (${reason(error)})`)
    }
  }
}

export function openFile(path: string): Database {
  if (path !== ':memory:') checkPath(path)
  try {
    return new Database(path, { create: true, strict: true })
  } catch (error) {
    throw new Error(`cannot create or open the database file ${path}: ${reason(error)}`)
  }
}

/**
 * One process per database file: an exclusive transaction on the companion SQLite file `<db>.lock`,
 * held until close; the OS drops it when the process dies (even kill -9), and the main file stays open
 * to backups and admin commands. The lock file is never deleted: a new file would let two holders in.
 * Null when another process holds it.
 */
export function takeProcessLock(path: string): Database | null {
  const lockPath = `${path}.lock`
  let lock: Database
  try {
    lock = new Database(lockPath, { create: true })
  } catch (error) {
    throw new Error(`cannot create or open the lock file ${lockPath}: ${reason(error)}`)
  }
  try {
    lock.exec('PRAGMA busy_timeout = 0')
    lock.exec('BEGIN EXCLUSIVE')
    return lock
  } catch (error) {
    lock.close()
    if (isBusy(error)) return null
    throw new Error(`cannot take the lock ${lockPath}: ${reason(error)}`)
  }
}

export function acquireProcessLock(path: string): Database {
  const lock = takeProcessLock(path)
  if (lock === null) throw new Error(`another alttext process is serving ${path} (lock held on ${path}.lock); stop it first`)
  return lock
}

export function releaseLock(lock: Database | null): void {
  if (!lock) return
  lock.exec('ROLLBACK')
  lock.close()
}
