// Signed webhooks when things go wrong: a receiver that keeps failing, redirects, hangs or is not there;
// webhook URLs a batch may not name; bad paging and unknown deliveries. The dispatcher's timers (its poll,
// the retries, an attempt's timeout) and the service's clock are a manual scheduler the tests move.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { makePng } from '../support/images'
import { createManualScheduler } from '../support/scheduler'
import { endedBatch, makeSecret, type Receiver, startReceiver, waitForDelivery } from './support'

let env: AltTextEnv
let imageUrl: string
let receiver: Receiver
const scheduler = createManualScheduler()

beforeAll(async () => {
  env = await startAltTextEnv({
    overrides: { clock: scheduler.now, scheduler, webhookRetryDelaysMs: [50, 50], webhookTimeoutMs: 500, webhookPollMs: 50 },
  })
  imageUrl = env.serve(makePng(64, 48))
  receiver = startReceiver(env.images)
  receiver.useSecret(await makeSecret(env.service.api, env.key))
})
afterAll(() => env.stop())

describe('deliveries that fail', () => {
  test('a receiver that never answers 2xx gets every attempt, then the delivery is failed', async () => {
    receiver.answer(500)
    const start = receiver.received.length
    const batchId = await endedBatch(env.service.api, env.key, imageUrl, receiver.url)
    const failed = await waitForDelivery(env.service.api, env.key, batchId, (d) => d.status === 'failed', { scheduler })
    expect(failed).toMatchObject({ attempts: 3, last_status: 500, last_error: 'the receiver answered 500', next_attempt_at: null, delivered_at: null })
    expect(receiver.received.length - start).toBe(3)
    receiver.answer(200)
  })

  test('a redirect is not followed: it counts as a failed attempt', async () => {
    const target = startReceiver(env.images)
    const redirecting = env.images.route(`/redirecting-hook-${process.pid}`, { kind: 'redirect', to: target.url, status: 307 })
    const batchId = await endedBatch(env.service.api, env.key, imageUrl, redirecting)
    const failed = await waitForDelivery(env.service.api, env.key, batchId, (d) => d.status === 'failed', { scheduler })
    expect(failed).toMatchObject({ last_status: 307, last_error: 'the receiver answered 307; redirects are not followed' })
    expect(target.received.length).toBe(0)
  })

  test('a receiver that does not answer within the timeout fails the attempt', async () => {
    const hanging = env.images.route(`/hanging-hook-${process.pid}`, { kind: 'hang' })
    const batchId = await endedBatch(env.service.api, env.key, imageUrl, hanging)
    const failed = await waitForDelivery(env.service.api, env.key, batchId, (d) => d.status === 'failed', { scheduler })
    expect(failed).toMatchObject({ attempts: 3, last_status: null, last_error: 'no answer within 0.5 s' })
  })

  test('a receiver that is not there: the host could not be reached', async () => {
    const closed = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') })
    const port = closed.port
    await closed.stop(true)
    const batchId = await endedBatch(env.service.api, env.key, imageUrl, `https://127.0.0.1:${port}/hook`)
    const failed = await waitForDelivery(env.service.api, env.key, batchId, (d) => d.status === 'failed', { scheduler })
    expect(failed).toMatchObject({ attempts: 3, last_status: null, last_error: 'the webhook host could not be reached' })
  })
})

describe('webhook URLs a batch may not name', () => {
  const create = (key: string, webhook_url: unknown) =>
    env.service.api.request('POST', '/api/batches', { key, body: { items: [{ image_url: imageUrl }], webhook_url } })

  test.each([
    ['http', 'http://example.com/hook', 'webhook_url: must use https (found http)'],
    ['credentials', 'https://user:pass@example.com/hook', 'webhook_url: must not contain a user name or password'],
    ['not a URL', 'not a url', 'webhook_url: must be an absolute https URL'],
    ['over 2048 characters', `https://example.com/${'a'.repeat(2048)}`, 'webhook_url: must be at most 2048 characters'],
  ])('%s is refused', async (_label, url, message) => {
    const res = await create(env.key, url)
    expect(res.status).toBe(400)
    expect(res.body.error.code).toBe('invalid_request')
    expect(res.body.error.message).toBe(message)
  })

  test('an account without a webhook secret is told to make one first', async () => {
    const { apiKey } = await env.service.api.register()
    const res = await create(apiKey, receiver.url)
    expect(res.status).toBe(400)
    expect(res.body.error.code).toBe('invalid_request')
    expect(res.body.error.message).toContain('POST /api/webhook-secret')
    expect((await env.service.api.get('/api/batches', apiKey)).body.items).toEqual([])
  })
})

describe('the delivery log', () => {
  test.each(['limit=0', 'limit=101', 'limit=x', 'cursor=abc', 'cursor=-1'])('?%s is 400 invalid_request', async (query) => {
    const res = await env.service.api.get(`/api/webhook-deliveries?${query}`, env.key)
    expect(res.status).toBe(400)
    expect(res.body.error.code).toBe('invalid_request')
  })

  test('retrying an unknown delivery is 404 not_found', async () => {
    const res = await env.service.api.request('POST', '/api/webhook-deliveries/whd_000000000000000000000000/retry', { key: env.key })
    expect(res.status).toBe(404)
    expect(res.body.error).toMatchObject({ code: 'not_found', message: 'no webhook delivery with that id in this account' })
  })

  test('without a key every route is 401', async () => {
    for (const [method, path] of [
      ['GET', '/api/webhook-secret'],
      ['POST', '/api/webhook-secret'],
      ['GET', '/api/webhook-deliveries'],
      ['POST', '/api/webhook-deliveries/whd_x/retry'],
    ] as const) {
      const res = await env.service.api.request(method, path)
      expect(res.status).toBe(401)
    }
  })
})
