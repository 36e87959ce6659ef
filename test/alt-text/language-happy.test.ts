// The right language, over HTTP with both model backends: an answer in another language than asked is
// sent back once, text only, for a translation; the translation is what the client gets, for one credit.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { batchClient } from '../batches/support'
import { makePng } from '../support/images'
import { type Backend, ENGLISH, GERMAN, NOT_GERMAN, ollamaBackend, openAiBackend } from './language-support'

let size = 20
const png = () => makePng(++size, 17)

for (const start of [ollamaBackend, openAiBackend]) {
  describe(`${start.name === 'ollamaBackend' ? 'Ollama' : 'OpenAI-compatible'}: translated`, () => {
    let backend: Backend
    beforeAll(async () => {
      backend = await start()
    })
    afterAll(() => backend.stop())
    beforeEach(() => backend.reset())

    test('an English answer to a German request is translated by a text-only second call; one credit; counted', async () => {
      backend.answer(ENGLISH, GERMAN)
      const [credits, translated] = [await backend.creditsUsed(), await backend.retries('translated')]
      const res = await backend.generate({ image_url: backend.serve(png()), language: 'de' })
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({ alt_text: GERMAN, language: 'de', wcag_compliant: true, cached: false })
      expect(res.body.wcag_issues).not.toContain(NOT_GERMAN)
      const chats = backend.chats()
      expect(chats).toHaveLength(2)
      // The first call was the structured one, with the image; the second carries no image and no schema.
      expect(chats[0]).toMatchObject({ hasImage: true, structured: true })
      expect(chats[1]).toMatchObject({ hasImage: false, structured: false })
      expect(chats[1]?.user).toContain(ENGLISH)
      expect(`${chats[1]?.system}\n${chats[1]?.user}`).toContain('German (Deutsch)')
      expect(await backend.creditsUsed()).toBe(credits + 1)
      expect(await backend.retries('translated')).toBe(translated + 1)
    })

    test('the translation is cached: the same request again is answered from the cache, not checked again', async () => {
      backend.answer(ENGLISH, GERMAN)
      const url = backend.serve(png())
      expect((await backend.generate({ image_url: url, language: 'de' })).body.alt_text).toBe(GERMAN)
      backend.reset()
      const again = await backend.generate({ image_url: url, language: 'de' })
      expect(again.body).toMatchObject({ alt_text: GERMAN, cached: true, wcag_compliant: true })
      expect(backend.chats()).toHaveLength(0)
    })

    test('an answer in the language asked for, or too short to judge, takes one call', async () => {
      backend.answer(GERMAN, 'unused')
      const german = await backend.generate({ image_url: backend.serve(png()), language: 'de' })
      expect(german.body).toMatchObject({ alt_text: GERMAN, wcag_compliant: true })
      backend.answer('A red kite.', 'unused')
      const short = await backend.generate({ image_url: backend.serve(png()), language: 'de' })
      expect(short.status).toBe(200)
      expect(short.body.alt_text).toBe('A red kite.')
      expect(short.body.wcag_issues).not.toContain(NOT_GERMAN)
      expect(backend.chats()).toHaveLength(2)
      expect(backend.chats().every((chat) => chat.hasImage)).toBe(true)
    })

    test('a batch item goes the same way', async () => {
      backend.answer(ENGLISH, GERMAN)
      const batches = batchClient(backend.service.api, backend.key)
      const created = await batches.create({ items: [{ image_url: backend.serve(png()), language: 'de' }] })
      expect(created.status).toBe(202)
      const ended = await batches.ended(created.body.id)
      expect(ended.body.items[0]).toMatchObject({ status: 'done', result: { alt_text: GERMAN, language: 'de', wcag_compliant: true } })
      expect(backend.chats().map((chat) => chat.hasImage)).toEqual([true, false])
    })
  })
}
