// A replica whose network to PostgreSQL goes silent (a black-holing proxy in front of it: the sockets stay
// open, nothing passes, nothing closes), in the two ways that once stopped the tier or kept it stale.
//
// Inside a transaction that holds an account's row lock: the other replica must go on serving every other
// account, answer that one's requests with 503 `database_busy` and Retry-After (a lock wait is bounded),
// and serve it again once PostgreSQL ends the silent session (idle_in_transaction_session_timeout).
//
// On its listening connection: the other replica's changes (here another store on the same database, as a
// second replica or alttext admin makes them) must still reach it within the feed's bound: it stops
// trusting its caches as soon as its own heartbeat does not come back, says so in /ready (200, a failed
// `changes` check) and in its log, once, reconnects, and trusts its caches again once it hears again.
//
// The real service runs in this process on a store whose bounds the test shortens (the service's: 10 s idle
// in a transaction, 3 s per lock wait, a heartbeat every 250 ms, stale after 1 s). Under CI=true
// PostgreSQL must run.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SQL } from 'bun'
import { createCalendar } from '../../src/shared/time'
import { lockAccount } from '../../src/store/postgres/connection'
import { createPostgresStore, type PostgresStore } from '../../src/store/postgres/store'
import { startFakeOllama, type FakeOllama } from '../support/fake-ollama'
import { type PostgresCluster, postgresUnavailable, sharedPostgres, TEST_PASSWORD } from '../support/postgres'
import { startTestService, type TestService, waitUntil } from '../support/service'
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy'

setDefaultTimeout(30_000)

const unavailable = postgresUnavailable()
const skip = unavailable !== null && process.env.CI !== 'true'
if (skip) console.warn(`[silent network] SKIPPED: ${unavailable}`)

/** The feed's timing here: stale after 400 ms without its heartbeat. */
const TIMING = { heartbeatMs: 50, staleMs: 400, subscribeTimeoutMs: 1000 }
/** Within this a change must reach the replica whatever its listening connection does: the staleness bound and a poll, with room for a busy machine. */
const BOUND_MS = 3000
/** Only the listening connection sends this. */
const listening = (sent: string) => sent.includes('LISTEN')

/** A new database of the shared cluster, and its URL through a proxy that can black-hole the traffic. */
async function proxiedDatabase() {
  const cluster = await sharedPostgres()
  const url = await cluster.createDatabase()
  const proxy = startTcpProxy(cluster.port)
  const proxied = new URL(url)
  proxied.port = String(proxy.port)
  return { cluster, url, proxy, proxied }
}

describe.skipIf(skip)('a replica whose change feed dies silently', () => {
  let cluster: PostgresCluster
  let url: string
  let proxy: TcpProxy
  let fake: FakeOllama
  let service: TestService
  let other: PostgresStore
  let dir: string

  beforeAll(async () => {
    const made = await proxiedDatabase()
    ;({ cluster, url, proxy } = made)
    const { proxied } = made
    fake = await startFakeOllama({ models: ['llava:latest'] })
    dir = mkdtempSync(join(tmpdir(), 'alttext-feed-'))
    const store = await createPostgresStore(proxied.href, { feed: { timing: TIMING } })
    service = await startTestService({ dir, env: { OLLAMA_HOST: fake.url, ALTTEXT_RATE_LIMITS: 'off', ALTTEXT_FREE_CREDITS: '3' }, overrides: { store } })
    other = await createPostgresStore(url)
  })
  afterAll(async () => {
    proxy.endBlackHole()
    await service?.stop()
    await other?.close()
    proxy?.stop()
    await fake?.stop()
    await cluster?.dropDatabase(url)
    rmSync(dir, { recursive: true, force: true })
  })

  const ready = () => service.api.get('/ready')
  const logged = (msg: string) => service.logs.filter((l) => l.msg === msg).length
  const SILENT =
    'not hearing account changes from PostgreSQL (the listening connection is silent); reading every account from the database until they are heard again'
  const HEARD = 'account changes from PostgreSQL are heard again; caching accounts in memory again'

  test('while heard: /ready has a passing `changes` check', async () => {
    // On a loaded machine a heartbeat can come late (the bound is 400 ms): heard is a state to reach.
    // The answer that showed it heard is the one checked: under load the next heartbeat may already be late.
    let res = await ready()
    await waitUntil(async () => {
      res = await ready()
      return res.body.checks.changes.ok === true
    }, 'the feed to be heard')
    expect(res.status).toBe(200)
    expect(res.body.checks.changes).toEqual({ ok: true, detail: 'hearing account changes' })
  })

  test('a grant and a revocation made elsewhere reach it within the bound; /ready and the log say the feed is silent; it hears again once the network does', async () => {
    const account = await service.api.register()
    const second = await service.api.post('/api/keys', { label: 'second' }, account.apiKey)
    expect(second.status).toBe(201)
    // Both keys and the account's counts are in memory now.
    expect((await service.api.get('/api/usage', second.body.api_key)).status).toBe(200)
    const before = await service.api.get('/api/usage', account.apiKey)
    expect(before.body.credits.total).toBe(3)
    const id = (await other.accounts.findByEmail(account.email))!.id

    // Counted from here: a late heartbeat before the black hole may have logged the line already.
    const silentBefore = logged(SILENT)
    const heardBefore = logged(HEARD)
    proxy.blackHole(listening)
    expect(proxy.blackHoled()).toBe(1)
    const period = createCalendar().periodOf(Date.now()).id
    await other.admin.grant(id, period, 5)
    await other.keys.revoke(id, second.body.prefix, Date.now())
    const changedAt = performance.now()

    await waitUntil(async () => (await service.api.get('/api/usage', account.apiKey)).body.credits.total === 8, 'the grant to reach the replica', BOUND_MS)
    await waitUntil(async () => (await service.api.get('/api/usage', second.body.api_key)).status === 401, 'the revocation to reach the replica', BOUND_MS)
    console.info(
      `[silent network] with the listener black-holed, a grant and a revocation reached the replica after ${Math.round(performance.now() - changedAt)} ms`,
    )

    await waitUntil(() => logged(SILENT) === silentBefore + 1, 'the log line of the silent feed')
    const degraded = await ready()
    expect(degraded.status).toBe(200)
    expect(degraded.body.status).toBe('ready')
    expect(degraded.body.checks.changes.ok).toBe(false)
    expect(degraded.body.checks.changes.detail).toStartWith('not hearing account changes for over 400 ms: reconnecting')
    // Served correctly meanwhile, from the database: still the grant, still refused.
    expect((await service.api.get('/api/usage', account.apiKey)).body.credits.total).toBe(8)

    proxy.endBlackHole()
    await waitUntil(async () => (await ready()).body.checks.changes.ok === true, 'the feed to be heard again after the reconnect', 10_000)
    await waitUntil(() => logged(HEARD) === heardBefore + 1, 'the log line of the feed heard again')
    expect(logged(SILENT)).toBe(silentBefore + 1)
    // The new listening connection carries changes again.
    await other.admin.setDisabled(id, Date.now())
    await waitUntil(async () => (await service.api.get('/api/usage', account.apiKey)).status === 403, 'the disabled account refused through the feed', BOUND_MS)
  })
})

