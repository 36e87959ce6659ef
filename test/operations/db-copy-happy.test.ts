// `alttext db copy` moves a real site to PostgreSQL and back: a service fills a SQLite file over HTTP
// (accounts, keys, a generation, a batch with a webhook, a batch still waiting with its uploaded images, a
// session, history, a reset link, a deleted account), the copy goes to a PostgreSQL database of the test
// harness, the PostgreSQL store finds what the service wrote, and the copy back to a new SQLite file is
// served as before: the same answers, the waiting batch finishes, and no id is given twice. While a SQLite
// migration has no PostgreSQL counterpart yet, such a site cannot go to PostgreSQL: then it goes to a new
// SQLite file and is served from there, the copy to PostgreSQL is refused naming both versions, and a site
// written by the PostgreSQL store makes the trip the other way (PostgreSQL, SQLite, PostgreSQL) and is
// served from the SQLite copy. Under CI=true PostgreSQL must run.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hashKey, mintKey } from '../../src/modules/keys/material'
import { randomToken, sha256Hex } from '../../src/shared/crypto'
import { createCalendar } from '../../src/shared/time'
import { latestPostgresVersion } from '../../src/store/postgres/migrations'
import { createPostgresStore } from '../../src/store/postgres/store'
import { latestSchemaVersion } from '../../src/store/sqlite/migrations'
import { startFakeOllama, type FakeOllama } from '../support/fake-ollama'
import { startHttpsImageServer, type HttpsImageServer } from '../support/https-image-server'
import { makeJpeg, makePng } from '../support/images'
import { type PostgresCluster, sharedPostgres } from '../support/postgres'
import { runCli } from '../support/process'
import { type RegisteredAccount, startTestService, type TestService, waitUntil } from '../support/service'
import { CHEAP_PASSWORDS, signIn, withSession } from '../support/session'
import { deliveries, endedBatch, FAST_WEBHOOKS, makeSecret, type Receiver, startReceiver, waitForDelivery } from '../webhooks/support'
import {
  dbCommand,
  NOT_COPIED,
  POSTGRES_REACHES_SQLITE,
  postgresCounts,
  skipPostgres,
  sqliteCounts,
  sqliteValue,
  unavailable,
  withPostgres,
} from './db-copy-support'

if (skipPostgres) console.warn(`[db copy] SKIPPED: ${unavailable}`)

/** The SQLite site can go to PostgreSQL and back with this binary. */
const roundTrip = !skipPostgres && POSTGRES_REACHES_SQLITE

