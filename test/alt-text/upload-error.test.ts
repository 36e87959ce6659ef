// Refusals of POST /api/alt-text with the image in the body: exactly one source or 400 invalid_request;
// bytes that are no usable image 400 invalid_image naming the rule (invalid_image_url stays for URLs);
// an image over 10 MB once decoded 413; a body that is neither JSON nor multipart 415. No refusal costs
// a credit or reaches the model.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { MAX_IMAGE_BYTES } from '../../src/shared/limits'
import { startAltTextEnv, type AltTextEnv } from '../support/alt-text-env'
import { expectApiError } from '../support/assertions'
import { makeJpeg, makePng, makePngHeaderOnly, truncate } from '../support/images'
import type { ApiResponse } from '../support/service'
import { base64, dataUrl, postForm, postRaw } from './upload-support'

let env: AltTextEnv

beforeAll(async () => {
  env = await startAltTextEnv()
})
afterAll(() => env.stop())
beforeEach(() => env.ollama.reset())

/** The refusal, and that it cost nothing: no model call, no credit. */
async function expectRefused(res: ApiResponse, status: number, code: string, rule?: RegExp) {
  expectApiError(res, status, code)
  if (rule) expect(res.body.error.message).toMatch(rule)
  expect(env.ollama.chatRequests()).toHaveLength(0)
  expect((await env.service.api.get('/api/usage', env.key)).body.credits.used).toBe(0)
}

const PDF = new TextEncoder().encode('%PDF-1.7\n1 0 obj << >> endobj\n')

describe('exactly one image source', () => {
  test('none: 400 invalid_request naming the three sources, for JSON, multipart and an empty body', async () => {
    for (const res of [
      await env.generate({ language: 'en' }),
      await postForm(env, { language: 'en' }),
      await postRaw(env, '', 'application/json'),
      await env.generate({ image_url: null, image_base64: null }),
    ]) {
      await expectRefused(res, 400, 'invalid_request', /image_url, image_base64, or a multipart file in the field image/)
    }
  })

  test('two: 400 invalid_request naming both', async () => {
    const png = makePng(20, 20)
    await expectRefused(
      await env.generate({ image_url: 'https://example.com/a.png', image_base64: base64(png) }),
      400,
      'invalid_request',
      /image_url and image_base64/,
    )
    await expectRefused(
      await postForm(env, { image: { bytes: png }, image_url: 'https://example.com/a.png' }),
      400,
      'invalid_request',
      /image_url and the file field image/,
    )
  })

  test('the image field twice, or a file in another field: 400 invalid_request', async () => {
    const png = makePng(20, 20)
    const form = new FormData()
    form.append('image', new Blob([png]), 'a.png')
    form.append('image', new Blob([png]), 'b.png')
    const twice = await fetch(`${env.service.url}/api/alt-text`, { method: 'POST', headers: { 'x-api-key': env.key }, body: form })
    expect(twice.status).toBe(400)
    expect(((await twice.json()) as { error: { message: string } }).error.message).toMatch(/image is given more than once/)
    await expectRefused(await postForm(env, { photo: { bytes: png } }), 400, 'invalid_request', /unexpected file in the field "photo"/)
  })

  test('image_base64 as a form field: 400 invalid_request pointing at the file field', async () => {
    await expectRefused(await postForm(env, { image_base64: base64(makePng(20, 20)) }), 400, 'invalid_request', /file field image/)
  })
})

