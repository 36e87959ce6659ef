// long_description: true, end to end on both backends, structured and plain: a complex image gets the
// long description beside its alt text, a simple one null; the field is there only when asked; one
// credit; the option is part of the cache key and the long description comes back from the cache.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { LONG_DESCRIPTION } from '../support/fake-ollama'
import { makePng } from '../support/images'
import { base64, postForm } from './upload-support'
import { type LongEnv, type Mode, startLongEnvs } from './long-description-support'

let envs: LongEnv[]
let side = 40
const png = () => makePng(++side, 33)

// Two services and two fake model servers start: more than the default 5 s on a busy machine.
beforeAll(async () => {
  envs = await startLongEnvs()
}, 60_000)
afterAll(() => Promise.all(envs.map((env) => env.stop())))

for (const index of [0, 1]) {
  for (const mode of ['structured', 'plain'] as Mode[]) {
    const env = () => envs[index]!
    describe(`${index === 0 ? 'Ollama' : 'OpenAI-compatible'}, ${mode}`, () => {
      test('a complex image: the short alt text and the long description beside it; one credit', async () => {
        env().model({ complex: true, mode })
        const before = await env().creditsUsed()
        const res = await env().generate({ image_url: env().serve(png()), long_description: true })
        expect(res.status).toBe(200)
        expect(res.body.alt_text).toBe('A bar chart of monthly sales that roughly doubled from January to June 2024.')
        expect(res.body.long_description).toBe(LONG_DESCRIPTION)
        expect(res.body.wcag_compliant).toBe(true)
        expect(await env().creditsUsed()).toBe(before + 1)
        // The model was asked to judge the image and how to give the long description.
        expect(env().prompts()).toContain('infographic')
        expect(env().prompts()).toContain(mode === 'plain' ? 'LONG DESCRIPTION:' : 'long_description')
      })

      test('a simple image: long_description null, alt text as always', async () => {
        env().model({ reply: 'Two children flying a red kite on a windy beach.', complex: false, mode })
        const res = await env().generate({ image_url: env().serve(png()), long_description: true })
        expect(res.status).toBe(200)
        expect(res.body).toMatchObject({ alt_text: 'Two children flying a red kite on a windy beach.', long_description: null })
      })

      test('not asked: no field, and the prompt says nothing of long descriptions', async () => {
        env().model({ complex: true, mode })
        const res = await env().generate({ image_url: env().serve(png()) })
        expect(res.status).toBe(200)
        expect('long_description' in res.body).toBe(false)
        expect(env().prompts()).not.toContain('LONG DESCRIPTION')
        expect(env().prompts()).not.toContain('long_description')
      })

      test('the option is part of the cache key; the cached answer keeps its long description', async () => {
        env().model({ complex: true, mode })
        const url = env().serve(png())
        const without = await env().generate({ image_url: url })
        expect(without.body.cached).toBe(false)
        const before = await env().creditsUsed()
        const asked = await env().generate({ image_url: url, long_description: true })
        expect(asked.body).toMatchObject({ cached: false, long_description: LONG_DESCRIPTION })
        expect(await env().creditsUsed()).toBe(before + 1)
        const again = await env().generate({ image_url: url, long_description: true })
        expect(again.body).toMatchObject({ cached: true, long_description: LONG_DESCRIPTION })
        const plainAgain = await env().generate({ image_url: url, long_description: false })
        expect(plainAgain.body.cached).toBe(true)
        expect('long_description' in plainAgain.body).toBe(false)
        expect(await env().creditsUsed()).toBe(before + 1)
      })
    })
  }
}

describe('uploads', () => {
  test('base64 and multipart ("true") take the option too', async () => {
    const env = envs[0]!
    env.model({ complex: true, mode: 'structured' })
    const byBase64 = await env.generate({ image_base64: base64(png()), long_description: true })
    expect(byBase64.body.long_description).toBe(LONG_DESCRIPTION)
    const byForm = await postForm(env.ollama!, { image: { bytes: png() }, long_description: 'true' })
    expect(byForm.status).toBe(200)
    expect(byForm.body.long_description).toBe(LONG_DESCRIPTION)
    const notAsked = await postForm(env.ollama!, { image: { bytes: png() }, long_description: 'false' })
    expect('long_description' in notAsked.body).toBe(false)
  })
})
