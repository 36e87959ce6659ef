// Signed webhooks and what they must never do: reach a blocked address (checked as pure functions, or
// refused before any connection: no traffic leaves loopback), show or log a secret, or let one account
// see or touch another's deliveries.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHmac } from 'node:crypto'
import { checkAnswers, DestinationRefused } from '../../src/intake'
import { checkWebhookUrl } from '../../src/modules/webhooks/url'
import { ApiError } from '../../src/shared/errors'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { makePng } from '../support/images'
import { deliveries, endedBatch, FAST_WEBHOOKS, makeSecret, startReceiver, verifySignature, waitForDelivery } from './support'

describe('the address policy of webhook URLs (pure functions)', () => {
  test.each([
    'https://127.0.0.1/hook',
    'https://10.0.0.1/hook',
    'https://169.254.169.254/latest/meta-data',
    'https://[::1]/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://[fd00::1]/hook',
    'https://0.0.0.0/hook',
    'https://192.168.1.1:8443/hook',
  ])('%s is refused at batch creation', (url) => {
    expect(() => checkWebhookUrl(url, [])).toThrow(ApiError)
    expect(() => checkWebhookUrl(url, [])).toThrow(/webhook_url: is a blocked address/)
  })

  test('public addresses and host names pass (a name is checked at every attempt, after resolving it)', () => {
    expect(checkWebhookUrl('https://93.184.215.14/hook', [])).toBe('https://93.184.215.14/hook')
    expect(checkWebhookUrl('https://hooks.example.com/a?b=c', [])).toBe('https://hooks.example.com/a?b=c')
  })

  test('the operator allow-list (ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS) applies as for images', () => {
    expect(checkWebhookUrl('https://127.0.0.1:8443/hook', ['127.0.0.1'])).toBe('https://127.0.0.1:8443/hook')
    expect(checkWebhookUrl('https://10.1.2.3/hook', ['10.0.0.0/8'])).toBe('https://10.1.2.3/hook')
    expect(() => checkWebhookUrl('https://10.1.2.3/hook', ['127.0.0.1'])).toThrow(ApiError)
  })

  test('a name is refused when any of its answers is blocked', () => {
    expect(() => checkAnswers('hooks.example.com', [{ address: '93.184.215.14' }, { address: '10.0.0.7' }], [])).toThrow(DestinationRefused)
    expect(checkAnswers('hooks.example.com', [{ address: '93.184.215.14' }], [])).toEqual([{ address: '93.184.215.14', family: 4 }])
    expect(checkAnswers('hooks.internal', [{ address: '10.0.0.7' }], ['hooks.internal'])).toEqual([{ address: '10.0.0.7', family: 4 }])
  })
})

describe('over HTTP', () => {
  let env: AltTextEnv
  let imageUrl: string
  beforeAll(async () => {
    env = await startAltTextEnv({
      overrides: {
        ...FAST_WEBHOOKS,
        // Names a test may use; none of them is ever connected to (the policy refuses the address first).
        resolveHost: async (name) => {
          if (name === 'hooks.blocked.test') return [{ address: '10.20.30.40', family: 4 }]
          throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' })
        },
      },
    })
    imageUrl = env.serve(makePng(64, 48))
  })
  afterAll(() => env.stop())

  test('a batch naming a blocked IP literal is refused before it is created', async () => {
    await makeSecret(env.service.api, env.key)
    const res = await env.service.api.request('POST', '/api/batches', {
      key: env.key,
      body: { items: [{ image_url: imageUrl }], webhook_url: 'https://169.254.169.254/hook' },
    })
    expect(res.status).toBe(400)
    expect(res.body.error.message).toMatch(/^webhook_url: is a blocked address/)
    // The address's category is the operator's detail (the log), not the caller's.
    expect(res.text).not.toContain('(link-local)')
  })

  test('a name that resolves to a blocked address is never connected to, and fails like a name that does not resolve (retried: DNS may change)', async () => {
    const blocked = await endedBatch(env.service.api, env.key, imageUrl, 'https://hooks.blocked.test/hook')
    const nowhere = await endedBatch(env.service.api, env.key, imageUrl, 'https://hooks.nowhere.test/hook')
    const failedBlocked = await waitForDelivery(env.service.api, env.key, blocked, (d) => d.status === 'failed')
    const failedNowhere = await waitForDelivery(env.service.api, env.key, nowhere, (d) => d.status === 'failed')
    // The account's log cannot tell an internal name from a missing one.
    const refused = (host: string) => `the webhook host ${host} cannot be resolved to an allowed address`
    expect(failedBlocked).toMatchObject({ attempts: 4, last_status: null, last_error: refused('hooks.blocked.test'), next_attempt_at: null })
    expect(failedNowhere).toMatchObject({ attempts: 4, last_status: null, last_error: refused('hooks.nowhere.test'), next_attempt_at: null })
    // What the name resolved to, and that it did not resolve, are for the operator only.
    expect(JSON.stringify(failedBlocked)).not.toContain('10.20.30.40')
    expect(env.service.logText()).toContain('10.20.30.40')
    expect(env.service.logText()).toContain('hooks.nowhere.test: ENOTFOUND')
  })

  test('another account sees none of the deliveries, cannot retry them, and signs with its own secret', async () => {
    const receiver = startReceiver(env.images)
    const secretA = await makeSecret(env.service.api, env.key)
    receiver.useSecret(secretA)
    const batchId = await endedBatch(env.service.api, env.key, imageUrl, receiver.url)
    const delivery = await waitForDelivery(env.service.api, env.key, batchId, (d) => d.status === 'delivered')

    const other = await env.service.api.register()
    const secretB = await makeSecret(env.service.api, other.apiKey)
    expect(secretB).not.toBe(secretA)
    expect(await deliveries(env.service.api, other.apiKey)).toEqual([])
    const retry = await env.service.api.request('POST', `/api/webhook-deliveries/${delivery.id}/retry`, { key: other.apiKey })
    expect(retry.status).toBe(404)
    expect((await env.service.api.get(`/api/batches/${batchId}`, other.apiKey)).status).toBe(404)
    const got = receiver.received.at(-1)!
    expect(verifySignature(got.headers.get('alttext-signature'), got.body, secretB)).toBe(false)
    expect(got.verified).toBe(true)
  })

  test('a signature older than the tolerance does not verify (replays are refused by the receiver)', () => {
    const body = '{"type":"batch.completed"}'
    const now = Math.floor(Date.now() / 1000)
    const sign = (t: number) => `t=${t},v1=${createHmac('sha256', 'whsec_x').update(`${t}.${body}`).digest('hex')}`
    expect(verifySignature(sign(now), body, 'whsec_x', now)).toBe(true)
    expect(verifySignature(sign(now - 301), body, 'whsec_x', now)).toBe(false)
    expect(verifySignature(sign(now), `${body} `, 'whsec_x', now)).toBe(false)
  })

  test('secrets are never logged, and never shown again', async () => {
    const secret = await makeSecret(env.service.api, env.key)
    expect(env.service.logText()).not.toContain(secret)
    expect(env.service.logText()).not.toContain('whsec_')
    const status = await env.service.api.get('/api/webhook-secret', env.key)
    expect(status.text).not.toContain('whsec_')
    const log = await env.service.api.get('/api/webhook-deliveries', env.key)
    expect(log.text).not.toContain('whsec_')
  })
})
