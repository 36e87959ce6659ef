// The database checks of `alttext doctor` on a SQLite file (PostgreSQL: ../postgres.ts): the file opens
// (or may be created), it takes a write, its schema is this binary's, and it is not damaged. They share
// the one connection the first opens, and close it before they return.
import type { Database } from 'bun:sqlite'
import { accessSync, constants, existsSync, statfsSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import type { Config } from '../../../config'
import { newestRecord, openForInspection, quickCheck, servedNow, sqliteSchemaVersion, writeProbe } from '../../../store/sqlite/inspect'
import { latestSchemaVersion } from '../../../store/sqlite/migrations'
import { formatBytes } from '../../shared/format'
import { type CheckResult, errorText, result, schemaVersionCheck } from '../result'

/** A database write that waits longer than this for the lock fails the writable check. */
const WRITE_WAIT_MS = 3000
/** Less free space than this beside the database fails the writable check: SQLite needs room for its WAL. */
const MIN_FREE_BYTES = 100 * 1024 * 1024

type DatabaseState = { db: Database; file: string; version: number }

const OWNER_FIX = 'the user the service runs as must own the database file and its folder (e.g. chown -R alttext: /var/lib/alttext)'

/** The folder the service would create the file in: the nearest one of its parents that exists (the others it makes). */
function nearestFolder(file: string): string {
  let folder = dirname(file)
  while (!existsSync(folder) && dirname(folder) !== folder) folder = dirname(folder)
  return folder
}

/**
 * No file yet: before the first start that is as it should be, if the service may create it there. Nothing
 * is created here: the check looks at the folder only.
 */
function missingDatabase(file: string): CheckResult {
  const name = 'database'
  const folder = nearestFolder(file)
  const uid = process.getuid?.()
  const cannot = (why: string) =>
    result(
      'database',
      name,
      'fail',
      `there is no database at ${file}, and \`alttext serve\` could not create it: ${why}`,
      `${OWNER_FIX}, or point ALTTEXT_DB elsewhere`,
    )
  if (!statSync(folder).isDirectory()) return cannot(`${folder} is not a folder`)
  try {
    accessSync(folder, constants.W_OK | constants.X_OK)
  } catch (error) {
    return cannot(`${folder} is not writable by this user (uid ${uid}): ${errorText(error)}`)
  }
  return result(
    'database',
    name,
    'warn',
    `there is no database at ${file} yet: \`alttext serve\` will create it${folder === dirname(file) ? '' : ` (and its folder in ${folder})`}, at schema version ${latestSchemaVersion()}`,
    'nothing to do before the first start; if the service had data, point ALTTEXT_DB at its file or restore a backup (alttext restore FILE)',
  )
}

/** `named`: the file came from --db, to be checked as it is (a missing one is a wrong path, not a first start). */
function openDatabase(config: Config, named: boolean, cwd: string): { check: CheckResult; state: DatabaseState | null } {
  const file = resolve(cwd, config.dbPath)
  const name = 'database'
  const fail = (detail: string, fix: string) => ({ check: result('database', name, 'fail', detail, fix), state: null })
  if (!existsSync(file)) {
    if (named) return fail(`there is no database at ${file}`, 'check the path given to --db')
    return { check: missingDatabase(file), state: null }
  }
  try {
    accessSync(file, constants.R_OK)
  } catch (error) {
    return fail(`${file} is not readable by this user: ${errorText(error)}`, OWNER_FIX)
  }
  let db: Database
  try {
    db = openForInspection(file, WRITE_WAIT_MS)
  } catch (error) {
    return fail(`cannot open ${file}: ${errorText(error)}`, `${OWNER_FIX}; a damaged file: restore a backup (alttext restore FILE)`)
  }
  const version = sqliteSchemaVersion(db)
  if (version === null) {
    db.close()
    return fail(`${file} is not an alttext database (no schema_migrations table)`, 'point ALTTEXT_DB at the alttext database file')
  }
  const served = servedNow(file) ? 'an alttext process is serving it' : 'no alttext process is serving it now'
  return { check: result('database', name, 'pass', `${file} (${formatBytes(statSync(file).size)}); ${served}`), state: { db, file, version } }
}

function writableCheck({ db, file }: DatabaseState, clock: () => number): CheckResult {
  const name = 'database writable'
  const folder = dirname(file)
  const uid = process.getuid?.()
  for (const [path, what] of [
    [file, 'the database file'],
    [folder, 'its folder (SQLite creates the -wal and -shm files there)'],
  ] as const) {
    try {
      accessSync(path, constants.W_OK)
    } catch (error) {
      return result('database_writable', name, 'fail', `${what} ${path} is not writable by this user (uid ${uid}): ${errorText(error)}`, OWNER_FIX)
    }
  }
  try {
    writeProbe(db, clock())
  } catch (error) {
    const text = errorText(error)
    const fix = /locked|busy/i.test(text)
      ? `another process held the write lock for ${WRITE_WAIT_MS / 1000} s: end a long sqlite3 session or VACUUM`
      : /full/i.test(text)
        ? 'free disk space on its file system'
        : OWNER_FIX
    return result('database_writable', name, 'fail', `a write to ${file} failed: ${text}`, fix)
  }
  const { bavail, bsize } = statfsSync(folder)
  const free = bavail * bsize
  if (free < MIN_FREE_BYTES)
    return result('database_writable', name, 'fail', `only ${formatBytes(free)} free beside ${file}`, 'free disk space on its file system')
  return result('database_writable', name, 'pass', `a write committed; ${formatBytes(free)} free on its file system`)
}

function schemaCheck({ version }: DatabaseState): CheckResult {
  return schemaVersionCheck(version, latestSchemaVersion(), {
    newer: 'run the newer alttext that migrated it, or restore a backup taken before the upgrade',
    older: 'back up first (alttext backup FILE), then restart the service with this binary',
  })
}

function integrityCheck({ db }: DatabaseState): CheckResult {
  const name = 'database integrity'
  const fix = 'stop the service and restore the latest good backup (alttext restore FILE)'
  try {
    const rows = quickCheck(db)
    if (rows.length === 1 && rows[0] === 'ok') return result('database_integrity', name, 'pass', 'quick_check ok')
    return result('database_integrity', name, 'fail', `quick_check found damage: ${rows.join('; ')}`, fix)
  } catch (error) {
    return result('database_integrity', name, 'fail', `quick_check failed: ${errorText(error)}`, fix)
  }
}

/**
 * Runs the SQLite checks, handing each to `add`; returns the newest record's time for the clock check (null
 * when there is none or the file did not open). `named`: the file came from --db; `clock` dates the write probe.
 */
export function sqliteChecks(config: Config, named: boolean, cwd: string, clock: () => number, add: (check: CheckResult) => void): number | null {
  const { check, state } = openDatabase(config, named, cwd)
  add(check)
  if (!state) {
    const why = check.status === 'warn' ? 'there is no database yet' : 'the database could not be opened'
    for (const what of ['writable', 'schema', 'integrity']) add(result(`database_${what}`, `database ${what}`, 'skip', why))
    return null
  }
  try {
    const newest = newestRecord(state.db)
    add(writableCheck(state, clock))
    add(schemaCheck(state))
    add(integrityCheck(state))
    return newest
  } finally {
    state.db.close()
  }
}
