// Batches, happy paths over HTTP against the real service, the fake model and the local HTTPS image
// server: create (URLs and base64, metadata echoed), results in order, charged like single calls (cached
// items free), listing with cursor paging, Idempotency-Key replay, cancel, credits running out mid-batch,
// and a single call made during a batch served ahead of the batch's items.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { makeJpeg, makePng } from '../support/images'
import { batchClient } from './support'

const REPLY = 'Two children flying a red kite on a windy beach.'
/** The answer to a request for German: an English one would be sent back for a translation. */
const REPLY_DE = 'Zwei Kinder lassen am windigen Strand einen roten Drachen steigen.'

let env: AltTextEnv
let width = 20

/** A new image (distinct bytes, so a fresh generation) served over https. */
const freshUrl = () => env.serve(makePng(width++, 17))

beforeAll(async () => {
  env = await startAltTextEnv({
    ollama: { reply: ({ messages }) => (messages[0]?.content.includes('German') ? REPLY_DE : REPLY), delayMs: 20 },
    env: { ALTTEXT_FREE_CREDITS: '1000' },
  })
})
afterAll(async () => {
  await env.stop()
})

const usage = async (key = env.key) => (await env.service.api.get('/api/usage', key)).body.credits.used as number

describe('create and read', () => {
  test('URL and base64 items run in order, metadata is echoed, fresh items are charged one credit each', async () => {
    const batches = batchClient(env.service.api, env.key)
    const before = await usage()
    const base64 = Buffer.from(makeJpeg(31, 23)).toString('base64')
    const items = [
      { image_url: freshUrl(), metadata: { media_id: 1, file: 'a.png' } },
      { image_url: freshUrl(), style: 'concise', max_length: 80, language: 'de', keywords: ['kite'] },
      { image_base64: base64, metadata: { media_id: 3 } },
      { image_base64: `data:image/jpeg;base64,${base64}`, metadata: { media_id: 4, note: 'same bytes as 3' } },
    ]
    const created = await batches.create({ items })
    expect(created.status).toBe(202)
    expect(created.body).toEqual({ id: expect.stringMatching(/^bat_[0-9a-f]{24}$/), status: 'queued', total: 4, created_at: expect.any(String) })
    expect(new Date(created.body.created_at).toISOString()).toBe(created.body.created_at)

    const ended = await batches.ended(created.body.id)
    expect(ended.body).toMatchObject({ id: created.body.id, status: 'completed', total: 4, succeeded: 4, failed: 0, webhook_url: null })
    expect(Date.parse(ended.body.completed_at)).toBeGreaterThanOrEqual(Date.parse(ended.body.created_at))
    const results = ended.body.items
    expect(results.map((item: { index: number }) => item.index)).toEqual([0, 1, 2, 3])
    expect(results.map((item: { metadata: unknown }) => item.metadata)).toEqual([
      { media_id: 1, file: 'a.png' },
      null,
      { media_id: 3 },
      { media_id: 4, note: 'same bytes as 3' },
    ])
    for (const item of results) {
      expect(item.status).toBe('done')
      expect(item.error).toBeUndefined()
      expect(item.result).toMatchObject({ alt_text: item.index === 1 ? REPLY_DE : REPLY, wcag_compliant: true, decorative: false, model: 'llava' })
    }
    expect(results[0].result.source).toBe('url')
    expect(results[1].result.language).toBe('de')
    expect(results[2].result).toMatchObject({ source: 'upload', image: { width: 31, height: 23, format: 'jpeg' } })
    // Items 2 and 3 are the same bytes: one model call and one credit, even when they run side by side
    // (the second follows the first's generation, or finds its answer cached). Charged == fresh answers.
    const fresh = results.filter((item: { result: { cached: boolean } }) => !item.result.cached).length
    expect(fresh).toBe(3)
    expect((await usage()) - before).toBe(fresh)
    // Uploaded bytes are gone from the database once their items are done.
    const [left] = await env.service.query<{ n: number }>('SELECT count(*) AS n FROM batch_items WHERE batch_id = ? AND image IS NOT NULL', created.body.id)
    expect(left!.n).toBe(0)
  })

  test('an item answered before (same image and options) comes from the cache, free', async () => {
    const batches = batchClient(env.service.api, env.key)
    const url = freshUrl()
    const single = await env.generate({ image_url: url })
    expect(single.status).toBe(200)
    const before = await usage()
    const created = await batches.create({ items: [{ image_url: url }, { image_url: url, style: 'concise' }] })
    const ended = await batches.ended(created.body.id)
    expect(ended.body.items[0].result).toMatchObject({ cached: true, alt_text: single.body.alt_text })
    expect(ended.body.items[1].result.cached).toBe(false)
    expect((await usage()) - before).toBe(1)
  })

  test('a bad item fails on its own with the error a single call would get; the others are done', async () => {
    const batches = batchClient(env.service.api, env.key)
    const created = await batches.create({
      items: [
        { image_url: freshUrl() },
        { image_url: env.serve(new TextEncoder().encode('%PDF-1.7\n'), 'application/pdf') },
        { image_base64: Buffer.from('not an image at all').toString('base64'), metadata: { kept: true } },
      ],
    })
    const ended = await batches.ended(created.body.id)
    expect(ended.body).toMatchObject({ status: 'completed', succeeded: 1, failed: 2 })
    expect(ended.body.items[1]).toMatchObject({ status: 'failed', error: { code: 'invalid_image_url', message: expect.any(String) } })
    expect(ended.body.items[1].result).toBeUndefined()
    expect(ended.body.items[2]).toMatchObject({ status: 'failed', error: { code: 'invalid_image' }, metadata: { kept: true } })
  })
})

