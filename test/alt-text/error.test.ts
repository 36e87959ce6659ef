// POST /api/alt-text refusals end to end: 400 invalid_request naming the field for every malformed
// option, and 400 invalid_image_url naming the rule for every unusable image. No refusal costs a
// credit or reaches the model. A slow or silent image host ends cleanly by the request's deadline.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import type { HostResolver } from '../../src/intake'
import { startAltTextEnv, type AltTextEnv } from '../support/alt-text-env'
import type { ApiResponse } from '../support/service'
import { makeJpeg, makePng, makePngHeaderOnly, truncate } from '../support/images'

/** POST /api/alt-text with the env's key (or another), typed for the assertions below. */
const generate = (target: AltTextEnv, body: Record<string, unknown>, key = target.key) => target.generate(body, key) as Promise<ApiResponse>

const MB = 1024 * 1024

/** Name resolution for the tests: every name fails as a resolver does, so no DNS query ever leaves. */
const resolvedNames: string[] = []
const failingResolver: HostResolver = async (hostname) => {
  resolvedNames.push(hostname)
  const error: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`)
  error.code = 'ENOTFOUND'
  throw error
}

let env: AltTextEnv
/** A service with a short deadline, for the slow and silent image hosts. */
let slow: AltTextEnv
let size = 300

beforeAll(async () => {
  ;[env, slow] = await Promise.all([
    startAltTextEnv({ overrides: { resolveHost: failingResolver } }),
    startAltTextEnv({ overrides: { resolveHost: failingResolver, generationDeadlineMs: 1500 } }),
  ])
})
afterAll(async () => {
  await Promise.all([env.stop(), slow.stop()])
})
beforeEach(() => {
  env.ollama.reset()
  slow.ollama.reset()
})

const pathOf = (url: string) => new URL(url).pathname
const freshPng = () => makePng(++size, 24)

/** Asserts the contract's refusal and that it cost nothing: no credit, no model call. */
async function expectRefused(target: AltTextEnv, body: Record<string, unknown>, rule: RegExp) {
  const res = await generate(target, body)
  expect(res.status).toBe(400)
  expect(res.body.error.code).toBe('invalid_image_url')
  expect(res.body.error.message).toMatch(rule)
  expect(res.body.error.docs).toEndWith('#invalid_image_url')
  expect(target.ollama.chatRequests().length).toBe(0)
  const usage = await target.service.api.get('/api/usage', target.key)
  expect(usage.status).toBe(200)
  expect(usage.body.credits.used).toBe(0)
  return res
}

describe('invalid_request: the message names the field (never 422)', () => {
  const cases: { name: string; change: Record<string, unknown>; field: string }[] = [
    { name: 'missing image_url', change: { image_url: undefined }, field: 'image_url' },
    { name: 'non-string image_url', change: { image_url: 12345 }, field: 'image_url' },
    { name: 'language "xx" (not in the IANA registry)', change: { language: 'xx' }, field: 'language' },
    { name: 'language "english"', change: { language: 'english' }, field: 'language' },
    { name: 'language "en_US"', change: { language: 'en_US' }, field: 'language' },
    { name: 'max_length 19', change: { max_length: 19 }, field: 'max_length' },
    { name: 'max_length 1001', change: { max_length: 1001 }, field: 'max_length' },
    { name: 'max_length 1.5', change: { max_length: 1.5 }, field: 'max_length' },
    { name: 'max_length "100" (a string)', change: { max_length: '100' }, field: 'max_length' },
    { name: 'context of 1001 characters', change: { context: 'c'.repeat(1001) }, field: 'context' },
    { name: '11 keywords', change: { keywords: Array.from({ length: 11 }, (_, i) => `keyword${i}`) }, field: 'keywords' },
    { name: 'a keyword of 51 characters', change: { keywords: ['harbour', 'k'.repeat(51)] }, field: 'keywords' },
    { name: 'keywords not an array', change: { keywords: 'harbour, boats' }, field: 'keywords' },
    { name: 'style "verbose"', change: { style: 'verbose' }, field: 'style' },
  ]
  for (const c of cases) {
    test(c.name, async () => {
      const url = env.serve(freshPng())
      const body: Record<string, unknown> = { image_url: url, ...c.change }
      if (body.image_url === undefined) delete body.image_url
      const res = await generate(env, body)
      expect(res.status).toBe(400)
      expect(res.body.error.code).toBe('invalid_request')
      expect(res.body.error.message).toContain(c.field)
      expect(res.body.error.docs).toEndWith('#invalid_request')
      // Refused before anything was fetched, charged or asked.
      expect(env.images.hits(pathOf(url))).toBe(0)
      expect(env.ollama.chatRequests().length).toBe(0)
      expect((await env.service.api.get('/api/usage', env.key)).body.credits.used).toBe(0)
    })
  }

  test('the bounds themselves are accepted: "EN" (normalised to "en"), max_length 20 and 1000, 10 keywords of 50 characters, 1000 characters of context', async () => {
    const { apiKey } = await env.service.api.register()
    const en = await generate(env, { image_url: env.serve(freshPng()), language: 'EN' }, apiKey)
    expect(en.status).toBe(200)
    expect(en.body.language).toBe('en')
    const edges = await generate(
      env,
      {
        image_url: env.serve(freshPng()),
        max_length: 1000,
        keywords: Array.from({ length: 10 }, (_, i) => `${i}`.padEnd(50, 'k')),
        context: 'c'.repeat(1000),
        style: 'concise',
      },
      apiKey,
    )
    expect(edges.status).toBe(200)
    const shortest = await generate(env, { image_url: env.serve(freshPng()), max_length: 20 }, apiKey)
    expect(shortest.status).toBe(200)
    expect(shortest.body.character_count).toBeLessThanOrEqual(20)
  })
})

describe('invalid_image_url: the URL itself', () => {
  test('an http:// URL', async () => {
    const url = env.serve(freshPng()).replace(/^https:/, 'http:')
    await expectRefused(env, { image_url: url }, /https/)
    expect(env.images.hits(pathOf(url))).toBe(0)
  })

  test('a string that is not a URL', async () => {
    await expectRefused(env, { image_url: 'not a url at all' }, /not a valid absolute URL/)
  })

  test('a host name that cannot be resolved (through the injected resolver, never real DNS)', async () => {
    const res = await expectRefused(env, { image_url: 'https://nx.example/photo.png' }, /cannot be resolved/)
    expect(res.body.error.message).toContain('nx.example')
    expect(resolvedNames).toContain('nx.example')
  })
})

describe('invalid_image_url: what the image host answers', () => {
  test('404 from the image host', async () => {
    const url = `${env.images.origin}/no-such-image-${process.pid}.png`
    await expectRefused(env, { image_url: url }, /answered 404/)
    expect(env.images.hits(pathOf(url))).toBe(1)
  })

  test('500 from the image host, even with image bytes in the body', async () => {
    const url = env.images.route(`/error-500-${process.pid}.png`, { kind: 'bytes', body: freshPng(), status: 500 })
    await expectRefused(env, { image_url: url }, /answered 500/)
  })

  test('over 10 MB with a Content-Length (10 MB + 1 byte)', async () => {
    const big = new Uint8Array(10 * MB + 1)
    big.set(freshPng())
    await expectRefused(env, { image_url: env.serve(big, 'image/png') }, /over the 10 MB limit/)
  })

  test('exactly 10 MB is not refused for its size (here: for being corrupt)', async () => {
    const exact = new Uint8Array(10 * MB)
    exact.set(freshPng().subarray(0, 40))
    const res = await expectRefused(env, { image_url: env.serve(exact, 'image/png') }, /truncated or corrupt/)
    expect(res.body.error.message).not.toMatch(/limit/)
  })

  test('over 10 MB streamed without a Content-Length', async () => {
    const chunk = new Uint8Array(64 * 1024)
    const head = freshPng()
    const url = env.images.route(`/streamed-${process.pid}.png`, {
      kind: 'handler',
      fn: () => {
        let sent = 0
        const body = new ReadableStream<Uint8Array>({
          pull(controller) {
            if (sent >= 11 * MB) return controller.close()
            const next = chunk.slice()
            if (sent === 0) next.set(head)
            controller.enqueue(next)
            sent += next.length
          },
        })
        return new Response(body, { headers: { 'content-type': 'image/png' } })
      },
    })
    // Precondition: the body really comes without a Content-Length.
    const probe = await fetch(url, { tls: { ca: env.images.caPem } })
    expect(probe.headers.get('content-length')).toBeNull()
    await probe.body?.cancel()
    await expectRefused(env, { image_url: url }, /over the 10 MB limit/)
  })

  test('XML that is not SVG served as image/png', async () => {
    const feed = new TextEncoder().encode('<?xml version="1.0"?>\n<rss version="2.0"><channel/></rss>')
    const res = await expectRefused(env, { image_url: env.serve(feed, 'image/png') }, /not JPEG, PNG, GIF, WebP, AVIF or SVG/)
    expect(res.body.error.message).toMatch(/found: xml/)
  })

  test('HTML served as image/png', async () => {
    const html = new TextEncoder().encode('<!DOCTYPE html><html><head><title>Login</title></head><body>Please sign in</body></html>')
    const res = await expectRefused(env, { image_url: env.serve(html, 'image/png') }, /not JPEG, PNG, GIF, WebP, AVIF or SVG/)
    expect(res.body.error.message).toMatch(/html/i)
  })

  test('a BMP file', async () => {
    const bmp = new Uint8Array(54 + 16)
    const view = new DataView(bmp.buffer)
    bmp.set([0x42, 0x4d])
    view.setUint32(2, bmp.length, true)
    view.setUint32(10, 54, true)
    view.setUint32(14, 40, true)
    view.setInt32(18, 2, true)
    view.setInt32(22, 2, true)
    view.setUint16(26, 1, true)
    view.setUint16(28, 24, true)
    const res = await expectRefused(env, { image_url: env.serve(bmp, 'image/bmp') }, /not JPEG, PNG, GIF, WebP, AVIF or SVG/)
    expect(res.body.error.message).toMatch(/bmp/i)
  })

  test('a TIFF file served as image/jpeg', async () => {
    const tiff = new Uint8Array([0x49, 0x49, 0x2a, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00])
    const res = await expectRefused(env, { image_url: env.serve(tiff, 'image/jpeg') }, /not JPEG, PNG, GIF, WebP, AVIF or SVG/)
    expect(res.body.error.message).toMatch(/tiff/i)
  })

  test('an empty body', async () => {
    await expectRefused(env, { image_url: env.serve(new Uint8Array(0), 'image/png') }, /empty/)
  })

  test('a 40000×40000 header-only PNG (decompression bomb) is refused by its pixel count', async () => {
    const res = await expectRefused(env, { image_url: env.serve(makePngHeaderOnly(40000, 40000)) }, /pixels/)
    expect(res.body.error.message).toContain('40000×40000')
  })

  test('a truncated JPEG', async () => {
    await expectRefused(env, { image_url: env.serve(truncate(makeJpeg(96, 64), 0.6), 'image/jpeg') }, /truncated/)
  })

  test('a truncated PNG', async () => {
    await expectRefused(env, { image_url: env.serve(truncate(makePng(97, 64), 0.6), 'image/png') }, /truncated/)
  })

  test('a connection closed before the declared Content-Length', async () => {
    const png = freshPng()
    const url = env.images.route(`/lying-${process.pid}.png`, { kind: 'lying-length', body: png, claimedLength: png.length + 5000 })
    await expectRefused(env, { image_url: url }, /truncated/)
  })
})

describe('invalid_image_url: redirects', () => {
  const chain = (tag: string, hops: number) => {
    const image = env.images.route(`/chain-${tag}-img.png`, { kind: 'bytes', body: freshPng() })
    let next = image
    for (let i = hops; i >= 1; i--) next = env.images.route(`/chain-${tag}-${i}`, { kind: 'redirect', to: next, status: i % 2 ? 302 : 307 })
    return { start: next, imagePath: `/chain-${tag}-img.png` }
  }

  test('a chain of 6 redirects is refused and the image is never fetched', async () => {
    const { start, imagePath } = chain('six', 6)
    await expectRefused(env, { image_url: start }, /too many redirects/)
    expect(env.images.hits('/chain-six-6')).toBe(1)
    expect(env.images.hits(imagePath)).toBe(0)
  })

  test('a chain of 5 redirects is followed', async () => {
    const { start, imagePath } = chain('five', 5)
    const { apiKey } = await env.service.api.register()
    const res = await generate(env, { image_url: start }, apiKey)
    expect(res.status).toBe(200)
    expect(env.images.hits(imagePath)).toBe(1)
  })
})

describe('a slow or silent image host ends by the deadline', () => {
  test('a slow drip (1 byte every 200 ms): 400 at the deadline, and the fetch is abandoned', async () => {
    const path = `/drip-${process.pid}.png`
    const url = slow.images.route(path, { kind: 'drip', body: makePng(120, 90), chunkBytes: 1, intervalMs: 200, loop: true })
    const res = await expectRefused(slow, { image_url: url }, /deadline/)
    expect(res.body.error.message).not.toMatch(/truncated/)
    const responses = slow.images.slowResponses(path)
    expect(responses.length).toBe(1)
    expect(await responses[0]!.ended).toBe('client-gone')
  })

  test('an image host that never answers: 400 at the deadline, and the connection is closed', async () => {
    const path = `/hang-${process.pid}.png`
    const url = slow.images.route(path, { kind: 'hang' })
    await expectRefused(slow, { image_url: url }, /deadline/)
    const responses = slow.images.slowResponses(path)
    expect(responses.length).toBe(1)
    expect(await responses[0]!.ended).toBe('client-gone')
  })
})
