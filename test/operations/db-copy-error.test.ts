// `alttext db copy` refuses what it must, says why, and leaves TO without a row of FROM: a TO that is not
// empty, schema versions that differ, a database that cannot be reached (its password never said), the
// same database twice, a service still serving FROM or using TO, a value the other engine cannot hold,
// bad arguments. Under CI=true PostgreSQL must run.
import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { SQL } from 'bun'
import { latestPostgresVersion, migratePostgres } from '../../src/store/postgres/migrations'
import { createPostgresStore } from '../../src/store/postgres/store'
import { latestSchemaVersion } from '../../src/store/sqlite/migrations'
import { createSqliteStore } from '../../src/store/sqlite/store'
import { makeDatabase, scratchDirs } from './backup-support'
import {
  dbCommand,
  POSTGRES_REACHES_SQLITE,
  postgresCounts,
  SHARED_VERSION,
  skipPostgres,
  sqliteAt,
  sqliteCounts,
  sqliteSite,
  sqliteValue,
  unavailable,
  withPostgres,
} from './db-copy-support'
import { freePort, type PostgresCluster, sharedPostgres, TEST_PASSWORD } from '../support/postgres'

if (skipPostgres) console.warn(`[db copy] SKIPPED: ${unavailable}`)

const scratch = scratchDirs()

const noPassword = (run: { stdout: string; stderr: string }) => {
  expect(run.stdout).not.toContain(TEST_PASSWORD)
  expect(run.stderr).not.toContain(TEST_PASSWORD)
}

describe('arguments', () => {
  test('FROM and TO are required, a URL must be postgres:// and name a database; exit 2, no password said', async () => {
    const missing = await dbCommand(['copy', 'only-one.db'])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('give FROM and TO')
    const scheme = await dbCommand(['copy', 'mysql://u:p@host/db', 'x.db'])
    expect(scheme.code).toBe(2)
    expect(scheme.stderr).toContain('FROM must be a SQLite file path or a postgres:// URL')
    const noDatabase = await dbCommand(['copy', 'x.db', `postgres://alttext:${TEST_PASSWORD}@127.0.0.1:5432`])
    expect(noDatabase.code).toBe(2)
    expect(noDatabase.stderr).toContain('TO: names no database')
    noPassword(noDatabase)
    const unknown = await dbCommand(['move', 'a', 'b'])
    expect(unknown.code).toBe(2)
  })

  test('--help says what is copied, that TO must be empty, and the exit codes', async () => {
    const help = await dbCommand(['copy', '--help'])
    expect(help.code).toBe(0)
    for (const words of ['FROM TO', 'must be empty', '--live', 'Exit codes', 'postgres://']) expect(help.stdout).toContain(words)
  })
})

