// What the operator's commands (db copy, admin, doctor) ask of a PostgreSQL database before they use it:
// whether it answers, its server version, the alttext schema version it holds, whether alttext replicas
// are connected to it, and (doctor) what this user may do, the newest time it records and its clock. Their connections carry their own application_name, so they never count
// as replicas themselves. No message names the URL's user or password.
import { SQL } from 'bun'
import { describeUrl, first, unreachable } from './connection'
import { RECORD_TIMES } from '../shared/inspect'
import { num, type Row } from '../shared/rows'

/** The oldest PostgreSQL alttext runs on (server_version_num). */
export const MINIMUM_SERVER_VERSION = 150000

/** The application_name of the service's own connections (connection.ts). */
const SERVICE_APPLICATION = 'alttext'

export type OperatorConnection = {
  sql: SQL
  /** host:port/database: never the user or the password. */
  where: string
}

/** A small pool for one operator command, named `application` in pg_stat_activity. */
export function openOperatorConnection(url: string, application: string): OperatorConnection {
  const sql = new SQL(url, { max: 2, connectionTimeout: 10, idleTimeout: 30, connection: { application_name: application } })
  return { sql, where: describeUrl(url) }
}

/** `cannot connect to PostgreSQL at …` or `PostgreSQL at … refused the connection: …`: what a failed first query means. */
export function connectionFailure(error: unknown, where: string): string {
  const message = error instanceof Error ? error.message : String(error)
  return unreachable(error) ? `cannot connect to PostgreSQL at ${where}: ${message}` : `PostgreSQL at ${where} refused the connection: ${message}`
}

/** The server's version, as a number (150004) and as it calls itself ("15.4 (Debian 15.4-1)"). */
export async function serverVersion(sql: SQL): Promise<{ num: number; text: string }> {
  const row = await first(sql, "SELECT current_setting('server_version_num') AS num, current_setting('server_version') AS text")
  return { num: num(row!.num), text: String(row!.text) }
}

/** The newest alttext migration applied, or null when the database has no alttext schema (no schema_migrations in its search path). */
export async function postgresSchemaVersion(sql: SQL): Promise<number | null> {
  const present = await first(sql, "SELECT to_regclass('schema_migrations') IS NOT NULL AS present")
  if (!present?.present) return null
  const row = await first(sql, 'SELECT max(version) AS version FROM schema_migrations')
  return row?.version === null || row?.version === undefined ? 0 : num(row.version)
}

/** How many connections of alttext replicas (and `alttext admin`) are open to this database now. */
export async function serviceConnections(sql: SQL): Promise<number> {
  const row = await first(
    sql,
    'SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1 AND pid <> pg_backend_pid()',
    [SERVICE_APPLICATION],
  )
  return num(row!.n)
}

/** Whether the server is a standby (read-only, in recovery). */
export async function isStandby(sql: SQL): Promise<boolean> {
  return (await first(sql, 'SELECT pg_is_in_recovery() AS standby'))?.standby === true
}

/** Every table of the schema and whether this user may read and write it (SELECT, INSERT, UPDATE and DELETE). */
export async function tablePrivileges(sql: SQL): Promise<{ table: string; readWrite: boolean }[]> {
  // Each privilege on its own: given a list, has_table_privilege is true when any one of them is held.
  const tables = (await sql.unsafe(
    `SELECT table_name, has_table_privilege(quote_ident(table_name), 'SELECT') AND has_table_privilege(quote_ident(table_name), 'INSERT')
       AND has_table_privilege(quote_ident(table_name), 'UPDATE') AND has_table_privilege(quote_ident(table_name), 'DELETE') AS ok
     FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`,
  )) as Row[]
  return tables.map((t) => ({ table: String(t.table_name), readWrite: t.ok === true }))
}

/** Makes a temporary table and writes to it, dropped again at the end of its transaction; throws when refused. */
export async function probeTemporaryTable(sql: SQL): Promise<void> {
  await sql.begin(async (tx) => {
    await tx.unsafe('CREATE TEMPORARY TABLE alttext_doctor_probe (id integer) ON COMMIT DROP')
    await tx.unsafe('INSERT INTO alttext_doctor_probe VALUES (1)')
  })
}

/** The write /ready makes: one row, committed. */
export async function writeProbe(sql: SQL): Promise<void> {
  await sql.unsafe('UPDATE health_probe SET checked_at = $1 WHERE id = 1', [Date.now()])
}

/** Whether this user may create tables in the schema (the migrations of an upgrade need that). */
export async function mayCreateTables(sql: SQL): Promise<boolean> {
  return (await first(sql, "SELECT has_schema_privilege(current_schema(), 'CREATE') AS ok"))?.ok === true
}

/** One round trip that asks the server for nothing. */
export async function roundTrip(sql: SQL): Promise<void> {
  await sql.unsafe('SELECT 1')
}

/** The newest time the service wrote (RECORD_TIMES); null when there is none. */
export async function newestRecord(sql: SQL): Promise<number | null> {
  const present = new Set(
    ((await sql.unsafe('SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()')) as Row[]).map((r) => String(r.table_name)),
  )
  const newest: number[] = []
  for (const [table, column] of RECORD_TIMES) {
    if (!present.has(table)) continue
    const value = (await first(sql, `SELECT max(${column}) AS t FROM ${table}`))?.t
    if (value !== null && value !== undefined) newest.push(num(value))
  }
  return newest.length > 0 ? Math.max(...newest) : null
}

/** The server's clock, in Unix ms. */
export async function serverClock(sql: SQL): Promise<number> {
  return num((await first(sql, 'SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now'))!.now)
}
