// Two real `alttext serve` processes on one PostgreSQL and one Redis, behind the documented HAProxy
// (docs/replicas/haproxy.cfg), all on loopback: what issue 24 promises a client of several replicas.
// Rate limits are exact across both; 2N concurrent generations on N credits charge at most N and exactly
// what was answered; a batch whose replica is killed with SIGKILL finishes on the other, every item once
// and charged once, and the killed replica's return changes nothing; a revocation on one replica refuses
// the key on the other within 1 s; a webhook whose sender is killed mid-attempt is delivered by the other,
// under one delivery id. Each replica has a fake model host of its own (fixed delay), so the model calls
// each made are counted.
//
// The file runs only when `alttext serve` accepts ALTTEXT_DATABASE_URL (probed once below); until then it
// is skipped with a loud line, under CI=true too.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { type FakeOllama, startFakeOllama } from '../support/fake-ollama'
import { type HttpsImageServer, startHttpsImageServer } from '../support/https-image-server'
import { makePng } from '../support/images'
import { postgresUnavailable, sharedPostgres } from '../support/postgres'
import { REDIS_SERVER, startRedis, type TestRedis } from '../support/redis'
import { clientFrom, haproxyUnavailable, type ReplicaSet, servesPostgres, startReplicaSet } from '../support/replicas'
import type { Api } from '../support/service'
import { verifySignature } from '../webhooks/support'

const FILE = 'test/replicas/replicas.test.ts'
/** Credits of every account (ALTTEXT_FREE_CREDITS): N of "2N generations on N credits". */
const CREDITS = 10
const LEASE_SECONDS = 5
const MODEL_DELAY_MS = 300

const loud = (lines: string[]) => console.warn(['', '='.repeat(100), ...lines.map((l) => `[replica test] ${l}`), '='.repeat(100), ''].join('\n'))

/** Whether the file runs, and on which database. */
async function gate(): Promise<{ run: true; databaseUrl: string } | { run: false }> {
  const missing =
    haproxyUnavailable() ?? postgresUnavailable() ?? (existsSync(REDIS_SERVER) ? null : 'redis-server is not installed (Debian package redis-server)')
  if (missing) {
    loud([`SKIPPED ${FILE}: ${missing}`])
    return { run: false }
  }
  const databaseUrl = await (await sharedPostgres()).createDatabase()
  const probe = await servesPostgres(databaseUrl)
  if (!probe.accepted) {
    loud([
      `SKIPPED ${FILE}: PostgreSQL mode is not complete: \`alttext serve\` refuses ALTTEXT_DATABASE_URL.`,
      `It said: ${probe.why}`,
      'Nothing here about several replicas has been checked. This file runs by itself once serve accepts PostgreSQL.',
    ])
    return { run: false }
  }
  return { run: true, databaseUrl }
}

const gated = await gate()

/** Base64 of a PNG no other request of this file sends (no cache hit, no shared generation). */
let pngSize = 40
const freshImage = () => Buffer.from(makePng(++pngSize, 33)).toString('base64')

/** Access-log lines of a replica for `path` from `client`. */
const served = (set: ReplicaSet, index: number, path: string, client: string) =>
  set.replicas[index]!.logs().filter((line) => line.msg === 'request' && line.path === path && line.client === client).length

async function waitFor(condition: () => boolean | Promise<boolean>, what: string, timeoutMs: number, everyMs = 20): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await Bun.sleep(everyMs)
  }
}

const chatCalls = (host: FakeOllama) => host.requests.filter((r) => r.path === '/api/chat').length

/**
 * GETs `path` every `everyMs` until `done(body)`, and returns that body. Each wait polls from a loopback
 * address of its own, and no more often than 60 times in its `timeoutMs`, so its polls never meet the
 * rate limit (60 a minute per address and route); any answer but 200 fails the wait rather than pass
 * for the awaited state.
 */
