// /ready on PostgreSQL: 503 `not_ready` while the database cannot be reached, 200 again once it can, and
// a public body that names no host, port, database or password. `alttext serve` still refuses PostgreSQL
// while credits, batches and webhooks are not on it, so the real app is started with a store made of the
// PostgreSQL store and, for those three parts only, a SQLite one (the app factory's store override); the
// readiness probe is the PostgreSQL store's. The database is reached through a loopback TCP proxy that the
// test cuts and restores. Under CI=true PostgreSQL must run.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SQL } from 'bun'
import { createPostgresStore } from '../../src/store/postgres/store'
import { createSqliteStore } from '../../src/store/sqlite/store'
import type { Store } from '../../src/store/contract'
import { startFakeOllama, type FakeOllama } from '../support/fake-ollama'
import { type PostgresCluster, postgresUnavailable, sharedPostgres, TEST_PASSWORD } from '../support/postgres'
import { startTestService, type TestService, waitUntil } from '../support/service'
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy'

setDefaultTimeout(30_000)

const unavailable = postgresUnavailable()
const skip = unavailable !== null && process.env.CI !== 'true'
if (skip) console.warn(`[/ready on PostgreSQL] SKIPPED: ${unavailable}`)

describe.skipIf(skip)('/ready on PostgreSQL', () => {
  let cluster: PostgresCluster
  let url: string
  let proxy: TcpProxy
  let fake: FakeOllama
  let service: TestService
  let dir: string
  let database: string

  beforeAll(async () => {
    cluster = await sharedPostgres()
    url = await cluster.createDatabase()
    database = new URL(url).pathname.slice(1)
    proxy = startTcpProxy(cluster.port)
    const proxied = new URL(url)
    proxied.port = String(proxy.port)
    fake = await startFakeOllama({ models: ['llava:latest'] })
    dir = mkdtempSync(join(tmpdir(), 'alttext-ready-pg-'))
    const postgres = await createPostgresStore(proxied.href)
    const sqlite = createSqliteStore(join(dir, 'parts.db'))
    const store: Store = {
      ...sqlite,
      ...postgres,
      close: async () => {
        await postgres.close()
        sqlite.close()
      },
    }
    service = await startTestService({ dir, env: { OLLAMA_HOST: fake.url, ALTTEXT_RATE_LIMITS: 'off' }, overrides: { store } })
  })
  afterAll(async () => {
    proxy.restore()
    await service.stop()
    proxy.stop()
    await fake.stop()
    await cluster.dropDatabase(url)
    rmSync(dir, { recursive: true, force: true })
  })

  const ready = () => service.api.get('/ready')
  const expectNothingNamed = (text: string) => {
    for (const secret of [TEST_PASSWORD, database, String(cluster.port), String(proxy.port), '127.0.0.1']) expect(text).not.toContain(secret)
  }

  test('answers 200 while PostgreSQL takes the probe’s write', async () => {
    const res = await ready()
    expect(res.status).toBe(200)
    expect(res.body.checks.database).toEqual({ ok: true, detail: 'writable' })
    const sql = new SQL(url, { max: 1 })
    try {
      const [row] = (await sql`SELECT checked_at FROM health_probe WHERE id = 1`) as { checked_at: string }[]
      expect(Number(row!.checked_at)).toBeGreaterThan(0)
    } finally {
      await sql.close()
    }
  })

  test('answers 503 not_ready while PostgreSQL cannot be reached, naming nothing; /health still 200', async () => {
    proxy.cut()
    const res = await ready()
    expect(res.status).toBe(503)
    expect(res.body.error.code).toBe('not_ready')
    expect(res.body.checks.database.ok).toBe(false)
    expect(res.body.checks.database.detail).toMatch(/^write probe failed: PostgreSQL (cannot be reached|did not answer within 3 s)$/)
    expect(res.body.checks.model.ok).toBe(true)
    expectNothingNamed(res.text)
    expect((await service.api.get('/health')).status).toBe(200)
    // The operator's log says where.
    await waitUntil(() => service.logs.some((l) => l.msg === 'readiness check failed' && l.check === 'database'), 'the operator log line')
    expect(service.logText()).not.toContain(TEST_PASSWORD)
  })

  test('answers 200 again once PostgreSQL can be reached', async () => {
    proxy.restore()
    await waitUntil(async () => (await ready()).status === 200, '/ready to answer 200 again', 15_000)
  })

  test('answers 200 again after PostgreSQL ended every connection of the service', async () => {
    const sql = new SQL(url, { max: 1 })
    try {
      await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'alttext'`
    } finally {
      await sql.close()
    }
    await waitUntil(async () => (await ready()).status === 200, '/ready to answer 200 again', 15_000)
  })
})