describe('listing', () => {
  test('newest first, with cursor paging over every batch exactly once', async () => {
    const { apiKey } = await env.service.api.register()
    const batches = batchClient(env.service.api, apiKey)
    const ids: string[] = []
    for (let i = 0; i < 5; i++) ids.push((await batches.create({ items: [{ image_url: freshUrl() }] })).body.id)
    const seen: string[] = []
    let cursor: string | null = null
    let pages = 0
    do {
      const page = await batches.list(`?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
      expect(page.status).toBe(200)
      expect(page.body.items.length).toBeLessThanOrEqual(2)
      for (const item of page.body.items) {
        expect(item.items).toBeUndefined()
        expect(Object.keys(item).sort()).toEqual(['completed_at', 'created_at', 'failed', 'id', 'review', 'status', 'succeeded', 'total', 'webhook_url'])
      }
      seen.push(...page.body.items.map((item: { id: string }) => item.id))
      cursor = page.body.next_cursor
      pages++
    } while (cursor !== null)
    expect(pages).toBe(3)
    expect(seen).toEqual(ids.toReversed())
    const all = await batches.list()
    expect(all.body.items.map((item: { id: string }) => item.id)).toEqual(ids.toReversed())
    expect(all.body.next_cursor).toBeNull()
  })
})

describe('Idempotency-Key', () => {
  test('the same key and body return the first batch (202, Idempotent-Replayed) and create no second one', async () => {
    const { apiKey } = await env.service.api.register()
    const batches = batchClient(env.service.api, apiKey)
    const body = { items: [{ image_url: freshUrl(), metadata: { n: 1 } }] }
    const key = crypto.randomUUID()
    const first = await batches.create(body, { 'idempotency-key': key })
    expect(first.status).toBe(202)
    expect(first.headers.get('idempotent-replayed')).toBeNull()
    await batches.ended(first.body.id)
    const again = await batches.create(body, { 'idempotency-key': key })
    expect(again.status).toBe(202)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.body).toEqual({ ...first.body, status: 'completed' })
    expect((await batches.list()).body.items).toHaveLength(1)
    expect(await usage(apiKey)).toBe(1)
    // Another key is another batch.
    const other = await batches.create(body, { 'idempotency-key': crypto.randomUUID() })
    expect(other.body.id).not.toBe(first.body.id)
  })
})

describe('cancel', () => {
  test('items not yet started fail with batch_cancelled and cost nothing; running ones finish and are charged', async () => {
    env.ollama.behave({ delayMs: 300 })
    try {
      const { apiKey } = await env.service.api.register()
      const batches = batchClient(env.service.api, apiKey)
      const created = await batches.create({ items: Array.from({ length: 30 }, () => ({ image_url: freshUrl() })) })
      await env.ollama.waitFor(() => env.ollama.inFlight() > 0)
      const cancelled = await batches.cancel(created.body.id)
      expect(cancelled.status).toBe(200)
      expect(cancelled.body.status).toBe('cancelled')
      const ended = await batches.ended(created.body.id)
      expect(ended.body.status).toBe('cancelled')
      const done = ended.body.items.filter((item: { status: string }) => item.status === 'done')
      const failed = ended.body.items.filter((item: { status: string }) => item.status === 'failed')
      expect(done.length).toBeGreaterThanOrEqual(1)
      expect(done.length).toBeLessThan(30)
      expect(done.length + failed.length).toBe(30)
      for (const item of failed) expect(item.error).toEqual({ code: 'batch_cancelled', message: expect.stringContaining('cancelled') })
      expect(ended.body).toMatchObject({ succeeded: done.length, failed: failed.length })
      expect(await usage(apiKey)).toBe(done.length)
      // Cancelling again answers the same batch; it never runs again.
      const again = await batches.cancel(created.body.id)
      expect(again.status).toBe(200)
      expect(again.body.items).toEqual(ended.body.items)
    } finally {
      env.ollama.behave({ delayMs: 20 })
    }
  })
})

describe('credits', () => {
  let poor: AltTextEnv
  beforeAll(async () => {
    poor = await startAltTextEnv({ ollama: { reply: REPLY }, env: { ALTTEXT_FREE_CREDITS: '3' } })
  })
  afterAll(async () => {
    await poor.stop()
  })

  test('when the credits run out mid-batch the remaining items fail with quota_exceeded; never overspent', async () => {
    const batches = batchClient(poor.service.api, poor.key)
    const created = await batches.create({ items: Array.from({ length: 6 }, (_, i) => ({ image_url: poor.serve(makePng(40 + i, 12)) })) })
    const ended = await batches.ended(created.body.id)
    expect(ended.body).toMatchObject({ status: 'completed', succeeded: 3, failed: 3 })
    for (const item of ended.body.items.filter((i: { status: string }) => i.status === 'failed')) {
      expect(item.error.code).toBe('quota_exceeded')
    }
    const credits = (await poor.service.api.get('/api/usage', poor.key)).body.credits
    expect(credits).toEqual({ total: 3, used: 3, remaining: 0 })
    // With no credit left a new batch is refused before its body is read, as a single call is.
    const refused = await batches.create({ items: [{ image_url: poor.serve(makePng(9, 9)) }] })
    expect(refused.status).toBe(429)
    expect(refused.body.error.code).toBe('quota_exceeded')
  })
})

describe('fairness', () => {
  let slow: AltTextEnv
  beforeAll(async () => {
    slow = await startAltTextEnv({ ollama: { reply: REPLY, delayMs: 250 }, env: { ALTTEXT_MODEL_CONCURRENCY: '2' } })
  })
  afterAll(async () => {
    await slow.stop()
  })

  test('a single call made while a batch fills every model slot waits for one slot at most', async () => {
    const batches = batchClient(slow.service.api, slow.key)
    const created = await batches.create({ items: Array.from({ length: 20 }, (_, i) => ({ image_url: slow.serve(makePng(60 + i, 12)) })) })
    await slow.ollama.waitFor(() => slow.ollama.inFlight() === 2)
    const { apiKey } = await slow.service.api.register()
    const single = await slow.generate({ image_url: slow.serve(makePng(99, 12)) }, apiKey)
    expect(single.status).toBe(200)
    // Counted, not timed: the 2 batch items in flight when it came, at most one more before it queued, its
    // own, and the other slot's (at most 2) while it was generated. Behind the whole batch it would be 21.
    const modelCalls = slow.ollama.chatRequests().length
    expect(modelCalls).toBeGreaterThanOrEqual(3)
    expect(modelCalls).toBeLessThanOrEqual(8)
    const view = await batches.get(created.body.id)
    expect(view.body.items.filter((item: { status: string }) => item.status === 'pending').length).toBeGreaterThan(5)
    await batches.ended(created.body.id, 30_000)
  })
})