describe('alttext db copy: a SQLite site to PostgreSQL and back', () => {
  let ollama: FakeOllama
  let images: HttpsImageServer
  let receiver: Receiver
  let cluster: PostgresCluster
  let pgUrl: string
  const dirs: string[] = []
  const freshDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'alttext-dbcopy-'))
    dirs.push(dir)
    return dir
  }
  let sourceDir: string
  let copyDir: string
  let backDir: string

  let a: RegisteredAccount
  let deletedId: number
  let cookie: string
  let sessionToken: string
  let waitingBatch: string
  /** What the service answered before the copy, to compare with what it answers after. */
  const before: Record<string, any> = {}

  const start = (dir: string): Promise<TestService> =>
    startTestService({
      dir,
      // The source is SQLite whatever engine the other tests use.
      env: {
        OLLAMA_HOST: ollama.url,
        ALTTEXT_MODEL: 'llava',
        ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS: '127.0.0.1',
        NODE_EXTRA_CA_CERTS: images.caPath,
        ALTTEXT_RATE_LIMITS: 'off',
        ALTTEXT_DATABASE_URL: '',
      },
      overrides: { ...FAST_WEBHOOKS, passwords: CHEAP_PASSWORDS },
    })

  beforeAll(async () => {
    ollama = await startFakeOllama({ reply: 'Two children flying a red kite on a windy beach.' })
    images = await startHttpsImageServer()
    receiver = startReceiver(images)
    if (!skipPostgres) {
      cluster = await sharedPostgres()
      pgUrl = await cluster.createDatabase({ empty: true })
    }
    sourceDir = freshDir()
    copyDir = freshDir()
    backDir = freshDir()
  })
  afterAll(async () => {
    await Promise.all([ollama.stop(), images.stop()])
    if (pgUrl) await cluster.dropDatabase(pgUrl)
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  })

  test('a service fills the SQLite file over HTTP', async () => {
    const service = await start(sourceDir)
    try {
      const { api } = service
      a = await api.register()
      const imageUrl = images.route(`/kite-${process.pid}.png`, { kind: 'bytes', body: makePng(64, 48) })
      const generated = await api.post('/api/alt-text', { image_url: imageUrl }, a.apiKey)
      expect(generated.status).toBe(200)

      const second = await api.request('POST', '/api/keys', { key: a.apiKey, body: { label: 'ci' } })
      expect(second.status).toBe(201)
      expect((await api.request('POST', '/api/keys/revoke', { key: a.apiKey, body: { key_prefix: second.body.prefix } })).status).toBe(200)

      receiver.useSecret(await makeSecret(api, a.apiKey))
      const hooked = await endedBatch(api, a.apiKey, imageUrl, receiver.url)
      await waitForDelivery(api, a.apiKey, hooked, (d) => d.status === 'delivered')

      const signed = await signIn(service, a.email, a.password)
      cookie = signed.cookie
      sessionToken = signed.token
      expect((await api.post('/api/forgot-password', { email: a.email })).status).toBe(202)

      // An account made and deleted: the copy must not give its id to anyone else.
      const b = await api.register()
      deletedId = sqliteValue<number>(service.dbPath, 'SELECT id FROM accounts WHERE email = ?', b.email)
      const bSession = await signIn(service, b.email, b.password)
      expect((await withSession(service, bSession.cookie, 'DELETE', '/api/account', { password: b.password })).status).toBe(200)
      expect(deletedId).toBeGreaterThan(sqliteValue<number>(service.dbPath, 'SELECT id FROM accounts WHERE email = ?', a.email))

      // A batch still waiting when the service stops: its uploaded images are in the database.
      ollama.behave({ hang: true })
      const base64 = (w: number) => Buffer.from(makeJpeg(w, 21)).toString('base64')
      const waiting = await api.request('POST', '/api/batches', {
        key: a.apiKey,
        body: { items: [{ image_base64: base64(31) }, { image_base64: base64(33) }] },
      })
      expect(waiting.status).toBe(202)
      waitingBatch = waiting.body.id
      await ollama.waitFor(() => ollama.inFlight() > 0)

      before.daily = (await api.get('/api/usage/history', a.apiKey)).body
      before.history = (await api.get('/api/history', a.apiKey)).body
      before.keys = (await api.get('/api/keys', a.apiKey)).body
      before.deliveries = await deliveries(api, a.apiKey)
      before.batches = (await api.get('/api/batches', a.apiKey)).body
      // Last: its count of today's calls includes every call before it.
      before.usage = (await api.get('/api/usage', a.apiKey)).body
      expect(before.history.items.length).toBeGreaterThanOrEqual(2)
    } finally {
      await service.stop()
      ollama.behave({ hang: false })
      ollama.release()
    }
    expect(sqliteValue<number>(join(sourceDir, 'alttext.db'), 'SELECT count(*) AS n FROM batch_items WHERE image IS NOT NULL')).toBe(2)
  }, 60_000)

  test('copies every table into a new SQLite file, verified by counts and checksums', async () => {
    const source = join(sourceDir, 'alttext.db')
    const run = await dbCommand(['copy', source, join(copyDir, 'alttext.db'), '--json'])
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    const report = JSON.parse(run.stdout)
    expect(report.schema_version).toBe(latestSchemaVersion())
    const expected = sqliteCounts(source)
    expect(Object.fromEntries(report.tables.map((t: { name: string; rows: number }) => [t.name, t.rows]))).toEqual(expected)
    expect(sqliteCounts(join(copyDir, 'alttext.db'))).toEqual(expected)
  }, 30_000)

  test('relative FROM and TO are files in the folder the command runs in', async () => {
    const run = await runCli(['db', 'copy', 'alttext.db', 'relative.db', '--json'], {}, { cwd: sourceDir })
    expect(run.code).toBe(0)
    expect(sqliteCounts(join(sourceDir, 'relative.db'))).toEqual(sqliteCounts(join(sourceDir, 'alttext.db')))
  }, 30_000)

  test.skipIf(skipPostgres || POSTGRES_REACHES_SQLITE)('to PostgreSQL: refused while its schema lags SQLite’s, naming both versions', async () => {
    const run = await dbCommand(['copy', join(sourceDir, 'alttext.db'), pgUrl])
    expect(run.code).toBe(1)
    expect(run.stderr).toContain(
      `FROM has schema version ${latestSchemaVersion()}, but this alttext's PostgreSQL schema reaches only version ${latestPostgresVersion()}`,
    )
    expect(await postgresCounts(pgUrl)).toEqual({})
  })

  test.skipIf(!roundTrip)(
    'copies every table into an empty PostgreSQL database, verified by counts and checksums',
    async () => {
      const source = join(sourceDir, 'alttext.db')
      const run = await dbCommand(['copy', source, pgUrl, '--json'])
      expect(run.stderr).toBe('')
      expect(run.code).toBe(0)
      const report = JSON.parse(run.stdout)
      expect(report.migrated).toBe(true)
      expect(report.not_copied.map((n: { table: string }) => n.table).toSorted()).toEqual(NOT_COPIED.toSorted())
      const expected = sqliteCounts(source)
      expect(Object.fromEntries(report.tables.map((t: { name: string; rows: number }) => [t.name, t.rows]))).toEqual(expected)
      expect(await postgresCounts(pgUrl)).toEqual(expected)
      for (const table of [
        'accounts',
        'api_keys',
        'sessions',
        'generation_history',
        'batches',
        'batch_items',
        'webhook_secrets',
        'webhook_deliveries',
        'reset_tokens',
        'credit_usage',
        'usage_daily',
        'api_calls',
        'alt_text_cache',
        'batch_image_bytes',
      ])
        expect(expected[table]).toBeGreaterThan(0)
      // The text report says the same, and never a password.
      const other = await cluster.createDatabase()
      try {
        const text = await dbCommand(['copy', source, other])
        expect(text.code).toBe(0)
        expect(text.stdout).toContain('copied and verified: ')
        expect(text.stdout).not.toContain(new URL(pgUrl).password)
      } finally {
        await cluster.dropDatabase(other)
      }
    },
    60_000,
  )

  test.skipIf(!roundTrip)(
    'the PostgreSQL store finds the key, the session and the history; images and ids are as they were',
    async () => {
      const store = await createPostgresStore(pgUrl)
      try {
        const found = await store.keys.findByHash(hashKey(a.apiKey))
        expect(found?.account.email).toBe(a.email)
        const session = await store.sessions.findByHash(sha256Hex(sessionToken))
        expect(session?.account.id).toBe(found!.account.id)
        const history = await store.history.list(found!.account.id, 100)
        expect(history.map((h) => h.id)).toEqual(before.history.items.map((h: { id: string }) => h.id))
        // A new account gets an id the deleted one never had.
        const made = await store.accounts.createWithKey(
          `new-${process.pid}@example.com`,
          'h',
          'free',
          { prefix: 'alt_new00001', keyHash: 'new-hash', label: null, expiresAt: null },
          Date.now(),
        )
        expect(made!.account.id).toBeGreaterThan(deletedId)
        await store.accounts.deleteAccount(made!.account.id)
      } finally {
        await store.close()
      }
      await withPostgres(pgUrl, async (sql) => {
        const [images] = (await sql`SELECT count(*)::int AS n, sum(octet_length(image))::bigint AS bytes FROM batch_items WHERE image IS NOT NULL`) as {
          n: number
          bytes: string
        }[]
        expect(images!.n).toBe(2)
        const [kept] = (await sql`SELECT sum(bytes)::bigint AS bytes FROM batch_image_bytes`) as { bytes: string }[]
        expect(kept!.bytes).toBe(images!.bytes)
        const [delivered] = (await sql`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'delivered'`) as { n: number }[]
        expect(delivered!.n).toBe(1)
      })
    },
    30_000,
  )

  test.skipIf(!roundTrip)(
    'PostgreSQL to another PostgreSQL database: the same rows, and the sequences as far on',
    async () => {
      const other = await cluster.createDatabase({ empty: true })
      try {
        const run = await dbCommand(['copy', pgUrl, other, '--json'])
        expect(run.stderr).toBe('')
        expect(run.code).toBe(0)
        expect(await postgresCounts(other)).toEqual(await postgresCounts(pgUrl))
        const mark = (url: string) =>
          withPostgres(url, async (sql) => Number(((await sql`SELECT pg_sequence_last_value('accounts_id_seq') AS v`) as { v: string }[])[0]!.v))
        expect(await mark(other)).toBe(await mark(pgUrl))
      } finally {
        await cluster.dropDatabase(other)
      }
    },
    30_000,
  )

  test('the copy is served as before: the same answers, the waiting batch finishes, no id given twice', async () => {
    // Back from PostgreSQL when it can hold the site, else the SQLite copy.
    const served = roundTrip ? backDir : copyDir
    const back = join(served, 'alttext.db')
    if (roundTrip) {
      const run = await dbCommand(['copy', pgUrl, back, '--json'])
      expect(run.stderr).toBe('')
      expect(run.code).toBe(0)
      // Less the account the previous test made and deleted.
      expect(sqliteCounts(back)).toEqual(await postgresCounts(pgUrl))
    }
    expect(sqliteValue<number>(back, "SELECT seq FROM sqlite_sequence WHERE name = 'accounts'")).toBeGreaterThanOrEqual(deletedId)

    // The waiting batch resumes at start: held at the model until the answers are compared.
    ollama.behave({ hang: true })
    const service = await start(served)
    try {
      const { api } = service
      const usage = (await api.get('/api/usage', a.apiKey)).body
      // This request is one more call today; the rest is as it was.
      expect(usage).toEqual({ ...before.usage, api_calls_today: before.usage.api_calls_today + 1 })
      expect((await api.get('/api/usage/history', a.apiKey)).body).toEqual(before.daily)
      expect((await api.get('/api/history', a.apiKey)).body).toEqual(before.history)
      const keys = (await api.get('/api/keys', a.apiKey)).body
      expect(keys.keys.map((k: { prefix: string; label: string | null }) => [k.prefix, k.label])).toEqual(
        before.keys.keys.map((k: { prefix: string; label: string | null }) => [k.prefix, k.label]),
      )
      expect(await deliveries(api, a.apiKey)).toEqual(before.deliveries)
      const session = await api.request('GET', '/api/session', { headers: { cookie } })
      expect(session.status).toBe(200)
      expect(session.body.email).toBe(a.email)

      ollama.behave({ hang: false })
      ollama.release()
      await waitUntil(async () => (await api.get(`/api/batches/${waitingBatch}`, a.apiKey)).body.status === 'completed', 'the waiting batch to finish', 15_000)
      const batch = (await api.get(`/api/batches/${waitingBatch}`, a.apiKey)).body
      expect(batch).toMatchObject({ succeeded: 2, failed: 0 })

      const c = await api.register()
      expect(sqliteValue<number>(back, 'SELECT id FROM accounts WHERE email = ?', c.email)).toBeGreaterThan(deletedId)
    } finally {
      ollama.behave({ hang: false })
      ollama.release()
      await service.stop()
    }
  }, 60_000)
})

