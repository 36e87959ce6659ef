// A throwaway PostgreSQL cluster for tests, from the Debian packages (`postgresql`, 15 or newer), on a
// loopback port in a temporary folder: nothing of the machine's own PostgreSQL is used or touched. A
// template database is prepared once (migrated), and each test gets its own copy of it (CREATE
// DATABASE … TEMPLATE, tens of milliseconds). One cluster serves the whole test process (sharedPostgres):
// under `bun test --parallel`, each worker process has its own, in its own folder on its own port.
//
// `initdb` refuses to run as root, so as root every server command runs as the `postgres` user, in a
// folder that user owns. Durability is off (fsync, full-page writes, synchronous commit): the data
// lives only as long as the tests.
import { test } from 'bun:test'
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SQL } from 'bun'
import { migratePostgres } from '../../src/store/postgres/migrations'

/**
 * Which engine the tests that start the service use (ALTTEXT_TEST_ENGINE): `sqlite`, the default, or
 * `postgres`, which gives each of them a database of its own in the shared cluster.
 */
export const TEST_ENGINE: 'sqlite' | 'postgres' = process.env.ALTTEXT_TEST_ENGINE?.trim().toLowerCase() === 'postgres' ? 'postgres' : 'sqlite'

/**
 * For a test (`sqliteOnly(reason)('name', …)`) that is about the SQLite file itself (its lock, its bytes on
 * disk, a backup of it, a process killed over it): skipped under ALTTEXT_TEST_ENGINE=postgres, and the
 * output says so and why.
 */
export function sqliteOnly(reason: string): typeof test {
  return skippedOnPostgres(reason) ? test.skip : test
}

function skippedOnPostgres(reason: string): boolean {
  if (TEST_ENGINE !== 'postgres') return false
  console.warn(`[ALTTEXT_TEST_ENGINE=postgres] SKIPPED, SQLite only: ${reason}`)
  return true
}

/** The test superuser and its password: trust authentication on loopback ignores the password, but URLs carry one, as in production. */
const USER = 'alttext'
export const TEST_PASSWORD = 'pg-test-pw-5c1e'
const TEMPLATE = 'alttext_template'

export type PostgresCluster = {
  port: number
  /** Milliseconds from initdb to the first answered query. */
  startedInMs: number
  /** A URL of a database in this cluster (with the test password in it). */
  url(database: string): string
  /** A new database, copied from the prepared template (or `empty`); returns its URL. */
  createDatabase(options?: { empty?: boolean }): Promise<string>
  /** Drops a database made by createDatabase, ending any connection still open to it. */
  dropDatabase(url: string): Promise<void>
  stop(): Promise<void>
}

/** The newest PostgreSQL 15+ server binaries of the Debian packages, or null. */
function serverBinaries(): string | null {
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return null
  const versions = readdirSync(root)
    .filter((name) => /^\d+$/.test(name) && Number(name) >= 15 && existsSync(join(root, name, 'bin', 'initdb')))
    .map(Number)
    .toSorted((a, b) => b - a)
  return versions.length > 0 ? join(root, String(versions[0]), 'bin') : null
}

/** Where util-linux installs runuser: found by path, since a test's PATH often lacks the sbin folders. */
const RUNUSER_PLACES = ['/usr/sbin/runuser', '/sbin/runuser', '/usr/bin/runuser', '/bin/runuser']
const runuser = () => RUNUSER_PLACES.find((path) => existsSync(path)) ?? null

/** Why no cluster can be started here, or null when one can. */
export function postgresUnavailable(): string | null {
  if (serverBinaries() === null) return 'PostgreSQL 15 or newer is not installed (Debian package postgresql)'
  if (process.getuid?.() === 0 && runuser() === null)
    return `running as root, and runuser (util-linux) is in none of ${RUNUSER_PLACES.join(', ')}: PostgreSQL refuses to run as root`
  return null
}

const asRoot = () => process.getuid?.() === 0
/** The prefix that runs a server command as the postgres user when this process is root. */
const asPostgres = (): string[] => (asRoot() ? [runuser()!, '-u', 'postgres', '--'] : [])