describe('SQLite alone', () => {
  test('FROM that does not exist is refused', async () => {
    const dir = scratch('dbcopy-missing')
    const run = await dbCommand(['copy', join(dir, 'nope.db'), join(dir, 'to.db')])
    expect(run.code).toBe(1)
    expect(run.stderr).toContain(`FROM: there is no database at ${join(dir, 'nope.db')}`)
    expect(existsSync(join(dir, 'to.db'))).toBe(false)
  })

  test('the same file as FROM and TO is refused, however it is spelled', async () => {
    const dir = scratch('dbcopy-same')
    await makeDatabase(join(dir, 'a.db'), 1)
    const run = await dbCommand(['copy', join(dir, 'a.db'), `${dir}/./a.db`])
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('FROM and TO are the same database')
  })

  test('a TO with rows is refused and keeps its rows', async () => {
    const dir = scratch('dbcopy-full')
    await makeDatabase(join(dir, 'a.db'), 2)
    await makeDatabase(join(dir, 'b.db'), 1)
    const run = await dbCommand(['copy', join(dir, 'a.db'), join(dir, 'b.db')])
    expect(run.code).toBe(1)
    // The account's personal membership is one of its rows (migration 18).
    expect(run.stderr).toContain('is not empty: it holds rows (accounts 1, api_keys 1, org_members 1)')
    expect(sqliteCounts(join(dir, 'b.db')).accounts).toBe(1)
  })

  test('a FROM a service is serving is refused; --live copies it as of that moment', async () => {
    const dir = scratch('dbcopy-served')
    await makeDatabase(join(dir, 'a.db'), 2)
    const serving = createSqliteStore(join(dir, 'a.db'))
    try {
      const refused = await dbCommand(['copy', join(dir, 'a.db'), join(dir, 'b.db')])
      expect(refused.code).toBe(1)
      expect(refused.stderr).toContain('an alttext service is serving')
      expect(refused.stderr).toContain('--live')
      expect(existsSync(join(dir, 'b.db'))).toBe(false)
      const live = await dbCommand(['copy', '--live', join(dir, 'a.db'), join(dir, 'b.db')])
      expect(live.stderr).toBe('')
      expect(live.code).toBe(0)
      expect(sqliteCounts(join(dir, 'b.db')).accounts).toBe(2)
    } finally {
      serving.close()
    }
  })

  test('a TO a service is serving is refused', async () => {
    const dir = scratch('dbcopy-served-to')
    await makeDatabase(join(dir, 'a.db'), 1)
    const serving = createSqliteStore(join(dir, 'b.db'))
    try {
      const run = await dbCommand(['copy', join(dir, 'a.db'), join(dir, 'b.db')])
      expect(run.code).toBe(1)
      expect(run.stderr).toContain(`TO: an alttext service is serving ${join(dir, 'b.db')}`)
    } finally {
      serving.close()
    }
  })

  test('FROM at an older schema than TO is refused, saying to upgrade FROM', async () => {
    const dir = scratch('dbcopy-versions')
    sqliteAt(join(dir, 'old.db'), latestSchemaVersion() - 1)
    sqliteAt(join(dir, 'new.db'), latestSchemaVersion())
    const run = await dbCommand(['copy', join(dir, 'old.db'), join(dir, 'new.db')])
    expect(run.code).toBe(1)
    expect(run.stderr).toContain(`TO has schema version ${latestSchemaVersion()}, FROM ${latestSchemaVersion() - 1}: upgrade FROM first`)
  })

  test('an older FROM is copied into a new file at its own version', async () => {
    const dir = scratch('dbcopy-older')
    sqliteAt(join(dir, 'old.db'), latestSchemaVersion() - 1)
    const run = await dbCommand(['copy', join(dir, 'old.db'), join(dir, 'copy.db')])
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    expect(sqliteValue<number>(join(dir, 'copy.db'), 'SELECT max(version) AS v FROM schema_migrations')).toBe(latestSchemaVersion() - 1)
  })

  test('FROM newer than this alttext is refused', async () => {
    const dir = scratch('dbcopy-future')
    await makeDatabase(join(dir, 'a.db'), 1)
    const db = new Database(join(dir, 'a.db'))
    db.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, 0)').run(latestSchemaVersion() + 1, 'from the future')
    db.close()
    const run = await dbCommand(['copy', join(dir, 'a.db'), join(dir, 'b.db')])
    expect(run.code).toBe(1)
    expect(run.stderr).toContain(`has schema version ${latestSchemaVersion() + 1}, newer than this alttext knows for SQLite (${latestSchemaVersion()})`)
    expect(existsSync(join(dir, 'b.db'))).toBe(false)
  })

  test('a file that is not an alttext database is refused as FROM and as TO', async () => {
    const dir = scratch('dbcopy-foreign')
    const foreign = new Database(join(dir, 'other.db'))
    foreign.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)')
    foreign.close()
    await makeDatabase(join(dir, 'a.db'), 1)
    const asFrom = await dbCommand(['copy', join(dir, 'other.db'), join(dir, 'b.db')])
    expect(asFrom.code).toBe(1)
    expect(asFrom.stderr).toContain('is not an alttext database')
    const asTo = await dbCommand(['copy', join(dir, 'a.db'), join(dir, 'other.db')])
    expect(asTo.code).toBe(1)
    expect(asTo.stderr).toContain('holds tables but is not an alttext database')
  })

  test('a TO that changes rows as they go in fails the verification, and keeps none of them', async () => {
    const dir = scratch('dbcopy-tamper')
    await makeDatabase(join(dir, 'a.db'), 2)
    sqliteAt(join(dir, 'b.db'), latestSchemaVersion())
    const target = new Database(join(dir, 'b.db'))
    target.exec("CREATE TRIGGER tamper AFTER INSERT ON accounts BEGIN UPDATE accounts SET plan = 'changed' WHERE id = NEW.id; END")
    target.close()
    const run = await dbCommand(['copy', join(dir, 'a.db'), join(dir, 'b.db')])
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('the copy does not match FROM, so it was rolled back and TO holds none of its rows: accounts: the rows differ')
    expect(sqliteCounts(join(dir, 'b.db'))).toMatchObject({ accounts: 0, api_keys: 0 })
  })

  test('a value that breaks its column is named, and a TO file the copy made is removed again', async () => {
    const dir = scratch('dbcopy-bad-value')
    await makeDatabase(join(dir, 'a.db'), 2)
    const db = new Database(join(dir, 'a.db'))
    // SQLite stores text in an INTEGER column when it is not a number.
    db.exec("UPDATE api_keys SET created_at = 'yesterday' WHERE id = 2")
    db.close()
    const run = await dbCommand(['copy', join(dir, 'a.db'), join(dir, 'b.db')])
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('FROM: the row of api_keys with id 2, in column created_at, holds "yesterday", which is not a valid integer value')
    expect(existsSync(join(dir, 'b.db'))).toBe(false)
  })
})

