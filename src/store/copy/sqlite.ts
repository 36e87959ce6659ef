// A SQLite file as one end of `alttext db copy`. FROM is read on a read-only connection in one read
// transaction (in WAL mode a consistent snapshot, which blocks no writer); TO is written under the
// serving lock (`<db>.lock`), so no service can start on it meanwhile. Integers are read as BigInt
// (safeIntegers), so no value is rounded on its way.
import { Database, type SQLQueryBindings } from 'bun:sqlite'
import { closeSync, existsSync, mkdirSync, openSync, rmSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { releaseLock, takeProcessLock } from '../sqlite/connection'
import { latestSchemaVersion, migrate } from '../sqlite/migrations'
import type { Reader, Side, Writer } from './side'
import { type Column, CopyError, type Kind, pageShape, quoteName, type Table, type Value } from './values'

const BUSY_TIMEOUT_MS = 10_000

const message = (error: unknown) => (error instanceof Error ? error.message : String(error))

/** SQLite's type affinity rules (https://sqlite.org/datatype3.html), for the types alttext's schema uses. */
function kindOf(declared: string, where: string): Kind {
  const type = declared.toUpperCase()
  if (type.includes('INT')) return 'integer'
  if (type.includes('CHAR') || type.includes('CLOB') || type.includes('TEXT')) return 'text'
  if (type.includes('BLOB') || type === '') return 'bytes'
  throw new CopyError(`${where} has the type ${declared}, which db copy does not know`)
}

type TableRow = { name: string; sql: string }
type ColumnRow = { name: string; type: string; pk: bigint }

/** The tables of a database file, with what the copy needs of each. `autoincrement`: tables whose ids SQLite never reuses. */
function describeTables(db: Database): { tables: Table[]; autoincrement: Set<string> } {
  const autoincrement = new Set<string>()
  const rows = db.query<TableRow, []>("SELECT name, sql FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite!_%' ESCAPE '!'").all()
  const tables = rows.map(({ name, sql }): Table => {
    const info = db.query<ColumnRow, []>(`PRAGMA table_info(${quoteName(name)})`).all()
    const key = info.filter((c) => c.pk > 0n).toSorted((a, b) => Number(a.pk - b.pk))
    const withoutRowid = /\)\s*WITHOUT\s+ROWID\s*;?\s*$/i.test(sql)
    // An INTEGER PRIMARY KEY is the rowid under a name: SQLite hands its values out.
    const alias = !withoutRowid && key.length === 1 && key[0]!.type.toUpperCase() === 'INTEGER' ? key[0]!.name : null
    if (alias !== null && /\bAUTOINCREMENT\b/i.test(sql)) autoincrement.add(name)
    const columns: Column[] = info.map((c) => ({
      name: c.name,
      kind: kindOf(c.type, `column ${name}.${c.name}`),
      sql: quoteName(c.name),
      type: c.type,
      ...(c.name === alias ? { generated: true as const } : {}),
    }))
    // Without an INTEGER PRIMARY KEY, the rowid is hidden and keeps the order of insertion (the history's
    // order within one millisecond): PostgreSQL's schema has a column for it where that matters.
    if (!withoutRowid && alias === null) columns.push({ name: 'rowid', kind: 'integer', sql: 'rowid', type: 'INTEGER', hidden: true, generated: true })
    const parents = db.query<{ table: string }, []>(`PRAGMA foreign_key_list(${quoteName(name)})`).all()
    return {
      name,
      columns,
      primaryKey: key.length > 0 ? key.map((c) => c.name) : ['rowid'],
      parents: [...new Set(parents.map((p) => p.table))],
    }
  })
  return { tables, autoincrement }
}

const toStored = (value: Value): string | bigint | Uint8Array | null => (typeof value === 'boolean' ? (value ? 1n : 0n) : value)

function reader(db: Database, autoincrement: () => Set<string>): Reader {
  return {
    async *pages(table, columns) {
      const { at, key, list, size } = pageShape(table, columns)
      const firstPage = db.query<unknown[], []>(`SELECT ${list} FROM ${quoteName(table.name)} ORDER BY ${key} LIMIT ${size}`)
      const nextPage = db.query<unknown[], SQLQueryBindings[]>(
        `SELECT ${list} FROM ${quoteName(table.name)} WHERE (${key}) > (${at.map(() => '?').join(', ')}) ORDER BY ${key} LIMIT ${size}`,
      )
      let page = firstPage.values() as unknown[][]
      while (page.length > 0) {
        yield page
        if (page.length < size) return
        const last = page[page.length - 1]!
        page = nextPage.values(...(at.map((i) => last[i]) as SQLQueryBindings[])) as unknown[][]
      }
    },
    async count(table) {
      return Number(db.query<{ n: bigint }, []>(`SELECT count(*) AS n FROM ${quoteName(table.name)}`).get()!.n)
    },
    async highWater(table, column) {
      const largest = db.query<{ v: bigint | null }, []>(`SELECT max(${column.sql}) AS v FROM ${quoteName(table.name)}`).get()?.v ?? 0n
      const sequence = autoincrement().has(table.name)
        ? (db.query<{ seq: bigint }, [string]>('SELECT seq FROM sqlite_sequence WHERE name = ?').get(table.name)?.seq ?? 0n)
        : 0n
      return Number(largest > sequence ? largest : sequence)
    },
  }
}

/**
 * FROM: the file must exist. Its serving lock is taken for the copy, so no service starts on it
 * meanwhile; while a service holds it, the copy is refused unless `live` (a snapshot of that moment,
 * without whatever the service writes afterwards).
 */