describe.skipIf(skip)('a replica silent inside a transaction that holds an account’s row lock', () => {
  const LIMITS = { idleInTransactionMs: 4000, lockTimeoutMs: 2000 }
  let cluster: PostgresCluster
  let url: string
  let proxy: TcpProxy
  let silent: PostgresStore
  let service: TestService

  beforeAll(async () => {
    const made = await proxiedDatabase()
    ;({ cluster, url, proxy } = made)
    const { proxied } = made
    // Replica A is a store here: all it has to do is take the lock and fall silent.
    silent = await createPostgresStore(proxied.href, { max: 2, limits: LIMITS })
    // Replica B: the service, on its pool of 10, fewer than the clients retrying on the locked account.
    service = await startTestService({ env: { ALTTEXT_RATE_LIMITS: 'off' }, overrides: { store: await createPostgresStore(url, { limits: LIMITS }) } })
  })
  afterAll(async () => {
    await service?.stop()
    proxy?.stop()
    await silent?.db.sql.close({ timeout: 0 })
    await silent?.close()
    await cluster?.dropDatabase(url)
  })

  test('the other replica serves every other account at once, that one with 503 database_busy and Retry-After, then again', async () => {
    const locked = await service.api.register()
    const others = await Promise.all(Array.from({ length: 5 }, () => service.api.register()))
    const id = (await silent.accounts.findByEmail(locked.email))!.id
    const { promise: holding, resolve: held } = Promise.withResolvers<void>()
    void silent.db.sql
      .begin(async (tx) => {
        await lockAccount(tx, id)
        proxy.blackHole()
        held()
        await tx`SELECT 1`
      })
      .catch(() => {})
    await holding
    const admin = new SQL(url, { max: 1 })
    const lockWaits = async () =>
      Number((await admin`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)[0].n)

    const refusals: { status: number; code: string; retryAfter: string | null }[] = []
    let served = 0
    // 12 clients create a key of the locked account, each retrying at once after every 503 (harder on B than Retry-After asks).
    const retrying = Array.from({ length: 12 }, async () => {
      for (;;) {
        const res = await service.api.post('/api/keys', { label: 'retried' }, locked.apiKey)
        if (res.status === 201) return void served++
        refusals.push({ status: res.status, code: res.body?.error?.code, retryAfter: res.headers.get('retry-after') })
        if (res.status !== 503) return
      }
    })
    // The requests are in: one waits in PostgreSQL for the row lock, the others for their turn outside B's pool.
    await waitUntil(async () => (await lockWaits()) > 0, 'a request of the locked account waiting for the row lock')
    const created = await Promise.all(others.map((other) => service.api.post('/api/keys', { label: 'other' }, other.apiKey)))
    expect(created.map((res) => res.status)).toEqual([201, 201, 201, 201, 201])
    expect((await service.api.get('/ready')).body.checks.database).toEqual({ ok: true, detail: 'writable' })
    // All of that before any request of the locked account was even refused.
    expect(refusals).toEqual([])
    expect(served).toBe(0)

    await Promise.all(retrying)
    expect(served).toBe(12)
    expect(new Set(refusals.map((r) => JSON.stringify(r)))).toEqual(new Set([JSON.stringify({ status: 503, code: 'database_busy', retryAfter: '1' })]))
    const warned = service.logs.filter((l) => JSON.stringify(l).includes('55P03'))
    expect(warned.length).toBeGreaterThan(0)
    expect(service.logText()).not.toContain(TEST_PASSWORD)
    await admin.close()
  })
})