describe.skipIf(skipPostgres)('with PostgreSQL', () => {
  let cluster: PostgresCluster
  const made: string[] = []
  const database = async (options: { empty?: boolean } = {}) => {
    const url = await cluster.createDatabase(options)
    made.push(url)
    return url
  }
  beforeAll(async () => {
    cluster = await sharedPostgres()
  })
  afterAll(async () => {
    for (const url of made) await cluster.dropDatabase(url)
  })

  test('a PostgreSQL TO with rows is refused and keeps them; its password is never said', async () => {
    const dir = scratch('dbcopy-pg-full')
    sqliteSite(join(dir, 'a.db'), 1)
    const url = await database()
    const first = await dbCommand(['copy', join(dir, 'a.db'), url])
    expect(first.code).toBe(0)
    sqliteSite(join(dir, 'b.db'), 3)
    const run = await dbCommand(['copy', join(dir, 'b.db'), url])
    expect(run.code).toBe(1)
    expect(run.stderr).toContain(`TO (PostgreSQL 127.0.0.1:${cluster.port}/${new URL(url).pathname.slice(1)}) is not empty`)
    noPassword(run)
    expect((await postgresCounts(url)).accounts).toBe(1)
  })

  test('an unreachable database is refused, as FROM and as TO, naming host, port and database but never the password', async () => {
    const dir = scratch('dbcopy-pg-down')
    sqliteSite(join(dir, 'a.db'), 1)
    const port = freePort()
    const url = `postgres://alttext:${TEST_PASSWORD}@127.0.0.1:${port}/alttext`
    const asTo = await dbCommand(['copy', join(dir, 'a.db'), url])
    expect(asTo.code).toBe(1)
    expect(asTo.stderr).toContain(`TO: cannot connect to PostgreSQL at 127.0.0.1:${port}/alttext`)
    noPassword(asTo)
    const asFrom = await dbCommand(['copy', url, join(dir, 'b.db')])
    expect(asFrom.code).toBe(1)
    expect(asFrom.stderr).toContain(`FROM: cannot connect to PostgreSQL at 127.0.0.1:${port}/alttext`)
    noPassword(asFrom)
    expect(existsSync(join(dir, 'b.db'))).toBe(false)
  })

  test('the same PostgreSQL database as FROM and TO is refused', async () => {
    const url = await database()
    const run = await dbCommand(['copy', url, url.replace('127.0.0.1', '127.0.0.1')])
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('FROM and TO are the same database')
    noPassword(run)
  })

  test('a TO that replicas are connected to is refused; so is such a FROM, unless --live', async () => {
    const dir = scratch('dbcopy-pg-replica')
    sqliteSite(join(dir, 'a.db'), 1)
    const url = await database()
    const replica = await createPostgresStore(url)
    try {
      const asTo = await dbCommand(['copy', join(dir, 'a.db'), url])
      expect(asTo.code).toBe(1)
      expect(asTo.stderr).toContain('connection(s) of alttext are open to')
      const asFrom = await dbCommand(['copy', url, join(dir, 'b.db')])
      expect(asFrom.code).toBe(1)
      expect(asFrom.stderr).toContain('stop every alttext service using it first')
      const live = await dbCommand(['copy', '--live', url, join(dir, 'b.db')])
      expect(live.stderr).toBe('')
      expect(live.code).toBe(0)
    } finally {
      await replica.close()
    }
  })

  test('a PostgreSQL TO at a newer schema than FROM is refused; an older empty one is migrated to FROM’s', async () => {
    const dir = scratch('dbcopy-pg-versions')
    sqliteAt(join(dir, 'old.db'), SHARED_VERSION - 1)
    const newer = await database()
    const refused = await dbCommand(['copy', join(dir, 'old.db'), newer])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain(`TO has schema version ${latestPostgresVersion()}, FROM ${SHARED_VERSION - 1}: upgrade FROM first`)

    sqliteSite(join(dir, 'current.db'), 1)
    const older = await database({ empty: true })
    await withPostgres(older, (sql) => migratePostgres(sql, 'the test database', SHARED_VERSION - 1))
    const run = await dbCommand(['copy', join(dir, 'current.db'), older, '--json'])
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout).migrated).toBe(true)
    const version = await withPostgres(older, async (sql) => ((await sql`SELECT max(version) AS v FROM schema_migrations`) as { v: number }[])[0]!.v)
    expect(version).toBe(SHARED_VERSION)
  })

  test.skipIf(POSTGRES_REACHES_SQLITE)('a SQLite FROM at a version PostgreSQL does not reach yet is refused, naming both', async () => {
    const dir = scratch('dbcopy-pg-ahead')
    await makeDatabase(join(dir, 'a.db'), 1)
    const run = await dbCommand(['copy', join(dir, 'a.db'), await database({ empty: true })])
    expect(run.code).toBe(1)
    expect(run.stderr).toContain(
      `FROM has schema version ${latestSchemaVersion()}, but this alttext's PostgreSQL schema reaches only version ${latestPostgresVersion()}`,
    )
  })

  test('a flag PostgreSQL cannot hold (SQLite 0/1) is named, and TO is left without a row', async () => {
    const dir = scratch('dbcopy-pg-flag')
    sqliteSite(join(dir, 'a.db'), 1)
    const db = new Database(join(dir, 'a.db'))
    const accountId = db.query<{ id: number }, []>('SELECT id FROM accounts').get()!.id
    db.query(
      `INSERT INTO generation_history (id, account_id, created_at, source, format, bytes, width, height, alt_text, decorative, language, style, max_length, cached, character_count)
       VALUES ('gen-1', ?, 0, 'url', 'png', 1, 1, 1, 'x', 2, 'en', 'descriptive', 125, 0, 1)`,
    ).run(accountId)
    db.close()
    const url = await database()
    const run = await dbCommand(['copy', join(dir, 'a.db'), url])
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('FROM: the row of generation_history with id gen-1, in column decorative, holds 2, which is not a valid boolean value')
    const counts = await postgresCounts(url)
    expect(counts.accounts).toBe(0)
    expect(counts.api_keys).toBe(0)
  })

  test('a PostgreSQL TO that changes rows as they go in fails the verification, and keeps none of them', async () => {
    const dir = scratch('dbcopy-pg-tamper')
    sqliteSite(join(dir, 'a.db'), 2)
    const url = await database()
    await withPostgres(url, async (sql) => {
      await sql.unsafe("CREATE FUNCTION tamper() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.label := 'changed'; RETURN NEW; END $$")
      await sql.unsafe('CREATE TRIGGER tamper BEFORE INSERT ON api_keys FOR EACH ROW EXECUTE FUNCTION tamper()')
    })
    const run = await dbCommand(['copy', join(dir, 'a.db'), url])
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('the copy does not match FROM, so it was rolled back and TO holds none of its rows: api_keys: the rows differ')
    expect(await postgresCounts(url)).toMatchObject({ accounts: 0, api_keys: 0 })
  })

  test('a PostgreSQL FROM without the alttext schema is refused', async () => {
    const url = await database({ empty: true })
    const sql = new SQL(url, { max: 1 })
    await sql`CREATE TABLE notes (id bigint PRIMARY KEY)`
    await sql.close()
    const run = await dbCommand(['copy', url, join(scratch('dbcopy-pg-foreign'), 'b.db')])
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('is not an alttext database: it has no schema_migrations table')
  })
})
