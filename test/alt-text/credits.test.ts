// Credits, the cache and shared generations, under concurrency.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { startAltTextEnv, type AltTextEnv } from '../support/alt-text-env'
import { makePng } from '../support/images'

let env: AltTextEnv
let now = Date.UTC(2026, 10, 21, 12, 0, 0)
let size = 200

beforeAll(async () => {
  env = await startAltTextEnv({ env: { ALTTEXT_FREE_CREDITS: '3' }, overrides: { clock: () => now } })
})
afterAll(() => env.stop())
beforeEach(() => env.ollama.reset())

const freshImage = () => env.serve(makePng(++size, 20))

describe('credits', () => {
  test('10 concurrent requests with 3 credits: exactly three 200s and seven 429 quota_exceeded', async () => {
    const { apiKey } = await env.service.api.register()
    env.ollama.behave({ delayMs: 100 })
    const results = await Promise.all(Array.from({ length: 10 }, () => env.generate({ image_url: freshImage() }, apiKey)))
    const statuses = results.map((r) => r.status).sort()
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429, 429, 429, 429, 429])
    for (const r of results.filter((r) => r.status === 429)) {
      expect(r.body.error.code).toBe('quota_exceeded')
      expect(r.body.error.message).toContain('2026-12-01T00:00:00.000Z')
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0)
    }
    expect(
      results
        .filter((r) => r.status === 200)
        .map((r) => r.body.credits_remaining)
        .sort(),
    ).toEqual([0, 1, 2])
    const usage = await env.service.api.get('/api/usage', apiKey)
    expect(usage.body.credits).toEqual({ total: 3, used: 3, remaining: 0 })
    // Only the admitted requests reached the model.
    expect(env.ollama.chatRequests().length).toBe(3)
  })

  test('failures cost nothing and the credit is usable again', async () => {
    const { apiKey } = await env.service.api.register()
    env.ollama.behave({ failStatus: 500 })
    for (let i = 0; i < 4; i++) expect((await env.generate({ image_url: freshImage() }, apiKey)).status).toBe(502)
    const bad = await env.generate({ image_url: 'http://127.0.0.1/x.png' }, apiKey)
    expect(bad.status).toBe(400)
    env.ollama.behave({ failStatus: null })
    for (let i = 0; i < 3; i++) expect((await env.generate({ image_url: freshImage() }, apiKey)).status).toBe(200)
    expect((await env.service.api.get('/api/usage', apiKey)).body.credits.used).toBe(3)
  })

  test('credits come back in the next calendar month (UTC)', async () => {
    const { apiKey } = await env.service.api.register()
    for (let i = 0; i < 3; i++) expect((await env.generate({ image_url: freshImage() }, apiKey)).status).toBe(200)
    expect((await env.generate({ image_url: freshImage() }, apiKey)).status).toBe(429)
    const saved = now
    now = Date.UTC(2026, 11, 1, 0, 0, 1)
    try {
      const res = await env.generate({ image_url: freshImage() }, apiKey)
      expect(res.status).toBe(200)
      expect(res.body.credits_remaining).toBe(2)
    } finally {
      now = saved
    }
  })
})

