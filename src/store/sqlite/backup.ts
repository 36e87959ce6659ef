// Online backups of the database and their restore.
//
// A backup is `VACUUM INTO` on a read-only connection: one read transaction, which in WAL mode blocks no
// writer, so the serving process keeps committing (to its WAL; the checkpoint waits for the copy to end).
// The copy is a consistent snapshot in one compact file. SQLite does not fsync a VACUUM INTO target, so the
// copy is written under a temporary name, synced, checked, and only then renamed to its name: a backup file
// is never half written. While it is written, another thread flushes it to disk over and over (see
// FLUSHER): the service's commits wait for their fsync, and must not wait behind a gigabyte of copy.
//
// A restore holds the serving lock (`<db>.lock`) throughout, so no server can start on the file meanwhile;
// it checks a copy of the backup before anything is moved, keeps the old database (with its -wal and -shm)
// beside it, and renames the checked copy into place. Run as root, it gives the restored file (and a lock
// file it created) the owner of the database it replaces, else of its folder: the service's user.
import { Database } from 'bun:sqlite'
import { chmodSync, chownSync, closeSync, constants, copyFileSync, existsSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { errorText } from '../../shared/wording'
import { acquireProcessLock, releaseLock } from './connection'
import { latestSchemaVersion, migrate } from './migrations'

/** A backup or restore refused or failed; the message says why and what to do. */
export class BackupError extends Error {}

export type TableRows = { name: string; rows: number }

export type DatabaseSummary = {
  /** Absolute path of the file described. */
  path: string
  bytes: number
  /** The highest migration applied to it. */
  schemaVersion: number
  /** Every table but SQLite's own, by name, with its row count. */
  tables: TableRows[]
}

export type BackupResult = { source: string; backup: DatabaseSummary; copyMs: number; verifyMs: number }

export type RestoreResult = {
  database: string
  restored: DatabaseSummary
  /** Where the database that was replaced now lies (its -wal and -shm beside it), or null when there was none. */
  previous: string | null
  /** This binary's schema version: a lower restored version is migrated at the next start. */
  latestSchemaVersion: number
}

/** How long the backup's read transaction waits for a lock: only a checkpoint or WAL recovery holds one, briefly. */
const READ_BUSY_TIMEOUT_MS = 10_000

/** The companions SQLite keeps beside a database file in WAL mode. */
const COMPANIONS = ['-wal', '-shm'] as const

function syncPath(path: string): void {
  const fd = openSync(path, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/** Both paths name the same file (also through a link or another spelling). */
function sameFile(a: string, b: string): boolean {
  if (a === b) return true
  if (!existsSync(a) || !existsSync(b)) return false
  const [x, y] = [statSync(a), statSync(b)]
  return x.dev === y.dev && x.ino === y.ino
}

/** A file of the live database: itself, its WAL and shared memory, its lock. */
function isDatabaseFile(database: string, path: string): boolean {
  return [database, ...COMPANIONS.map((suffix) => database + suffix), `${database}.lock`].some((file) => sameFile(file, path))
}

function tableRows(db: Database): TableRows[] {
  return db
    .query<{ name: string }, []>("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name")
    .all()
    .map(({ name }) => ({ name, rows: db.query<{ n: number }, []>(`SELECT count(*) AS n FROM "${name.replaceAll('"', '""')}"`).get()!.n }))
}

/** The schema version of an alttext database; a BackupError for any other SQLite file. */
function schemaVersion(db: Database, what: string): number {
  const known = db.query<{ one: number }, []>("SELECT 1 AS one FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'").get()
  if (!known) throw new BackupError(`${what} is not an alttext database (it has no schema_migrations table)`)
  return db.query<{ v: number | null }, []>('SELECT max(version) AS v FROM schema_migrations').get()?.v ?? 0
}

type SchemaObject = { type: string; name: string; tbl_name: string; sql: string | null }

/** Tables, indexes, triggers and views, SQLite's own (sqlite_sequence, sqlite_stat1, autoindexes) left out. */
const schemaObjects = (db: Database): SchemaObject[] =>
  db.query<SchemaObject, []>("SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'").all()

type Column = { name: string; type: string; notnull: number; dflt_value: string | null; pk: number; hidden: number }

/** A table's columns in order, hidden and generated ones too (`hidden`: 2 a VIRTUAL, 3 a STORED generated column). */
const columnsOf = (db: Database, table: string): Column[] =>
  db.query<Column, [string]>('SELECT name, type, "notnull", dflt_value, pk, hidden FROM pragma_table_xinfo(?) ORDER BY cid').all(table)

const KINDS: Record<number, string> = { 0: 'a plain column', 1: 'a hidden column', 2: 'a generated column (VIRTUAL)', 3: 'a generated column (STORED)' }

/** How each column of the table differs from the schema's: missing, extra, of another type, nullability, default, key or kind. */
function columnDifferences(found: Column[], expected: Column[]): string[] {
  const differences: string[] = []
  const byName = (columns: Column[]) => new Map(columns.map((column) => [column.name.toLowerCase(), column]))
  const [have, want] = [byName(found), byName(expected)]
  const missing = expected.filter((column) => !have.has(column.name.toLowerCase())).map((column) => column.name)
  const extra = found.filter((column) => !want.has(column.name.toLowerCase())).map((column) => column.name)
  if (missing.length > 0) differences.push(`no column ${missing.join(', ')} (the schema has ${missing.length === 1 ? 'it' : 'them'})`)
  if (extra.length > 0) differences.push(`columns the schema does not have (${extra.join(', ')})`)
  for (const column of found) {
    const schema = want.get(column.name.toLowerCase())
    if (!schema) continue
    const name = `column ${column.name}`
    if (column.hidden !== schema.hidden) differences.push(`${name} is ${KINDS[column.hidden] ?? 'of another kind'}, the schema's is ${KINDS[schema.hidden]}`)
    if (column.type.toUpperCase() !== schema.type.toUpperCase())
      differences.push(`${name} has the type ${column.type || 'none'}, the schema's ${schema.type || 'none'}`)
    if (column.notnull !== schema.notnull)
      differences.push(`${name} ${column.notnull ? 'is NOT NULL' : 'may be NULL'}, the schema's ${schema.notnull ? 'is NOT NULL' : 'may be NULL'}`)
    if ((column.dflt_value ?? null) !== (schema.dflt_value ?? null))
      differences.push(`${name} defaults to ${column.dflt_value ?? 'nothing'}, the schema's to ${schema.dflt_value ?? 'nothing'}`)
    if (column.pk !== schema.pk) differences.push(`${name} ${column.pk ? 'is' : 'is not'} in the primary key, the schema's ${schema.pk ? 'is' : 'is not'}`)
  }
  if (differences.length === 0 && found.map((column) => column.name.toLowerCase()).join() !== expected.map((column) => column.name.toLowerCase()).join())
    differences.push('its columns in another order')
  return differences
}

/** How WITHOUT ROWID, STRICT and the foreign keys (what pragma_table_xinfo does not show) differ from the schema's. */
function traitDifferences(db: Database, reference: Database, table: string): string[] {
  const traits = (of: Database) => {
    const shape = of.query<{ wr: number; strict: number }, [string]>("SELECT wr, strict FROM pragma_table_list WHERE schema = 'main' AND name = ?").get(table)
    const keys = of
      .query<Record<string, string | null>, [string]>('SELECT "table", "from", "to", on_update, on_delete FROM pragma_foreign_key_list(?)')
      .all(table)
      .map((key) => `${key.from} REFERENCES ${key.table}(${key.to ?? ''}) ON UPDATE ${key.on_update} ON DELETE ${key.on_delete}`)
      .sort()
    return { wr: Boolean(shape?.wr), strict: Boolean(shape?.strict), keys: keys.join(', ') || 'none' }
  }
  const [found, schema] = [traits(db), traits(reference)]
  const is = (yes: boolean) => (yes ? 'is' : 'is not')
  const differences: string[] = []
  if (found.wr !== schema.wr) differences.push(`it ${is(found.wr)} WITHOUT ROWID, the schema's ${is(schema.wr)}`)
  if (found.strict !== schema.strict) differences.push(`it ${is(found.strict)} STRICT, the schema's ${is(schema.strict)}`)
  if (found.keys !== schema.keys) differences.push(`its foreign keys are ${found.keys}, the schema's ${schema.keys}`)
  return differences
}

/** Where a quoted SQL token that starts at `start` ends (past its closing quote; a doubled quote is one character). */
function quoteEnd(text: string, start: number, quote: string): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] !== quote) continue
    if (text[i + 1] === quote) i++
    else return i + 1
  }
  return text.length
}