let pollAddresses = 0
async function pollUntil(set: ReplicaSet, path: string, key: string, done: (body: any) => boolean, what: string, timeoutMs: number, everyMs: number) {
  if (timeoutMs / everyMs > 60) throw new RangeError(`${what}: more than 60 polls in a minute would be rate limited`)
  const api = set.from(`127.0.1.${++pollAddresses}`)
  let body: any
  await waitFor(
    async () => {
      const res = await api.get(path, key)
      if (res.status !== 200) throw new Error(`${what}: GET ${path} answered ${res.status} ${res.text}`)
      body = res.body
      return done(body)
    },
    what,
    timeoutMs,
    everyMs,
  )
  return body
}

describe.skipIf(!gated.run)('two replicas on PostgreSQL and Redis behind HAProxy', () => {
  let redis: TestRedis
  let hosts: FakeOllama[]
  let images: HttpsImageServer
  let set: ReplicaSet

  beforeAll(async () => {
    if (!gated.run) return
    redis = await startRedis()
    hosts = [await startFakeOllama({ delayMs: MODEL_DELAY_MS }), await startFakeOllama({ delayMs: MODEL_DELAY_MS })]
    images = await startHttpsImageServer()
    set = await startReplicaSet({
      replicas: 2,
      env: {
        ALTTEXT_DATABASE_URL: gated.databaseUrl,
        ALTTEXT_REDIS_URL: redis.url,
        ALTTEXT_MODEL: 'llava',
        ALTTEXT_FREE_CREDITS: String(CREDITS),
        ALTTEXT_BATCH_LEASE_SECONDS: String(LEASE_SECONDS),
        // Webhook receivers are on loopback, with the image server's certificate.
        ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS: '127.0.0.1',
        NODE_EXTRA_CA_CERTS: images.caPath,
      },
      replicaEnv: (index) => ({ OLLAMA_HOST: hosts[index]!.url }),
    })
    console.info(`[replica test] 2 replicas (${set.what}) on PostgreSQL and Redis behind HAProxy at ${set.url}`)
  }, 120_000)
  afterAll(async () => {
    await set?.stop()
    await Promise.all([redis?.close(), images?.stop(), ...(hosts ?? []).map((h) => h.stop())])
  })

  test('rate limits are exact across both replicas: 60 a minute per address is 60 in all', async () => {
    const client = '127.0.0.21'
    const api = set.from(client)
    const { apiKey } = await api.register()
    const statuses: number[] = []
    // 100 requests, 10 at a time, spread by HAProxy over both replicas.
    for (let round = 0; round < 10; round++)
      statuses.push(...(await Promise.all(Array.from({ length: 10 }, () => api.get('/api/usage', apiKey)))).map((r) => r.status))
    const perReplica = [served(set, 0, '/api/usage', client), served(set, 1, '/api/usage', client)]
    console.info(
      `[replica test] rate limit: ${statuses.filter((s) => s === 200).length} of 100 admitted (limit 60); served per replica: ${perReplica.join(' + ')}`,
    )
    expect(statuses.filter((s) => s === 200).length).toBe(60)
    expect(statuses.filter((s) => s === 429).length).toBe(40)
    expect(Math.min(...perReplica)).toBeGreaterThan(0)

    // The sign-in limit too: 5 a minute from an address, whichever replicas the attempts reach.
    const signIn = set.from('127.0.0.22')
    const attempts = await Promise.all(
      Array.from({ length: 12 }, (_, i) => signIn.post('/api/login', { email: `nobody-${i}@example.com`, password: 'wrong password here' })),
    )
    expect(attempts.filter((r) => r.status === 429 && r.body.error.code === 'rate_limited').length).toBe(7)
    expect(attempts.filter((r) => r.status === 401).length).toBe(5)
  }, 60_000)

  test(`${2 * CREDITS} concurrent generations on ${CREDITS} credits charge at most ${CREDITS}, and exactly what was answered`, async () => {
    const client = '127.0.0.23'
    const api = set.from(client)
    const { apiKey } = await api.register()
    const answers = await Promise.all(Array.from({ length: 2 * CREDITS }, () => api.post('/api/alt-text', { image_base64: freshImage() }, apiKey)))
    const answered = answers.filter((r) => r.status === 200)
    const refused = answers.filter((r) => r.status === 429 && r.body.error.code === 'quota_exceeded')
    const usage = await set.api.get('/api/usage', apiKey)
    const perReplica = [served(set, 0, '/api/alt-text', client), served(set, 1, '/api/alt-text', client)]
    console.info(
      `[replica test] credits: ${answered.length} answered, ${refused.length} refused (quota_exceeded), ${usage.body.credits.used} charged, of ${CREDITS}; requests per replica: ${perReplica.join(' + ')}`,
    )
    expect(answered.length + refused.length).toBe(2 * CREDITS)
    expect(answered.length).toBeLessThanOrEqual(CREDITS)
    expect(usage.body.credits.used).toBe(answered.length)
    // Nothing failed here, so every credit was used.
    expect(answered.length).toBe(CREDITS)
    expect(answered.every((r) => r.body.cached === false)).toBe(true)
    expect(Math.min(...perReplica)).toBeGreaterThan(0)
  }, 60_000)

  test('a batch whose replica is killed with SIGKILL finishes on the other: every item once, charged once; its return changes nothing', async () => {
    const [first, second] = set.replicas as [ReplicaSet['replicas'][0], ReplicaSet['replicas'][0]]
    const [firstHost, secondHost] = hosts as [FakeOllama, FakeOllama]
    firstHost.behave({ delayMs: 2000 })
    const { apiKey } = await set.from('127.0.0.24').register()
    // Made on the first replica, whose runner claims items at once; the second finds the batch at its next poll.
    const direct = clientFrom(first.url, '127.0.0.24')
    const items = Array.from({ length: 6 }, (_, i) => ({ image_base64: freshImage(), metadata: { n: i } }))
    const created = await direct.post('/api/batches', { items }, apiKey)
    expect(created.status).toBe(202)
    const id = created.body.id as string
    const callsBefore = [chatCalls(firstHost), chatCalls(secondHost)]
    await firstHost.waitFor(() => firstHost.inFlight() > 0, 10_000)
    expect(await first.kill()).not.toBe(0)
    const killedAt = Date.now()

    const batch = await pollUntil(set, `/api/batches/${id}`, apiKey, (b) => b.completed_at !== null, `batch ${id} to end on the second replica`, 60_000, 1000)
    const calls = [chatCalls(firstHost) - callsBefore[0]!, chatCalls(secondHost) - callsBefore[1]!]
    const takenOver = second.logs().filter((l) => l.msg?.toString().startsWith('batch item taken over: the lease') && l.batch_id === id).length
    console.info(
      `[replica test] batch: ${batch.succeeded} of ${batch.total} done ${Math.round((Date.now() - killedAt) / 100) / 10} s after the kill; model calls per replica: ${calls.join(' + ')} (the killed one's cut short); items taken over by the second: ${takenOver}`,
    )
    expect(batch).toMatchObject({ status: 'completed', total: 6, succeeded: 6, failed: 0 })
    expect(batch.items.map((item: any) => [item.index, item.status, item.metadata.n])).toEqual(items.map((_, i) => [i, 'done', i]))
    expect(takenOver).toBeGreaterThan(0)
    const usage = await set.api.get('/api/usage', apiKey)
    expect(usage.body.credits.used).toBe(6)

    // The killed replica comes back: the batch, the charges and the model calls stay as they are.
    firstHost.behave({ delayMs: MODEL_DELAY_MS })
    await first.restart()
    // Once a batch made after the return has ended, the runners have made their passes. It is another
    // account's: the killed replica's credit holds still count for this one until they expire
    // (CREDIT_HOLD_SECONDS), which with 6 of 10 credits used may leave it none to hold.
    const other = await set.from('127.0.0.28').register()
    const marker = await clientFrom(first.url, '127.0.0.28').post('/api/batches', { items: [{ image_base64: freshImage() }] }, other.apiKey)
    expect(marker.status).toBe(202)
    const markerBatch = await pollUntil(
      set,
      `/api/batches/${marker.body.id}`,
      other.apiKey,
      (b) => b.completed_at !== null,
      'the marker batch to end',
      30_000,
      500,
    )
    expect({ status: markerBatch.status, succeeded: markerBatch.succeeded, error: markerBatch.items[0].error ?? null }).toEqual({
      status: 'completed',
      succeeded: 1,
      error: null,
    })
    for (const replica of [first, second]) expect((await clientFrom(replica.url, '127.0.0.24').get(`/api/batches/${id}`, apiKey)).body).toEqual(batch)
    expect((await set.api.get('/api/usage', apiKey)).body.credits.used).toBe(6)
    expect((await set.from('127.0.0.28').get('/api/usage', other.apiKey)).body.credits.used).toBe(1)
    expect(chatCalls(firstHost) + chatCalls(secondHost) - callsBefore[0]! - callsBefore[1]!).toBe(calls[0]! + calls[1]! + 1)
  }, 120_000)

  test('a replica that starts while the other runs a batch leaves the other’s claims alone', async () => {
    const [first, second] = set.replicas as [ReplicaSet['replicas'][0], ReplicaSet['replicas'][0]]
    const [firstHost, secondHost] = hosts as [FakeOllama, FakeOllama]
    const { apiKey } = await set.from('127.0.0.27').register()
    // The second replica alone claims the batch (every item: 4 is what its runner keeps under way) …
    await first.kill()
    secondHost.behave({ hang: true })
    const created = await clientFrom(second.url, '127.0.0.24').post(
      '/api/batches',
      { items: Array.from({ length: 4 }, () => ({ image_base64: freshImage() })) },
      apiKey,
    )
    expect(created.status).toBe(202)
    const id = created.body.id as string
    await secondHost.waitFor(() => secondHost.inFlight() === 2, 10_000)
    const callsBefore = [chatCalls(firstHost), chatCalls(secondHost)]
    try {
      // … and the first starts meanwhile. Its runner has made a pass once a batch made on it has ended.
      await first.restart()
      const marker = await clientFrom(first.url, '127.0.0.27').post('/api/batches', { items: [{ image_base64: freshImage() }] }, apiKey)
      await pollUntil(set, `/api/batches/${marker.body.id}`, apiKey, (b) => b.completed_at !== null, 'the marker batch to end', 30_000, 500)
      expect(chatCalls(firstHost) - callsBefore[0]!).toBe(1)
    } finally {
      secondHost.behave({ hang: false })
      secondHost.release()
    }
    const batch = await pollUntil(set, `/api/batches/${id}`, apiKey, (b) => b.completed_at !== null, `batch ${id} to end`, 30_000, 500)
    expect(batch).toMatchObject({ status: 'completed', total: 4, succeeded: 4 })
    // Only the second replica's model ran the batch, each item once; nothing was taken over or run twice.
    expect(chatCalls(secondHost) - callsBefore[1]!).toBe(2)
    expect(chatCalls(firstHost) - callsBefore[0]!).toBe(1)
    expect(set.replicas.flatMap((r) => r.logs()).filter((l) => String(l.msg).startsWith('batch item taken over') && l.batch_id === id)).toEqual([])
    expect((await set.api.get('/api/usage', apiKey)).body.credits.used).toBe(5)
  }, 120_000)

  test('a key revoked on one replica is refused by the other within 1 s', async () => {
    const [first, second] = set.replicas as [ReplicaSet['replicas'][0], ReplicaSet['replicas'][0]]
    const onFirst = clientFrom(first.url, '127.0.0.25')
    const onSecond = clientFrom(second.url, '127.0.0.25')
    const { apiKey } = await onFirst.register()
    const made = await onFirst.post('/api/keys', { label: 'to revoke' }, apiKey)
    expect(made.status).toBe(201)
    // The second replica knows the key (its cache holds it) before the revocation.
    expect((await onSecond.get('/api/usage', made.body.api_key)).status).toBe(200)

    const revoked = await onFirst.post('/api/keys/revoke', { key_prefix: made.body.prefix }, apiKey)
    expect(revoked.status).toBe(200)
    const at = performance.now()
    let delayMs = Number.NaN
    // Every 20 ms: at most 50 requests in the second, within the 60 a minute of the address.
    await waitFor(
      async () => {
        const status = (await onSecond.get('/api/usage', made.body.api_key)).status
        if (status === 401) delayMs = performance.now() - at
        return status === 401
      },
      'the revoked key to be refused by the other replica',
      1000,
    )
    console.info(`[replica test] revocation on one replica refused by the other after ${delayMs.toFixed(1)} ms`)
    expect((await onFirst.get('/api/usage', made.body.api_key)).status).toBe(401)
    expect((await onSecond.get('/api/usage', apiKey)).status).toBe(200)
  }, 30_000)

  test('a webhook whose sender is killed mid-attempt is delivered by the other replica, under one delivery id', async () => {
    const [first, second] = set.replicas as [ReplicaSet['replicas'][0], ReplicaSet['replicas'][0]]
    const api: Api = set.from('127.0.0.26')
    const { apiKey } = await api.register()
    const secret = (await api.request('POST', '/api/webhook-secret', { key: apiKey })).body.secret as string
    const received: { at: number; delivery: string | null; verified: boolean }[] = []
    const { promise: released, resolve: release } = Promise.withResolvers<void>()
    const url = images.route(`/replica-hook-${process.pid}`, {
      kind: 'handler',
      fn: async (request) => {
        const body = await request.text()
        received.push({
          at: Date.now(),
          delivery: request.headers.get('alttext-delivery'),
          verified: verifySignature(request.headers.get('alttext-signature'), body, secret),
        })
        // The first attempt never gets its answer: its sender is killed meanwhile.
        if (received.length === 1) await released
        return new Response('ok')
      },
    })
    try {
      // Only the first replica runs while the batch ends, so the first attempt is its own.
      await second.kill()
      const created = await clientFrom(first.url, '127.0.0.26').post('/api/batches', { items: [{ image_base64: freshImage() }], webhook_url: url }, apiKey)
      expect(created.status).toBe(202)
      await waitFor(() => received.length === 1, 'the first attempt', 30_000)
      await second.restart()
      await first.kill()

      // A delivery's claim lasts the operator's lease (ALTTEXT_BATCH_LEASE_SECONDS), renewed while its attempt runs.
      const leaseMs = LEASE_SECONDS * 1000
      await waitFor(() => received.length === 2, 'the attempt of the other replica, after the lease', leaseMs + 30_000, 100)
      const gapS = (received[1]!.at - received[0]!.at) / 1000
      console.info(
        `[replica test] webhook: attempt 2 by the other replica ${gapS.toFixed(1)} s after attempt 1 (lease ${leaseMs / 1000} s), delivery id ${received[0]!.delivery}`,
      )
      expect(received.every((r) => r.verified)).toBe(true)
      expect(received[1]!.delivery).toBe(received[0]!.delivery)
      // One replica at a time: the second attempt waited for the first one's lease.
      expect(received[1]!.at - received[0]!.at).toBeGreaterThanOrEqual(leaseMs - 1000)
      const deliveries = await pollUntil(
        set,
        '/api/webhook-deliveries',
        apiKey,
        (body) => body.items.some((d: any) => d.batch_id === created.body.id && d.status === 'delivered'),
        'the delivery to be recorded as delivered',
        10_000,
        200,
      )
      const delivery = deliveries.items.find((d: any) => d.batch_id === created.body.id)
      expect(delivery).toMatchObject({ id: received[0]!.delivery, attempts: 2, last_status: 200 })
    } finally {
      release()
      if (!first.running()) await first.restart()
      if (!second.running()) await second.restart()
    }
  }, 120_000)
})
