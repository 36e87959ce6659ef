// POST /api/alt-text with the image in the request: base64 JSON (plain or a data: URL) and
// multipart/form-data, for every format; the same pipeline and answer as a URL image, one cache for
// both, one credit per fresh answer, and the multipart forms of the options.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { startAltTextEnv, type AltTextEnv } from '../support/alt-text-env'
import { makeAnimatedGif, makeJpeg, makePng, makeWebp } from '../support/images'
import { base64, dataUrl, postForm, postRaw } from './upload-support'

let env: AltTextEnv

beforeAll(async () => {
  env = await startAltTextEnv()
})
afterAll(() => env.stop())
beforeEach(() => env.ollama.reset())

const chats = () => env.ollama.requests.filter((r) => r.path === '/api/chat')
const lastImage = () => chats().at(-1)!.images[0]!
const promptText = () => (env.ollama.chatRequests().at(-1)?.messages ?? []).map((m) => m.content).join('\n')
const usage = async (key = env.key) => (await env.service.api.get('/api/usage', key)).body.credits

let side = 50
/** A PNG no other test sends: its own cache entry. */
const freshPng = () => makePng(++side, 40)

describe('every format, every way of sending it', () => {
  const formats = [
    { name: 'JPEG', bytes: () => makeJpeg(1600, 1200), format: 'jpeg', type: 'image/jpeg', sent: 'jpeg', width: 1600, height: 1200 },
    { name: 'PNG', bytes: () => makePng(300, 200), format: 'png', type: 'image/png', sent: 'png', width: 300, height: 200 },
    { name: 'GIF', bytes: () => makeAnimatedGif(120, 80, 3), format: 'gif', type: 'image/gif', sent: 'png', width: 120, height: 80 },
    { name: 'WebP', bytes: () => makeWebp(400, 300), format: 'webp', type: 'image/webp', sent: 'png', width: 400, height: 300 },
  ] as const
  const ways = [
    { name: 'image_base64', send: (bytes: Uint8Array, _type: string, context: string) => env.generate({ image_base64: base64(bytes), context }) },
    { name: 'a data: URL', send: (bytes: Uint8Array, type: string, context: string) => env.generate({ image_base64: dataUrl(bytes, type), context }) },
    {
      name: 'multipart',
      send: (bytes: Uint8Array, type: string, context: string) => postForm(env, { image: { bytes, type, filename: 'photo' }, context }),
    },
  ]
  for (const f of formats) {
    for (const way of ways) {
      test(`${f.name} as ${way.name}: 200 from the upload, the model sees it as ${f.sent.toUpperCase()} within 1024 px`, async () => {
        const res = await way.send(f.bytes(), f.type, `${f.name} via ${way.name}`)
        expect(res.status).toBe(200)
        expect(res.body).toMatchObject({
          alt_text: 'Two children flying a red kite on a windy beach.',
          cached: false,
          source: 'upload',
          decorative: false,
          decorative_reason: null,
          image: { width: f.width, height: f.height, format: f.format },
        })
        const image = lastImage()
        expect(image.format).toBe(f.sent)
        expect(Math.max(image.width!, image.height!)).toBeLessThanOrEqual(1024)
      })
    }
  }
})

describe('one cache for every source', () => {
  test('the same bytes by URL, then as base64, then as multipart: cached and free the second and third time', async () => {
    const { apiKey } = await env.service.api.register()
    const png = freshPng()
    const byUrl = await env.generate({ image_url: env.serve(png) }, apiKey)
    expect(byUrl.body).toMatchObject({ cached: false, source: 'url', credits_remaining: 49 })
    const byBase64 = await env.generate({ image_base64: base64(png) }, apiKey)
    expect(byBase64.status).toBe(200)
    expect(byBase64.body).toMatchObject({ cached: true, source: 'upload', credits_remaining: 49, alt_text: byUrl.body.alt_text })
    const byForm = await postForm(env, { image: { bytes: png } }, apiKey)
    expect(byForm.body).toMatchObject({ cached: true, source: 'upload', credits_remaining: 49 })
    expect(chats()).toHaveLength(1)
    expect(await usage(apiKey)).toEqual({ total: 50, used: 1, remaining: 49 })
  })

  test('uploaded first, then fetched by URL: the URL request is the cache hit', async () => {
    const png = freshPng()
    expect((await postForm(env, { image: { bytes: png } })).body.cached).toBe(false)
    const byUrl = await env.generate({ image_url: env.serve(png) })
    expect(byUrl.body).toMatchObject({ cached: true, source: 'url' })
    expect(chats()).toHaveLength(1)
  })

  test('a data: URL and plain base64 of the same bytes are one entry', async () => {
    const png = freshPng()
    expect((await env.generate({ image_base64: dataUrl(png) })).body.cached).toBe(false)
    expect((await env.generate({ image_base64: base64(png) })).body.cached).toBe(true)
  })
})