/**
 * SQL as SQLite reads it, for comparing: without comments, identifiers unquoted, lower case but for
 * string literals, one space between words and none beside punctuation.
 */
function normalSql(sql: string | null): string {
  const text = sql ?? ''
  let out = ''
  let space = false
  const emit = (token: string) => {
    const punctuation = /^[(),;=]$/
    if (space && out !== '' && !punctuation.test(token) && !punctuation.test(out.at(-1)!)) out += ' '
    space = false
    out += token
  }
  for (let i = 0; i < text.length; ) {
    const c = text[i]!
    if (c === "'") {
      const end = quoteEnd(text, i, c)
      emit(text.slice(i, end))
      i = end
    } else if (c === '"' || c === '`') {
      const end = quoteEnd(text, i, c)
      emit(
        text
          .slice(i + 1, end - 1)
          .replaceAll(c + c, c)
          .toLowerCase(),
      )
      i = end
    } else if (c === '[') {
      const end = text.indexOf(']', i) < 0 ? text.length : text.indexOf(']', i) + 1
      emit(text.slice(i + 1, end - 1).toLowerCase())
      i = end
    } else if (text.startsWith('--', i)) {
      i = text.indexOf('\n', i) < 0 ? text.length : text.indexOf('\n', i)
      space = true
    } else if (text.startsWith('/*', i)) {
      i = text.indexOf('*/', i + 2) < 0 ? text.length : text.indexOf('*/', i + 2) + 2
      space = true
    } else if (/\s/.test(c)) {
      space = true
      i++
    } else {
      emit(c.toLowerCase())
      i++
    }
  }
  return out
}