describe('invalid_request for the fields, as in JSON', () => {
  test('image_base64 that is not a string', async () => {
    await expectRefused(await env.generate({ image_base64: 42 }), 400, 'invalid_request', /image_base64/)
    await expectRefused(await env.generate({ image_base64: ['AAAA'] }), 400, 'invalid_request', /image_base64/)
  })

  test('form fields out of range or of the wrong kind name the field', async () => {
    const png = makePng(20, 20)
    await expectRefused(await postForm(env, { image: { bytes: png }, max_length: 'long' }), 400, 'invalid_request', /max_length/)
    await expectRefused(await postForm(env, { image: { bytes: png }, max_length: '5' }), 400, 'invalid_request', /max_length/)
    await expectRefused(await postForm(env, { image: { bytes: png }, detect_decorative: 'maybe' }), 400, 'invalid_request', /detect_decorative/)
    await expectRefused(await postForm(env, { image: { bytes: png }, style: 'poetic' }), 400, 'invalid_request', /style/)
    await expectRefused(await postForm(env, { image: { bytes: png }, language: 'xx' }), 400, 'invalid_request', /language/)
    await expectRefused(await postForm(env, { image: { bytes: png }, style: ['concise', 'descriptive'] }), 400, 'invalid_request', /style.*more than once/)
    const eleven = Array.from({ length: 11 }, (_, i) => `k${i}`).join(',')
    await expectRefused(await postForm(env, { image: { bytes: png }, keywords: eleven }), 400, 'invalid_request', /keywords/)
    await expectRefused(await env.generate({ image_base64: base64(png), detect_decorative: 'true' }), 400, 'invalid_request', /detect_decorative/)
  })

  test('a malformed multipart body: no boundary, cut short, or no parts', async () => {
    const png = makePng(20, 20)
    await expectRefused(await postRaw(env, 'whatever', 'multipart/form-data'), 400, 'invalid_request', /boundary/)
    const form = new Request('http://x/', {
      method: 'POST',
      body: (() => {
        const f = new FormData()
        f.append('image', new Blob([png]), 'a.png')
        return f
      })(),
    })
    const type = form.headers.get('content-type')!
    const bytes = new Uint8Array(await form.arrayBuffer())
    await expectRefused(await postRaw(env, bytes.subarray(0, bytes.length - 40), type), 400, 'invalid_request', /ends before its closing delimiter/)
    await expectRefused(await postRaw(env, 'no delimiter here', type), 400, 'invalid_request', /no part/)
  })

  test('malformed part headers: a header twice, a delimiter inside them, a NUL (400, never one reading picked)', async () => {
    const type = 'multipart/form-data; boundary=B'
    const part = (headers: string) => `--B\r\n${headers}\r\n\r\nen\r\n--B--`
    const twice = part('Content-Disposition: form-data; name="language"\r\nContent-Disposition: form-data; name="image"; filename="a.png"')
    await expectRefused(await postRaw(env, twice, type), 400, 'invalid_request', /two Content-Disposition headers/)
    const cut = part('Content-Disposition: form-data; name="language\r\n--B\r\nContent-Disposition: form-data; name="style"')
    await expectRefused(await postRaw(env, cut, type), 400, 'invalid_request', /ends before the blank line/)
    await expectRefused(await postRaw(env, part('Content-Disposition: form-data; name="image"; filename="a\0.png"'), type), 400, 'invalid_request', /NUL/)
  })

  test('JSON that is not an object, or cut inside the image string', async () => {
    await expectRefused(await postRaw(env, '[1,2]'), 400, 'invalid_request', /JSON object/)
    await expectRefused(await postRaw(env, `{"image_base64":"${base64(makePng(20, 20))}`), 400, 'invalid_request', /not valid JSON/)
    await expectRefused(await postRaw(env, '{"image_base64":"AAAA","image_base64":"AAAA"}'), 400, 'invalid_request', /more than once/)
  })
})

describe('invalid_image: the bytes are no usable image, and the message says why', () => {
  test('not base64, base64url, a broken padding or a data: URL of another type', async () => {
    await expectRefused(await env.generate({ image_base64: 'iVBOR@@@w0KGgo' }), 400, 'invalid_image', /not valid base64: "@" at character 6/)
    await expectRefused(await env.generate({ image_base64: 'iVBO-_w0KGgo' }), 400, 'invalid_image', /not valid base64: "-"/)
    await expectRefused(await env.generate({ image_base64: 'iVBORw==AAAA' }), 400, 'invalid_image', /not valid base64/)
    await expectRefused(await env.generate({ image_base64: 'iVBORw0KG' }), 400, 'invalid_image', /single character over/)
    await expectRefused(
      await env.generate({ image_base64: `data:text/plain;base64,${base64(makePng(9, 9))}` }),
      400,
      'invalid_image',
      /data:image\/<type>;base64/,
    )
    await expectRefused(await env.generate({ image_base64: `data:image/png,${base64(makePng(9, 9))}` }), 400, 'invalid_image', /data:image\/<type>;base64/)
    // A data: URL's head is ASCII: a raw byte that is no UTF-8 there is refused, not read as Latin-1.
    const raw = Buffer.concat([Buffer.from('{"image_base64":"data:image/png;x='), Buffer.from([0xff]), Buffer.from(`;base64,${base64(makePng(9, 9))}"}`)])
    await expectRefused(await postRaw(env, raw), 400, 'invalid_image', /data:image\/<type>;base64/)
  })

  test('bytes that are not JPEG, PNG, GIF, WebP, AVIF or SVG, by base64 and by multipart', async () => {
    await expectRefused(await env.generate({ image_base64: base64(PDF) }), 400, 'invalid_image', /not JPEG, PNG, GIF, WebP, AVIF or SVG \(found: pdf\)/)
    await expectRefused(await postForm(env, { image: { bytes: PDF, type: 'image/png' } }), 400, 'invalid_image', /found: pdf/)
    const text = new TextEncoder().encode('hello, this is not an image at all')
    await expectRefused(await postForm(env, { image: { bytes: text } }), 400, 'invalid_image', /found: text/)
  })

  test('empty: the image is empty', async () => {
    await expectRefused(await env.generate({ image_base64: '' }), 400, 'invalid_image', /empty/)
    await expectRefused(await postForm(env, { image: { bytes: new Uint8Array(0) } }), 400, 'invalid_image', /empty/)
    await expectRefused(await env.generate({ image_base64: 'data:image/png;base64,' }), 400, 'invalid_image', /empty/)
  })

  test('truncated', async () => {
    const cut = truncate(makeJpeg(300, 200), 0.6)
    await expectRefused(await env.generate({ image_base64: base64(cut) }), 400, 'invalid_image', /truncated/)
    await expectRefused(await postForm(env, { image: { bytes: truncate(makePng(300, 200), 0.5) } }), 400, 'invalid_image', /truncated/)
  })

  test('too many pixels, refused from the header', async () => {
    const bomb = makePngHeaderOnly(40000, 40000)
    await expectRefused(await env.generate({ image_base64: dataUrl(bomb) }), 400, 'invalid_image', /40000×40000 pixels, over the limit/)
    await expectRefused(await postForm(env, { image: { bytes: bomb } }), 400, 'invalid_image', /over the limit of \d+ pixels/)
  })

  test('a URL keeps its own code: invalid_image_url', async () => {
    await expectRefused(await env.generate({ image_url: dataUrl(makePng(9, 9)) }), 400, 'invalid_image_url', /https/)
  })
})

