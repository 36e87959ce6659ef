// The organisation webhook when things go wrong: a receiver that keeps failing is retried as a batch's is,
// then failed, and a manual retry sends the same event again; an organisation without a webhook, and
// decisions that change nothing, queue nothing; bad bodies and URLs are refused; GET and DELETE of none are 404.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { waitUntil } from '../support/service'
import { deliveriesOf, makeOrg, setWebhook, suggestion, type TestOrg } from './org-support'
import { FAST_WEBHOOKS, type Receiver, startReceiver } from './support'

let env: AltTextEnv
let org: TestOrg
let receiver: Receiver

beforeAll(async () => {
  env = await startAltTextEnv({ overrides: FAST_WEBHOOKS })
  org = await makeOrg(env.service)
  receiver = startReceiver(env.images)
  receiver.useSecret((await setWebhook(env.service.api, org.id, org.owner.key, receiver.url)).secret)
})
afterAll(() => env.stop())

const api = () => env.service.api

/** Waits until the suggestion's only delivery satisfies `done`, and returns it. */
async function deliveryWhen(id: string, done: (d: any) => boolean): Promise<any> {
  let found: any
  await waitUntil(async () => {
    const all = await deliveriesOf(api(), org.owner.key, id)
    expect(all.length).toBeLessThanOrEqual(1)
    found = all[0]
    return found !== undefined && done(found)
  }, `the delivery of ${id}`)
  return found
}

describe('a receiver that fails', () => {
  test('is retried with backoff as a batch webhook is, then the delivery fails; every attempt the same signed event', async () => {
    receiver.answer(503)
    const start = receiver.received.length
    const made = await suggestion(api(), org.owner.key)
    await api().post(`/api/suggestions/${made.id}/accept`, {}, org.owner.key)
    const failed = await deliveryWhen(made.id, (d) => d.status === 'failed')
    // FAST_WEBHOOKS: three retries after the first attempt.
    expect(failed).toMatchObject({ attempts: 4, last_status: 503, last_error: 'the receiver answered 503', next_attempt_at: null, delivered_at: null })
    const attempts = receiver.received.slice(start)
    expect(attempts.length).toBe(4)
    expect(new Set(attempts.map((a) => a.headers.get('alttext-delivery')))).toEqual(new Set([failed.id]))
    expect(new Set(attempts.map((a) => a.body)).size).toBe(1)
    expect(attempts.every((a) => a.verified)).toBe(true)

    // A manual retry sends the very same event once more.
    receiver.answer(200)
    const retried = await api().post(`/api/webhook-deliveries/${failed.id}/retry`, {}, org.owner.key)
    expect(retried.status).toBe(200)
    expect(retried.body).toMatchObject({ id: failed.id, status: 'pending', suggestion_id: made.id, batch_id: null })
    const delivered = await deliveryWhen(made.id, (d) => d.status === 'delivered')
    expect(delivered).toMatchObject({ attempts: 5, last_status: 200, last_error: null })
    expect(receiver.received.at(-1)!.body).toBe(attempts[0]!.body)
  })

  test('an event queued for a URL keeps it: a newer PUT sends later events elsewhere, not the retries', async () => {
    receiver.answer(500)
    const made = await suggestion(api(), org.owner.key)
    await api().post(`/api/suggestions/${made.id}/reject`, {}, org.owner.key)
    const elsewhere = startReceiver(env.images)
    const replaced = await setWebhook(api(), org.id, org.owner.key, elsewhere.url)
    receiver.useSecret(replaced.secret)
    const failed = await deliveryWhen(made.id, (d) => d.status === 'failed')
    expect(failed.url).toBe(receiver.url)
    expect(elsewhere.received).toEqual([])
    receiver.answer(200)
  })
})

describe('nothing to send', () => {
  test('an organisation without a webhook queues nothing for its decisions', async () => {
    const plain = await makeOrg(env.service, 'No hooks')
    const made = await suggestion(api(), plain.owner.key)
    expect((await api().post(`/api/suggestions/${made.id}/accept`, {}, plain.owner.key)).status).toBe(200)
    expect((await api().post(`/api/suggestions/${made.id}/reopen`, {}, plain.owner.key)).status).toBe(200)
    // A delivery is queued in the decision's own transaction: there is none once the decision answered.
    expect((await api().get('/api/webhook-deliveries', plain.owner.key)).body.items).toEqual([])
    const none = await api().get(`/api/orgs/${plain.id}/webhook`, plain.owner.key)
    expect(none.status).toBe(404)
    expect(none.body.error.code).toBe('not_found')
    const deleted = await api().delete(`/api/orgs/${plain.id}/webhook`, plain.owner.key)
    expect(deleted.status).toBe(404)
    expect(deleted.body.error.code).toBe('not_found')
  })

  test('a decision refused (already decided, nothing to reopen) queues nothing', async () => {
    const made = await suggestion(api(), org.owner.key)
    expect((await api().post(`/api/suggestions/${made.id}/reopen`, {}, org.owner.key)).status).toBe(409)
    expect(await deliveriesOf(api(), org.owner.key, made.id)).toEqual([])
    expect((await api().post(`/api/suggestions/${made.id}/accept`, {}, org.owner.key)).status).toBe(200)
    const again = await api().post(`/api/suggestions/${made.id}/reject`, {}, org.owner.key)
    expect(again.status).toBe(409)
    expect(again.body.error.code).toBe('already_decided')
    expect((await deliveriesOf(api(), org.owner.key, made.id)).length).toBe(1)
  })
})

describe('bad requests', () => {
  test.each([
    ['no url', {}, /^url: /u],
    ['a number', { url: 42 }, /^url: /u],
    ['a relative URL', { url: 'hooks.example.com/alttext' }, /^url: must be an absolute https URL/u],
    ['plain http', { url: 'http://hooks.example.com/alttext' }, /^url: must use https \(found http\)/u],
    ['credentials', { url: 'https://user:pass@hooks.example.com/alttext' }, /^url: must not contain a user name or password/u],
    ['2,100 characters', { url: `https://hooks.example.com/${'a'.repeat(2100)}` }, /^url: must be at most 2048 characters/u],
  ])('PUT with %s is 400 invalid_request, and changes nothing', async (_, body, message) => {
    const before = await api().get(`/api/orgs/${org.id}/webhook`, org.owner.key)
    const res = await api().request('PUT', `/api/orgs/${org.id}/webhook`, { key: org.owner.key, body })
    expect(res.status).toBe(400)
    expect(res.body.error.code).toBe('invalid_request')
    expect(res.body.error.message).toMatch(message)
    expect((await api().get(`/api/orgs/${org.id}/webhook`, org.owner.key)).body).toEqual(before.body)
  })
})