/**
 * How a database differs from the alttext schema of its version, built afresh by the migrations in
 * memory: an object the schema does not have (a trigger or view runs its SQL inside the service) or
 * lacks; a trigger, view or index whose SQL differs; a table made another way (a virtual table), with
 * other columns (missing, extra, of another type or kind, such as a generated column), other traits or
 * other constraints. Each difference names its object.
 */
function schemaDifferences(db: Database, version: number): string[] {
  const reference = new Database(':memory:')
  try {
    migrate(reference, 0, ':memory:', version)
    const expected = new Map(schemaObjects(reference).map((object) => [`${object.type} ${object.name}`, object]))
    const present = new Set<string>()
    const found: string[] = []
    for (const object of schemaObjects(db).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const named = `${object.type} "${object.name}"`
      const known = expected.get(`${object.type} ${object.name}`)
      present.add(`${object.type} ${object.name}`)
      if (!known || known.tbl_name !== object.tbl_name) found.push(named)
      else if (object.type !== 'table') {
        if (normalSql(object.sql) !== normalSql(known.sql)) found.push(`${named} unlike the schema's`)
      } else if (/^\s*create\s+virtual\b/i.test(object.sql ?? '')) found.push(`${named} made as a virtual table`)
      else {
        const differences = [
          ...columnDifferences(columnsOf(db, object.name), columnsOf(reference, object.name)),
          ...traitDifferences(db, reference, object.name),
        ]
        // What the pragmas do not show: CHECK, UNIQUE, COLLATE, a generated column's expression.
        if (differences.length === 0 && normalSql(object.sql) !== normalSql(known.sql))
          differences.push("constraints unlike the schema's (a CHECK, UNIQUE, COLLATE or a generated column's expression)")
        found.push(...differences.map((difference) => `${named}: ${difference}`))
      }
    }
    for (const [key, object] of expected) if (!present.has(key)) found.push(`no ${object.type} "${object.name}"`)
    return found
  } finally {
    reference.close()
  }
}

/** `PRAGMA integrity_check` (every page, every index entry): "ok", or the first problems found. */
function integrityProblems(db: Database): string[] {
  const rows = db
    .query<{ integrity_check: string }, []>('PRAGMA integrity_check(10)')
    .all()
    // A report can span lines ("*** in database main ***\nTree 15 page 15: ..."): one line here.
    .map((r) => r.integrity_check.replace(/\s+/g, ' ').trim())
  return rows.length === 1 && rows[0] === 'ok' ? [] : rows
}

/**
 * Opens a file that must be an SQLite database (SQLite's own "file is not a database" comes at the first
 * read). `what` names it in messages: "the backup /backups/a.db", not the temporary copy being checked.
 */
function openChecked(path: string, options: { readonly: boolean }, what: string): Database {
  let db: Database
  try {
    db = options.readonly ? new Database(path, { readonly: true, strict: true }) : new Database(path, { readwrite: true, create: false, strict: true })
  } catch (error) {
    throw new BackupError(`cannot open ${what}: ${errorText(error)}`)
  }
  try {
    db.exec(`PRAGMA busy_timeout = ${READ_BUSY_TIMEOUT_MS}`)
    db.query('SELECT count(*) FROM sqlite_schema').get()
  } catch (error) {
    db.close()
    throw new BackupError(`${what} is not a readable SQLite database: ${errorText(error)}`)
  }
  return db
}

