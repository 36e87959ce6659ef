// Signed webhooks, the paths that work: the secret made once, a delivery to a real loopback HTTPS receiver
// that checks the signature, retries after the receiver fails, rotation, a manual retry, the log's pages.
// The dispatcher runs on a manual scheduler that is also the service's clock: the retries follow the
// service's own backoff (30 s, then 1 min, …), which the tests pass by moving the scheduler.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { WEBHOOK_RETRY_DELAYS_SECONDS } from '../../src/shared/limits'
import { VERSION } from '../../src/version'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { makePng } from '../support/images'
import { advanceUntil, createManualScheduler } from '../support/scheduler'
import { waitUntil } from '../support/service'
import { deliveries, endedBatch, makeSecret, type Receiver, startReceiver, verifySignature, waitForDelivery } from './support'

let env: AltTextEnv
let imageUrl: string
const scheduler = createManualScheduler()

beforeAll(async () => {
  env = await startAltTextEnv({ overrides: { clock: scheduler.now, scheduler, webhookTimeoutMs: 2000 } })
  imageUrl = env.serve(makePng(64, 48))
})
afterAll(() => env.stop())

describe('the webhook secret', () => {
  test('is made once, shown once, and GET says only whether it exists and when it was made', async () => {
    const { apiKey } = await env.service.api.register()
    const before = await env.service.api.get('/api/webhook-secret', apiKey)
    expect(before.status).toBe(200)
    expect(before.body).toEqual({ exists: false, created_at: null })

    const created = await env.service.api.request('POST', '/api/webhook-secret', { key: apiKey })
    expect(created.status).toBe(201)
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/)
    expect(created.body.replaced).toBe(false)

    const after = await env.service.api.get('/api/webhook-secret', apiKey)
    expect(after.body).toEqual({ exists: true, created_at: created.body.created_at })
    expect(after.text).not.toContain(created.body.secret)
  })
})