/** Runs a server command, as the postgres user when this process is root. */
async function run(command: string[], what: string): Promise<void> {
  const argv = [...asPostgres(), ...command]
  const proc = Bun.spawn(argv, { stdout: 'pipe', stderr: 'pipe', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' } })
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  if (code !== 0) throw new Error(`${what} failed (exit ${code}):\n${out}\n${err}`)
}

/** A port free on loopback now (PostgreSQL binds it a moment later; a clash is retried). */
export function freePort(): number {
  const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const { port } = probe
  probe.stop(true)
  return port
}

/**
 * Starts a cluster. `prepareTemplate` fills the template database (e.g. runs the migrations) through the
 * URL it is given, and must close its connections: a template with a connection open cannot be copied.
 */
export async function startPostgresCluster(prepareTemplate: (url: string) => Promise<void> = async () => {}): Promise<PostgresCluster> {
  const unavailable = postgresUnavailable()
  if (unavailable) throw new Error(`cannot start PostgreSQL for the tests: ${unavailable}`)
  const bin = serverBinaries()!
  const started = performance.now()
  const dir = mkdtempSync(join(tmpdir(), 'alttext-pg-'))
  const data = join(dir, 'data')
  if (asRoot()) {
    const { uid, gid } = postgresIds()
    chownSync(dir, uid, gid)
  }
  await run([join(bin, 'initdb'), '-D', data, '--no-sync', '-U', USER, '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8'], 'initdb')

  const ctl = (...args: string[]) => run([join(bin, 'pg_ctl'), '-D', data, ...args], `pg_ctl ${args[0]}`)
  let port = 0
  for (let attempt = 1; ; attempt++) {
    port = freePort()
    const options = [
      `-p ${port}`,
      '-c listen_addresses=127.0.0.1',
      `-c unix_socket_directories=${dir}`,
      '-c fsync=off',
      '-c full_page_writes=off',
      '-c synchronous_commit=off',
      '-c max_connections=300',
    ].join(' ')
    try {
      await ctl('start', '-w', '-t', '30', '-l', join(dir, 'server.log'), '-o', options)
      break
    } catch (error) {
      if (attempt >= 3) throw error
    }
  }
  // Whenever this process ends without stopping the cluster (bun test runs no exit hooks, or kill -9),
  // the watcher stops it within half a second and removes its folder.
  const watcher = Bun.spawn(
    [
      'sh',
      '-c',
      `while kill -0 ${process.pid} 2>/dev/null; do sleep 0.5; done; ${asPostgres().join(' ')} ${join(bin, 'pg_ctl')} -D '${data}' -m immediate stop; rm -rf '${dir}'`,
    ],
    { stdout: 'ignore', stderr: 'ignore', stdin: 'ignore' },
  )
  watcher.unref()

  const url = (database: string) => `postgres://${USER}:${TEST_PASSWORD}@127.0.0.1:${port}/${database}`
  const admin = new SQL(url('postgres'), { max: 2 })
  await admin`SELECT 1`
  const startedInMs = Math.round(performance.now() - started)
  await admin.unsafe(`CREATE DATABASE ${TEMPLATE}`)
  await prepareTemplate(url(TEMPLATE))
  await admin.unsafe(`ALTER DATABASE ${TEMPLATE} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`)

  let made = 0
  let stopping: Promise<void> | null = null
  return {
    port,
    startedInMs,
    url,
    async createDatabase(options = {}) {
      const name = `alttext_test_${process.pid}_${++made}`
      await admin.unsafe(`CREATE DATABASE ${name} TEMPLATE ${options.empty ? 'template0' : TEMPLATE}`)
      return url(name)
    },
    async dropDatabase(databaseUrl) {
      const name = new URL(databaseUrl).pathname.slice(1)
      if (!/^alttext_test_\d+_\d+$/.test(name)) throw new Error(`not a test database: ${name}`)
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    },
    stop: () =>
      (stopping ??= (async () => {
        await admin.close()
        await ctl('stop', '-m', 'immediate', '-w')
        watcher.kill()
        rmSync(dir, { recursive: true, force: true })
      })()),
  }
}

/** The postgres user's ids, for the folder initdb writes in. */
function postgresIds(): { uid: number; gid: number } {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'))
  if (!line) throw new Error('there is no postgres user (install the postgresql package)')
  const [, , uid, gid] = line.split(':')
  return { uid: Number(uid), gid: Number(gid) }
}

/** Runs this binary's PostgreSQL migrations on the template. */
async function migrateTemplate(url: string): Promise<void> {
  const sql = new SQL(url, { max: 1 })
  try {
    await migratePostgres(sql, 'the template database')
  } finally {
    await sql.close()
  }
}

let shared: Promise<PostgresCluster> | null = null

/**
 * The test process's one cluster, with a migrated template, started on first use: test files run one
 * after another in one process (or in each --parallel worker), so each pays only for its own databases.
 * That needs one module registry across files: with --isolate (which --parallel implies unless
 * --no-isolate is given) every file would start a cluster of its own. The cluster's watcher stops it
 * when the process ends (bun test runs no exit hooks).
 */
export function sharedPostgres(): Promise<PostgresCluster> {
  shared ??= startPostgresCluster(migrateTemplate)
  return shared
}
