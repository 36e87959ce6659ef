// End to end with the real OCR engine (ALTTEXT_OCR=on) on both backends: images of text rendered from
// SVG in the test (DejaVu Sans), read by the service's own reader, and used as the fakes cannot tell:
// text_in_image, the prompt, the alt text of an image of text, the quote check, and the judge.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import sharp from 'sharp'
import { showsText } from '../../src/modules/alt-text/image-text'
import { type Backend, startBackends } from './image-text-support'

let backends: Backend[]

/** A PNG of `lines` in black on white, 72 px DejaVu Sans, one per row; `width` keeps images apart. */
async function textImage(lines: string[], width = 900): Promise<Uint8Array> {
  const rows = lines.map((line, i) => `<text x="40" y="${110 + i * 100}" font-family="DejaVu Sans" font-size="72" fill="#111">${line}</text>`).join('')
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${60 + lines.length * 100}"><rect width="100%" height="100%" fill="#fff"/>${rows}</svg>`
  return new Uint8Array(await sharp(Buffer.from(svg)).png().toBuffer())
}

/** A photo-like image without text: a gradient with soft shapes. */
async function photoWithoutText(): Promise<Uint8Array> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="640" height="420"><defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#2b6cb0"/><stop offset="1" stop-color="#f6ad55"/></linearGradient></defs><rect width="100%" height="100%" fill="url(#g)"/><circle cx="420" cy="150" r="90" fill="#fefcbf" opacity="0.8"/><ellipse cx="200" cy="330" rx="220" ry="60" fill="#276749"/></svg>`
  return new Uint8Array(await sharp(Buffer.from(svg)).png().toBuffer())
}

const SALE = ['SUMMER SALE', '50% OFF']

beforeAll(async () => {
  backends = await startBackends('real')
  // The engine loads its models on its first read: one request each, so that no test waits for that.
  await Promise.all(backends.map(async (backend) => backend.generate({ image_url: backend.serve(await textImage(['WARM UP'], 700)) })))
}, 120_000)
afterAll(() => Promise.all(backends.map((backend) => backend.stop())))

for (const index of [0, 1]) {
  const env = () => backends[index]!
  describe(index === 0 ? 'Ollama' : 'OpenAI-compatible', () => {
    test('an image of text: text_in_image is what the engine read, the model got it, the alt text carries it', async () => {
      env().model({ reply: 'A colourful poster.', structured: { text_in_image: 'WINTER SALE' } })
      const res = await env().generate({ image_url: env().serve(await textImage(SALE, 901 + index)) })
      expect(res.status).toBe(200)
      expect(res.body.text_in_image).toBe(SALE.join('\n'))
      expect(env().prompts()).toContain('SUMMER SALE / 50% OFF')
      expect(showsText(SALE.join(' '), res.body.alt_text)).toBe(true)
      expect(res.body.wcag_compliant).toBe(true)
    })

    test('a photo-like image without text: text_in_image null, whatever the model claims', async () => {
      env().model({ reply: 'A sunset over green hills.', structured: { text_in_image: 'INVENTED' } })
      const res = await env().generate({ image_url: env().serve(await photoWithoutText()) })
      expect(res.status).toBe(200)
      expect(res.body.text_in_image).toBeNull()
      expect(res.body.alt_text).toBe('A sunset over green hills.')
    })

    test('a quote of words the image does not show is retried once and flagged when still wrong', async () => {
      env().model({ reply: 'A shop window with a sign reading "Closing Down".' })
      const res = await env().generate({ image_url: env().serve(await textImage(['GRAND OPENING'], 1400 + index)), max_length: 200 })
      expect(res.status).toBe(200)
      expect(res.body.wcag_issues).toContain('quotes text the image does not show: "Closing Down"')
      expect(env().calls()).toBe(2)
    })

    test("the judge: an alt text without the poster's text is needs_fix", async () => {
      env().model({ structured: { verdict: 'ok', reasons: 'accurate', suggested_alt_text: '' }, reply: 'VERDICT: ok\nREASONS: fine\nSUGGESTED:' })
      const res = await env().review({ image_url: env().serve(await textImage(SALE, 903 + index)), alt_text: 'A colourful poster.' })
      expect(res.status).toBe(200)
      expect(res.body.verdict).toBe('needs_fix')
      expect(showsText(SALE.join(' '), res.body.suggested_alt_text)).toBe(true)
    })
  })
}
