// The organisation webhook and what it must never do: be set, shown or removed by a member below admin or
// by anyone outside the organisation (404, as if it did not exist); aim at a blocked address (an IP literal
// is refused at PUT, a name that resolves to one is never connected to: no traffic leaves loopback); show
// or log its secret; let one organisation read, retry or verify another's events.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { waitUntil } from '../support/service'
import { deliveriesOf, makeOrg, setWebhook, suggestion, type TestOrg } from './org-support'
import { FAST_WEBHOOKS, startReceiver, verifySignature } from './support'

let env: AltTextEnv
let org: TestOrg
let other: TestOrg

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
  org = await makeOrg(env.service, 'Guarded')
  other = await makeOrg(env.service, 'Elsewhere')
})
afterAll(() => env.stop())

const api = () => env.service.api
const put = (orgId: string, key: string, url: string) => api().request('PUT', `/api/orgs/${orgId}/webhook`, { key, body: { url } })

describe('who may', () => {
  test('a reviewer or an author gets 403 forbidden_for_role on PUT, GET and DELETE; an admin may', async () => {
    const receiver = startReceiver(env.images)
    for (const role of ['reviewer', 'author'] as const) {
      const member = await org.member(role)
      for (const res of [
        await put(org.id, member.key, receiver.url),
        await api().get(`/api/orgs/${org.id}/webhook`, member.key),
        await api().delete(`/api/orgs/${org.id}/webhook`, member.key),
      ]) {
        expect(res.status).toBe(403)
        expect(res.body.error.code).toBe('forbidden_for_role')
        expect(res.text).not.toContain('whsec_')
      }
    }
    expect((await api().get(`/api/orgs/${org.id}/webhook`, org.owner.key)).status).toBe(404)
    const admin = await org.member('admin')
    expect((await put(org.id, admin.key, receiver.url)).status).toBe(200)
    expect((await api().get(`/api/orgs/${org.id}/webhook`, admin.key)).body.url).toBe(receiver.url)
    expect((await api().delete(`/api/orgs/${org.id}/webhook`, admin.key)).status).toBe(200)
  })

  test("another organisation's webhook routes are 404 org_not_found, for its owner too, and change nothing", async () => {
    const receiver = startReceiver(env.images)
    await setWebhook(api(), org.id, org.owner.key, receiver.url)
    const outsider = await api().register()
    for (const key of [other.owner.key, outsider.apiKey]) {
      for (const res of [
        await put(org.id, key, 'https://hooks.example.com/steal'),
        await api().get(`/api/orgs/${org.id}/webhook`, key),
        await api().delete(`/api/orgs/${org.id}/webhook`, key),
      ]) {
        expect(res.status).toBe(404)
        expect(res.body.error.code).toBe('org_not_found')
      }
    }
    expect((await api().get(`/api/orgs/${org.id}/webhook`, org.owner.key)).body.url).toBe(receiver.url)
  })
})

describe('where it may point', () => {
  test.each([
    'https://10.0.0.1/hook',
    'https://169.254.169.254/latest/meta-data',
    'https://[::ffff:10.0.0.1]/hook',
    'https://[fd00::1]/hook',
    'https://0.0.0.0/hook',
    'https://192.168.1.1:8443/hook',
  ])('%s is refused at PUT (a blocked IP literal), and nothing is stored', async (url) => {
    const fresh = await makeOrg(env.service, 'Blocked')
    const res = await put(fresh.id, fresh.owner.key, url)
    expect(res.status).toBe(400)
    expect(res.body.error.message).toMatch(/^url: is a blocked address/u)
    // The address's category is the operator's detail (the log), not the caller's.
    expect(res.text).not.toMatch(/\((private|link-local|unspecified|unique-local)\)/u)
    expect((await api().get(`/api/orgs/${fresh.id}/webhook`, fresh.owner.key)).status).toBe(404)
    expect((await api().get('/api/webhook-secret', fresh.owner.key)).body.exists).toBe(false)
  })

  test('a name that resolves to a blocked address is never connected to: each attempt fails as for a batch webhook', async () => {
    const fresh = await makeOrg(env.service, 'Resolved')
    await setWebhook(api(), fresh.id, fresh.owner.key, 'https://hooks.blocked.test/hook')
    const made = await suggestion(api(), fresh.owner.key)
    await api().post(`/api/suggestions/${made.id}/accept`, {}, fresh.owner.key)
    let failed: any
    await waitUntil(async () => {
      ;[failed] = await deliveriesOf(api(), fresh.owner.key, made.id)
      return failed?.status === 'failed'
    }, 'the delivery to fail')
    expect(failed).toMatchObject({
      attempts: 4,
      last_status: null,
      last_error: 'the webhook host hooks.blocked.test cannot be resolved to an allowed address',
    })
    expect(JSON.stringify(failed)).not.toContain('10.20.30.40')
    expect(env.service.logText()).toContain('10.20.30.40')
  })
})

describe('secrets and other organisations', () => {
  test("one organisation's events verify with its secret only; the other cannot list or retry them", async () => {
    const receiver = startReceiver(env.images)
    const mine = await setWebhook(api(), org.id, org.owner.key, receiver.url)
    const theirs = await setWebhook(api(), other.id, other.owner.key, startReceiver(env.images).url)
    receiver.useSecret(mine.secret)
    const made = await suggestion(api(), org.owner.key)
    await api().post(`/api/suggestions/${made.id}/accept`, {}, org.owner.key)
    await receiver.waitFor(1)
    const got = receiver.received[0]!
    expect(got.verified).toBe(true)
    expect(verifySignature(got.headers.get('alttext-signature'), got.body, theirs.secret)).toBe(false)
    expect(got.json.org_id).toBe(org.id)

    const [delivery] = await deliveriesOf(api(), org.owner.key, made.id)
    expect(delivery).toBeDefined()
    expect(await deliveriesOf(api(), other.owner.key, made.id)).toEqual([])
    expect((await api().post(`/api/webhook-deliveries/${delivery.id}/retry`, {}, other.owner.key)).status).toBe(404)
    // The event names people by email only, never an internal account id or the thumbnail's bytes.
    expect(got.body).not.toMatch(/"(account_id|created_by_id|thumbnail)"/u)
  })

  test('a secret is shown by its PUT only: never logged, never in GET, the activity log or the delivery log', async () => {
    const { secret } = await setWebhook(api(), org.id, org.owner.key, startReceiver(env.images).url)
    expect(env.service.logText()).not.toContain(secret)
    expect(env.service.logText()).not.toContain('whsec_')
    for (const path of [`/api/orgs/${org.id}/webhook`, `/api/orgs/${org.id}/activity`, '/api/webhook-deliveries', '/api/webhook-secret'])
      expect((await api().get(path, org.owner.key)).text).not.toContain('whsec_')
  })
})
