// Review batches (POST /api/batches {review: true}): each item that succeeds becomes a pending suggestion
// of the batch's organisation, with the batch's id and no second charge; an item may name its own target.
// An author of the organisation sees them in the queue; another organisation does not.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { makePng } from '../support/images'
import { batchClient } from './support'

const REPLY = 'Two children flying a red kite on a windy beach.'

let env: AltTextEnv
let orgId: string
let ownerKey: string
let authorKey: string
let width = 40

const freshUrl = () => env.serve(makePng(width++, 21))
const usage = async (key: string) => (await env.service.api.get('/api/usage', key)).body.credits.used as number

beforeAll(async () => {
  env = await startAltTextEnv({ ollama: { reply: REPLY }, env: { ALTTEXT_FREE_CREDITS: '100' } })
  const { service } = env
  const owner = await service.api.register()
  orgId = (await service.api.post('/api/orgs', { name: 'Newsroom' }, owner.apiKey)).body.id
  ownerKey = (await service.api.post('/api/keys', { org_id: orgId }, owner.apiKey)).body.api_key
  const author = await service.api.register()
  expect((await service.api.post(`/api/orgs/${orgId}/invitations`, { email: author.email, role: 'author' }, ownerKey)).status).toBe(201)
  const token = /token=([0-9a-f]{64})/u.exec(service.logText())?.[1]
  expect((await service.api.post('/api/invitations/accept', { token }, author.apiKey)).status).toBe(200)
  authorKey = (await service.api.post('/api/keys', { org_id: orgId }, author.apiKey)).body.api_key
})
afterAll(async () => {
  await env.stop()
})

describe('POST /api/batches {review: true}', () => {
  test('each answer becomes a pending suggestion of the organisation, charged once; an author sees them', async () => {
    const batches = batchClient(env.service.api, ownerKey)
    const before = await usage(ownerKey)
    const base64 = Buffer.from(makePng(width++, 19)).toString('base64')
    const created = await env.service.api.request('POST', '/api/batches', {
      key: ownerKey,
      body: {
        review: true,
        items: [
          { image_url: freshUrl(), metadata: { n: 0 } },
          { image_base64: base64, target: { kind: 'wordpress-attachment', ref: '4711', site: 'news.example.org' } },
        ],
      },
    })
    expect(created.status).toBe(202)
    const id = created.body.id as string
    const ended = await batches.ended(id)
    expect(ended.body.review).toBe(true)
    expect(ended.body.succeeded).toBe(2)
    const [first, second] = ended.body.items
    expect(first.suggestion_id).toMatch(/^sug_[0-9a-f]{24}$/u)
    expect(second.suggestion_id).toMatch(/^sug_[0-9a-f]{24}$/u)
    // Two fresh answers, two credits: the suggestions cost nothing more.
    expect((await usage(ownerKey)) - before).toBe(2)
    expect(env.ollama.chatRequests()).toHaveLength(2)

    const listed = await env.service.api.get('/api/suggestions?status=pending', authorKey)
    expect(listed.status).toBe(200)
    const mine = new Map<string, any>(listed.body.suggestions.filter((s: any) => s.batch_id === id).map((s: any) => [s.id, s]))
    expect(mine.size).toBe(2)
    expect(mine.get(first.suggestion_id)).toMatchObject({
      status: 'pending',
      proposed_alt: first.result.alt_text,
      current_alt: null,
      target: { kind: 'batch', ref: `${id}#0`, site: null, fingerprint: null },
      language: 'en',
      batch_id: id,
      created_by: null,
      image: { thumbnail_url: null },
    })
    const own = mine.get(second.suggestion_id)
    expect(own).toMatchObject({ target: { kind: 'wordpress-attachment', ref: '4711', site: 'news.example.org' }, proposed_alt: REPLY })
    // The runner had the uploaded bytes: a thumbnail.
    const thumb = await fetch(`${env.service.url}${own.image.thumbnail_url}`, { headers: { 'x-api-key': authorKey } })
    expect(thumb.status).toBe(200)
    expect(thumb.headers.get('content-type')).toBe('image/webp')

    // Decided like any other.
    expect((await env.service.api.post(`/api/suggestions/${first.suggestion_id}/accept`, {}, ownerKey)).body.status).toBe('accepted')
  })

  test('another organisation sees none of them', async () => {
    const created = await env.service.api.request('POST', '/api/batches', { key: ownerKey, body: { review: true, items: [{ image_url: freshUrl() }] } })
    const ended = await batchClient(env.service.api, ownerKey).ended(created.body.id)
    const suggestionId = ended.body.items[0].suggestion_id as string
    expect(suggestionId).toMatch(/^sug_/u)
    const stranger = await env.service.api.register()
    expect((await env.service.api.get(`/api/suggestions/${suggestionId}`, stranger.apiKey)).status).toBe(404)
    expect((await env.service.api.get('/api/suggestions', stranger.apiKey)).body.suggestions).toEqual([])
    expect((await env.service.api.get(`/api/batches/${created.body.id}`, stranger.apiKey)).status).toBe(404)
  })

  test('without review: no suggestion, no suggestion_id, and an item target is refused', async () => {
    const batches = batchClient(env.service.api, ownerKey)
    const total = (await env.service.api.get('/api/suggestions', ownerKey)).body.total
    const created = await batches.create({ items: [{ image_url: freshUrl() }] })
    const ended = await batches.ended(created.body.id)
    expect(ended.body.review).toBe(false)
    expect(ended.body.items[0]).not.toHaveProperty('suggestion_id')
    expect((await env.service.api.get('/api/suggestions', ownerKey)).body.total).toBe(total)
    const refused = await batches.create({ items: [{ image_url: freshUrl(), target: { kind: 'file', ref: 'a.md:1:1' } }] })
    expect(refused.status).toBe(400)
    expect(refused.body.error.message).toContain('items[0].target: only a review batch')
  })
})
