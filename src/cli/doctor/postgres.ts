// The database checks of `alttext doctor` when ALTTEXT_DATABASE_URL names PostgreSQL: the server answers
// and is 15 or newer; this user may read and write every table, create temporary tables and (for the
// migrations of an upgrade) tables; the schema is this binary's; one round trip is quick; and whether this
// binary serves PostgreSQL at all yet. The only write is the one-row probe /ready also makes. Nothing here
// names the URL's user or password.
import type { SQL } from 'bun'
import {
  isStandby,
  MINIMUM_SERVER_VERSION,
  mayCreateTables,
  newestRecord,
  openOperatorConnection,
  postgresSchemaVersion,
  probeTemporaryTable,
  roundTrip,
  serverClock,
  serverVersion,
  serviceConnections,
  tablePrivileges,
  writeProbe,
} from '../../store/postgres/inspect'
import { latestPostgresVersion } from '../../store/postgres/migrations'
import { missingOnPostgres } from '../../store/postgres/store'
import { plural } from '../../shared/wording'
import { type CheckResult, errorText, result, schemaVersionCheck, seconds } from './result'

/** Round trips timed for the latency check, after one to warm the connection. */
const ROUND_TRIPS = 10
/** A median round trip above this is worth a warning: a request makes several. */
const SLOW_ROUND_TRIP_MS = 20

/** What the clock check compares: the newest record the service wrote, and the server's clock against this machine's. */
export type PostgresFacts = { newest: number | null; skewMs: number | null }

/** SQLSTATE classes and codes worth their own fix. */
function connectFix(error: unknown): string {
  const sqlstate = (error as { errno?: unknown }).errno
  if (sqlstate === '28P01' || sqlstate === '28000')
    return 'check the user and password in ALTTEXT_DATABASE_URL, and that pg_hba.conf lets this machine in as that user'
  if (sqlstate === '3D000') return 'create the database (createdb --owner=USER NAME), or correct its name in ALTTEXT_DATABASE_URL'
  return 'start PostgreSQL, or correct the host, port and database in ALTTEXT_DATABASE_URL; check firewalls, listen_addresses and pg_hba.conf'
}

async function connection(sql: SQL, where: string): Promise<{ check: CheckResult; ok: boolean }> {
  const name = 'database'
  let version: Awaited<ReturnType<typeof serverVersion>>
  try {
    version = await serverVersion(sql)
  } catch (error) {
    return { check: result('database', name, 'fail', `cannot connect to PostgreSQL at ${where}: ${errorText(error)}`, connectFix(error)), ok: false }
  }
  if (version.num < MINIMUM_SERVER_VERSION)
    return {
      check: result('database', name, 'fail', `PostgreSQL ${version.text} at ${where}; alttext needs 15 or newer`, 'upgrade PostgreSQL to 15 or newer'),
      ok: false,
    }
  if (await isStandby(sql))
    return {
      check: result(
        'database',
        name,
        'fail',
        `PostgreSQL ${version.text} at ${where} is a standby (read-only)`,
        'point ALTTEXT_DATABASE_URL at the primary server',
      ),
      ok: false,
    }
  const replicas = await serviceConnections(sql)
  return {
    check: result('database', name, 'pass', `PostgreSQL ${version.text} at ${where}; ${plural(replicas, 'connection')} of alttext replicas open now`),
    ok: true,
  }
}

async function permissions(sql: SQL): Promise<CheckResult> {
  const name = 'database permissions'
  const grantFix = "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO the URL's user (or let it own the database, as the migrations need)"
  try {
    const tables = await tablePrivileges(sql)
    const refused = tables.filter((t) => !t.readWrite).map((t) => t.table)
    if (refused.length > 0) return result('database_permissions', name, 'fail', `this user may not read and write ${refused.join(', ')}`, grantFix)
    // A temporary table, made and dropped again at the end of its transaction.
    await probeTemporaryTable(sql)
    const wrote = tables.some((t) => t.table === 'health_probe')
    // The write /ready makes: one row, committed.
    if (wrote) await writeProbe(sql)
    const create = await mayCreateTables(sql)
    const done = `${wrote ? 'a write committed; ' : ''}reads and writes ${plural(tables.length, 'table')}; may create temporary tables`
    if (!create)
      return result(
        'database_permissions',
        name,
        'warn',
        `${done}, but not tables in the schema: the migrations of a new version (and of a new database) need that`,
        "let the URL's user own the database (ALTTEXT_DATABASE_URL), or run the first replica of each upgrade as a user that may create tables",
      )
    return result('database_permissions', name, 'pass', `${done} and tables (migrations)`)
  } catch (error) {
    return result('database_permissions', name, 'fail', `a check failed: ${errorText(error)}`, grantFix)
  }
}

