// A long description is plain text whatever the model wrote: markup and script are taken out, on both
// backends, structured and plain; and a model that writes one when none was asked adds no field.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { makePng } from '../support/images'
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