describe.skipIf(skipPostgres)('alttext db copy: a site written by the PostgreSQL store, to SQLite and back, and served', () => {
  let cluster: PostgresCluster
  let pgSite: string
  let pgAgain: string
  let dir: string
  const now = Date.now()
  const password = 'correct horse battery'
  const email = `pg-site-${process.pid}@example.com`
  const minted = mintKey('laptop', null)
  const sessionToken = randomToken(32)
  let accountId: number
  let goneId: number
  let reports: { toSqlite: any; toPostgres: any }

  beforeAll(async () => {
    cluster = await sharedPostgres()
    pgSite = await cluster.createDatabase()
    pgAgain = await cluster.createDatabase({ empty: true })
    dir = mkdtempSync(join(tmpdir(), 'alttext-dbcopy-pg-'))
    const store = await createPostgresStore(pgSite)
    try {
      const hash = await CHEAP_PASSWORDS.hash(password)
      const made = await store.accounts.createWithKey(email, hash, 'free', minted.record, now)
      accountId = made!.account.id
      // An account made and deleted: its id must never come back.
      const gone = await store.accounts.createWithKey(`gone-${process.pid}@example.com`, hash, 'free', mintKey(null, null).record, now)
      goneId = gone!.account.id
      await store.accounts.deleteAccount(goneId)
      await store.sessions.create(accountId, sha256Hex(sessionToken), now, now + 86_400_000)
      const { periodOf } = createCalendar()
      await store.admin.grant(accountId, periodOf(now).id, 5)
      const day = new Date(now).toISOString().slice(0, 10)
      const record = {
        id: `gen_${process.pid}`,
        accountId,
        createdAt: now,
        source: 'url' as const,
        format: 'png' as const,
        bytes: 1234,
        width: 64,
        height: 48,
        altText: 'Two children flying a red kite on a windy beach.',
        decorative: false,
        language: 'en',
        style: 'descriptive',
        maxLength: 125,
        cached: false,
        characterCount: 48,
      }
      await store.history.apply(
        new Map([[accountId, { since: now, days: new Map([[day, { generations: 1, cached: 0, failed: 0 }]]), records: [record] }]]),
        50,
        '2000-01-01',
      )
      await store.resetTokens.issue(accountId, sha256Hex(`reset-${now}`), now + 3_600_000, now)
      // An organisation with a key, an invitation, its log and a suggestion with a thumbnail (migration 18).
      const actor = { accountId, email, now }
      const org = await store.orgs.create('Kites Ltd', `org_${'ab'.repeat(12)}`, 'team', actor)
      await store.keys.create(accountId, mintKey('team', null).record, now, 25, org.id)
      await store.orgs.invite(org.id, `invited-${process.pid}@example.com`, 'reviewer', sha256Hex(`invite-${now}`), now + 3_600_000, actor)
      const suggestion = await store.suggestions.create(
        org.id,
        {
          publicId: `sug_${process.pid}`,
          target: { kind: 'file', ref: 'index.html:1:1', site: '/srv', fingerprint: 'f' },
          currentAlt: null,
          proposedAlt: 'A kite.',
          language: 'en',
          image: { url: null, format: 'png', width: 64, height: 48, thumbnail: new Uint8Array([0, 1, 255]) },
          checks: { wcagCompliant: false, wcagIssues: ['short'], verdict: { ok: true }, decorative: false },
          batchId: null,
        },
        actor,
      )
      await store.suggestions.decide(org.id, suggestion.publicId, { status: 'edited', finalAlt: 'A red kite.' }, actor)
    } finally {
      await store.close()
    }
    // A closed connection's server process ends a moment later; until then db copy counts it as a replica's.
    await waitUntil(
      () =>
        withPostgres(
          pgSite,
          async (sql) =>
            Number(
              (
                (await sql`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'alttext'`) as { n: string }[]
              )[0]!.n,
            ) === 0,
        ),
      'the store’s connections to end',
    )
  })
  afterAll(async () => {
    await cluster.dropDatabase(pgSite)
    await cluster.dropDatabase(pgAgain)
    rmSync(dir, { recursive: true, force: true })
  })

  test('PostgreSQL to a new SQLite file and on to a new PostgreSQL database: every table, the same checksums', async () => {
    const file = join(dir, 'alttext.db')
    const toSqlite = await dbCommand(['copy', pgSite, file, '--json'])
    expect(toSqlite.stderr).toBe('')
    expect(toSqlite.code).toBe(0)
    const toPostgres = await dbCommand(['copy', file, pgAgain, '--json'])
    expect(toPostgres.stderr).toBe('')
    expect(toPostgres.code).toBe(0)
    reports = { toSqlite: JSON.parse(toSqlite.stdout), toPostgres: JSON.parse(toPostgres.stdout) }
    expect(reports.toSqlite.schema_version).toBe(latestPostgresVersion())
    // The checksums are of the values, whatever engine holds them: the same rows on all three.
    expect(reports.toPostgres.tables).toEqual(reports.toSqlite.tables)
    expect(await postgresCounts(pgAgain)).toEqual(await postgresCounts(pgSite))
    expect(sqliteCounts(file)).toEqual(await postgresCounts(pgSite))
    const counts = sqliteCounts(file)
    for (const table of [
      'accounts',
      'api_keys',
      'sessions',
      'generation_history',
      'usage_daily',
      'credit_usage',
      'reset_tokens',
      'org_members',
      'org_invitations',
      'org_activity',
      'suggestions',
    ])
      expect({ table, rows: counts[table]! > 0 }).toEqual({ table, rows: true })
    // Ids handed out before stay used on the way back too.
    const mark = await withPostgres(pgAgain, async (sql) =>
      Number(((await sql`SELECT pg_sequence_last_value('accounts_id_seq') AS v`) as { v: string }[])[0]!.v),
    )
    expect(mark).toBeGreaterThanOrEqual(goneId)
  }, 30_000)

  test('the service serves the SQLite copy (migrating it to its own schema): the key, session, credits and history work', async () => {
    const service = await startTestService({ dir, env: { ALTTEXT_DATABASE_URL: '', ALTTEXT_RATE_LIMITS: 'off' }, overrides: { passwords: CHEAP_PASSWORDS } })
    try {
      const { api } = service
      const usage = await api.get('/api/usage', minted.apiKey)
      expect(usage.status).toBe(200)
      expect(usage.body.credits).toEqual({ total: 55, used: 0, remaining: 55 })
      const history = await api.get('/api/history', minted.apiKey)
      expect(history.body.items.map((item: { id: string }) => item.id)).toEqual([`gen_${process.pid}`])
      const session = await api.request('GET', '/api/session', { headers: { cookie: `alttext_session=${sessionToken}` } })
      expect(session.status).toBe(200)
      expect(session.body.email).toBe(email)
      expect((await api.post('/api/session', { email, password })).status).toBe(200)
      const next = await api.register()
      expect(sqliteValue<number>(join(dir, 'alttext.db'), 'SELECT id FROM accounts WHERE email = ?', next.email)).toBeGreaterThan(goneId)
      expect(sqliteValue<number>(join(dir, 'alttext.db'), 'SELECT max(version) AS v FROM schema_migrations')).toBe(latestSchemaVersion())
    } finally {
      await service.stop()
    }
  }, 30_000)
})
