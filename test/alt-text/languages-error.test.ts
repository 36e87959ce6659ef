// `languages` when something fails, with both model backends: a translation that errs is left out
// (failed_languages, free), a failed first language fails the request (nothing charged), and bad input
// is a 400 invalid_request before anything is fetched, asked or charged.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { batchClient } from '../batches/support'
import { makePng } from '../support/images'
import { type Backend, type Chat, ENGLISH, GERMAN, ollamaBackend, openAiBackend } from './language-support'

let size = 40
const png = () => makePng(++size, 23)

const germanOnly = (chat: Pick<Chat, 'system' | 'hasImage'>) => {
  if (chat.hasImage) return ENGLISH
  if (chat.system.includes('Translate into German')) return GERMAN
  throw new Error('the model server failed this translation')
}

const BAD_INPUT: { name: string; body: Record<string, unknown>; says: string }[] = [
  { name: '6 languages', body: { languages: ['en', 'de', 'fr', 'it', 'es', 'nl'] }, says: 'languages: must name at most 5 languages' },
  { name: 'no language', body: { languages: [] }, says: 'languages: must name at least one language' },
  { name: 'duplicates after canonical case (de, DE)', body: { languages: ['de', 'DE'] }, says: 'languages[1]: names de twice' },
  { name: 'pt-br and pt-BR', body: { languages: ['en', 'pt-br', 'pt-BR'] }, says: 'languages[2]: names pt-BR twice' },
  { name: 'both language and languages', body: { language: 'en', languages: ['de'] }, says: 'languages: give language or languages, not both' },
  { name: 'languages not an array', body: { languages: 'de,fr' }, says: 'languages: must be an array of language tags' },
  { name: 'an unknown language (xx-YY)', body: { languages: ['en', 'xx-YY'] }, says: 'languages[1]: unknown language "xx"' },
  { name: 'language xx-YY', body: { language: 'xx-YY' }, says: 'language: unknown language "xx": not in the IANA language subtag registry' },
  { name: 'language en_US', body: { language: 'en_US' }, says: 'use en-US' },
  { name: 'language de-DE-x-private-too-long', body: { language: 'de-DE-x-private-too-long' }, says: 'private-use subtags (-x-…) are not accepted' },
  { name: 'a subtag over 8 characters', body: { language: 'de-DE-x-privatetoolong' }, says: 'subtags of 1 to 8 letters or digits' },
  { name: 'an unknown region (de-YY)', body: { language: 'de-YY' }, says: 'unknown region "YY"' },
  { name: 'und (no language)', body: { language: 'und' }, says: 'names no language to write in' },
  { name: 'an extension (en-US-u-ca-gregory)', body: { language: 'en-US-u-ca-gregory' }, says: 'send en-US' },
  { name: 'a number', body: { language: 7 }, says: 'language: must be a string' },
]

for (const start of [ollamaBackend, openAiBackend]) {
  describe(`${start === ollamaBackend ? 'Ollama' : 'OpenAI-compatible'}: languages that fail`, () => {
    let backend: Backend
    beforeAll(async () => {
      backend = await start()
    })
    afterAll(() => backend.stop())
    beforeEach(() => backend.reset())

    test('a translation the model server fails is in failed_languages and costs nothing; the others are answered', async () => {
      backend.replyBy(germanOnly)
      const credits = await backend.creditsUsed()
      const res = await backend.generate({ image_url: backend.serve(png()), languages: ['en', 'de', 'pt-BR'] })
      expect(res.status).toBe(200)
      expect(res.body.failed_languages).toEqual(['pt-BR'])
      expect(Object.keys(res.body.alt_texts)).toEqual(['en', 'de'])
      expect(res.body.alt_texts.de.alt_text).toBe(GERMAN)
      expect(await backend.creditsUsed()).toBe(credits + 2)
    })

    test('a failed translation is not cached: asked again, only it is tried again', async () => {
      backend.replyBy(germanOnly)
      const url = backend.serve(png())
      expect((await backend.generate({ image_url: url, languages: ['en', 'de', 'fr'] })).body.failed_languages).toEqual(['fr'])
      backend.reset()
      backend.replyBy(germanOnly)
      const credits = await backend.creditsUsed()
      const again = await backend.generate({ image_url: url, languages: ['en', 'de', 'fr'] })
      expect(again.body.failed_languages).toEqual(['fr'])
      expect(again.body.cached).toBe(true)
      expect(backend.chats().every((chat) => !chat.hasImage && chat.system.includes('French'))).toBe(true)
      expect(await backend.creditsUsed()).toBe(credits)
    })

    test('every translation failing leaves the first language: 200, one credit', async () => {
      backend.replyBy((chat) => (chat.hasImage ? ENGLISH : germanOnly({ ...chat, system: '' })))
      const credits = await backend.creditsUsed()
      const res = await backend.generate({ image_url: backend.serve(png()), languages: ['en', 'de', 'fr'] })
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({ alt_text: ENGLISH, language: 'en', failed_languages: ['de', 'fr'] })
      expect(Object.keys(res.body.alt_texts)).toEqual(['en'])
      expect(await backend.creditsUsed()).toBe(credits + 1)
    })

    test('every language failing (the vision call fails) is the usual 502, nothing charged, no translation asked', async () => {
      backend.replyBy(() => {
        throw new Error('the model server is down')
      })
      const credits = await backend.creditsUsed()
      const res = await backend.generate({ image_url: backend.serve(png()), languages: ['en', 'de', 'fr'] })
      expect(res.status).toBe(502)
      expect(res.body.error.code).toBe('upstream_error')
      expect(backend.chats().every((chat) => chat.hasImage)).toBe(true)
      expect(await backend.creditsUsed()).toBe(credits)
    })

    for (const bad of BAD_INPUT) {
      test(`400 invalid_request: ${bad.name}; nothing fetched, asked or charged`, async () => {
        const credits = await backend.creditsUsed()
        const res = await backend.generate({ image_url: backend.serve(png()), ...bad.body })
        expect(res.status).toBe(400)
        expect(res.body.error.code).toBe('invalid_request')
        expect(res.body.error.message).toContain(bad.says)
        expect(backend.chats()).toHaveLength(0)
        expect(await backend.creditsUsed()).toBe(credits)
      })
    }

    test('a batch with an item of bad languages is a 400 naming the item; nothing runs', async () => {
      const batches = batchClient(backend.service.api, backend.key)
      const res = await batches.create({ items: [{ image_url: backend.serve(png()), language: 'de', languages: ['de', 'fr'] }] })
      expect(res.status).toBe(400)
      expect(res.body.error.message).toContain('items[0].languages: give language or languages, not both')
      const dup = await batches.create({ items: [{ image_url: backend.serve(png()), languages: ['fr', 'FR'] }] })
      expect(dup.status).toBe(400)
      expect(dup.body.error.message).toContain('items[0].languages[1]: names fr twice')
      expect(backend.chats()).toHaveLength(0)
    })

    test('the judge takes a BCP 47 language and refuses a bad one', async () => {
      const bad = await backend.service.api.post('/api/alt-text/review', { image_url: backend.serve(png()), alt_text: 'boat', language: 'en_GB' }, backend.key)
      expect(bad.status).toBe(400)
      expect(bad.body.error.message).toContain('use en-GB')
      expect(backend.chats()).toHaveLength(0)
    })
  })
}