describe('delivery', () => {
  let receiver: Receiver
  let secret: string
  beforeAll(async () => {
    receiver = startReceiver(env.images)
    secret = await makeSecret(env.service.api, env.key)
    receiver.useSecret(secret)
  })

  test('an ended batch is POSTed once to its webhook_url, signed with the account secret, with the batch as data', async () => {
    const start = receiver.received.length
    const batchId = await endedBatch(env.service.api, env.key, imageUrl, receiver.url)
    const delivery = await waitForDelivery(env.service.api, env.key, batchId, (d) => d.status === 'delivered')
    expect(receiver.received.length).toBe(start + 1)
    const got = receiver.received[start]!
    expect(got.verified).toBe(true)
    expect(got.headers.get('content-type')).toBe('application/json')
    expect(got.headers.get('user-agent')).toBe(`alttext-webhooks/${VERSION}`)
    expect(got.headers.get('alttext-delivery')).toBe(delivery.id)
    expect(got.headers.get('alttext-signature')).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/)

    const batch = await env.service.api.get(`/api/batches/${batchId}`, env.key)
    expect(got.json).toEqual({ type: 'batch.completed', created: expect.any(Number), data: batch.body })
    expect(got.json.data.items[0].metadata).toEqual({ sku: 'A-1' })
    expect(got.json.created).toBe(Math.floor(Date.parse(delivery.created_at) / 1000))

    expect(delivery).toMatchObject({
      batch_id: batchId,
      event: 'batch.completed',
      url: receiver.url,
      status: 'delivered',
      attempts: 1,
      last_status: 200,
      last_error: null,
      next_attempt_at: null,
    })
    expect(delivery.id).toMatch(/^whd_[0-9a-f]{24}$/)
    expect(Date.parse(delivery.delivered_at)).toBeGreaterThanOrEqual(Date.parse(delivery.created_at))
  })

  test('a receiver that fails is retried with backoff until it answers 2xx; every attempt is signed and carries the same delivery id', async () => {
    receiver.answer(503)
    const start = receiver.received.length
    const [first, second] = WEBHOOK_RETRY_DELAYS_SECONDS.map((seconds) => seconds * 1000)
    const batchId = await endedBatch(env.service.api, env.key, imageUrl, receiver.url)
    // An attempt is counted when it starts; this line says its outcome is recorded.
    const failedAttempts = () => env.service.logs.filter((line) => line.msg === 'webhook attempt failed' && line.batch === batchId).length
    await waitUntil(() => failedAttempts() === 1, 'the first attempt to fail')
    const once = await waitForDelivery(env.service.api, env.key, batchId, (d) => d.attempts === 1)
    expect(once).toMatchObject({ status: 'pending', last_status: 503, last_error: 'the receiver answered 503' })
    // The first retry is due the first backoff after the attempt (the clock has not moved since), not before.
    expect(Date.parse(once.next_attempt_at)).toBe(scheduler.now() + first!)
    await scheduler.advance(first! - 1)
    expect(receiver.received.length - start).toBe(1)
    // Moved on in small steps: the dispatcher may still be reading the store when the retry falls due.
    await advanceUntil(scheduler, () => failedAttempts() === 2, 'the first retry to fail', { stepMs: 10 })
    const failing = await waitForDelivery(env.service.api, env.key, batchId, (d) => d.attempts === 2)
    expect(failing).toMatchObject({ status: 'pending', last_status: 503 })
    // The second backoff is longer, counted from the retry (made within a few steps of its due time).
    const gap = Date.parse(failing.next_attempt_at) - Date.parse(once.next_attempt_at)
    expect(gap).toBeGreaterThanOrEqual(second!)
    expect(gap).toBeLessThan(second! + 5_000)

    receiver.answer(200)
    await scheduler.advance(Date.parse(failing.next_attempt_at) - scheduler.now() - 1)
    expect(receiver.received.length - start).toBe(2)
    const delivered = await waitForDelivery(env.service.api, env.key, batchId, (d) => d.status === 'delivered', { scheduler, stepMs: 10 })
    const attempts = receiver.received.slice(start)
    expect(attempts.length).toBe(delivered.attempts)
    expect(delivered.attempts).toBe(3)
    expect(delivered).toMatchObject({ last_status: 200, last_error: null, next_attempt_at: null })
    expect(new Set(attempts.map((a) => a.headers.get('alttext-delivery')))).toEqual(new Set([delivered.id]))
    expect(attempts.every((a) => a.verified)).toBe(true)
    // The event is the same at every attempt; only the signature's timestamp may move.
    expect(new Set(attempts.map((a) => a.body)).size).toBe(1)
  })

  test('rotating the secret signs every later attempt with the new one only', async () => {
    const rotated = await env.service.api.request('POST', '/api/webhook-secret', { key: env.key })
    expect(rotated.status).toBe(201)
    expect(rotated.body.replaced).toBe(true)
    expect(rotated.body.secret).not.toBe(secret)
    receiver.useSecret(rotated.body.secret)
    const start = receiver.received.length
    const batchId = await endedBatch(env.service.api, env.key, imageUrl, receiver.url)
    await waitForDelivery(env.service.api, env.key, batchId, (d) => d.status === 'delivered')
    const got = receiver.received[start]!
    expect(got.verified).toBe(true)
    expect(verifySignature(got.headers.get('alttext-signature'), got.body, secret)).toBe(false)
    secret = rotated.body.secret
  })

  test('a delivery may be sent again on request, with the same id', async () => {
    const batchId = await endedBatch(env.service.api, env.key, imageUrl, receiver.url)
    const first = await waitForDelivery(env.service.api, env.key, batchId, (d) => d.status === 'delivered')
    const start = receiver.received.length
    const retried = await env.service.api.request('POST', `/api/webhook-deliveries/${first.id}/retry`, { key: env.key })
    expect(retried.status).toBe(200)
    expect(retried.body).toMatchObject({ id: first.id, status: 'pending' })
    await receiver.waitFor(start + 1)
    const again = await waitForDelivery(env.service.api, env.key, batchId, (d) => d.status === 'delivered' && d.attempts === first.attempts + 1)
    expect(receiver.received[start]!.headers.get('alttext-delivery')).toBe(first.id)
    expect(receiver.received[start]!.verified).toBe(true)
    expect(again.id).toBe(first.id)
  })

  test('the log pages newest first with a cursor', async () => {
    const all = await deliveries(env.service.api, env.key)
    expect(all.length).toBeGreaterThanOrEqual(3)
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const res: { status: number; body: any } = await env.service.api.get(
        `/api/webhook-deliveries?limit=1${cursor === null ? '' : `&cursor=${cursor}`}`,
        env.key,
      )
      expect(res.status).toBe(200)
      expect(res.body.items.length).toBe(1)
      seen.push(res.body.items[0].id)
      cursor = res.body.next_cursor
    } while (cursor !== null)
    expect(seen).toEqual(all.map((d) => d.id))
    const created = all.map((d) => Date.parse(d.created_at))
    expect(created).toEqual(created.toSorted((a, b) => b - a))
  })
})

test('a cancelled batch sends batch.cancelled once its running items have finished', async () => {
  const receiver = startReceiver(env.images)
  receiver.useSecret(await makeSecret(env.service.api, env.key))
  env.ollama.behave({ delayMs: 300 })
  try {
    const items = Array.from({ length: 8 }, (_, i) => ({ image_url: env.serve(makePng(40 + i, 40)) }))
    const created = await env.service.api.request('POST', '/api/batches', { key: env.key, body: { items, webhook_url: receiver.url } })
    expect(created.status).toBe(202)
    const cancelled = await env.service.api.request('POST', `/api/batches/${created.body.id}/cancel`, { key: env.key })
    expect(cancelled.status).toBe(200)
    await receiver.waitFor(1)
    const got = receiver.received[0]!
    expect(got.verified).toBe(true)
    expect(got.json.type).toBe('batch.cancelled')
    expect(got.json.data.id).toBe(created.body.id)
    expect(got.json.data.status).toBe('cancelled')
    await waitForDelivery(env.service.api, env.key, created.body.id, (d) => d.status === 'delivered' && d.event === 'batch.cancelled')
  } finally {
    env.ollama.behave({ delayMs: 0 })
  }
})
