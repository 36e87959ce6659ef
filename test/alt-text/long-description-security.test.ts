// A long description is plain text whatever the model wrote: markup and script are taken out, on both
// backends, structured and plain; and a model that writes one when none was asked adds no field.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { MAX_LONG_DESCRIPTION_CHARS, MAX_MODEL_ANSWER_CHARS } from '../../src/shared/limits'
import { makePng } from '../support/images'
import { waitUntil } from '../support/service'
import { type LongEnv, type Mode, startLongEnvs } from './long-description-support'

let envs: LongEnv[]
let side = 40
const png = () => makePng(++side, 37)

// Two services and two fake model servers start: more than the default 5 s on a busy machine.
beforeAll(async () => {
  envs = await startLongEnvs()
}, 60_000)
afterAll(() => Promise.all(envs.map((env) => env.stop())))

const HOSTILE =
  'A bar chart of sales.<script>alert(1)</script> January <img src=x onerror=alert(2)> was 12 and <a href="javascript:alert(3)">February</a> 15. Sales <b>rose</b>.'

for (const index of [0, 1]) {
  for (const mode of ['structured', 'plain'] as Mode[]) {
    const env = () => envs[index]!
    describe(`${index === 0 ? 'Ollama' : 'OpenAI-compatible'}, ${mode}`, () => {
      test('markup and script in the long description are taken out: plain text only', async () => {
        env().model({ complex: true, longDescription: HOSTILE, mode })
        const res = await env().generate({ image_url: env().serve(png()), long_description: true })
        expect(res.status).toBe(200)
        const text = res.body.long_description as string
        expect(text).not.toMatch(/[<>]/)
        expect(text).not.toContain('alert')
        expect(text).not.toContain('onerror')
        expect(text).toContain('January')
        expect(text).toContain('February 15')
      })
    })
  }
}

for (const index of [0, 1]) {
  const env = () => envs[index]!
  describe(`${index === 0 ? 'Ollama' : 'OpenAI-compatible'}, a hostile answer`, () => {
    test('a 3.8 MB long description is cut before it is read: /health answers meanwhile, the long description is bounded and clean', async () => {
      const bytes = Math.floor(3.8 * 1024 * 1024)
      const head = 'A bar chart of monthly sales.\nLONG DESCRIPTION: Sales rose from 12 in January to 24 in June. '
      // Shapes that took cleaning quadratic time or worse: runs of blanks and line breaks, marks, pipes, "a: a:".
      env().hugeAnswer(bytes, head, `!!  a: a: | x | - /${' '.repeat(2000)}\n\n\t`)
      const from = env().service.logs.length
      const generated = env().generate({ image_url: env().serve(png()), long_description: true })
      await waitUntil(() => env().modelBytesStreamed() >= bytes, 'the whole answer sent')
      const health = await env().service.api.get('/health')
      expect(health.status).toBe(200)
      const res = await generated
      expect(res.status).toBe(200)
      expect(res.body.alt_text).toBe('A bar chart of monthly sales.')
      const long = res.body.long_description as string
      expect(long.startsWith('Sales rose from 12 in January to 24 in June.')).toBe(true)
      expect(Array.from(long).length).toBeLessThanOrEqual(MAX_LONG_DESCRIPTION_CHARS)
      expect(long).not.toMatch(/\s{2}|\n|\|/u)
      const cut = env()
        .service.logs.slice(from)
        .find((line) => line.msg === 'the model answer was cut before reading it')
      expect(cut?.kept).toBe(MAX_MODEL_ANSWER_CHARS)
    }, 30_000)
  })
}

describe('not asked', () => {
  test('a complex image without the option: no long_description field, even from a cached answer', async () => {
    const env = envs[1]!
    env.model({ complex: true, mode: 'structured' })
    const url = env.serve(png())
    const first = await env.generate({ image_url: url })
    const second = await env.generate({ image_url: url })
    for (const res of [first, second]) {
      expect(res.status).toBe(200)
      expect('long_description' in res.body).toBe(false)
    }
  })
})
