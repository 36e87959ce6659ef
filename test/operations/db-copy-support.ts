// Helpers of the `alttext db copy` tests: the command run in-process (runCli), what a SQLite file or a PostgreSQL
// database holds, table by table, and whether the harness's PostgreSQL must run (under CI it must).
import { Database } from 'bun:sqlite'
import { SQL } from 'bun'
import { latestPostgresVersion } from '../../src/store/postgres/migrations'
import { latestSchemaVersion, migrate } from '../../src/store/sqlite/migrations'
import { postgresUnavailable } from '../support/postgres'
import { runCli } from '../support/process'

export const unavailable = postgresUnavailable()
/** Under CI=true a missing PostgreSQL fails the tests instead of skipping them. */
export const skipPostgres = unavailable !== null && process.env.CI !== 'true'

/** `alttext db ARGS`, in this process. */
export const dbCommand = (args: string[], env: Record<string, string> = {}) => runCli(['db', ...args], env)

/** Tables the copy leaves out on purpose. */
export const NOT_COPIED = ['schema_migrations', 'account_changes']

/** Rows of each table of a SQLite file but SQLite's own and those not copied. */
export function sqliteCounts(path: string): Record<string, number> {
  const db = new Database(path, { readonly: true })
  try {
    const names = db
      .query<{ name: string }, []>("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite!_%' ESCAPE '!'")
      .all()
      .map((r) => r.name)
      .filter((name) => !NOT_COPIED.includes(name))
    return Object.fromEntries(names.map((name) => [name, db.query<{ n: number }, []>(`SELECT count(*) AS n FROM "${name}"`).get()!.n]))
  } finally {
    db.close()
  }
}

/** Runs `work` on a one-connection pool to `url`, then closes it. */
export async function withPostgres<T>(url: string, work: (sql: SQL) => Promise<T>): Promise<T> {
  const sql = new SQL(url, { max: 1 })
  try {
    return await work(sql)
  } finally {
    await sql.close()
  }
}

/** Rows of each table of a PostgreSQL database but those not copied. */
export function postgresCounts(url: string): Promise<Record<string, number>> {
  return withPostgres(url, async (sql) => {
    const names = (
      (await sql`SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`) as {
        table_name: string
      }[]
    )
      .map((r) => r.table_name)
      .filter((name) => !NOT_COPIED.includes(name))
    const counts: Record<string, number> = {}
    for (const name of names) counts[name] = Number(((await sql.unsafe(`SELECT count(*) AS n FROM "${name}"`)) as { n: string }[])[0]!.n)
    return counts
  })
}

/** One value of a one-row query on a SQLite file. */
export function sqliteValue<T>(path: string, query: string, ...params: (string | number)[]): T {
  const db = new Database(path, { readonly: true })
  try {
    return Object.values(db.query(query).get(...params) as Record<string, unknown>)[0] as T
  } finally {
    db.close()
  }
}

/**
 * The newest schema version both engines of this binary reach: a SQLite site goes to PostgreSQL only at
 * it. While a SQLite migration has no PostgreSQL counterpart yet, it is below SQLite's own.
 */
export const SHARED_VERSION = Math.min(latestSchemaVersion(), latestPostgresVersion())

/** Whether a SQLite site of this binary's newest schema can go to PostgreSQL. */
export const POSTGRES_REACHES_SQLITE = latestPostgresVersion() >= latestSchemaVersion()

/** A SQLite file at `version` (this binary's migrations up to it), with no rows. */
export function sqliteAt(path: string, version: number): void {
  const db = new Database(path, { create: true, strict: true })
  try {
    db.exec('PRAGMA journal_mode = WAL')
    migrate(db, 1000, path, version)
  } finally {
    db.close()
  }
}

/**
 * A SQLite file at `version` with `accounts` accounts and a key each, written with SQL: the store would
 * migrate it to its newest version, which PostgreSQL may not reach.
 */
export function sqliteSite(path: string, accounts: number, version = SHARED_VERSION): void {
  sqliteAt(path, version)
  const db = new Database(path, { strict: true })
  try {
    for (let i = 0; i < accounts; i++) {
      const { id } = db
        .query<{ id: number }, [string, number]>(
          "INSERT INTO accounts (email, password_hash, plan, created_at) VALUES (?, 'not a real hash', 'free', ?) RETURNING id",
        )
        .get(`site-${i}@example.com`, Date.now())!
      db.query('INSERT INTO api_keys (account_id, prefix, key_hash, created_at) VALUES (?, ?, ?, ?)').run(
        id,
        `alt_site${String(i).padStart(4, '0')}`,
        `hash-${i}`,
        Date.now(),
      )
    }
  } finally {
    db.close()
  }
}
