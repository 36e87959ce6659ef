// `alttext admin` against PostgreSQL (ALTTEXT_DATABASE_URL or --database-url), as an operator runs it (in
// this process, on connections of its own) on a database of the test harness, beside a replica's store, which hears each change.
// Under CI=true PostgreSQL must run.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { SQL } from 'bun'
import { hashKey } from '../../src/modules/keys/material'
import { latestPostgresVersion } from '../../src/store/postgres/migrations'
import { createPostgresStore, type PostgresStore } from '../../src/store/postgres/store'
import { freePort, type PostgresCluster, postgresUnavailable, sharedPostgres, TEST_PASSWORD } from '../support/postgres'
import { runCli } from '../support/process'
import { waitUntil } from '../support/service'

setDefaultTimeout(60_000)

const unavailable = postgresUnavailable()
const skip = unavailable !== null && process.env.CI !== 'true'
if (skip) console.warn(`[admin on PostgreSQL] SKIPPED: ${unavailable}`)

describe.skipIf(skip)('alttext admin on PostgreSQL', () => {
  let cluster: PostgresCluster
  let url: string
  let replica: PostgresStore
  const made: string[] = []
  const admin = (...args: string[]) => runCli(['admin', ...args], { ALTTEXT_DATABASE_URL: url, ALTTEXT_PUBLIC_URL: 'http://alttext.test' })
  const json = async (...args: string[]) => {
    const result = await admin(...args, '--json')
    if (result.code !== 0) throw new Error(`admin ${args.join(' ')} exited ${result.code}: ${result.stderr}`)
    return JSON.parse(result.stdout)
  }
  const email = `op-${process.pid}@example.com`

  beforeAll(async () => {
    cluster = await sharedPostgres()
    url = await cluster.createDatabase()
    made.push(url)
    replica = await createPostgresStore(url)
  })
  afterAll(async () => {
    await replica.close()
    for (const database of made) await cluster.dropDatabase(database)
  })

  test('accounts create makes the account and prints its first key, which the store finds', async () => {
    const created = await json('accounts', 'create', email)
    expect(created).toMatchObject({ email, plan: 'free', mailed: false })
    const found = await replica.keys.findByHash(hashKey(created.api_key))
    expect(found?.account.email).toBe(email)
    expect(found?.key.prefix).toBe(created.prefix)
  })

  test('accounts list and show read the accounts, their credits and keys', async () => {
    const listed = await json('accounts', 'list')
    expect(listed.accounts).toEqual([expect.objectContaining({ email, plan: 'free', status: 'active', keys: 1 })])
    expect(listed.accounts[0].credits).toEqual({ total: 50, used: 0, remaining: 50, monthly: 50, granted: 0 })
    const shown = await json('accounts', 'show', email)
    expect(shown.active_keys).toHaveLength(1)
    const text = await admin('accounts', 'list')
    expect(text.code).toBe(0)
    expect(text.stdout).toContain(email)
  })

  test('plans set and credits grant change the credits; the replica hears of each change', async () => {
    const accountId = (await replica.accounts.findByEmail(email))!.id
    const heard = async (kind: string) => {
      const since = await replica.changes.latest()
      return async () => (await replica.changes.since(since)).some((c) => c.accountId === accountId && c.change === kind)
    }
    const plan = await heard('account')
    const set = await admin('plans', 'set', email, '--credits', '500', '--name', 'team')
    expect(set.code).toBe(0)
    expect(set.stdout).toContain('plan team')
    await waitUntil(plan, 'the replica to hear of the plan')

    const grant = await heard('credits')
    const granted = await admin('credits', 'grant', email, '7')
    expect(granted.code).toBe(0)
    await waitUntil(grant, 'the replica to hear of the grant')
    const shown = await json('accounts', 'show', email)
    expect(shown.account).toMatchObject({ plan: 'team', credits: { total: 507, used: 0, remaining: 507, monthly: 500, granted: 7 } })

    const reset = await admin('plans', 'reset', email)
    expect(reset.code).toBe(0)
    expect((await replica.accounts.findByEmail(email))!.monthlyCredits).toBeNull()
  })

  test('accounts disable and enable, then delete; --database-url works without the variable', async () => {
    const disabled = await admin('accounts', 'disable', email)
    expect(disabled.code).toBe(0)
    expect((await replica.accounts.findByEmail(email))!.disabledAt).not.toBeNull()
    const enabled = await runCli(['admin', 'accounts', 'enable', email, '--database-url', url])
    expect(enabled.code).toBe(0)
    expect((await replica.accounts.findByEmail(email))!.disabledAt).toBeNull()
    const refused = await admin('accounts', 'delete', email)
    expect(refused.code).toBe(2)
    const deleted = await admin('accounts', 'delete', email, '--yes')
    expect(deleted.code).toBe(0)
    expect(deleted.stdout).toContain(`deleted ${email} with 1 API key`)
    expect(await replica.accounts.findByEmail(email)).toBeNull()
    const missing = await admin('accounts', 'show', email)
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain(`no account has the email ${email}`)
  })

  test('an unreachable database is a failure naming host, port and database, never the password', async () => {
    const port = freePort()
    const down = `postgres://alttext:${TEST_PASSWORD}@127.0.0.1:${port}/alttext`
    const result = await runCli(['admin', 'accounts', 'list'], { ALTTEXT_DATABASE_URL: down })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`ALTTEXT_DATABASE_URL: cannot connect to PostgreSQL at 127.0.0.1:${port}/alttext`)
    expect(result.stderr).not.toContain(TEST_PASSWORD)
    const byFlag = await runCli(['admin', 'accounts', 'list', '--database-url', down])
    expect(byFlag.stderr).toContain(`--database-url: cannot connect to PostgreSQL at 127.0.0.1:${port}/alttext`)
    expect(byFlag.stderr).not.toContain(TEST_PASSWORD)
  })

  test('a database without the schema, or at another version, is refused and left as it is', async () => {
    const empty = await cluster.createDatabase({ empty: true })
    made.push(empty)
    const none = await runCli(['admin', 'accounts', 'list'], { ALTTEXT_DATABASE_URL: empty })
    expect(none.code).toBe(1)
    expect(none.stderr).toContain('has no alttext schema')
    const sql = new SQL(empty, { max: 1 })
    try {
      expect(((await sql`SELECT to_regclass('schema_migrations') AS t`) as { t: string | null }[])[0]!.t).toBeNull()
    } finally {
      await sql.close()
    }

    const newer = await cluster.createDatabase()
    made.push(newer)
    const future = new SQL(newer, { max: 1 })
    await future`INSERT INTO schema_migrations (version, name, applied_at) VALUES (${latestPostgresVersion() + 1}, 'from the future', 0)`
    await future.close()
    const ahead = await runCli(['admin', 'accounts', 'list'], { ALTTEXT_DATABASE_URL: newer })
    expect(ahead.code).toBe(1)
    expect(ahead.stderr).toContain(`schema version ${latestPostgresVersion() + 1}, newer than this binary knows`)
  })

  test('--db and --database-url together are a usage error; a bad --database-url is named by the flag', async () => {
    const both = await runCli(['admin', 'accounts', 'list', '--db', '/tmp/x.db', '--database-url', url])
    expect(both.code).toBe(2)
    expect(both.stderr).toContain('give --db FILE or --database-url URL, not both')
    const bad = await runCli(['admin', 'accounts', 'list', '--database-url', `mysql://alttext:${TEST_PASSWORD}@127.0.0.1/alttext`])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('--database-url: must use postgres or postgresql')
    expect(bad.stderr).not.toContain(TEST_PASSWORD)
  })
})
