// A test's look into the service's database, the same on either engine (ALTTEXT_TEST_ENGINE): one
// statement with `?` placeholders, rows as SQLite gives them. On PostgreSQL the placeholders become $1,
// $2, …, bigint columns come back as numbers and booleans as 0 and 1, so an assertion written against
// SQLite's rows holds on both. Plain SQL that both engines read alike only (no PRAGMA, no rowid).
import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import { SQL } from 'bun'
import { createPostgresStore } from '../../src/store/postgres/store'
import { createSqliteStore } from '../../src/store/sqlite/store'
import type { Store } from '../../src/store/contract'
import { sharedPostgres, TEST_ENGINE } from './postgres'

export type TestDatabase = {
  query<T = Record<string, unknown>>(text: string, ...params: unknown[]): Promise<T[]>
  /** The names of the schema's tables. */
  tables(): Promise<string[]>
  close(): Promise<void>
}

/** PostgreSQL's type ids of the columns converted: int8 (20) to a number, bool (16) to 0 or 1. */
const INT8 = 20
const BOOL = 16

/** `?` placeholders as PostgreSQL's numbered ones (the tests' statements hold no literal `?`). */
const numbered = (text: string) => {
  let n = 0
  return text.replace(/\?/g, () => `$${++n}`)
}

export function openTestDatabase(where: { dbPath: string; databaseUrl?: string }): TestDatabase {
  if (where.databaseUrl === undefined) {
    const query = async <T>(text: string, ...params: unknown[]) => {
      // Opened per statement, so nothing is held open between a test's looks (or across a restart).
      const db = new Database(where.dbPath)
      try {
        return db.query(text).all(...(params as never[])) as T[]
      } finally {
        db.close()
      }
    }
    return {
      query,
      tables: async () => (await query<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")).map((r) => r.name),
      close: async () => {},
    }
  }
  // One connection while the service runs; after close() (the service stopped, a test looks at what it
  // left), one of its own per statement.
  let sql: SQL | null = null
  let closed = false
  const run = async (text: string, params: unknown[]) => {
    if (!closed) {
      sql ??= new SQL(where.databaseUrl!, { max: 1 })
      return sql.unsafe(text, params)
    }
    const once = new SQL(where.databaseUrl!, { max: 1 })
    try {
      return await once.unsafe(text, params)
    } finally {
      await once.close()
    }
  }
  const database: TestDatabase = {
    tables: async () =>
      (await database.query<{ name: string }>("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public'")).map((r) => r.name),
    async query<T>(text: string, ...params: unknown[]) {
      const result = (await run(numbered(text), params)) as Record<string, unknown>[] & { columns?: { name: string; type: number }[] }
      const columns = result.columns ?? []
      return result.map((row) => {
        for (const column of columns) {
          const value = row[column.name]
          if (value === null || value === undefined) continue
          if (column.type === INT8) row[column.name] = Number(value)
          else if (column.type === BOOL) row[column.name] = value ? 1 : 0
        }
        return row as T
      })
    },
    async close() {
      closed = true
      await sql?.close()
      sql = null
    },
  }
  return database
}

export type EngineDatabase = {
  /** What names the database to a service: ALTTEXT_DB, and ALTTEXT_DATABASE_URL on PostgreSQL. */
  env: Record<string, string>
  query: TestDatabase['query']
  /** Another store on the database, as a second process would open it (the caller closes it). */
  openStore(): Promise<Store>
  close(): Promise<void>
}

/**
 * The test engine's database in `dir`, for a test that spawns `alttext serve` itself and starts services
 * again on what it left (pass `env` to each): the SQLite file, or a PostgreSQL database of its own.
 */
export async function engineDatabase(dir: string): Promise<EngineDatabase> {
  const dbPath = join(dir, 'alttext.db')
  if (TEST_ENGINE !== 'postgres') {
    const database = openTestDatabase({ dbPath })
    return { env: { ALTTEXT_DB: dbPath }, query: database.query, openStore: async () => createSqliteStore(dbPath), close: database.close }
  }
  const cluster = await sharedPostgres()
  const databaseUrl = await cluster.createDatabase()
  const database = openTestDatabase({ dbPath, databaseUrl })
  return {
    env: { ALTTEXT_DB: dbPath, ALTTEXT_DATABASE_URL: databaseUrl },
    query: database.query,
    // Its callers pass the times they judge by (clock: 'caller'), as a second process's store in a test.
    openStore: () => createPostgresStore(databaseUrl, { clock: 'caller' }),
    async close() {
      await database.close()
      await cluster.dropDatabase(databaseUrl)
    },
  }
}
