// The corpus (corpus/entries.ts) over HTTP: every raw answer, given by the fake Ollama server and by
// the fake OpenAI-compatible server, must come back from POST /api/alt-text as the expected alt text.
// Plain answers (the servers refuse structured output, so the service asks in plain text) and
// structured ones (the raw answer as the JSON's alt_text), asked first: once a server refuses structured
// output, the service asks it in plain text from then on. One service per backend, one request per
// entry; the cache is off so that every request reaches the model.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { characterCount, cleanAltText, fitToLength } from '../../src/modules/alt-text/text'
import { startOpenAiEnv, type OpenAiEnv } from '../model-backends/openai-env'
import { startAltTextEnv, type AltTextEnv } from '../support/alt-text-env'
import { makePng } from '../support/images'
import { CORPUS, type CorpusEntry, type Shape } from './corpus/entries'

const ENV = { ALTTEXT_CACHE_TTL_DAYS: '0', ALTTEXT_FREE_CREDITS: '100000' }
const image = Buffer.from(makePng(24, 24)).toString('base64')
const nfc = (text: string) => text.normalize('NFC')
const request = (entry: CorpusEntry) => ({ image_base64: image, language: entry.language, ...(entry.maxLength ? { max_length: entry.maxLength } : {}) })

/** What the service answered for each entry, in corpus order. */
async function answers(generate: (entry: CorpusEntry) => Promise<{ status: number; body: { alt_text?: string } }>): Promise<Array<string | number>> {
  const out: Array<string | number> = []
  for (const entry of CORPUS) {
    const res = await generate(entry)
    out.push(res.status === 200 ? (res.body.alt_text ?? '') : res.status)
  }
  return out
}

const expected = CORPUS.map((entry) => nfc(entry.expected))

describe('the corpus', () => {
  test('has at least 150 answers in at least 10 languages, each shape at least 5 times', () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(150)
    expect(new Set(CORPUS.map((entry) => entry.language)).size).toBeGreaterThanOrEqual(10)
    const shapes = new Map<Shape, number>()
    for (const entry of CORPUS) for (const shape of entry.shapes) shapes.set(shape, (shapes.get(shape) ?? 0) + 1)
    for (const [shape, count] of shapes) expect([shape, count >= 5 || shape === 'tokens' || shape === 'markdown']).toEqual([shape, true])
  })

  test('every expected text is within its max_length and is left as it is by the cleaner', () => {
    for (const entry of CORPUS) {
      if (entry.maxLength) expect(characterCount(entry.expected)).toBeLessThanOrEqual(entry.maxLength)
      expect(cleanAltText(entry.expected, entry.language)).toBe(nfc(entry.expected))
    }
  })

  test('cleanAltText (and fitToLength) turn every raw answer into its expected alt text', () => {
    const got = CORPUS.map((entry) => {
      const text = cleanAltText(entry.raw, entry.language)
      return entry.maxLength && characterCount(text) > entry.maxLength ? fitToLength(text, entry.maxLength, entry.language) : text
    })
    expect(got).toEqual(expected)
  })
})

describe('the corpus over HTTP, Ollama', () => {
  let env: AltTextEnv
  beforeAll(async () => {
    env = await startAltTextEnv({ env: ENV })
  })
  afterAll(async () => {
    await env?.stop()
  })

  test('structured answers: the raw answer as alt_text comes back the same', async () => {
    const got = await answers((entry) => {
      env.ollama.behave({ reply: entry.raw })
      return env.generate(request(entry))
    })
    expect(got).toEqual(expected)
    // Each entry's first call asked for structure (a shortening call is plain).
    expect(env.ollama.chatRequests().filter((body) => body.format !== undefined).length).toBe(CORPUS.length)
  }, 30_000)

  test('plain answers: every entry comes back as its expected alt text', async () => {
    env.ollama.behave({ formatSupport: 'refuse' })
    const got = await answers((entry) => {
      env.ollama.behave({ reply: entry.raw })
      return env.generate(request(entry))
    })
    expect(got).toEqual(expected)
  }, 30_000)
})

describe('the corpus over HTTP, OpenAI-compatible', () => {
  let env: OpenAiEnv
  beforeAll(async () => {
    env = await startOpenAiEnv({ env: ENV })
  })
  afterAll(async () => {
    await env?.stop()
  })

  test('structured answers: the raw answer as alt_text comes back the same', async () => {
    const got = await answers((entry) => {
      env.model.behave({ reply: entry.raw })
      return env.generate(request(entry))
    })
    expect(got).toEqual(expected)
    expect(env.model.chatRequests().filter((body) => body.response_format !== undefined).length).toBe(CORPUS.length)
  }, 30_000)

  test('plain answers: every entry comes back as its expected alt text', async () => {
    env.model.behave({ responseFormat: 'refuse' })
    const got = await answers((entry) => {
      env.model.behave({ reply: entry.raw })
      return env.generate(request(entry))
    })
    expect(got).toEqual(expected)
  }, 30_000)
})