export function openSqliteSource(path: string, options: { live: boolean }): Side {
  const file = resolve(path)
  const label = `SQLite file ${file}`
  if (!existsSync(file)) throw new CopyError(`FROM: there is no database at ${file}`)
  let lock: Database | null = null
  let served = false
  try {
    lock = takeProcessLock(file)
    served = lock === null
  } catch {
    // A folder this user cannot write the lock file in: no service can serve the file from there either.
  }
  if (served && !options.live) {
    throw new CopyError(
      `FROM: an alttext service is serving ${file}; stop it first (systemctl stop alttext), so that nothing it writes after the copy is lost. --live copies it anyway, as of this moment (for a test copy, not a move)`,
    )
  }
  let db: Database
  try {
    db = new Database(file, { readonly: true, safeIntegers: true })
    db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`)
  } catch (error) {
    releaseLock(lock)
    throw new CopyError(`FROM: cannot open ${file}: ${message(error)}`)
  }
  let described: ReturnType<typeof describeTables> | null = null
  const describe = () => (described ??= describeTables(db))
  return {
    engine: 'SQLite',
    label,
    knownVersion: latestSchemaVersion(),
    schemaVersion: async () => schemaVersion(db),
    hasTables: async () => describe().tables.length > 0,
    tables: async () => describe().tables,
    migrate: async () => {
      throw new Error('FROM is never migrated')
    },
    async read(work) {
      db.exec('BEGIN')
      try {
        return await work(reader(db, () => describe().autoincrement))
      } finally {
        db.exec('COMMIT')
      }
    },
    write: async () => {
      throw new Error('FROM is never written')
    },
    async close() {
      db.close()
      releaseLock(lock)
    },
  }
}

function schemaVersion(db: Database): number | null {
  const present = db.query("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'").get()
  if (present === null) return null
  return Number(db.query<{ v: bigint | null }, []>('SELECT max(version) AS v FROM schema_migrations').get()?.v ?? 0n)
}

/**
 * TO: a new file (created, with its folder) or an existing one, written under its serving lock: a
 * service serving it refuses the copy. A file this copy created is removed again when the copy fails.
 */
export function openSqliteTarget(path: string): Side {
  const file = resolve(path)
  const label = `SQLite file ${file}`
  try {
    mkdirSync(dirname(file), { recursive: true })
  } catch (error) {
    throw new CopyError(`TO: cannot create the folder ${dirname(file)}: ${message(error)}`)
  }
  let lock: Database | null
  try {
    lock = takeProcessLock(file)
  } catch (error) {
    throw new CopyError(`TO: ${message(error)}`)
  }
  if (lock === null) throw new CopyError(`TO: an alttext service is serving ${file}; db copy writes only into a database no service uses`)
  const existed = existsSync(file)
  let db: Database | null = null
  const open = () => {
    if (db) return db
    try {
      db = new Database(file, { readwrite: true, create: false, safeIntegers: true })
      db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`)
      db.exec('PRAGMA foreign_keys = ON')
      db.exec('PRAGMA synchronous = FULL')
      return db
    } catch (error) {
      throw new CopyError(`TO: cannot open ${file}: ${message(error)}`)
    }
  }
  let described: ReturnType<typeof describeTables> | null = null
  const describe = () => (described ??= describeTables(open()))
  return {
    engine: 'SQLite',
    label,
    knownVersion: latestSchemaVersion(),
    schemaVersion: async () => (existsSync(file) ? schemaVersion(open()) : null),
    hasTables: async () => existsSync(file) && describe().tables.length > 0,
    tables: async () => describe().tables,
    async migrate(version) {
      // Emails and the hashes of passwords, keys and tokens: readable by its owner only, as a backup.
      // SQLite gives its -wal and -shm the file's mode.
      if (!existsSync(file)) closeSync(openSync(file, 'wx', 0o600))
      // The service's own start-up steps (WAL, then the migrations), on a connection of their own.
      const plain = new Database(file, { create: true, strict: true })
      try {
        plain.exec('PRAGMA journal_mode = WAL')
        plain.exec('PRAGMA foreign_keys = ON')
        migrate(plain, BUSY_TIMEOUT_MS, file, version)
      } catch (error) {
        throw new CopyError(`TO: cannot migrate ${file} to schema version ${version}: ${message(error)}`)
      } finally {
        plain.close()
      }
      described = null
    },
    async read(work) {
      const connection = open()
      connection.exec('BEGIN')
      try {
        return await work(reader(connection, () => describe().autoincrement))
      } finally {
        connection.exec('COMMIT')
      }
    },
    async write(work) {
      const connection = open()
      const autoincrement = () => describe().autoincrement
      connection.exec('BEGIN IMMEDIATE')
      const writer: Writer = {
        ...reader(connection, autoincrement),
        async clear(table) {
          connection.exec(`DELETE FROM ${quoteName(table.name)}`)
        },
        async insert(table, columns, rows) {
          const statement = connection.query<null, (string | bigint | Uint8Array | null)[]>(
            `INSERT INTO ${quoteName(table.name)} (${columns.map((c) => c.sql).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
          )
          for (const row of rows) statement.run(...row.map(toStored))
        },
        async raiseSequence(table, column, value) {
          if (!autoincrement().has(table.name) || !column.generated) return false
          const raised = connection.query('UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = ?').run(value, table.name)
          if (raised.changes === 0) connection.query('INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)').run(table.name, value)
          return true
        },
      }
      try {
        const result = await work(writer)
        connection.exec('COMMIT')
        return result
      } catch (error) {
        connection.exec('ROLLBACK')
        throw error
      }
    },
    async close(succeeded) {
      ;(db as Database | null)?.close()
      // The lock file stays (see takeProcessLock): a new one would let two holders in.
      if (!succeeded && !existed) for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true })
      releaseLock(lock)
    },
  }
}
