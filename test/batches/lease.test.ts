// Claims with a lease: a process claims a batch item for ALTTEXT_BATCH_LEASE_SECONDS and renews the claim
// while the item runs. When the lease ends (its process stalled or died) the item is taken over with a new
// claim, and the old claimant can neither record nor charge it. Time is injected: the service's clock jumps
// past the lease while its timers (the poll, the renewals, the waits) stand still, as in a stalled process,
// and the test runs them by moving a manual scheduler. A process killed with SIGKILL leaves state that
// another claimant takes over.
import { afterAll, afterEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { engineDatabase } from '../support/database'
import { type FakeOllama, startFakeOllama } from '../support/fake-ollama'
import { type HttpsImageServer, startHttpsImageServer } from '../support/https-image-server'
import { makePng } from '../support/images'
import { TEST_ENGINE } from '../support/postgres'
import { type ServiceProcess, spawnService } from '../support/process'
import { advanceUntil, createManualScheduler, type ManualScheduler } from '../support/scheduler'
import { apiClient, startTestService, waitUntil } from '../support/service'
import { batchClient } from './support'

const dir = mkdtempSync(join(tmpdir(), 'alttext-batch-lease-'))
const stops: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop()
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

let size = 300
const logged = (env: AltTextEnv, msg: string) => env.service.logs.filter((line) => line.msg === msg)
const TAKEN_OVER = 'batch item taken over: the lease of its last claim ended (its process stopped or stalled)'
const LOST = 'batch item taken over by another claim after its lease ended; this run stops and records nothing'

/** The runner's poll on the manual scheduler: shorter than a renewal (a third of the lease), so it comes first. */
const POLL_MS = 50

async function leasedEnv(leaseSeconds: number, clock: () => number, scheduler: ManualScheduler): Promise<AltTextEnv> {
  const env = await startAltTextEnv({
    env: { ALTTEXT_BATCH_LEASE_SECONDS: String(leaseSeconds), ALTTEXT_FREE_CREDITS: '10' },
    overrides: { clock, scheduler, batchPollMs: POLL_MS },
    ollama: { hang: true },
  })
  stops.push(() => env.stop())
  return env
}

const dbRows = (env: AltTextEnv, sql: string) => env.service.query(sql)

describe('in one process, with the clock moved past the lease', () => {
  test('the item is taken over; the run whose renewal finds its claim gone stops, and the item is answered and charged once', async () => {
    let now = Date.now()
    const scheduler = createManualScheduler()
    const env = await leasedEnv(5, () => now, scheduler)
    const batches = batchClient(env.service.api, env.key)
    const created = await batches.create({ items: [{ image_url: env.serve(makePng(++size, 40)) }] })
    expect(created.status).toBe(202)
    await env.ollama.waitFor(() => env.ollama.inFlight() === 1)

    // The first claim stalls past its lease: the next poll takes the item over.
    now += 5_001
    await scheduler.advance(POLL_MS)
    await waitUntil(() => logged(env, TAKEN_OVER).length === 1, 'the item to be taken over')
    // The first run's next renewal (a third of the lease after its start) finds its claim gone and stops its model call.
    await scheduler.advance(5_000 / 3 - POLL_MS)
    await waitUntil(() => logged(env, LOST).length === 1, 'the first run to learn its claim is gone')
    await env.ollama.waitFor(() => env.ollama.aborted() === 1)
    // The new claim, alone now, asks the model itself.
    await env.ollama.waitFor(() => env.ollama.inFlight() === 1 && env.ollama.chatRequests().length === 2)
    env.ollama.behave({ hang: false })
    env.ollama.release()

    const ended = await batches.ended(created.body.id)
    expect(ended.body).toMatchObject({ status: 'completed', succeeded: 1, failed: 0 })
    expect(ended.body.items[0].result.cached).toBe(false)
    expect((await env.service.api.get('/api/usage', env.key)).body.credits.used).toBe(1)
    expect(await dbRows(env, 'SELECT status, charged, claim_token, lease_until FROM batch_items')).toEqual([
      { status: 'done', charged: 1, claim_token: null, lease_until: null },
    ])
    expect(await dbRows(env, 'SELECT * FROM credit_holds')).toEqual([])
  })

  test('a run that answers after its item was taken over records nothing and charges nothing', async () => {
    let now = Date.now()
    const scheduler = createManualScheduler()
    // A long lease: its renewal (a third of it) does not come before the late answer.
    const env = await leasedEnv(60, () => now, scheduler)
    const batches = batchClient(env.service.api, env.key)
    const created = await batches.create({ items: [{ image_url: env.serve(makePng(++size, 40)) }] })
    await env.ollama.waitFor(() => env.ollama.inFlight() === 1)
    now += 60_001
    await scheduler.advance(POLL_MS)
    await waitUntil(() => logged(env, TAKEN_OVER).length === 1, 'the item to be taken over')

    // The first run's answer comes now: its record, fenced by its claim's token, is refused.
    env.ollama.behave({ hang: false })
    env.ollama.release()
    const ended = await batches.ended(created.body.id)
    // The new claim may record the shared answer before the old run hears its record was refused.
    await waitUntil(() => logged(env, LOST).length === 1, 'the first run to learn its claim is gone')
    expect(ended.body).toMatchObject({ status: 'completed', succeeded: 1 })
    // The new claim shared that generation in this process (or found it in the cache): a free answer, so
    // nobody paid for it, and the old claimant's charge was refused.
    expect(ended.body.items[0].result.cached).toBe(true)
    expect((await env.service.api.get('/api/usage', env.key)).body.credits.used).toBe(0)
    expect(await dbRows(env, 'SELECT status, charged FROM batch_items')).toEqual([{ status: 'done', charged: 0 }])
    expect(await dbRows(env, 'SELECT * FROM credit_holds')).toEqual([])
    expect(env.ollama.chatRequests().length).toBe(1)
  })
})

describe('credit holds of claims', () => {
  const period = (at: number) => new Date(at).toISOString().slice(0, 7)
  const accountId = async (env: AltTextEnv) => (await dbRows(env, 'SELECT id FROM accounts'))[0]!.id as number

  test('an item whose dead claim held the last credit is taken over with it: done, charged once, no quota_exceeded', async () => {
    const now = Date.now()
    const scheduler = createManualScheduler()
    const env = await startAltTextEnv({
      env: { ALTTEXT_BATCH_LEASE_SECONDS: '5', ALTTEXT_FREE_CREDITS: '1' },
      overrides: { clock: () => now, scheduler, batchPollMs: POLL_MS },
    })
    const account = await accountId(env)
    // What a replica killed mid-item leaves: the item claimed under a lease that ended, and the hold it
    // took for the item's credit, which lasts (CREDIT_HOLD_SECONDS) long after that lease.
    const request = JSON.stringify({
      image_url: env.serve(makePng(++size, 40)),
      language: 'en',
      max_length: 125,
      style: 'descriptive',
      detect_decorative: false,
      long_description: false,
    })
    await dbRows(env, `INSERT INTO batches (id, account_id, status, total, created_at) VALUES ('bat_dead', ${account}, 'running', 1, ${now - 6000})`)
    await dbRows(
      env,
      `INSERT INTO batch_items (batch_id, idx, status, request, claim_token, lease_until) VALUES ('bat_dead', 0, 'running', '${request}', 'dead', ${now - 1000})`,
    )
    const item = (await dbRows(env, 'SELECT id FROM batch_items'))[0]!.id as number
    await dbRows(
      env,
      `INSERT INTO credit_holds (account_id, period, expires_at, created_at, batch_item_id) VALUES (${account}, '${period(now)}', ${now + 54_000}, ${now - 6000}, ${item})`,
    )
    // The next poll finds the item whose lease ended.
    await scheduler.advance(POLL_MS)
    const ended = await batchClient(env.service.api, env.key).ended('bat_dead')
    expect(ended.body).toMatchObject({ status: 'completed', succeeded: 1, failed: 0 })
    expect(ended.body.items[0].status).toBe('done')
    expect(logged(env, TAKEN_OVER).length).toBe(1)
    expect((await env.service.api.get('/api/usage', env.key)).body.credits).toEqual({ total: 1, used: 1, remaining: 0 })
    expect(await dbRows(env, 'SELECT * FROM credit_holds')).toEqual([])
  })

  test('an item waits while the last credits are only held, and runs once they come back; a 429 says when, and usage leaves them out', async () => {
    const scheduler = createManualScheduler()
    // The service's clock is the scheduler's: the item's waits and the hold's end move together.
    const env = await startAltTextEnv({ env: { ALTTEXT_FREE_CREDITS: '1' }, overrides: { clock: scheduler.now, scheduler } })
    const now = scheduler.now()
    const account = await accountId(env)
    // The last credit held by a single call of a replica that died: it lapses in 30 s.
    await dbRows(env, `INSERT INTO credit_holds (account_id, period, expires_at, created_at) VALUES (${account}, '${period(now)}', ${now + 30_000}, ${now})`)
    expect((await env.service.api.get('/api/usage', env.key)).body.credits).toEqual({ total: 1, used: 0, remaining: 0 })
    const batches = batchClient(env.service.api, env.key)
    const created = await batches.create({ items: [{ image_url: env.serve(makePng(++size, 40)) }] })
    expect(created.status).toBe(202)
    await waitUntil(() => logged(env, 'batch item waits: the last credits are held by generations under way').length === 1, 'the item to wait')
    const single = await env.generate({ image_url: env.serve(makePng(++size, 40)) })
    expect(single.status).toBe(429)
    expect(single.body.error.code).toBe('quota_exceeded')
    // When the hold lapses, not when the month ends.
    expect(single.headers.get('retry-after')).toBe('30')
    expect((await batches.get(created.body.id)).body.items[0].status).toBe('pending')

    // Just before the hold lapses the item still waits; once it has, its next try runs it.
    await scheduler.advance(29_000)
    expect((await batches.get(created.body.id)).body.items[0].status).toBe('pending')
    await advanceUntil(scheduler, async () => (await batches.get(created.body.id)).body.items[0].status === 'done', 'the item to run', { stepMs: 1000 })
    const ended = await batches.ended(created.body.id)
    expect(ended.body).toMatchObject({ status: 'completed', succeeded: 1, failed: 0 })
    expect((await env.service.api.get('/api/usage', env.key)).body.credits).toEqual({ total: 1, used: 1, remaining: 0 })
  })
})

describe('a process killed with SIGKILL', () => {
  let ollama: FakeOllama
  let images: HttpsImageServer

  async function killedMidBatch(tag: string, leaseSeconds: string) {
    ollama = await startFakeOllama({ reply: 'A lighthouse on a rocky coast at dusk.', hang: true })
    images = await startHttpsImageServer()
    stops.push(() => Promise.all([ollama.stop(), images.stop()]))
    const folder = mkdtempSync(join(dir, `${tag}-`))
    const database = await engineDatabase(folder)
    stops.push(() => database.close())
    const env = {
      ...database.env,
      OLLAMA_HOST: ollama.url,
      ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS: '127.0.0.1',
      NODE_EXTRA_CA_CERTS: images.caPath,
      ALTTEXT_RATE_LIMITS: 'off',
      ALTTEXT_FREE_CREDITS: '10',
      // One model slot: two items under way (one at the model, one waiting for it), the third pending.
      ALTTEXT_MODEL_CONCURRENCY: '1',
      ALTTEXT_BATCH_LEASE_SECONDS: leaseSeconds,
    }
    const first: ServiceProcess = await spawnService(env)
    stops.push(async () => {
      if (first.proc.exitCode === null && first.proc.signalCode === null) first.proc.kill('SIGKILL')
      await first.exited
    })
    const api = apiClient(first.url)
    const account = await api.register()
    const batches = batchClient(api, account.apiKey)
    const created = await batches.create({
      items: [0, 1, 2].map((n) => ({ image_url: images.route(`/lease-${tag}-${n}.png`, { kind: 'bytes', body: makePng(50 + n, 30) }) })),
    })
    expect(created.status).toBe(202)
    const claimed = () =>
      database.query<{ idx: number; claim_token: string; lease_until: number }>(
        "SELECT idx, claim_token, lease_until FROM batch_items WHERE status = 'running' ORDER BY idx",
      )
    await ollama.waitFor(() => ollama.inFlight() === 1)
    await waitUntil(async () => (await claimed()).length === 2, 'two items claimed')
    return { first, api, account, batches, batchId: created.body.id as string, database, folder, env, claimed }
  }

  test('leaves its claims to be taken over once their lease ends, and its claims can record nothing', async () => {
    const { first, batchId, database, claimed } = await killedMidBatch('takeover', '5')
    first.proc.kill('SIGKILL')
    await first.exited
    const dead = await claimed()
    expect(dead.map((c) => c.idx)).toEqual([0, 1])

    // Another claimant (a second process on a shared database) sees the same rows.
    const store = await database.openStore()
    try {
      const before = Math.min(...dead.map((c) => c.lease_until)) - 1
      const now = Math.max(...dead.map((c) => c.lease_until))
      const pending = (await store.batches.claim(batchId, before, 5000))!
      expect(pending).toMatchObject({ index: 2, takenOver: false })
      expect(await store.batches.claim(batchId, before, 5000)).toBeNull()
      const taken = [(await store.batches.claim(batchId, now, 5000))!, (await store.batches.claim(batchId, now, 5000))!]
      expect(taken.map((t) => [t.index, t.takenOver])).toEqual([
        [0, true],
        [1, true],
      ])
      // The dead process's claims are refused, however late it would come back.
      for (const [n, claim] of dead.entries()) {
        expect(await store.batches.renew(taken[n]!.id, claim.claim_token, now, 5000)).toBe('lost')
        expect((await store.batches.finish(taken[n]!.id, claim.claim_token, { kind: 'failed', code: 'internal_error', message: 'x' }, now)).status).toBe('lost')
      }
    } finally {
      await store.close()
    }
  }, 60_000)

  test('a batch cancelled while items ran ends after the restart: the items that had started are finished', async () => {
    const { first, account, batches, batchId, folder, env } = await killedMidBatch('cancelled', '60')
    const cancelled = await batches.cancel(batchId)
    expect(cancelled.status).toBe(200)
    expect(cancelled.body).toMatchObject({ status: 'cancelled', completed_at: null })
    first.proc.kill('SIGKILL')
    await first.exited

    ollama.behave({ hang: false })
    ollama.release()
    // SQLite's next serving process ends the dead one's claims at its start; on PostgreSQL, where no
    // replica can tell, they are taken over when their lease ends: the clock runs past it.
    const overrides = TEST_ENGINE === 'postgres' ? { clock: () => Date.now() + 61_000 } : {}
    const second = await startTestService({ env: { ...env, PORT: '0' }, dir: folder, overrides })
    stops.push(() => second.stop())
    const ended = await batchClient(second.api, account.apiKey).ended(batchId)
    expect(ended.body).toMatchObject({ status: 'cancelled', succeeded: 2, failed: 1 })
    expect(ended.body.items.map((item: { status: string }) => item.status)).toEqual(['done', 'done', 'failed'])
    expect(ended.body.items[2].error.code).toBe('batch_cancelled')
  }, 60_000)
})