async function schema(sql: SQL): Promise<CheckResult> {
  const name = 'database schema'
  const latest = latestPostgresVersion()
  const version = await postgresSchemaVersion(sql)
  if (version === null)
    return result(
      'database_schema',
      name,
      'warn',
      `no alttext schema yet; this binary's is version ${latest}`,
      'the first replica to start migrates the database (its user must be allowed to create tables), or fill it with alttext db copy',
    )
  return schemaVersionCheck(version, latest, {
    newer: 'run the newer alttext that migrated it, or restore a backup taken before the upgrade (pg_restore)',
    older: 'back up (pg_dump), stop every replica, start one with this binary (it migrates at start), then the others',
  })
}

/** Whether `alttext serve` of this binary runs on PostgreSQL at all: it refuses while parts are not on it yet. */
function support(): CheckResult {
  const name = 'PostgreSQL support'
  const missing = missingOnPostgres()
  if (missing.length === 0) return result('database_engine', name, 'pass', 'this binary serves every part from PostgreSQL')
  return result(
    'database_engine',
    name,
    'fail',
    `alttext serve of this version refuses PostgreSQL: not on it yet: ${missing.join(', ')}`,
    'serve from SQLite (unset ALTTEXT_DATABASE_URL) until a version that completes PostgreSQL; alttext admin and alttext db copy work on it already',
  )
}

async function latency(sql: SQL): Promise<CheckResult> {
  const name = 'database round trip'
  await roundTrip(sql)
  const times: number[] = []
  for (let i = 0; i < ROUND_TRIPS; i++) {
    const started = performance.now()
    await roundTrip(sql)
    times.push(performance.now() - started)
  }
  times.sort((a, b) => a - b)
  const median = times[Math.floor(times.length / 2)]!
  const detail = `median ${median.toFixed(2)} ms, slowest ${times[times.length - 1]!.toFixed(2)} ms over ${ROUND_TRIPS} round trips`
  if (median > SLOW_ROUND_TRIP_MS)
    return result(
      'database_latency',
      name,
      'warn',
      `${detail}: every request waits for one or more`,
      'put the replicas and PostgreSQL close together (one data centre, one zone); check for a slow network path or an overloaded server',
      median,
    )
  return result('database_latency', name, 'pass', detail, undefined, median)
}

/** From this skew between this machine's clock and the server's, the clock check warns; past the second, it fails. */
const SKEW_WARN_MS = 5_000
const SKEW_FAIL_MS = 60_000

/**
 * The clock check's verdict on this machine's clock against the PostgreSQL server's (`skewMs` > 0: this
 * one is ahead), or null when they agree within SKEW_WARN_MS. The server's clock judges leases and credit
 * holds, but each replica dates what it writes (key expiry, sessions, credit periods, webhook signatures)
 * with its own, so replicas seconds apart disagree on those.
 */
export function databaseClockCheck(skewMs: number): CheckResult | null {
  const apart = Math.abs(skewMs)
  if (apart < SKEW_WARN_MS) return null
  const detail = `this machine's clock is ${seconds(apart)} ${skewMs > 0 ? 'ahead of' : 'behind'} the PostgreSQL server's`
  const fix =
    'keep every replica and the database server synchronised (timedatectl set-ntp true, or chrony): key expiry, sessions, credit periods and webhook signatures follow each replica’s clock'
  if (apart > SKEW_FAIL_MS) return result('clock', 'clock', 'fail', detail, fix)
  return result('clock', 'clock', 'warn', `${detail}: replicas should agree within ${seconds(SKEW_WARN_MS)}`, fix)
}

/** The newest timestamp the service wrote, and how far the server's clock is from this machine's (`clock`). */
async function facts(sql: SQL, clock: () => number): Promise<PostgresFacts> {
  const newest = await newestRecord(sql)
  const sent = clock()
  const theirs = await serverClock(sql)
  // The middle of the exchange is the best guess of when the server read its clock.
  const skewMs = (sent + clock()) / 2 - theirs
  return { newest, skewMs }
}

/**
 * Runs the PostgreSQL checks, handing each to `add`; returns what the clock check needs (nothing when the
 * server was not reached), this machine's time read from `clock`.
 */
export async function postgresChecks(url: string, add: (check: CheckResult) => void, clock: () => number = Date.now): Promise<PostgresFacts> {
  const { sql, where } = openOperatorConnection(url, 'alttext doctor')
  const skip = (id: string, check: string) => add(result(id, check, 'skip', 'the database could not be reached'))
  try {
    const connected = await connection(sql, where)
    add(connected.check)
    if (!connected.ok) {
      skip('database_permissions', 'database permissions')
      skip('database_schema', 'database schema')
      skip('database_latency', 'database round trip')
    } else {
      add(await permissions(sql))
      add(await schema(sql))
      add(await latency(sql))
    }
    add(support())
    add(
      result(
        'database_integrity',
        'database integrity',
        'skip',
        'PostgreSQL checks its own pages: see data checksums (initdb --data-checksums) and pg_amcheck',
      ),
    )
    return connected.ok ? await facts(sql, clock) : { newest: null, skewMs: null }
  } catch (error) {
    add(result('database', 'database', 'fail', `PostgreSQL at ${where} failed a check: ${errorText(error)}`, connectFix(error)))
    return { newest: null, skewMs: null }
  } finally {
    await sql.close()
  }
}
