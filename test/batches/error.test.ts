// Batches, refusals: every malformed create is 400 naming the item and field (and creates nothing), bad
// base64 is invalid_image, bodies over the limit 413, non-JSON 415, an Idempotency-Key reused with another
// body 409, unknown batches 404, cancelling a completed batch 409, bad paging 400, a webhook_url that is
// not https 400. A model server that keeps failing fails the item with upstream_error, costing nothing.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { MAX_BATCH_BODY_BYTES, MAX_BATCH_ITEMS, MAX_IMAGE_BYTES } from '../../src/shared/limits'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { expectApiError } from '../support/assertions'
import { makePng } from '../support/images'
import { batchClient } from './support'

let env: AltTextEnv
let batches: ReturnType<typeof batchClient>
let url: string

beforeAll(async () => {
  env = await startAltTextEnv({ overrides: { batchRetryDelaysMs: [10, 10] } })
  batches = batchClient(env.service.api, env.key)
  url = env.serve(makePng(12, 12))
})
afterAll(async () => {
  await env.stop()
})

const nothingCreated = async () => expect((await batches.list()).body.items).toEqual([])

describe('the body', () => {
  const cases: [string, unknown, string][] = [
    ['no items', {}, 'items'],
    ['items not an array', { items: 'x' }, 'items'],
    ['zero items', { items: [] }, 'items'],
    [`more than ${MAX_BATCH_ITEMS} items`, { items: Array.from({ length: MAX_BATCH_ITEMS + 1 }, () => ({ image_url: 'https://example.com/a.png' })) }, 'items'],
    ['an item without an image', { items: [{ image_url: 'https://example.com/a.png' }, { language: 'en' }] }, 'items[1]'],
    ['an item with two images', { items: [{ image_url: 'https://example.com/a.png', image_base64: 'iVBORw0KGgo=' }] }, 'items[0]'],
    [
      'a bad language',
      { items: [{ image_url: 'https://example.com/a.png' }, { image_url: 'https://example.com/b.png', language: 'xx' }] },
      'items[1].language',
    ],
    ['max_length out of range', { items: [{ image_url: 'https://example.com/a.png', max_length: 5 }] }, 'items[0].max_length'],
    ['a bad style', { items: [{ image_url: 'https://example.com/a.png', style: 'poetic' }] }, 'items[0].style'],
    [
      'too many keywords',
      { items: [{ image_url: 'https://example.com/a.png', keywords: Array.from({ length: 11 }, (_, i) => `k${i}`) }] },
      'items[0].keywords',
    ],
    ['metadata not an object', { items: [{ image_url: 'https://example.com/a.png', metadata: [1, 2] }] }, 'items[0].metadata'],
    ['metadata over 2 KB', { items: [{ image_url: 'https://example.com/a.png', metadata: { text: 'x'.repeat(2100) } }] }, 'items[0].metadata'],
    ['webhook_url not a string', { items: [{ image_url: 'https://example.com/a.png' }], webhook_url: 5 }, 'webhook_url'],
    ['webhook_url over http', { items: [{ image_url: 'https://example.com/a.png' }], webhook_url: 'http://example.com/hook' }, 'webhook_url'],
  ]
  for (const [what, body, field] of cases) {
    test(`${what}: 400 invalid_request naming ${field}`, async () => {
      expectApiError(await env.service.api.post('/api/batches', body, env.key), 400, 'invalid_request', field)
    })
  }

  test('malformed JSON, a body that is not an object: 400; not JSON at all: 415', async () => {
    expectApiError(
      await env.service.api.request('POST', '/api/batches', { rawBody: '{"items": [', key: env.key, headers: { 'content-type': 'application/json' } }),
      400,
      'invalid_request',
    )
    expectApiError(
      await env.service.api.request('POST', '/api/batches', { rawBody: '[1]', key: env.key, headers: { 'content-type': 'application/json' } }),
      400,
      'invalid_request',
    )
    expectApiError(
      await env.service.api.request('POST', '/api/batches', {
        rawBody: 'items=1',
        key: env.key,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
      415,
      'unsupported_media_type',
    )
    await nothingCreated()
  })

  test('image_base64 that is not base64: 400 invalid_image naming the item', async () => {
    const res = await batches.create({ items: [{ image_url: url }, { image_base64: 'not*base64!' }] })
    expectApiError(res, 400, 'invalid_image', 'items[1].image_base64')
    expectApiError(await batches.create({ items: [{ image_base64: '' }] }), 400, 'invalid_image', 'items[0].image_base64')
    await nothingCreated()
  })

  test('an image over 10 MB once decoded: 413 naming the item', async () => {
    const big = Buffer.alloc(MAX_IMAGE_BYTES + 3).toString('base64')
    expectApiError(await batches.create({ items: [{ image_base64: big }] }), 413, 'payload_too_large', 'items[0].image_base64')
  })

  test('a body over the limit: 413 before it is read', async () => {
    const res = await env.service.api.request('POST', '/api/batches', {
      rawBody: `{"items":[{"image_base64":"${'A'.repeat(MAX_BATCH_BODY_BYTES)}"}]}`,
      key: env.key,
      headers: { 'content-type': 'application/json' },
    })
    expectApiError(res, 413, 'payload_too_large')
    await nothingCreated()
  })
})

describe('Idempotency-Key', () => {
  test('the same key with another body: 409 idempotency_conflict, no second batch', async () => {
    const key = crypto.randomUUID()
    const first = await batches.create({ items: [{ image_url: url }] }, { 'idempotency-key': key })
    expect(first.status).toBe(202)
    const res = await batches.create({ items: [{ image_url: url, style: 'concise' }] }, { 'idempotency-key': key })
    expectApiError(res, 409, 'idempotency_conflict')
    expect(res.body.error.message).toContain(first.body.id)
    expect((await batches.list()).body.items.map((b: { id: string }) => b.id)).toEqual([first.body.id])
    await batches.ended(first.body.id)
  })

  test('a key that is empty, too long or has spaces: 400', async () => {
    for (const key of [' ', 'x'.repeat(256), 'two words']) {
      expectApiError(await batches.create({ items: [{ image_url: url }] }, { 'idempotency-key': key }), 400, 'invalid_request', 'Idempotency-Key')
    }
  })
})

describe('reading and cancelling', () => {
  test('an unknown batch: 404 not_found for read and cancel', async () => {
    expectApiError(await batches.get('bat_000000000000000000000000'), 404, 'not_found')
    expectApiError(await batches.cancel('bat_000000000000000000000000'), 404, 'not_found')
    expectApiError(await batches.get('nonsense'), 404, 'not_found')
  })

  test('cancelling a completed batch: 409 batch_finished, the batch unchanged', async () => {
    const created = await batches.create({ items: [{ image_url: url }] })
    const ended = await batches.ended(created.body.id)
    expectApiError(await batches.cancel(created.body.id), 409, 'batch_finished')
    expect((await batches.get(created.body.id)).body).toEqual(ended.body)
  })

  test('bad limit or cursor: 400 naming it', async () => {
    for (const query of ['?limit=0', '?limit=101', '?limit=abc', '?limit=2.5']) expectApiError(await batches.list(query), 400, 'invalid_request', 'limit')
    for (const query of ['?cursor=abc', `?cursor=${Buffer.from('[1,2]').toString('base64url')}`]) {
      expectApiError(await batches.list(query), 400, 'invalid_request', 'cursor')
    }
  })
})

describe('the model server failing', () => {
  test('an item whose model calls keep failing is failed with upstream_error after its retries, free', async () => {
    env.ollama.behave({ failStatus: 500 })
    try {
      const before = (await env.service.api.get('/api/usage', env.key)).body.credits.used
      const calls = env.ollama.chatRequests().length
      const created = await batches.create({ items: [{ image_url: env.serve(makePng(13, 14)) }] })
      const ended = await batches.ended(created.body.id)
      expect(ended.body.items[0]).toMatchObject({ status: 'failed', error: { code: 'upstream_error' } })
      expect(env.ollama.chatRequests().length - calls).toBe(3)
      expect((await env.service.api.get('/api/usage', env.key)).body.credits.used).toBe(before)
    } finally {
      env.ollama.behave({ failStatus: null })
    }
  })
})
