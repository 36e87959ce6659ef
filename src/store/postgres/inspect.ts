// What the operator's commands (db copy, admin, doctor) ask of a PostgreSQL database before they use it:
// whether it answers, its server version, the alttext schema version it holds, and whether alttext
// replicas are connected to it. Their connections carry their own application_name, so they never count
// as replicas themselves. No message names the URL's user or password.
import { SQL } from 'bun'
import { describeUrl, first, unreachable } from './connection'
import { num } from '../shared/rows'

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
