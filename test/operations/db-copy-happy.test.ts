// `alttext db copy` moves a real site to PostgreSQL and back: a service fills a SQLite file over HTTP
// (accounts, keys, a generation, a batch with a webhook, a batch still waiting with its uploaded images, a
// session, history, a reset link, a deleted account), the copy goes to a PostgreSQL database of the test
// harness, the PostgreSQL store finds what the service wrote, and the copy back to a new SQLite file is
// served as before: the same answers, the waiting batch finishes, and no id is given twice. Under CI=true
// PostgreSQL must run.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hashKey } from '../../src/modules/keys/material'
import { sha256Hex } from '../../src/shared/crypto'
import { createPostgresStore } from '../../src/store/postgres/store'
import { startFakeOllama, type FakeOllama } from '../support/fake-ollama'
import { startHttpsImageServer, type HttpsImageServer } from '../support/https-image-server'
import { makeJpeg, makePng } from '../support/images'
import { type PostgresCluster, sharedPostgres } from '../support/postgres'
import { type RegisteredAccount, startTestService, type TestService, waitUntil } from '../support/service'
import { CHEAP_PASSWORDS, signIn, withSession } from '../support/session'
import { deliveries, endedBatch, FAST_WEBHOOKS, makeSecret, type Receiver, startReceiver, waitForDelivery } from '../webhooks/support'
import { dbCommand, NOT_COPIED, postgresCounts, skipPostgres, sqliteCounts, sqliteValue, unavailable, withPostgres } from './db-copy-support'

if (skipPostgres) console.warn(`[db copy] SKIPPED: ${unavailable}`)

describe.skipIf(skipPostgres)('alttext db copy: a SQLite site to PostgreSQL and back', () => {
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
    cluster = await sharedPostgres()
    pgUrl = await cluster.createDatabase({ empty: true })
    sourceDir = freshDir()
    backDir = freshDir()
  })
  afterAll(async () => {
    await Promise.all([ollama.stop(), images.stop()])
    await cluster.dropDatabase(pgUrl)
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

  test('copies every table into an empty PostgreSQL database, verified by counts and checksums', async () => {
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
  }, 60_000)

  test('the PostgreSQL store finds the key, the session and the history; images and ids are as they were', async () => {
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
      await store.sessions.deleteAccount(made!.account.id)
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
  }, 30_000)

  test('PostgreSQL to another PostgreSQL database: the same rows, and the sequences as far on', async () => {
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
  }, 30_000)

  test('copied back into a new SQLite file, the service answers as before and finishes the waiting batch', async () => {
    const back = join(backDir, 'alttext.db')
    const run = await dbCommand(['copy', pgUrl, back, '--json'])
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    // Less the account the previous test made and deleted.
    expect(sqliteCounts(back)).toEqual(await postgresCounts(pgUrl))
    expect(sqliteValue<number>(back, "SELECT seq FROM sqlite_sequence WHERE name = 'accounts'")).toBeGreaterThan(deletedId)

    // The waiting batch resumes at start: held at the model until the answers are compared.
    ollama.behave({ hang: true })
    const service = await start(backDir)
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