/**
 * Checks a finished copy: SQLite's full integrity check, an alttext schema; then what it holds. With
 * `exactSchema` (a backup to restore), also a schema version this binary knows, and exactly the schema the
 * migrations of that version make: checked before any table of it is read.
 */
function verifiedSummary(db: Database, path: string, what: string, options: { exactSchema?: boolean } = {}): DatabaseSummary {
  let problems: string[]
  try {
    problems = integrityProblems(db)
  } catch (error) {
    // A page too broken to walk stops the check itself ("database disk image is malformed").
    problems = [errorText(error)]
  }
  if (problems.length > 0) throw new BackupError(`${what} failed its integrity check: ${problems.join('; ')}`)
  const version = schemaVersion(db, what)
  if (options.exactSchema) {
    const latest = latestSchemaVersion()
    if (version > latest)
      throw new BackupError(
        `the backup's schema version ${version} is newer than this binary knows (${latest}); restore it with the alttext version that made it`,
      )
    const differences = schemaDifferences(db, version)
    if (differences.length > 0)
      throw new BackupError(
        `${what} does not match the alttext schema of its version ${version}: ${differences.join('; ')}. It was changed outside alttext, and nothing was restored: undo that in a copy of it (sqlite3), or restore another backup`,
      )
  }
  return { path, bytes: statSync(path).size, schemaVersion: version, tables: tableRows(db) }
}

/**
 * Flushes a file another thread is writing, again and again until told to stop. ext4 (in its default
 * data=ordered mode) writes the pending data of every file before it commits the journal that an fsync
 * waits for, so the service's commits (fsynced, on its event loop) would otherwise wait for most of the
 * copy at once: seconds for a large database (scenario 17 of the bench). This way little is ever
 * pending. Inline code, so a compiled binary needs no extra entry point.
 */
const FLUSHER = `
import { closeSync, fdatasyncSync, openSync } from 'node:fs'
const { path, stop } = await new Promise((resolve) => { self.onmessage = (event) => resolve(event.data) })
const stopped = new Int32Array(stop)
const fd = openSync(path, 'r')
while (Atomics.load(stopped, 0) === 0) {
  fdatasyncSync(fd)
  Atomics.wait(stopped, 0, 0, 2)
}
closeSync(fd)
postMessage('done')
`

/** Starts flushing `path` in a worker thread; `stop()` ends it once its last flush is done. */
function startFlusher(path: string): { stop(): Promise<void> } {
  const url = URL.createObjectURL(new Blob([FLUSHER], { type: 'application/javascript' }))
  const worker = new Worker(url)
  const stop = new SharedArrayBuffer(4)
  const { promise: done, resolve } = Promise.withResolvers<void>()
  worker.onmessage = () => resolve()
  worker.onerror = () => resolve()
  worker.postMessage({ path, stop })
  return {
    async stop() {
      Atomics.store(new Int32Array(stop), 0, 1)
      Atomics.notify(new Int32Array(stop), 0)
      await done
      worker.terminate()
      URL.revokeObjectURL(url)
    },
  }
}

/**
 * Copies the database at `source` to `target` while a server may be using it, syncs and checks the copy.
 * An existing `target` is replaced only with `force`, and only by a checked copy.
 */
export async function backupDatabase(source: string, target: string, options: { force?: boolean } = {}): Promise<BackupResult> {
  const from = resolve(source)
  const to = resolve(target)
  if (!existsSync(from)) throw new BackupError(`there is no database at ${from}; check ALTTEXT_DB or --db`)
  if (isDatabaseFile(from, to)) throw new BackupError(`${to} is a file of the database itself; write the backup elsewhere`)
  const directory = dirname(to)
  if (!existsSync(directory) || !statSync(directory).isDirectory())
    throw new BackupError(`the directory ${directory} does not exist (is the backup disk mounted?); create it first`)
  if (existsSync(to)) {
    if (statSync(to).isDirectory()) throw new BackupError(`${to} is a directory; give the backup a file name, e.g. ${to}/alttext.db`)
    if (!options.force) throw new BackupError(`${to} already exists; choose another name, or pass --force to replace it`)
  }

  // Created empty first (VACUUM INTO accepts an empty file) so that the copy, which holds password and key
  // hashes, is never readable by others, not even while it is written.
  const partial = `${to}.partial-${process.pid}`
  try {
    closeSync(openSync(partial, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, 0o600))
  } catch (error) {
    throw new BackupError(`cannot write in ${directory}: ${errorText(error)}`)
  }
  try {
    const started = performance.now()
    const db = openChecked(from, { readonly: true }, `the database ${from}`)
    const flusher = startFlusher(partial)
    try {
      schemaVersion(db, `the database ${from}`)
      db.query('VACUUM INTO ?').run(partial)
    } catch (error) {
      if (error instanceof BackupError) throw error
      throw new BackupError(`the copy of ${from} failed: ${errorText(error)}`)
    } finally {
      db.close()
      await flusher.stop()
    }
    syncPath(partial)
    const copied = performance.now()
    const copy = openChecked(partial, { readonly: true }, `the copy of ${from}`)
    let summary: DatabaseSummary
    try {
      summary = verifiedSummary(copy, partial, `the copy of ${from}`)
    } finally {
      copy.close()
    }
    renameSync(partial, to)
    syncPath(directory)
    return { source: from, backup: { ...summary, path: to }, copyMs: copied - started, verifyMs: performance.now() - copied }
  } catch (error) {
    rmSync(partial, { force: true })
    throw error
  }
}

