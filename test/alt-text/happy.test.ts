// POST /api/alt-text end to end: real server, real HTTPS image host, fake Ollama that records requests.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { startAltTextEnv, type AltTextEnv } from '../support/alt-text-env'
import { makeAnimatedGif, makeJpeg, makePng, makeWebp } from '../support/images'

let env: AltTextEnv

beforeAll(async () => {
  env = await startAltTextEnv()
})
afterAll(() => env.stop())
beforeEach(() => env.ollama.reset())

const lastChat = () => {
  const chats = env.ollama.chatRequests()
  return chats[chats.length - 1]!
}
const lastImage = () => {
  const recorded = env.ollama.requests.filter((r) => r.path === '/api/chat')
  return recorded[recorded.length - 1]!.images[0]!
}

// The env's model is llava: images reach it at most 672 px a side (its row of docs/models.md).
describe('the formats', () => {
  const cases = [
    { name: 'JPEG 3000×2000', bytes: () => makeJpeg(3000, 2000), format: 'jpeg', sent: 'jpeg', width: 3000, height: 2000, sentW: 672, sentH: 448 },
    { name: 'PNG 1600×1200', bytes: () => makePng(1600, 1200), format: 'png', sent: 'png', width: 1600, height: 1200, sentW: 672, sentH: 504 },
    { name: 'WebP 800×600', bytes: () => makeWebp(800, 600), format: 'webp', sent: 'png', width: 800, height: 600, sentW: 672, sentH: 504 },
    // Its three frames in a row, each 221×147, with two 4-pixel separators.
    { name: 'animated GIF 300×200', bytes: () => makeAnimatedGif(300, 200, 3), format: 'gif', sent: 'png', width: 300, height: 200, sentW: 671, sentH: 147 },
  ] as const
  for (const c of cases) {
    test(`${c.name} reaches the model as ${c.sent.toUpperCase()} within the size bound`, async () => {
      const url = env.serve(c.bytes())
      const res = await env.generate({ image_url: url })
      expect(res.status).toBe(200)
      expect(res.body.image).toEqual({ width: c.width, height: c.height, format: c.format })
      const image = lastImage()
      expect(image.format).toBe(c.sent)
      expect(Math.max(image.width!, image.height!)).toBeLessThanOrEqual(672)
      expect([image.width, image.height]).toEqual([c.sentW, c.sentH])
    })
  }
})

describe('the response', () => {
  test('carries both field sets of the spec and the extras, and costs one credit', async () => {
    const { apiKey } = await env.service.api.register()
    const res = await env.generate({ image_url: env.serve(makePng(64, 48)) }, apiKey)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      alt_text: 'Two children flying a red kite on a windy beach.',
      animated: false,
      credits_remaining: 49,
      wcag_compliant: true,
      character_count: 48,
      processing_time_ms: expect.any(Number),
      length: 48,
      language: 'en',
      cached: false,
      wcag_issues: [],
      model: 'llava',
      image: { width: 64, height: 48, format: 'png' },
      decorative: false,
      decorative_reason: null,
      text_in_image: null,
      source: 'url',
    })
    expect(Number.isInteger(res.body.processing_time_ms)).toBe(true)
    const usage = await env.service.api.get('/api/usage', apiKey)
    expect(usage.body.credits).toEqual({ total: 50, used: 1, remaining: 49 })
  })
})

describe('the prompt', () => {
  test('carries language by name, style, limit, context and keywords, with low temperature and bounded tokens', async () => {
    // A German answer: an English one would be sent back for a translation (language-*.test.ts).
    env.ollama.behave({ reply: 'Zwei Kinder lassen am windigen Strand einen roten Drachen steigen.' })
    const res = await env.generate({
      image_url: env.serve(makePng(40, 40)),
      language: 'de',
      style: 'concise',
      max_length: 90,
      context: 'Bericht über die Wiedereröffnung des alten Hafens',
      keywords: ['Hafen', 'Segelboote'],
    })
    expect(res.status).toBe(200)
    expect(res.body.language).toBe('de')
    const chat = lastChat()
    expect(chat.model).toBe('llava')
    expect(chat.stream).toBe(false)
    const text = (chat.messages ?? []).map((m) => m.content).join('\n')
    expect(text).toContain('German')
    expect(text).toContain('90')
    expect(text.toLowerCase()).toContain('concise')
    expect(text).toContain('Bericht über die Wiedereröffnung des alten Hafens')
    // Keywords are hints in their normal form: lower case.
    expect(text).toContain('hafen, segelboote')
    expect(text.toLowerCase()).toContain('image of')
    const options = chat.options as { temperature: number; num_predict: number }
    expect(options.temperature).toBeLessThanOrEqual(0.3)
    expect(options.num_predict).toBeGreaterThan(0)
    expect(options.num_predict).toBeLessThan(400)
  })

  test('descriptive is the default style and 125 the default limit', async () => {
    await env.generate({ image_url: env.serve(makePng(41, 40)) })
    const text = (lastChat().messages ?? []).map((m) => m.content).join('\n')
    expect(text.toLowerCase()).toContain('descriptive')
    expect(text).toContain('125')
    expect(text).toContain('English')
  })
})

