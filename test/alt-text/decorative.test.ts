// detect_decorative: the prompt asks the model to judge whether the image is purely decorative only
// when the request says so; a decorative answer is a 200 with alt_text "", decorative true,
// character_count 0, wcag_compliant true and a reason, and costs a credit; detect_decorative is part of
// the cache key. The fake model calls a 7×7 image decorative when asked.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { startAltTextEnv, type AltTextEnv } from '../support/alt-text-env'
import { makePng } from '../support/images'
import { base64, postForm } from './upload-support'

let env: AltTextEnv

const REASON = 'a thin ornamental divider'
const DECORATIVE_SIDE = 7

beforeAll(async () => {
  env = await startAltTextEnv({ ollama: { decorative: (image) => image.width === DECORATIVE_SIDE, decorativeReason: REASON } })
})
afterAll(() => env.stop())
beforeEach(() => {
  env.ollama.reset()
})

const systemPrompt = () =>
  env.ollama
    .chatRequests()
    .at(-1)
    ?.messages?.find((m) => m.role === 'system')?.content ?? ''
const usage = async (key: string) => (await env.service.api.get('/api/usage', key)).body.credits

let height = 7
/** A decorative image (7 px wide) no other test sends. */
const ornament = () => makePng(DECORATIVE_SIDE, ++height)
/** A picture the model describes. */
const photo = () => makePng(64, ++height)

describe('a decorative image, when asked', () => {
  test('by URL: 200 with alt_text "", decorative true, character_count 0, compliant, a reason; one credit', async () => {
    const { apiKey } = await env.service.api.register()
    const res = await env.generate({ image_url: env.serve(ornament()), detect_decorative: true }, apiKey)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      alt_text: '',
      decorative: true,
      decorative_reason: REASON,
      character_count: 0,
      length: 0,
      wcag_compliant: true,
      wcag_issues: [],
      cached: false,
      source: 'url',
      credits_remaining: 49,
    })
    expect(await usage(apiKey)).toEqual({ total: 50, used: 1, remaining: 49 })
  })

  test('uploaded as base64 and as multipart ("true")', async () => {
    const byBase64 = await env.generate({ image_base64: base64(ornament()), detect_decorative: true })
    expect(byBase64.body).toMatchObject({ alt_text: '', decorative: true, source: 'upload' })
    const byForm = await postForm(env, { image: { bytes: ornament() }, detect_decorative: 'true' })
    expect(byForm.status).toBe(200)
    expect(byForm.body).toMatchObject({ alt_text: '', decorative: true, decorative_reason: REASON, source: 'upload' })
  })

  test('the prompt asks for the judgement, with the way to answer', async () => {
    await env.generate({ image_base64: base64(ornament()), detect_decorative: true })
    expect(systemPrompt()).toContain('purely decorative')
    // Structured (the fake honours `format`): the JSON's decorative fields are the way to answer.
    expect(env.ollama.chatRequests().at(-1)?.format).toMatchObject({ properties: { decorative: { type: 'boolean' } } })
    expect(systemPrompt()).toContain('decorative_reason: if decorative')
  })
})

describe('not decorative', () => {
  test('a picture asked about: its alt text, decorative false, no reason', async () => {
    const res = await env.generate({ image_base64: base64(photo()), detect_decorative: true })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      alt_text: 'Two children flying a red kite on a windy beach.',
      decorative: false,
      decorative_reason: null,
      character_count: 48,
    })
  })

  test('not asked (the default, or "false"): the prompt does not ask and the ornament gets an alt text', async () => {
    for (const res of [
      await env.generate({ image_base64: base64(ornament()) }),
      await env.generate({ image_base64: base64(ornament()), detect_decorative: false }),
      await postForm(env, { image: { bytes: ornament() }, detect_decorative: 'false' }),
    ]) {
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({ decorative: false, decorative_reason: null, alt_text: 'Two children flying a red kite on a windy beach.' })
      expect(systemPrompt()).not.toContain('purely decorative')
    }
  })
})

describe('the cache', () => {
  test('keeps the judgement: the same image asked again is cached, free and still decorative', async () => {
    const { apiKey } = await env.service.api.register()
    const bytes = ornament()
    expect((await env.generate({ image_base64: base64(bytes), detect_decorative: true }, apiKey)).body.cached).toBe(false)
    const again = await env.generate({ image_url: env.serve(bytes), detect_decorative: true }, apiKey)
    expect(again.body).toMatchObject({ cached: true, alt_text: '', decorative: true, decorative_reason: REASON, character_count: 0, credits_remaining: 49 })
    expect(env.ollama.chatRequests()).toHaveLength(1)
  })

  test('tells asked from not asked: the same image without detect_decorative is a new generation, and so back', async () => {
    const bytes = ornament()
    const asked = await env.generate({ image_base64: base64(bytes), detect_decorative: true })
    const notAsked = await env.generate({ image_base64: base64(bytes) })
    expect(asked.body).toMatchObject({ cached: false, decorative: true })
    expect(notAsked.body).toMatchObject({ cached: false, decorative: false })
    expect(env.ollama.chatRequests()).toHaveLength(2)
    expect((await env.generate({ image_base64: base64(bytes), detect_decorative: false })).body).toMatchObject({ cached: true, decorative: false })
  })
})

describe("the model's way of saying it", () => {
  test('an alt text that starts with the word "Decorative" is an alt text, not a judgement', async () => {
    env.ollama.behave({ reply: 'Decorative lanterns hanging over a narrow street.' })
    const res = await env.generate({ image_base64: base64(photo()), detect_decorative: true })
    expect(res.body).toMatchObject({ decorative: false, alt_text: 'Decorative lanterns hanging over a narrow street.' })
  })

  test('markup around the marker and a missing reason are forgiven', async () => {
    env.ollama.behave({ reply: '**DECORATIVE**' })
    const res = await env.generate({ image_base64: base64(photo()), detect_decorative: true })
    expect(res.body).toMatchObject({ decorative: true, alt_text: '', decorative_reason: expect.stringContaining('decorative') })
  })
})