describe('cache', () => {
  let lastKey = ''
  test('the same image and options again: cached, free, no model call; other options miss', async () => {
    // The French request gets a French answer: an English one would cost a second (translation) call.
    const french = 'Deux enfants font voler un cerf-volant rouge sur une plage venteuse.'
    env.ollama.behave({ reply: ({ messages }) => (messages[0]?.content.includes('French') ? french : 'Two children flying a red kite on a windy beach.') })
    const { apiKey } = await env.service.api.register()
    const url = freshImage()
    const first = await env.generate({ image_url: url, keywords: ['kite', 'beach'] }, apiKey)
    expect(first.status).toBe(200)
    expect(first.body.cached).toBe(false)
    const second = await env.generate({ image_url: url, keywords: ['beach', 'kite'] }, apiKey)
    expect(second.status).toBe(200)
    expect(second.body.cached).toBe(true)
    expect(second.body.alt_text).toBe(first.body.alt_text)
    expect(second.body.credits_remaining).toBe(2)
    expect(env.ollama.chatRequests().length).toBe(1)

    // The same bytes at another URL hit the cache too: the key is the bytes, not the URL.
    const elsewhere = env.serve(await (await fetch(url, { tls: { ca: env.images.caPem } })).bytes())
    expect((await env.generate({ image_url: elsewhere, keywords: ['kite', 'beach'] }, apiKey)).body.cached).toBe(true)

    // Each account has 3 credits here: spread the misses over fresh accounts.
    const changes = [{ language: 'fr' }, { style: 'concise' }, { max_length: 80 }, { context: 'a page about kites' }, { keywords: ['kite'] }]
    for (const [i, change] of changes.entries()) {
      if (i % 3 === 0) lastKey = (await env.service.api.register()).apiKey
      const res = await env.generate({ image_url: url, keywords: ['kite', 'beach'], ...change }, lastKey)
      expect(res.status).toBe(200)
      expect(res.body.cached).toBe(false)
    }
    expect(env.ollama.chatRequests().length).toBe(6)
  })

  test('requests that differ only in keyword case, repeats and order or in context whitespace share one entry', async () => {
    const { apiKey } = await env.service.api.register()
    const url = freshImage()
    const first = await env.generate({ image_url: url, keywords: ['kite', 'beach'], context: 'A page about kites' }, apiKey)
    expect(first.status).toBe(200)
    expect(first.body.cached).toBe(false)
    const second = await env.generate({ image_url: url, keywords: ['Beach', ' KITE', 'kite'], context: '  A page\n about   kites ' }, apiKey)
    expect(second.status).toBe(200)
    expect(second.body.cached).toBe(true)
    expect(second.body.alt_text).toBe(first.body.alt_text)
    expect(env.ollama.chatRequests().length).toBe(1)
    expect((await env.service.api.get('/api/usage', apiKey)).body.credits.used).toBe(1)
  })

  test('no credit left: 429 quota_exceeded before the image is fetched, even when the answer is cached', async () => {
    const { apiKey } = await env.service.api.register()
    const cachedUrl = freshImage()
    expect((await env.generate({ image_url: cachedUrl }, apiKey)).status).toBe(200)
    for (let i = 0; i < 2; i++) expect((await env.generate({ image_url: freshImage() }, apiKey)).status).toBe(200)
    const newUrl = freshImage()
    for (const url of [cachedUrl, newUrl]) {
      const res = await env.generate({ image_url: url }, apiKey)
      expect(res.status).toBe(429)
      expect(res.body.error.code).toBe('quota_exceeded')
      expect(res.body.error.message).toBe('all 3 credits of this period are used; the period ends 2026-12-01T00:00:00.000Z')
      expect(Number(res.headers.get('retry-after'))).toBe(Math.ceil((Date.UTC(2026, 11, 1) - now) / 1000))
    }
    // The cached image was fetched once (its first, charged request), the new one never.
    expect(env.images.hits(new URL(cachedUrl).pathname)).toBe(1)
    expect(env.images.hits(new URL(newUrl).pathname)).toBe(0)
    expect(env.ollama.chatRequests().length).toBe(3)
  })

  test('entries expire after the lifetime (30 days by default)', async () => {
    const { apiKey } = await env.service.api.register()
    const url = freshImage()
    expect((await env.generate({ image_url: url }, apiKey)).body.cached).toBe(false)
    const saved = now
    now += 29 * 86_400_000
    expect((await env.generate({ image_url: url }, apiKey)).body.cached).toBe(true)
    now = saved + 31 * 86_400_000
    try {
      expect((await env.generate({ image_url: url }, apiKey)).body.cached).toBe(false)
    } finally {
      now = saved
    }
  })
})

describe('identical concurrent requests', () => {
  test('share one model call; one credit is charged, the others are answered as cached', async () => {
    const { apiKey } = await env.service.api.register()
    env.ollama.behave({ delayMs: 300 })
    const url = freshImage()
    const results = await Promise.all(Array.from({ length: 5 }, () => env.generate({ image_url: url }, apiKey)))
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200])
    expect(env.ollama.chatRequests().length).toBe(1)
    expect(results.filter((r) => r.body.cached === false).length).toBe(1)
    expect((await env.service.api.get('/api/usage', apiKey)).body.credits.used).toBe(1)
  })
})