describe('the answer', () => {
  test('is cleaned: one line, no quotes, markdown, emoji or "image of" opening, capital first letter, closing punctuation', async () => {
    env.ollama.behave({ reply: '"**Image of** a dog 🐶 catching a frisbee\nin a sunny park"' })
    const res = await env.generate({ image_url: env.serve(makePng(42, 40)) })
    expect(res.status).toBe(200)
    expect(res.body.alt_text).toBe('A dog catching a frisbee in a sunny park.')
    expect(res.body.wcag_compliant).toBe(true)
  })

  test('too long: the model is asked once more, and its shorter answer is used', async () => {
    const long =
      'A very long description of a harbour with many sailing boats, a lighthouse, seagulls, fishermen mending nets and tourists walking along the pier at sunset.'
    env.ollama.behave({ reply: (ctx) => (ctx.callNumber === 1 ? long : 'Sailing boats in a harbour at sunset.') })
    const res = await env.generate({ image_url: env.serve(makePng(43, 40)), max_length: 60 })
    expect(res.status).toBe(200)
    expect(res.body.alt_text).toBe('Sailing boats in a harbour at sunset.')
    expect(env.ollama.chatRequests().length).toBe(2)
    expect((env.ollama.chatRequests()[1]!.messages ?? []).map((m) => m.content).join('\n')).toContain('60')
  })

  test('still too long: cut at a word boundary that fits, never mid-word, never an ellipsis', async () => {
    const long = 'A very long description of a harbour with many sailing boats and a lighthouse standing on the pier at sunset'
    env.ollama.behave({ reply: long })
    const res = await env.generate({ image_url: env.serve(makePng(44, 40)), max_length: 50 })
    expect(res.status).toBe(200)
    const text: string = res.body.alt_text
    expect(text.length).toBeLessThanOrEqual(50)
    expect(res.body.character_count).toBe(text.length)
    expect(text).not.toContain('…')
    expect(text).not.toContain('...')
    expect(text.endsWith('.')).toBe(true)
    // Every word of the cut text is a whole word of the original.
    const words = new Set(long.split(' '))
    for (const word of text.slice(0, -1).split(' ')) expect(words.has(word)).toBe(true)
    expect(res.body.wcag_compliant).toBe(true)
  })

  test('is plain text: markup, script, control, bidi and invisible characters are removed', async () => {
    env.ollama.behave({
      reply:
        'Two children\u0000 flying a red\u0007 kite\u202E on a\u200B windy\u00AD beach."><img src=x onerror=alert(1)><script>alert(document.cookie)</script>\uFEFF',
    })
    const res = await env.generate({ image_url: env.serve(makePng(46, 40)) })
    expect(res.status).toBe(200)
    expect(res.body.alt_text).toBe('Two children flying a red kite on a windy beach.')
    expect(res.body.wcag_compliant).toBe(true)
  })

  test('markup that cleaning cannot take out is flagged', async () => {
    env.ollama.behave({ reply: 'A dog on a beach <img alt="x onerror=alert(1)> at noon' })
    const res = await env.generate({ image_url: env.serve(makePng(47, 40)) })
    expect(res.status).toBe(200)
    expect(res.body.wcag_compliant).toBe(false)
    expect(res.body.wcag_issues).toContain('contains markup or script ("<img")')
  })

  test('a reply that is nothing but markup and hidden characters is a 502, not charged', async () => {
    const { apiKey } = await env.service.api.register()
    env.ollama.behave({ reply: '"><img src=x onerror=alert(1)><script>alert(1)</script>\u200B\u202E' })
    const res = await env.generate({ image_url: env.serve(makePng(48, 40)) }, apiKey)
    expect(res.status).toBe(502)
    expect(res.body.error.code).toBe('upstream_error')
    expect((await env.service.api.get('/api/usage', apiKey)).body.credits.used).toBe(0)
  })

  test('wcag_compliant is computed: a file-name answer is flagged with its issues', async () => {
    env.ollama.behave({ reply: 'IMG_1234.jpg' })
    const res = await env.generate({ image_url: env.serve(makePng(45, 40)) })
    expect(res.status).toBe(200)
    expect(res.body.wcag_compliant).toBe(false)
    expect(res.body.wcag_issues.length).toBeGreaterThan(0)
  })
})

describe('Server-Timing', () => {
  const stagesOf = (header: string | null) =>
    Object.fromEntries(
      (header ?? '').split(', ').map((entry) => {
        const [name, dur] = entry.split(';dur=')
        return [name, Number(dur)]
      }),
    )

  test('a fresh generation names every stage it went through, each a non-negative duration in ms', async () => {
    const url = env.serve(makePng(120, 90))
    const res = await env.generate({ image_url: url, context: 'server-timing fresh' })
    expect(res.status).toBe(200)
    const stages = stagesOf(res.headers.get('server-timing'))
    expect(Object.keys(stages).sort()).toEqual(['cache', 'charge', 'fetch', 'model', 'prepare', 'queue'])
    for (const ms of Object.values(stages)) expect(ms).toBeGreaterThanOrEqual(0)
  })

  test('a cache hit went through fetch and cache only', async () => {
    const url = env.serve(makePng(121, 90))
    expect((await env.generate({ image_url: url, context: 'server-timing hit' })).status).toBe(200)
    const again = await env.generate({ image_url: url, context: 'server-timing hit' })
    expect(again.body.cached).toBe(true)
    expect(Object.keys(stagesOf(again.headers.get('server-timing'))).sort()).toEqual(['cache', 'fetch'])
  })
})
