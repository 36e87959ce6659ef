// When the OCR fails, hangs, or is off, on both backends: the request still answers 200 on the model's own
// reading (logged, never the bytes, and not cached), a reader that ignores its signal is not waited for
// past its time limit, and bad input is refused before anything is read.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { OCR_TIME_LIMIT_MS } from '../../src/modules/alt-text/image-text'
import { type Backend, startBackends, uniqueImage } from './image-text-support'

let withOcr: Backend[]
let withoutOcr: Backend[]

beforeAll(async () => {
  ;[withOcr, withoutOcr] = await Promise.all([startBackends(true), startBackends(false)])
}, 60_000)
afterAll(() => Promise.all([...withOcr, ...withoutOcr].map((backend) => backend.stop())))

for (const index of [0, 1]) {
  const env = () => withOcr[index]!
  const off = () => withoutOcr[index]!
  describe(index === 0 ? 'Ollama' : 'OpenAI-compatible', () => {
    test("the OCR throws: 200 on the model's own reading, logged without the bytes, not cached", async () => {
      env().model({ reply: 'A shop front with a sign.', structured: { text_in_image: 'OPEN' } })
      const image = uniqueImage()
      env().reader!.set(image.width, new Error('engine crashed'))
      const url = env().serve(image.png)
      const res = await env().generate({ image_url: url })
      expect(res.status).toBe(200)
      expect(res.body.text_in_image).toBe('OPEN')
      const line = env().service.logs.find(
        (entry) => entry.msg === 'reading the text in the image failed; answering without it' && entry.error === 'engine crashed',
      )
      expect(line).toBeDefined()
      expect(env().service.logText()).not.toContain(Buffer.from(image.png).toString('base64').slice(0, 40))
      const again = await env().generate({ image_url: url })
      expect(again.body.cached).toBe(false)
    })

    test('the judge with a failing OCR still gives its verdict', async () => {
      env().model({ structured: { verdict: 'ok', reasons: 'accurate', suggested_alt_text: '' }, reply: 'VERDICT: ok\nREASONS: fine\nSUGGESTED:' })
      const image = uniqueImage()
      env().reader!.set(image.width, new Error('engine crashed'))
      const res = await env().review({ image_url: env().serve(image.png), alt_text: 'A shop front with a sign.' })
      expect(res.status).toBe(200)
      expect(res.body.verdict).toBe('ok')
    })

    test("OCR off: the model's own reading, kept in the alt text as before; no image text in the prompt", async () => {
      off().model({ reply: 'A shop front with a sign.', structured: { text_in_image: 'OPEN' } })
      const res = await off().generate({ image_url: off().serve(uniqueImage().png) })
      expect(res.status).toBe(200)
      expect(res.body.text_in_image).toBe('OPEN')
      expect(res.body.alt_text).toBe('A shop front with a sign: "OPEN".')
      expect(off().prompts()).not.toContain('<image_text>')
    })

    test('bad input is a 400 before anything is read', async () => {
      env().model({})
      const reads = env().reader!.reads.length
      const res = await env().generate({ image_url: env().serve(uniqueImage().png), max_length: 5 })
      expect(res.status).toBe(400)
      expect(res.body.error.code).toBe('invalid_request')
      expect(env().reader!.reads.length).toBe(reads)
    })
  })
}

test(
  'a reader that never answers and ignores its signal is not waited for past its limit: 200 on both backends',
  async () => {
    const answers = await Promise.all(
      withOcr.map(async (env) => {
        env.model({ reply: 'A shop front with a sign.' })
        const image = uniqueImage()
        env.reader!.set(image.width, 'hang')
        return env.generate({ image_url: env.serve(image.png) })
      }),
    )
    for (const res of answers) expect(res).toMatchObject({ status: 200, body: { alt_text: 'A shop front with a sign.' } })
  },
  OCR_TIME_LIMIT_MS + 20_000,
)
