// The alt-text endpoint feeds the history: a fresh answer is "generated" and listed, the same image again
// is "cached" and listed, an upload is listed as one, and a request that fails after validation (an
// unusable image, the model server, no credit left) is counted as "failed" but not listed. A request
// refused as invalid is not counted. Real server, fake Ollama, local HTTPS images.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { makePng } from '../support/images'
import { base64 } from '../alt-text/upload-support'

let env: AltTextEnv
const REPLY = 'Two children flying a red kite on a windy beach.'

beforeAll(async () => {
  env = await startAltTextEnv({ env: { ALTTEXT_FREE_CREDITS: '3' }, ollama: { reply: REPLY } })
})
afterAll(() => env.stop())
beforeEach(() => env.ollama.reset())

const today = async (key: string) => {
  const res = await env.service.api.get('/api/usage/history?days=1', key)
  expect(res.status).toBe(200)
  const [day] = res.body.days as { generations: number; cached: number; failed: number }[]
  return day
}
const items = async (key: string) => {
  const res = await env.service.api.get('/api/history', key)
  expect(res.status).toBe(200)
  return res.body.items as Record<string, unknown>[]
}

let side = 20
const image = () => makePng(++side, 17)

describe('the history records what the alt-text endpoint answered', () => {
  test('a fresh answer, the same image again and an upload: counted and listed newest first', async () => {
    const { apiKey } = await env.service.api.register()
    const png = image()
    const url = env.serve(png)
    expect((await env.generate({ image_url: url, language: 'en', max_length: 120 }, apiKey)).status).toBe(200)
    const again = await env.generate({ image_url: url, language: 'en', max_length: 120 }, apiKey)
    expect(again.body.cached).toBe(true)
    const upload = image()
    expect((await env.generate({ image_base64: base64(upload), style: 'concise' }, apiKey)).status).toBe(200)

    expect(await today(apiKey)).toMatchObject({ generations: 2, cached: 1, failed: 0 })
    const [newest, cached, first] = await items(apiKey)
    expect(newest).toMatchObject({ source: 'upload', cached: false, style: 'concise', image: { format: 'png', bytes: upload.byteLength } })
    expect(cached).toMatchObject({ source: 'url', cached: true, alt_text: REPLY })
    expect(first).toMatchObject({
      source: 'url',
      cached: false,
      alt_text: REPLY,
      decorative: false,
      language: 'en',
      max_length: 120,
      character_count: REPLY.length,
      image: { format: 'png', bytes: png.byteLength, width: side - 1, height: 17 },
    })
  })

  test('failures after validation are counted, not listed; invalid requests are not counted', async () => {
    const { apiKey } = await env.service.api.register()
    // An unusable image: text where a PNG should be.
    expect((await env.generate({ image_base64: base64(new TextEncoder().encode('not an image')) }, apiKey)).status).toBe(400)
    // The model server failing.
    env.ollama.behave({ failStatus: 500, failError: 'runner crashed' })
    expect((await env.generate({ image_url: env.serve(image()) }, apiKey)).status).toBe(502)
    env.ollama.reset()
    // Refused by validation: no source at all, an unknown style.
    expect((await env.generate({}, apiKey)).status).toBe(400)
    expect((await env.generate({ image_url: env.serve(image()), style: 'poetic' }, apiKey)).status).toBe(400)

    expect(await today(apiKey)).toMatchObject({ generations: 0, cached: 0, failed: 2 })
    expect(await items(apiKey)).toEqual([])
  })

  test('no credit left: the 429 is a failure of the day', async () => {
    const { apiKey } = await env.service.api.register()
    for (let i = 0; i < 3; i++) expect((await env.generate({ image_base64: base64(image()) }, apiKey)).status).toBe(200)
    const refused = await env.generate({ image_base64: base64(image()) }, apiKey)
    expect(refused.status).toBe(429)
    expect(refused.body.error.code).toBe('quota_exceeded')
    expect(await today(apiKey)).toMatchObject({ generations: 3, cached: 0, failed: 1 })
    expect(await items(apiKey)).toHaveLength(3)
  })
})
