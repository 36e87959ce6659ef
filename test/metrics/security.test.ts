// GET /metrics without ALTTEXT_METRICS_TOKEN answers only loopback clients, judged like the rate limits
// judge them (X-Forwarded-For only through trusted proxies); and no label ever carries an email, a key, a
// path or the URL of an image, nor grows with what clients send.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { makePng } from '../support/images'
import { scrape } from '../support/metrics'
import { startTestService, type TestService, uniqueEmail } from '../support/service'

let env: AltTextEnv
let direct: TestService

beforeAll(async () => {
  // Behind one trusted proxy (the test client, on loopback, plays it), and without one.
  ;[env, direct] = await Promise.all([startAltTextEnv({ env: { ALTTEXT_TRUST_PROXY: '1' } }), startTestService()])
})
afterAll(async () => {
  await Promise.all([env.stop(), direct.stop()])
})

describe('without ALTTEXT_METRICS_TOKEN, behind a trusted proxy', () => {
  test('a client the proxy names as non-loopback gets 403 metrics_loopback_only in the error shape', async () => {
    for (const forwarded of ['203.0.113.7', '2001:db8::7', '10.1.2.3', '127.0.0.1, 203.0.113.7', '::ffff:198.51.100.4']) {
      const res = await scrape(env.service.url, { 'x-forwarded-for': forwarded })
      expect(res.status).toBe(403)
      expect(JSON.parse(res.text)).toEqual({
        error: {
          code: 'metrics_loopback_only',
          message: expect.stringContaining('ALTTEXT_METRICS_TOKEN'),
          docs: 'http://alttext.test/docs/errors#metrics_loopback_only',
        },
      })
      expect(res.text).not.toContain('alttext_')
    }
  })

  test("an X-Forwarded-For entry that is not an IP address is ignored, never replaced by the proxy's own loopback address", async () => {
    for (const forwarded of ['garbage', 'unknown', '', ' ', '999.1.1.1', '127.0.0.1.evil', '127.0.0.1, garbage', '[::1']) {
      const res = await scrape(env.service.url, { 'x-forwarded-for': forwarded })
      expect({ forwarded, status: res.status }).toEqual({ forwarded, status: 403 })
      expect(JSON.parse(res.text).error.code).toBe('metrics_loopback_only')
    }
  })

  test('a loopback client, named by the proxy or connecting itself, is answered', async () => {
    for (const headers of [
      {} as Record<string, string>,
      { 'x-forwarded-for': '127.0.0.1' },
      { 'x-forwarded-for': '::1' },
      { 'x-forwarded-for': '127.8.9.10' },
    ]) {
      const res = await scrape(env.service.url, headers)
      expect(res.status).toBe(200)
      expect(res.families.length).toBeGreaterThan(10)
    }
  })

  test('a bearer token is no way in when none is configured', async () => {
    const res = await scrape(env.service.url, { 'x-forwarded-for': '203.0.113.7', authorization: 'Bearer guess-guess-guess-guess' })
    expect(res.status).toBe(403)
  })
})

describe('without a trusted proxy', () => {
  test('X-Forwarded-For is ignored: the loopback peer is answered whatever the header claims', async () => {
    const res = await scrape(direct.url, { 'x-forwarded-for': '203.0.113.7' })
    expect(res.status).toBe(200)
  })
})

describe('labels', () => {
  test('hold no email, key, path, query or image URL after traffic full of them, and do not grow with it', async () => {
    const email = uniqueEmail('label-canary')
    const reg = await env.service.api.register(email)
    const key = reg.apiKey
    const imageUrl = env.serve(makePng(45, 35))
    const before = await scrape(env.service.url)
    const seriesBefore = before.families.find((f) => f.name === 'alttext_http_requests_total')!.metrics.length

    const responses = [
      await env.generate({ image_url: imageUrl }, key),
      await env.generate({ image_url: `${imageUrl}-canary-missing` }, key),
      await env.generate({ image_url: 'https://canary-host.invalid/photo-canary.png' }, key),
      await env.service.api.post('/api/login', { email, password: 'wrong password canary' }),
      await env.service.api.get(`/api/usage?email=${encodeURIComponent(email)}&key=${key}`, key),
      await env.service.api.request('GET', '/api/usage', { headers: { 'x-request-id': 'canary-request-id', 'x-forwarded-for': '198.51.100.9' }, key }),
      await env.service.api.request('PROPFIND', `/api/keys/${reg.prefix}`, { key }),
    ]
    for (let i = 0; i < 40; i++) responses.push(await env.service.api.get(`/no-route/${encodeURIComponent(email)}/${key}/${i}`))
    for (let i = 0; i < 20; i++) responses.push(await env.service.api.get(`/api/batches/bat_canary${String(i).padStart(15, '0')}`, key))
    expect(responses[0]!.status).toBe(200)
    for (const res of responses) await env.service.accessLine(res.headers.get('x-request-id')!)

    const after = await scrape(env.service.url)
    for (const secret of [email, key, reg.prefix, imageUrl, new URL(imageUrl).pathname, 'canary', '198.51.100.9', '@']) {
      expect(after.text).not.toContain(secret)
    }
    for (const value of after.labelValues()) {
      expect(value).not.toContain('?')
      expect(value).not.toContain('alt_')
      expect(value).not.toMatch(/^https:/)
    }
    const routes = new Set(after.families.find((f) => f.name === 'alttext_http_requests_total')!.metrics.map((s) => s.labels!.route!))
    for (const route of routes) expect(route === 'unmatched' || /^\/[\w/:*.-]*$/.test(route)).toBe(true)
    expect(routes).toContain('/api/batches/:id')
    expect(after.value('alttext_http_requests_total', { method: 'OTHER', route: 'unmatched', status: '404' })).toBe(1)
    // 67 requests, many distinct paths: a handful of new series (alt-text 200/400, login 401, usage 200, OTHER 404,
    // unmatched 404, batches 404), never one per path.
    const seriesAfter = after.families.find((f) => f.name === 'alttext_http_requests_total')!.metrics.length
    expect(seriesAfter - seriesBefore).toBeLessThanOrEqual(8)
  })
})
