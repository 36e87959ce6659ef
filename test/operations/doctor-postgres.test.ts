// `alttext doctor` with ALTTEXT_DATABASE_URL: checks PostgreSQL instead of a SQLite file (the server and
// its version, this user's permissions, the schema version, a round trip's time, whether this binary
// serves PostgreSQL yet), compares clocks with the server, and never shows the URL's password. Against
// databases of the test harness; under CI=true PostgreSQL must run.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { SQL } from 'bun'
import { databaseClockCheck, postgresChecks } from '../../src/cli/doctor/postgres'
import type { CheckResult } from '../../src/cli/doctor/result'
import { latestPostgresVersion } from '../../src/store/postgres/migrations'
import { missingOnPostgres } from '../../src/store/postgres/store'
import { startFakeOllama, type FakeOllama } from '../support/fake-ollama'
import { freePort, type PostgresCluster, postgresUnavailable, sharedPostgres, TEST_PASSWORD } from '../support/postgres'
import { freshDir } from './backup-support'
import { byId, doctorJson, doctorText, healthyEnv } from './doctor-support'

setDefaultTimeout(30_000)

const unavailable = postgresUnavailable()
const skip = unavailable !== null && process.env.CI !== 'true'
if (skip) console.warn(`[doctor on PostgreSQL] SKIPPED: ${unavailable}`)