describe('413 payload_too_large: the image over 10 MB once decoded', () => {
  // 10 MB of bytes that are no image: under the limit they reach the format check, one more byte does not.
  const atLimit = new Uint8Array(MAX_IMAGE_BYTES).fill(0x41)
  const overLimit = new Uint8Array(MAX_IMAGE_BYTES + 1).fill(0x41)

  test('10 MB exactly is read and judged by its bytes (400); 10 MB + 1 byte is 413, by base64 and by multipart', async () => {
    await expectRefused(await env.generate({ image_base64: base64(atLimit) }), 400, 'invalid_image', /not JPEG/)
    await expectRefused(await postForm(env, { image: { bytes: atLimit } }), 400, 'invalid_image', /not JPEG/)
    await expectRefused(await env.generate({ image_base64: base64(overLimit) }), 413, 'payload_too_large', /over the limit of 10 MB/)
    await expectRefused(await postForm(env, { image: { bytes: overLimit } }), 413, 'payload_too_large', /over the limit of 10 MB/)
  })

  test('the fields beside the image stay within 64 KiB', async () => {
    const png = makePng(20, 20)
    await expectRefused(await env.generate({ image_base64: base64(png), filler: 'x'.repeat(70_000) }), 413, 'payload_too_large', /apart from image_base64/)
    await expectRefused(await postForm(env, { image: { bytes: png }, filler: 'x'.repeat(70_000) }), 413, 'payload_too_large', /form fields/)
  })
})

describe('415 unsupported_media_type', () => {
  test('a body that is neither JSON nor multipart/form-data', async () => {
    const png = makePng(20, 20)
    await expectRefused(await postRaw(env, png, 'image/png'), 415, 'unsupported_media_type', /multipart\/form-data/)
    await expectRefused(await postRaw(env, `image_base64=${base64(png)}`, 'application/x-www-form-urlencoded'), 415, 'unsupported_media_type')
    await expectRefused(await postRaw(env, base64(png), 'text/plain'), 415, 'unsupported_media_type')
  })
})

describe('429 quota_exceeded comes before the upload is read', () => {
  test('an account with no credit left: 429 for an upload, even of a cached image', async () => {
    const { apiKey } = await env.service.api.register()
    const png = makePng(33, 33)
    // Spend the 50 credits on distinct images.
    for (let i = 0; i < 50; i++) expect((await env.generate({ image_base64: base64(makePng(60 + i, 10)) }, apiKey)).status).toBe(200)
    const { apiKey: other } = await env.service.api.register()
    expect((await env.generate({ image_base64: base64(png) }, other)).status).toBe(200) // cached for everyone now
    env.ollama.reset()
    const res = await postForm(env, { image: { bytes: png } }, apiKey)
    expectApiError(res, 429, 'quota_exceeded')
    expect(env.ollama.chatRequests()).toHaveLength(0)
  })
})
