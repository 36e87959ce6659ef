// What only the PostgreSQL store has to get right: migrations beside SQLite's with the same numbers, run
// once when replicas start together, a schema newer than the binary refused, no password in a message,
// the triggers that count waiting batch images, the change feed across a lost connection (the consumer
// forgets everything) and a rolled-back change (never heard), and a replica that goes silent inside a
// transaction (a black-holing proxy): it stops nobody else. Under CI=true it must run.
import { describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SQL } from 'bun'
import { watchAccountChanges } from '../../src/modules/accounts/changes'
import { mintKey } from '../../src/modules/keys/material'
import { createLogger } from '../../src/shared/logger'
import { MIGRATIONS } from '../../src/store/sqlite/migrations'
import { latestPostgresVersion, migratePostgres, POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations'
import { lockAccount } from '../../src/store/postgres/connection'
import { createPostgresStore, missingOnPostgres } from '../../src/store/postgres/store'
import { StoreBusyError } from '../../src/store/contract'
import { freePort, postgresUnavailable, sharedPostgres, startPostgresCluster, TEST_PASSWORD } from '../support/postgres'
import { startTcpProxy } from '../support/tcp-proxy'
import { spawnService } from '../support/process'
import { apiClient, waitUntil } from '../support/service'

const NOW = Date.UTC(2026, 10, 23, 12)
const unavailable = postgresUnavailable()
const ci = process.env.CI === 'true'
if (unavailable && !ci) console.warn(`[postgres store] SKIPPED: ${unavailable}`)

describe('PostgreSQL migrations', () => {
  test('have SQLite’s version numbers and names; a SQLite version without its counterpart keeps PostgreSQL refused', () => {
    const pairs = (list: { version: number; name: string }[]) => list.map((m) => [m.version, m.name]).toSorted((a, b) => Number(a[0]) - Number(b[0]))
    const sqlite = pairs(MIGRATIONS)
    expect(pairs(POSTGRES_MIGRATIONS)).toEqual(sqlite.slice(0, POSTGRES_MIGRATIONS.length))
    const lagging = sqlite.slice(POSTGRES_MIGRATIONS.length).map((p) => p[0])
    expect(missingOnPostgres()).toEqual(lagging.length > 0 ? [`schema version ${lagging.join(', ')}`] : [])
  })
})

describe.skipIf(unavailable !== null && !ci)('the PostgreSQL store', () => {
  /** A database of its own, empty or migrated, dropped after `work`. */
  const withDatabase = async (options: { empty?: boolean }, work: (url: string) => Promise<void>) => {
    const cluster = await sharedPostgres()
    const url = await cluster.createDatabase(options)
    try {
      await work(url)
    } finally {
      await cluster.dropDatabase(url)
    }
  }

  test('replicas starting together on an empty database migrate it once', async () => {
    await withDatabase({ empty: true }, async (url) => {
      const stores = await Promise.all([createPostgresStore(url), createPostgresStore(url), createPostgresStore(url)])
      try {
        const sql = new SQL(url, { max: 1 })
        const rows = (await sql`SELECT version FROM schema_migrations ORDER BY version`) as { version: number }[]
        await sql.close()
        expect(rows.map((r) => r.version)).toEqual(POSTGRES_MIGRATIONS.map((m) => m.version))
        // Every replica works on the one schema.
        const made = await stores[2]!.accounts.createWithKey('one@example.com', 'h', 'free', mintKey(null, null).record, NOW)
        expect(await stores[0]!.accounts.findById(made!.account.id)).toEqual(made!.account)
      } finally {
        for (const store of stores) await store.close()
      }
    })
  }, 60_000)

  test('version 15: an item running before it has an ended lease, so any replica takes it over', async () => {
    await withDatabase({ empty: true }, async (url) => {
      const sql = new SQL(url, { max: 1 })
      try {
        expect(await migratePostgres(sql, 'test', 14)).toEqual(POSTGRES_MIGRATIONS.map((m) => m.version).filter((v) => v <= 14))
        const [{ id }] = await sql`INSERT INTO accounts (email, password_hash, created_at) VALUES ('m@example.com', 'h', 0) RETURNING id`
        await sql`INSERT INTO batches (id, account_id, total, created_at) VALUES ('bat_m', ${id}, 2, 0)`
        await sql`INSERT INTO batch_items (batch_id, idx, status, request) VALUES ('bat_m', 0, 'running', '{}'), ('bat_m', 1, 'pending', '{}')`
        expect(await migratePostgres(sql, 'test', 15)).toEqual([15])
        const rows = await sql`SELECT idx, claim_token, lease_until FROM batch_items ORDER BY idx`
        expect(rows.map((r: Record<string, unknown>) => [r.idx, r.claim_token, r.lease_until === null ? null : Number(r.lease_until)])).toEqual([
          [0, null, 0],
          [1, null, null],
        ])
        expect(Number((await sql`SELECT count(*) AS n FROM credit_holds`)[0].n)).toBe(0)
      } finally {
        await sql.close()
      }
    })
  })

  test('alttext serve on PostgreSQL: two processes share one database; a key revoked on one is refused by the other within 1 s', async () => {
    await withDatabase({}, async (url) => {
      const dir = mkdtempSync(join(tmpdir(), 'alttext-pg-serve-'))
      const env = { ALTTEXT_DATABASE_URL: url, ALTTEXT_DB: join(dir, 'unused.db'), ALTTEXT_PUBLIC_URL: 'http://alttext.test' }
      const replicas = await Promise.all([spawnService(env), spawnService(env)])
      try {
        const [one, two] = replicas.map((r) => apiClient(r.url))
        const account = await one!.register()
        const extra = await two!.post('/api/keys', { label: 'second' }, account.apiKey)
        expect(extra.status).toBe(201)
        expect((await one!.get('/api/usage', extra.body.api_key)).status).toBe(200)
        expect((await two!.post('/api/keys/revoke', { key_prefix: extra.body.prefix }, account.apiKey)).status).toBe(200)
        const revokedAt = performance.now()
        await waitUntil(async () => (await one!.get('/api/usage', extra.body.api_key)).status === 401, 'the revoked key refused by the other process', 1000)
        console.info(`[postgres store] a key revoked on one process was refused by the other after ${Math.round(performance.now() - revokedAt)} ms`)
        for (const replica of replicas) {
          expect(replica.output()).toContain(`"db":"PostgreSQL 127.0.0.1:${new URL(url).port}${new URL(url).pathname}"`)
          expect(replica.output()).not.toContain(TEST_PASSWORD)
        }
        expect(existsSync(join(dir, 'unused.db'))).toBe(false)
      } finally {
        for (const replica of replicas) replica.proc.kill()
        await Promise.all(replicas.map((r) => r.exited))
        rmSync(dir, { recursive: true, force: true })
      }
    })
  }, 60_000)

  test('a database newer than this binary is refused at start, naming the versions', async () => {
    await withDatabase({}, async (url) => {
      const sql = new SQL(url, { max: 1 })
      await sql`INSERT INTO schema_migrations (version, name, applied_at) VALUES (${latestPostgresVersion() + 1}, 'from the future', 0)`
      await sql.close()
      const error = await createPostgresStore(url).catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(Error)
      expect((error as Error).message).toContain(
        `schema version ${latestPostgresVersion() + 1}, newer than this binary knows (${latestPostgresVersion()}); upgrade alttext`,
      )
    })
  })

  test('a database that cannot be reached is refused naming host, port and database, never the password', async () => {
    const port = freePort()
    const error = await createPostgresStore(`postgres://alttext:${TEST_PASSWORD}@127.0.0.1:${port}/alttext`).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(Error)
    expect((error as Error).message).toContain(`cannot connect to PostgreSQL at 127.0.0.1:${port}/alttext`)
    expect((error as Error).message).not.toContain(TEST_PASSWORD)
  })

  test('a database gone while serving: operations reject with StoreBusyError (503 to a client), the probe says why; no password', async () => {
    // A cluster of its own, to stop under the store.
    const cluster = await startPostgresCluster(async () => {})
    let stopped = false
    try {
      const store = await createPostgresStore(await cluster.createDatabase({ empty: true }))
      try {
        const made = await store.accounts.createWithKey('gone@example.com', 'h', 'free', mintKey(null, null).record, NOW)
        await cluster.stop()
        stopped = true
        for (const attempt of [
          () => store.accounts.findById(made!.account.id),
          () => store.keys.create(made!.account.id, mintKey(null, null).record, NOW, 25),
        ]) {
          const error = await attempt().catch((caught: unknown) => caught)
          expect(error).toBeInstanceOf(StoreBusyError)
          expect((error as StoreBusyError).message).toBe('the database cannot be reached right now; retry shortly')
          expect((error as StoreBusyError).detail).toContain(`PostgreSQL at 127.0.0.1:${cluster.port}/`)
          expect((error as StoreBusyError).detail).not.toContain(TEST_PASSWORD)
        }
        await expect(store.probe()).rejects.toThrow(/^PostgreSQL (cannot be reached|did not answer within 3 s)$/)
      } finally {
        await store.close()
      }
    } finally {
      if (!stopped) await cluster.stop()
    }
  }, 60_000)

  test('the bytes of waiting batch images are counted per account by the triggers of version 12', async () => {
    await withDatabase({}, async (url) => {
      const sql = new SQL(url, { max: 1 })
      try {
        const [{ id }] = await sql`INSERT INTO accounts (email, password_hash, created_at) VALUES ('b@example.com', 'h', 0) RETURNING id`
        await sql`INSERT INTO batches (id, account_id, total, created_at) VALUES ('bat_1', ${id}, 2, 0)`
        await sql`INSERT INTO batch_items (batch_id, idx, status, request, image) VALUES ('bat_1', 0, 'pending', '{}', ${Buffer.alloc(100)}), ('bat_1', 1, 'pending', '{}', ${Buffer.alloc(30)})`
        const bytes = async () => Number((await sql`SELECT bytes FROM batch_image_bytes WHERE account_id = ${id}`)[0].bytes)
        expect(await bytes()).toBe(130)
        await sql`UPDATE batch_items SET image = NULL WHERE idx = 0`
        expect(await bytes()).toBe(30)
        await sql`DELETE FROM batches WHERE id = 'bat_1'`
        expect(await bytes()).toBe(0)
      } finally {
        await sql.close()
      }
    })
  })

  test('a change rolled back is never heard; one committed is', async () => {
    await withDatabase({}, async (url) => {
      const store = await createPostgresStore(url)
      try {
        const made = (await store.accounts.createWithKey('rb@example.com', 'h', 'free', mintKey(null, null).record, NOW))!
        await store.db.sql
          .begin(async (tx) => {
            await tx`UPDATE accounts SET plan = 'team' WHERE id = ${made.account.id}`
            throw new Error('roll back')
          })
          .catch(() => {})
        await store.admin.setPlan(made.account.id, 'pro', 10)
        await waitUntil(async () => (await store.changes.since(0)).length > 0, 'the committed change', 1000)
        expect(await store.changes.since(0)).toEqual([{ seq: 1, accountId: made.account.id, change: 'account' }])
      } finally {
        await store.close()
      }
    })
  })

  test('after the listening connection is lost, the consumer forgets every account, and later changes arrive', async () => {
    await withDatabase({}, async (url) => {
      const store = await createPostgresStore(url)
      const other = await createPostgresStore(url)
      const changed: number[] = []
      let lost = 0
      const watcher = watchAccountChanges({
        feed: store.changes,
        logger: createLogger(() => {}),
        changed: (accountId) => changed.push(accountId),
        lost: () => lost++,
      })
      try {
        const made = (await other.accounts.createWithKey('lost@example.com', 'h', 'free', mintKey(null, null).record, NOW))!
        const admin = new SQL(url, { max: 1 })
        // The listening connection of `store` is the one waiting in LISTEN; end it as a network failure would.
        const ended = await admin`SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
          WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid() AND backend_start = (
            SELECT min(backend_start) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%')`
        await admin.close()
        expect(ended).toHaveLength(1)
        await waitUntil(() => lost === 1, 'the consumer to forget every account after the reconnect', 10_000)
        await other.admin.setPlan(made.account.id, 'team', 5)
        await waitUntil(() => changed.includes(made.account.id), 'a change made after the reconnect', 2000)
      } finally {
        watcher.close()
        await other.close()
        await store.close()
      }
    })
  }, 30_000)

  test('a replica silent inside a transaction that holds an account’s row lock stops nobody: every other account is served, that one within the bound', async () => {
    await withDatabase({}, async (url) => {
      const cluster = await sharedPostgres()
      const proxy = startTcpProxy(cluster.port)
      const proxied = new URL(url)
      proxied.port = String(proxy.port)
      // The service's bounds are 10 s idle in a transaction and 3 s per lock wait; shorter here, same rules.
      const limits = { idleInTransactionMs: 4000, lockTimeoutMs: 2000 }
      const a = await createPostgresStore(proxied.href, { max: 2, limits })
      // B's pool is the service's: 10 connections, fewer than the clients retrying on the locked account.
      const b = await createPostgresStore(url, { limits })
      const period = '2026-11'
      try {
        const ids: number[] = []
        for (let i = 0; i < 6; i++)
          ids.push((await b.accounts.createWithKey(`silent${i}@example.com`, 'h', 'free', mintKey(null, null).record, NOW))!.account.id)
        const [locked, ...others] = ids as [number, ...number[]]
        // A takes the account's row lock, then its network goes silent: what it sends next is lost, and
        // PostgreSQL sees its session idle in the transaction, holding the lock.
        const { promise: holding, resolve: held } = Promise.withResolvers<void>()
        const silent = a.db.sql
          .begin(async (tx) => {
            await lockAccount(tx, locked)
            proxy.blackHole()
            held()
            await tx`SELECT 1`
          })
          .catch(() => {})
        await holding
        const refusals: StoreBusyError[] = []
        const otherErrors: unknown[] = []
        let unlocked = false
        // 12 clients retry the locked account on B, each at once after every refusal.
        const retrying = Array.from({ length: 12 }, async () => {
          for (;;) {
            try {
              await b.credits.hold(locked, period, 100, NOW, NOW + 60_000)
              unlocked = true
              return
            } catch (error) {
              if (!(error instanceof StoreBusyError)) return void otherErrors.push(error)
              refusals.push(error)
            }
          }
        })
        const admin = new SQL(url, { max: 1 })
        try {
          const waitingOnLocks = async () =>
            Number((await admin`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)[0].n)
          await waitUntil(async () => (await waitingOnLocks()) > 0, 'a client of the locked account waiting for the row lock')
          // Meanwhile B serves every other account at once, before any client of the locked one is even refused:
          // one connection of its pool waits for the lock, the other clients wait for their turn outside the pool.
          const served = await Promise.all(others.map((id) => b.credits.hold(id, period, 100, NOW, NOW + 60_000)))
          expect(served.every((hold) => typeof hold === 'number')).toBe(true)
          expect(refusals).toEqual([])
          expect(await waitingOnLocks()).toBe(1)
          expect(unlocked).toBe(false)
          // PostgreSQL ends A's silent session after idle_in_transaction_session_timeout: the account is served again.
          await Promise.all(retrying)
          expect(otherErrors).toEqual([])
          expect(refusals.length).toBeGreaterThanOrEqual(12)
          for (const refusal of refusals) {
            expect(refusal.retryAfterSeconds).toBe(1)
            expect(refusal.message).toBe('the database is busy with another change to the same data; nothing was changed, retry shortly')
            expect(refusal.detail).not.toContain(TEST_PASSWORD)
          }
          // The one that waited in PostgreSQL ran into lock_timeout; the others ran out of time for their turn.
          expect(refusals.some((r) => r.detail.includes('SQLSTATE 55P03'))).toBe(true)
          expect(refusals.some((r) => r.detail.includes('waited 2 s for the one before them'))).toBe(true)
          const idle = await admin`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle in transaction'`
          expect(Number(idle[0].n)).toBe(0)
        } finally {
          await admin.close()
        }
        void silent
      } finally {
        proxy.stop()
        await a.db.sql.close({ timeout: 0 })
        await a.close()
        await b.close()
      }
    })
  }, 60_000)

  test('every session of the pool runs under the bounds; a migration lifts them only for itself', async () => {
    await withDatabase({}, async (url) => {
      const store = await createPostgresStore(url)
      try {
        const row = await store.db.sql`SELECT current_setting('idle_in_transaction_session_timeout') AS idle, current_setting('lock_timeout') AS lock,
          current_setting('statement_timeout') AS statement, current_setting('tcp_keepalives_idle') AS keepalive, current_setting('tcp_user_timeout') AS unacked`
        expect(row[0]).toEqual({ idle: '10s', lock: '3s', statement: '30s', keepalive: '30', unacked: '30000' })
        expect(await migratePostgres(store.db.sql, 'test')).toEqual([])
        // Every connection, the one the migration reserved included, has the bounds again.
        const after = await Promise.all(Array.from({ length: 10 }, () => store.db.sql.begin((tx) => tx`SELECT current_setting('lock_timeout') AS lock`)))
        expect(new Set(after.map((r) => r[0].lock))).toEqual(new Set(['3s']))
      } finally {
        await store.close()
      }
    })
  })
})