describe.skipIf(skip)('alttext doctor with ALTTEXT_DATABASE_URL', () => {
  let dir: string
  let fake: FakeOllama
  let cluster: PostgresCluster
  const made: string[] = []
  const database = async (options: { empty?: boolean } = {}) => {
    const url = await cluster.createDatabase(options)
    made.push(url)
    return url
  }
  const envFor = (url: string) => ({ ...healthyEnv(dir, fake.url), ALTTEXT_DATABASE_URL: url })
  const role = `doctor_ro_${process.pid}`

  beforeAll(async () => {
    dir = freshDir('doctor-pg')
    fake = await startFakeOllama({ models: ['llava:latest'], reply: 'A red square on a white background.' })
    cluster = await sharedPostgres()
  })
  afterAll(async () => {
    await fake.stop()
    for (const url of made) await cluster.dropDatabase(url)
    const admin = new SQL(cluster.url('postgres'), { max: 1 })
    await admin.unsafe(`DROP ROLE IF EXISTS ${role}`)
    await admin.close()
    rmSync(dir, { recursive: true, force: true })
  })

  test("a clock 5 s or more off the PostgreSQL server's is a WARN with the measured skew, past a minute a FAIL; within 5 s a PASS", async () => {
    const url = await database()
    const measured = async (aheadMs: number) => {
      const checks: CheckResult[] = []
      const facts = await postgresChecks(
        url,
        (check) => checks.push(check),
        () => Date.now() + aheadMs,
      )
      expect(checks.find((check) => check.id === 'database')?.status).toBe('pass')
      return facts.skewMs!
    }
    const five = await measured(5_500)
    expect(five).toBeGreaterThan(5_000)
    expect(databaseClockCheck(five)).toMatchObject({ id: 'clock', status: 'warn' })
    expect(databaseClockCheck(five)!.detail).toMatch(
      /^this machine's clock is 5\.\d\d s ahead of the PostgreSQL server's: replicas should agree within 5\.00 s$/,
    )
    const fifty = await measured(50_000)
    expect(databaseClockCheck(fifty)).toMatchObject({ status: 'warn', detail: expect.stringMatching(/^this machine's clock is (49|50)\.\d\d s ahead/) })
    expect(databaseClockCheck(await measured(-61_000))).toMatchObject({ status: 'fail', detail: expect.stringMatching(/s behind the PostgreSQL server's$/) })
    expect(databaseClockCheck(await measured(0))).toBeNull()
  })

  test('a migrated database: server, permissions, schema, round trip and clock pass; the SQLite checks are not made', async () => {
    const url = await database()
    const where = `127.0.0.1:${cluster.port}/${new URL(url).pathname.slice(1)}`
    const run = await doctorText(envFor(url))
    expect(run.stderr).toBe('')
    expect(run.stdout).not.toContain(TEST_PASSWORD)
    expect(run.line('configuration')).toContain(`database PostgreSQL ${where}`)
    expect(run.line('database')).toMatch(
      new RegExp(`^PASS {2}database: PostgreSQL 1\\d\\.\\S+.* at ${where.replaceAll('.', '\\.')}; 0 connections of alttext replicas open now$`),
    )
    expect(run.line('database permissions')).toMatch(
      /^PASS {2}database permissions: a write committed; reads and writes \d+ tables; may create temporary tables and tables \(migrations\)$/,
    )
    expect(run.line('database schema')).toBe(`PASS  database schema: version ${latestPostgresVersion()}, this binary's`)
    expect(run.line('database round trip')).toMatch(/^PASS {2}database round trip: median \d+\.\d\d ms, slowest \d+\.\d\d ms over 10 round trips$/)
    expect(run.line('database integrity')).toStartWith('SKIP  database integrity: PostgreSQL checks its own pages')
    expect(run.line('database writable')).toBeUndefined()
    // Several replicas and no Redis: the limits hold per replica, and the doctor says so.
    expect(run.line('redis')).toStartWith('WARN  redis: ALTTEXT_REDIS_URL is not set: with several replicas, each keeps its own rate limits')
    expect(run.line('clock')).toMatch(/^PASS {2}clock: \S+Z here; the PostgreSQL server agrees within \d+ s; newest database record \S+Z/)
    // Until credits, batches and webhooks are on PostgreSQL, the service refuses it, and the doctor says so.
    const missing = missingOnPostgres()
    if (missing.length === 0) {
      expect(run.line('PostgreSQL support')).toStartWith('PASS')
      expect(run.code).toBe(0)
    } else {
      expect(run.line('PostgreSQL support')).toStartWith(
        `FAIL  PostgreSQL support: alttext serve of this version refuses PostgreSQL: not on it yet: ${missing.join(', ')}`,
      )
      expect(run.code).toBe(1)
    }
    const json = await doctorJson(envFor(url))
    expect(byId(json.report, 'database_latency')[0]!.ms).toEqual(expect.any(Number))
    expect(json.stdout).not.toContain(TEST_PASSWORD)
  })

  test('an unreachable server fails with host, port and database and a fix; the checks that need it are skipped', async () => {
    const port = freePort()
    const run = await doctorText(envFor(`postgres://alttext:${TEST_PASSWORD}@127.0.0.1:${port}/alttext`))
    expect(run.code).toBe(1)
    expect(run.line('database')).toStartWith(`FAIL  database: cannot connect to PostgreSQL at 127.0.0.1:${port}/alttext`)
    expect(run.line('database')).toContain('fix: start PostgreSQL, or correct the host, port and database in ALTTEXT_DATABASE_URL')
    for (const check of ['database permissions', 'database schema', 'database round trip']) expect(run.line(check)).toStartWith('SKIP')
    expect(run.stdout).not.toContain(TEST_PASSWORD)
  })

  test('a database that does not exist gets the createdb fix', async () => {
    const run = await doctorText(envFor(cluster.url(`missing_${process.pid}`)))
    expect(run.code).toBe(1)
    expect(run.line('database')).toContain('fix: create the database (createdb --owner=USER NAME)')
  })

  test('a new database warns that the first replica migrates it; a newer schema fails', async () => {
    const empty = await doctorText(envFor(await database({ empty: true })))
    expect(empty.line('database schema')).toStartWith(`WARN  database schema: no alttext schema yet; this binary's is version ${latestPostgresVersion()}`)
    const newer = await database()
    const sql = new SQL(newer, { max: 1 })
    await sql`INSERT INTO schema_migrations (version, name, applied_at) VALUES (${latestPostgresVersion() + 1}, 'from the future', 0)`
    await sql.close()
    const run = await doctorText(envFor(newer))
    expect(run.line('database schema')).toStartWith(`FAIL  database schema: version ${latestPostgresVersion() + 1} is newer than this binary knows`)
  })

  test('a user that may only read fails the permissions check, naming the tables and the GRANT', async () => {
    const url = await database()
    const owner = new SQL(url, { max: 1 })
    try {
      await owner.unsafe(`CREATE ROLE ${role} LOGIN`)
      await owner.unsafe(`GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${role}`)
    } finally {
      await owner.close()
    }
    const readOnly = new URL(url)
    readOnly.username = role
    const run = await doctorText(envFor(readOnly.href))
    expect(run.code).toBe(1)
    expect(run.line('database permissions')).toMatch(/^FAIL {2}database permissions: this user may not read and write .*accounts/)
    expect(run.line('database permissions')).toContain('fix: GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public')
    expect(run.stdout).not.toContain(TEST_PASSWORD)
  })

  test('--db FILE checks that SQLite file instead', async () => {
    const run = await doctorText(envFor(await database()), ['--db', `${dir}/nothing-here.db`])
    expect(run.line('database')).toStartWith(`FAIL  database: there is no database at ${dir}/nothing-here.db`)
    expect(run.line('database round trip')).toBeUndefined()
  })
})