describe('credits', () => {
  test('a fresh upload costs one credit, charged once; its repeat costs nothing', async () => {
    const { apiKey } = await env.service.api.register()
    const png = freshPng()
    const first = await postForm(env, { image: { bytes: png } }, apiKey)
    expect(first.body.credits_remaining).toBe(49)
    const again = await postForm(env, { image: { bytes: png } }, apiKey)
    expect(again.body).toMatchObject({ cached: true, credits_remaining: 49 })
    expect(await usage(apiKey)).toEqual({ total: 50, used: 1, remaining: 49 })
  })
})

describe('base64 as encoders write it', () => {
  test('wrapped at 76 characters with escaped line breaks, and with escaped slashes (PHP json_encode)', async () => {
    const png = freshPng()
    const wrapped = base64(png)
      .replace(/(.{76})/g, '$1\\r\\n')
      .replaceAll('/', '\\/')
    const res = await postRaw(env, `{"image_base64":"${wrapped}","language":"en"}`)
    expect(res.status).toBe(200)
    expect(res.body.source).toBe('upload')
    // The model got exactly these bytes' picture: the same image again is a cache hit.
    expect((await env.generate({ image_base64: base64(png), language: 'en' })).body.cached).toBe(true)
  })

  test('without padding, and with a data: URL whose type does not match the bytes (the bytes decide)', async () => {
    const png = freshPng()
    const res = await env.generate({ image_base64: base64(png).replace(/=+$/, '') })
    expect(res.status).toBe(200)
    const mislabelled = await env.generate({ image_base64: dataUrl(freshPng(), 'image/jpeg') })
    expect(mislabelled.status).toBe(200)
    expect(mislabelled.body.image.format).toBe('png')
  })
})

describe('the options as form fields', () => {
  test('language, style, max_length, context and keywords repeated or comma-separated reach the prompt', async () => {
    // A German answer: an English one would be sent back for a translation (language-*.test.ts).
    env.ollama.behave({ reply: 'Zwei Kinder lassen am windigen Strand einen roten Drachen steigen.' })
    const res = await postForm(env, {
      image: { bytes: freshPng() },
      language: 'de',
      style: 'concise',
      max_length: '90',
      context: 'Bericht über den Hafen',
      keywords: ['Hafen, Segelboote', 'Leuchtturm'],
    })
    expect(res.status).toBe(200)
    expect(res.body.language).toBe('de')
    const text = promptText()
    expect(text).toContain('German')
    expect(text).toContain('90')
    expect(text.toLowerCase()).toContain('concise')
    expect(text).toContain('Bericht über den Hafen')
    expect(text).toContain('hafen, leuchtturm, segelboote')
  })

  test('keywords[] as PHP and jQuery name arrays, and empty fields counted as not given', async () => {
    const res = await postForm(env, { image: { bytes: freshPng() }, 'keywords[]': ['kite', 'beach'], max_length: '', context: '', style: '' })
    expect(res.status).toBe(200)
    const text = promptText()
    expect(text).toContain('beach, kite')
    expect(text).toContain('125')
    expect(text.toLowerCase()).toContain('descriptive')
  })

  test('image_url as a form field is a source too', async () => {
    const res = await postForm(env, { image_url: env.serve(freshPng()), language: 'fr' })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ source: 'url', language: 'fr' })
  })
})

describe('Server-Timing', () => {
  test('an upload names receive and inspect, not fetch', async () => {
    const res = await env.generate({ image_base64: base64(freshPng()) })
    const names = (res.headers.get('server-timing') ?? '').split(',').map((entry) => entry.trim().split(';')[0])
    expect(names.sort()).toEqual(['cache', 'charge', 'inspect', 'model', 'prepare', 'queue', 'receive'])
  })
})
