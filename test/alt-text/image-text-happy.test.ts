// The text the OCR reads, used through the real service on both backends (an in-process stand-in for the
// OCR engine): text_in_image is its text, the model gets it as context, an image mostly of text gets its
// text as alt text, a quote of words the image does not show is retried once, a chart's long description
// gets its labels, the cache keeps it all, and the judge flags alt text that leaves the text out.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type Backend, reading, startBackends, uniqueImage } from './image-text-support'

let backends: Backend[]

beforeAll(async () => {
  backends = await startBackends(true)
}, 60_000)
afterAll(() => Promise.all(backends.map((backend) => backend.stop())))

/** An image the stand-in reads as `lines` covering `coverage` of it, served; its URL. */
const imageShowing = (backend: Backend, lines: string[], coverage: number) => {
  const image = uniqueImage()
  backend.reader?.set(image.width, reading(lines, coverage))
  return backend.serve(image.png)
}

for (const index of [0, 1]) {
  const env = () => backends[index]!
  describe(index === 0 ? 'Ollama' : 'OpenAI-compatible', () => {
    test('text_in_image is the OCR text, verbatim in reading order, whatever the model read; the model was given it', async () => {
      env().model({ reply: 'A street café with tables on the pavement.', structured: { text_in_image: 'CAFE OPEN' } })
      const url = imageShowing(env(), ['Café Müller', 'Open 8–18'], 0.04)
      const res = await env().generate({ image_url: url })
      expect(res.status).toBe(200)
      expect(res.body.text_in_image).toBe('Café Müller\nOpen 8–18')
      // Not mostly text: the model's alt text stands, and is not flagged for leaving the text out.
      expect(res.body.alt_text).toBe('A street café with tables on the pavement.')
      expect(res.body.wcag_compliant).toBe(true)
      expect(env().prompts()).toContain('The image contains the text:')
      expect(env().prompts()).toContain('Café Müller / Open 8–18')
    })

    test('the OCR read no text: text_in_image null, even when the model claims some', async () => {
      env().model({ reply: 'A calm sea under a grey sky.', structured: { text_in_image: 'INVENTED WORDS' } })
      const res = await env().generate({ image_url: env().serve(uniqueImage().png) })
      expect(res.status).toBe(200)
      expect(res.body.text_in_image).toBeNull()
      // Nor is the model's claim kept in the alt text, as it is with the OCR off.
      expect(res.body.alt_text).toBe('A calm sea under a grey sky.')
      expect(env().prompts()).not.toContain('<image_text>')
    })

    test('an image mostly of text: the alt text contains the text', async () => {
      env().model({ reply: 'A colourful poster.' })
      const url = imageShowing(env(), ['SUMMER SALE', '50% OFF'], 0.45)
      const res = await env().generate({ image_url: url })
      expect(res.status).toBe(200)
      expect(res.body.alt_text).toBe('A colourful poster: "SUMMER SALE. 50% OFF".')
      expect(res.body.wcag_compliant).toBe(true)
    })

    test('mostly text and longer than max_length: fitted at a word, the whole text in long_description', async () => {
      env().model({ reply: 'A slide with a lot of text.' })
      const lines = ['Our mission is to make every web page readable', 'for everyone who cannot see it, in every language they read']
      const url = imageShowing(env(), lines, 0.5)
      const res = await env().generate({ image_url: url, max_length: 60, long_description: true })
      expect(res.status).toBe(200)
      expect(res.body.character_count).toBeLessThanOrEqual(60)
      expect(res.body.alt_text).toStartWith('Slide: Our mission is to make')
      expect(res.body.long_description).toBe(`Text in the image: ${lines.join(' ')}.`)
      expect(res.body.wcag_issues).toEqual([])
      // Without long_description the text does not fit anywhere: flagged.
      const without = await env().generate({ image_url: url, max_length: 60 })
      expect(without.body.wcag_issues).toContain('leaves out text the image shows (see text_in_image)')
    })

    test('a quote of words the image does not show: asked once more with the OCR text, corrected', async () => {
      env().model({
        reply: ({ prompt }) =>
          prompt.includes('<previous_alt_text>')
            ? 'A shop window with a banner reading "Grand Opening".'
            : 'A shop window with a banner reading "Grand Closing Sale".',
      })
      const url = imageShowing(env(), ['GRAND OPENING'], 0.1)
      const res = await env().generate({ image_url: url })
      expect(res.status).toBe(200)
      expect(res.body.alt_text).toBe('A shop window with a banner reading "Grand Opening".')
      expect(res.body).toMatchObject({ wcag_compliant: true, wcag_issues: [] })
      expect(env().calls()).toBe(2)
      expect(env().prompts()).toContain('<wrong_quotes>')
    })

    test('still quoting wrongly after the retry: flagged, and asked only once more', async () => {
      env().model({ reply: 'A banner reading "Free Beer Friday".' })
      const url = imageShowing(env(), ['GRAND OPENING'], 0.1)
      const res = await env().generate({ image_url: url })
      expect(res.status).toBe(200)
      expect(res.body.wcag_compliant).toBe(false)
      expect(res.body.wcag_issues).toContain('quotes text the image does not show: "Free Beer Friday"')
      expect(env().calls()).toBe(2)
    })

    test('OCR slips do not count as invented quotes', async () => {
      env().model({ reply: 'A banner reading "Grand Opening".' })
      const res = await env().generate({ image_url: imageShowing(env(), ['GRAND 0PENlNG'], 0.1) })
      expect(res.body.wcag_compliant).toBe(true)
      expect(env().calls()).toBe(1)
    })

    test('a chart with long_description: the labels the OCR read are in the long description', async () => {
      env().model({ reply: 'A bar chart of monthly sales that roughly doubled from January to June 2024.', complex: true })
      const url = imageShowing(env(), ['Monthly sales 2024', 'k€', 'Online', 'In store'], 0.06)
      const res = await env().generate({ image_url: url, long_description: true })
      expect(res.status).toBe(200)
      // "Monthly sales 2024" is in the model's description already; the rest was not.
      expect(res.body.long_description).toEndWith('with a dip in March. Text in the image: k€; Online; In store.')
    })

    test('the cache keeps the OCR text; a cached answer reads nothing again', async () => {
      env().model({ reply: 'A road sign by a country lane.' })
      const url = imageShowing(env(), ['Oxford 12', 'London 57'], 0.05)
      const first = await env().generate({ image_url: url })
      const reads = env().reader!.reads.length
      const again = await env().generate({ image_url: url })
      expect(again.body).toMatchObject({ cached: true, text_in_image: 'Oxford 12\nLondon 57', alt_text: first.body.alt_text })
      expect(env().reader!.reads.length).toBe(reads)
    })

    test('the judge: alt text that leaves out the text of an image of text is needs_fix, with a suggestion that has it', async () => {
      env().model({ structured: { verdict: 'ok', reasons: 'accurate and brief', suggested_alt_text: '' }, reply: 'VERDICT: ok\nREASONS: fine\nSUGGESTED:' })
      const url = imageShowing(env(), ['Keep calm', 'and carry on'], 0.5)
      const res = await env().review({ image_url: url, alt_text: 'A red poster with a crown.' })
      expect(res.status).toBe(200)
      expect(res.body.verdict).toBe('needs_fix')
      expect(res.body.reasons).toContain('leaves out text the image shows')
      expect(res.body.suggested_alt_text).toBe('A red poster with a crown: "Keep calm and carry on".')
      expect(env().prompts()).toContain('<image_text>')
    })

    test('the judge: alt text with the text stays ok', async () => {
      env().model({ structured: { verdict: 'ok', reasons: 'accurate and brief', suggested_alt_text: '' }, reply: 'VERDICT: ok\nREASONS: fine\nSUGGESTED:' })
      const url = imageShowing(env(), ['Keep calm', 'and carry on'], 0.5)
      const res = await env().review({ image_url: url, alt_text: 'A red poster reading "Keep calm and carry on".' })
      expect(res.body).toMatchObject({ verdict: 'ok', suggested_alt_text: null })
    })
  })
}
