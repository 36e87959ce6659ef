// The example receiver of docs/integrations.md, run as a CMS would run it: an asset's image uploaded as a
// suggestion, decided through the API (as the console does), the signed suggestion.decided event received
// over real loopback HTTPS and written back; a person's newer text wins; forged and replayed events change
// nothing.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { receiver, verifyAlttextSignature } from '../../docs/examples/cms-receiver'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { makePng } from '../support/images'
import { waitUntil } from '../support/service'
import { makeOrg, setWebhook, type TestOrg } from '../webhooks/org-support'
import { FAST_WEBHOOKS } from '../webhooks/support'

let env: AltTextEnv
let org: TestOrg
/** The CMS: asset id → alt text. */
const assets = new Map<string, string>()
const outcomes: string[] = []
/** Every delivery as it arrived, to replay one. */
const arrived: { body: string; headers: Headers }[] = []
let secret = ''
let handle: ((request: Request) => Promise<Response>) | undefined

beforeAll(async () => {
  env = await startAltTextEnv({ overrides: FAST_WEBHOOKS, ollama: { reply: 'A lighthouse on a cliff at dusk.' } })
  org = await makeOrg(env.service, 'CMS team')
  const url = env.images.route(`/cms-hook-${process.pid}`, {
    kind: 'handler',
    fn: async (request) => {
      arrived.push({ body: await request.clone().text(), headers: request.headers })
      const answer = await handle!(request)
      outcomes.push(answer.ok ? ((await answer.clone().json()) as { outcome: string }).outcome : `refused ${answer.status}`)
      return answer
    },
  })
  secret = (await setWebhook(env.service.api, org.id, org.owner.key, url)).secret
  handle = receiver({
    secret,
    service: { url: env.service.url, apiKey: org.owner.key },
    targetKind: 'cms-asset',
    cms: {
      readAlt: async (ref) => assets.get(ref) ?? null,
      writeAlt: async (ref, altText) => {
        assets.set(ref, altText)
      },
    },
  })
})
afterAll(() => env.stop())

/** "Asset created": the CMS sends the image's bytes and what the asset's alt is now. */
async function assetCreated(ref: string): Promise<string> {
  const form = new FormData()
  form.append('image', new Blob([makePng(80, 60)], { type: 'image/png' }), 'lighthouse.png')
  form.append('target', JSON.stringify({ kind: 'cms-asset', ref, site: 'https://cms.example.com' }))
  form.append('current_alt', assets.get(ref) ?? '')
  const res = await fetch(`${env.service.url}/api/suggestions`, { method: 'POST', headers: { 'X-API-Key': org.owner.key }, body: form })
  expect(res.status).toBe(201)
  const made = (await res.json()) as { id: string }
  expect(made).toMatchObject({ status: 'pending', proposed_alt: 'A lighthouse on a cliff at dusk.' })
  return made.id
}

describe('the example CMS receiver', () => {
  test('asset created → suggestion → accepted in the console → the alt text is in the CMS', async () => {
    assets.set('101', '')
    const id = await assetCreated('101')
    expect((await env.service.api.post(`/api/suggestions/${id}/accept`, {}, org.owner.key)).status).toBe(200)
    await waitUntil(() => assets.get('101') === 'A lighthouse on a cliff at dusk.', 'the write-back')
    expect(outcomes.at(-1)).toBe('written')
  })

  test('an edited decision writes the reviewer’s text', async () => {
    assets.set('102', '')
    const id = await assetCreated('102')
    await env.service.api.post(`/api/suggestions/${id}/accept`, { alt_text: 'The Fastnet lighthouse at dusk.' }, org.owner.key)
    await waitUntil(() => assets.get('102') === 'The Fastnet lighthouse at dusk.', 'the edited write-back')
  })

  test('a person changed the alt text meanwhile: their text stays (stale)', async () => {
    assets.set('103', '')
    const id = await assetCreated('103')
    assets.set('103', 'Written by a person.')
    const before = outcomes.length
    await env.service.api.post(`/api/suggestions/${id}/accept`, {}, org.owner.key)
    await waitUntil(() => outcomes.length > before, 'the delivery')
    expect(outcomes.at(-1)).toBe('stale')
    expect(assets.get('103')).toBe('Written by a person.')
  })

  test('a rejection writes nothing', async () => {
    assets.set('104', '')
    const id = await assetCreated('104')
    const before = outcomes.length
    await env.service.api.post(`/api/suggestions/${id}/reject`, { reason: 'Too vague.' }, org.owner.key)
    await waitUntil(() => outcomes.length > before, 'the delivery')
    expect(outcomes.at(-1)).toBe('ignored')
    expect(assets.get('104')).toBe('')
  })
})

describe('the example receiver refuses what it must', () => {
  const body = JSON.stringify({ event: 'suggestion.decided', suggestion: { id: 'sug_000000000000000000000000', target: { kind: 'cms-asset', ref: '101' } } })
  const sign = (t: number, key = secret) => `t=${t},v1=${new Bun.CryptoHasher('sha256', key).update(`${t}.${body}`).digest('hex')}`
  const now = Math.floor(Date.now() / 1000)

  test('a signature made with another secret, a changed body, an old time, none at all', () => {
    expect(verifyAlttextSignature(sign(now), body, secret, now)).toBe(true)
    expect(verifyAlttextSignature(sign(now, 'whsec_other'), body, secret, now)).toBe(false)
    expect(verifyAlttextSignature(sign(now), `${body} `, secret, now)).toBe(false)
    expect(verifyAlttextSignature(sign(now - 301), body, secret, now)).toBe(false)
    expect(verifyAlttextSignature(null, body, secret, now)).toBe(false)
    expect(verifyAlttextSignature('t=abc,v1=00', body, secret, now)).toBe(false)
  })

  test('a forged request is 400; a replayed delivery is not applied twice', async () => {
    const forged = await handle!(
      new Request('https://cms.example.com/hook', { method: 'POST', body, headers: { 'alttext-signature': sign(now, 'whsec_guess') } }),
    )
    expect(forged.status).toBe(400)
    // The first delivery of the first test, sent again with its own signature and delivery id.
    assets.set('101', '')
    const replay = await handle!(new Request('https://cms.example.com/hook', { method: 'POST', body: arrived[0]!.body, headers: arrived[0]!.headers }))
    expect(await replay.json()).toEqual({ outcome: 'duplicate' })
    expect(assets.get('101')).toBe('')
  })
})
