// long_description refusals and broken answers, on both backends: a bad option type is 400 in the error
// shape before anything is fetched or charged; a long description that is oversized is cut at a sentence
// within 2,000 characters, one that is empty, "none", only markup or cut off is null; never a 500.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { MAX_LONG_DESCRIPTION_CHARS } from '../../src/shared/limits'
import { makePng } from '../support/images'
import { postForm } from './upload-support'
import { type LongEnv, type Mode, startLongEnvs } from './long-description-support'

let envs: LongEnv[]
let side = 40
const png = () => makePng(++side, 35)

// Two services and two fake model servers start: more than the default 5 s on a busy machine.
beforeAll(async () => {
  envs = await startLongEnvs()
}, 60_000)
afterAll(() => Promise.all(envs.map((env) => env.stop())))

describe('a bad option: 400 invalid_request naming the field, nothing charged', () => {
  for (const value of ['yes', 1, null, [true]]) {
    test(`long_description ${JSON.stringify(value)}`, async () => {
      const env = envs[0]!
      env.model({ complex: true, mode: 'structured' })
      const before = await env.creditsUsed()
      const res = await env.generate({ image_url: env.serve(png()), long_description: value })
      expect(res.status).toBe(400)
      expect(res.body.error.code).toBe('invalid_request')
      expect(res.body.error.message).toContain('long_description')
      expect(res.body.error.docs).toEndWith('#invalid_request')
      expect(env.prompts()).toBe('[]')
      expect(await env.creditsUsed()).toBe(before)
    })
  }

  test('multipart: "maybe" is refused the same way', async () => {
    const env = envs[0]!
    const res = await postForm(env.ollama!, { image: { bytes: png() }, long_description: 'maybe' })
    expect(res.status).toBe(400)
    expect(res.body.error.code).toBe('invalid_request')
    expect(res.body.error.message).toContain('long_description')
  })
})

// First: once a backend saw a refusal of structured answers (the plain runs below), it asks in plain text.
test('a structured answer cut off inside long_description: the alt text is kept, long_description null', async () => {
  const env = envs[0]!
  env.model({ complex: true, mode: 'structured' })
  // A server that ignores the schema and stops mid-answer: the JSON is broken, its alt_text member whole.
  env.ollama!.ollama.behave({
    formatSupport: 'ignore',
    reply:
      '{"decorative": false, "decorative_reason": null, "alt_text": "A bar chart of sales by month.", "text_in_image": null, "long_description": "A bar cha',
  })
  const res = await env.generate({ image_url: env.serve(png()), long_description: true })
  expect(res.status).toBe(200)
  expect(res.body).toMatchObject({ alt_text: 'A bar chart of sales by month.', long_description: null })
})

const SENTENCE = 'In the next month the sales rose by a few thousand euros over the month before.'

for (const index of [0, 1]) {
  for (const mode of ['structured', 'plain'] as Mode[]) {
    const env = () => envs[index]!
    describe(`${index === 0 ? 'Ollama' : 'OpenAI-compatible'}, ${mode}: a broken long description`, () => {
      test('oversized: cut at a sentence end within the limit', async () => {
        const long = Array.from({ length: 60 }, () => SENTENCE).join(' ')
        expect(long.length).toBeGreaterThan(MAX_LONG_DESCRIPTION_CHARS)
        env().model({ complex: true, longDescription: long, mode })
        const res = await env().generate({ image_url: env().serve(png()), long_description: true })
        expect(res.status).toBe(200)
        const text = res.body.long_description as string
        expect(text.length).toBeLessThanOrEqual(MAX_LONG_DESCRIPTION_CHARS)
        expect(text.length).toBeGreaterThan(MAX_LONG_DESCRIPTION_CHARS - SENTENCE.length - 1)
        expect(text).toEndWith('before.')
        expect(long.startsWith(text)).toBe(true)
      })

      test('one sentence over the limit: cut at a word, within the limit', async () => {
        // Few words (the fakes count a word a token) but many characters.
        const long = `Monthly figures ${Array.from({ length: 120 }, (_, i) => `measurement-${i}-in-thousands-of-euros`).join(' ')}`
        expect(long.length).toBeGreaterThan(MAX_LONG_DESCRIPTION_CHARS)
        env().model({ complex: true, longDescription: long, mode })
        const res = await env().generate({ image_url: env().serve(png()), long_description: true })
        expect(res.status).toBe(200)
        expect((res.body.long_description as string).length).toBeLessThanOrEqual(MAX_LONG_DESCRIPTION_CHARS)
      })

      for (const junk of ['none', 'N/A', '**', '   ', '<b></b>']) {
        test(`${JSON.stringify(junk)}: null, the alt text still answered`, async () => {
          env().model({ complex: true, longDescription: junk, mode })
          const res = await env().generate({ image_url: env().serve(png()), long_description: true })
          expect(res.status).toBe(200)
          expect(res.body.alt_text).toStartWith('A bar chart')
          expect(res.body.long_description).toBeNull()
        })
      }

      test('markdown: headings, bullets, emphasis and a table become plain sentences', async () => {
        const long = '## Monthly sales\n- **January**: 12\n- _February_: 15\n\n| Month | Sales |\n|---|---|\n| March | 11 |\nSales rose overall.'
        env().model({ complex: true, longDescription: long, mode })
        const res = await env().generate({ image_url: env().serve(png()), long_description: true })
        expect(res.status).toBe(200)
        expect(res.body.long_description).toBe('Monthly sales. January: 12. February: 15. Month, Sales. March, 11. Sales rose overall.')
      })
    })
  }
}