/**
 * The owner the service's files must keep: that of the database being replaced, else of its folder. Only
 * root can give files away, and only root would otherwise leave the service a file it cannot open.
 */
function serviceOwner(database: string): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null
  const { uid, gid } = statSync(existsSync(database) ? database : dirname(database))
  return uid === 0 ? null : { uid, gid }
}

/** `alttext.db` → `alttext.db.before-restore-2026-11-23T10-15-00Z`: its -wal beside it keeps the pair openable. */
const asideName = (database: string, at: Date) =>
  `${database}.before-restore-${at
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replaceAll(':', '-')}`

/**
 * Puts the backup at `backup` in place of the database at `database`. Refused while a server holds the
 * database, when the backup fails its checks, or when its schema is newer than this binary knows.
 */
export function restoreDatabase(backup: string, database: string, at = new Date()): RestoreResult {
  const from = resolve(backup)
  const to = resolve(database)
  if (!existsSync(from) || !statSync(from).isFile()) throw new BackupError(`there is no backup file at ${from}`)
  if (isDatabaseFile(to, from)) throw new BackupError(`${from} is the database itself; give the backup file to restore`)
  const directory = dirname(to)
  try {
    mkdirSync(directory, { recursive: true })
  } catch (error) {
    throw new BackupError(`cannot create the directory ${directory}: ${errorText(error)}`)
  }

  const owner = serviceOwner(to)
  const hadLock = existsSync(`${to}.lock`)
  let lock: Database
  try {
    lock = acquireProcessLock(to)
  } catch (error) {
    throw new BackupError(`restore refused: ${errorText(error)}`)
  }
  const partial = `${to}.restore-partial-${process.pid}`
  try {
    try {
      if (owner && !hadLock) chownSync(`${to}.lock`, owner.uid, owner.gid)
      copyFileSync(from, partial, constants.COPYFILE_EXCL)
      chmodSync(partial, 0o600)
      if (owner) chownSync(partial, owner.uid, owner.gid)
    } catch (error) {
      throw new BackupError(`cannot copy ${from} into ${directory}: ${errorText(error)}`)
    }
    const copy = openChecked(partial, { readonly: false }, `the backup ${from}`)
    let summary: DatabaseSummary
    try {
      summary = verifiedSummary(copy, partial, `the backup ${from}`, { exactSchema: true })
      // One self-contained file: a backup made in WAL mode (sqlite3 .backup) is folded out of it here.
      copy.exec('PRAGMA journal_mode = DELETE')
    } finally {
      copy.close()
    }
    syncPath(partial)

    const present = ['', ...COMPANIONS].filter((suffix) => existsSync(to + suffix))
    const previous = present.length > 0 ? asideName(to, at) : null
    const moved: [string, string][] = []
    try {
      for (const suffix of present) {
        renameSync(to + suffix, previous + suffix)
        moved.push([to + suffix, previous + suffix])
      }
      renameSync(partial, to)
    } catch (error) {
      for (const [original, aside] of moved.reverse()) renameSync(aside, original)
      throw new BackupError(`cannot put the backup in place of ${to}: ${errorText(error)}; the database is unchanged`)
    }
    syncPath(directory)
    return { database: to, restored: { ...summary, path: to }, previous, latestSchemaVersion: latestSchemaVersion() }
  } catch (error) {
    rmSync(partial, { force: true })
    for (const suffix of COMPANIONS) rmSync(partial + suffix, { force: true })
    throw error
  } finally {
    releaseLock(lock)
  }
}
