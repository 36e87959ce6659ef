// The right language, when it cannot be had: the translation is not in the language asked for either.
// The answer is still 200, flagged (wcag_compliant false, an issue naming the language), charged once,
// counted, cached as it is.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { makePng } from '../support/images'
import { type Backend, ENGLISH, NOT_GERMAN, ollamaBackend, openAiBackend } from './language-support'

let size = 20
const png = () => makePng(++size, 19)

for (const start of [ollamaBackend, openAiBackend]) {
  describe(`${start.name === 'ollamaBackend' ? 'Ollama' : 'OpenAI-compatible'}: still not in the language asked for`, () => {
    let backend: Backend
    beforeAll(async () => {
      backend = await start()
    })
    afterAll(() => backend.stop())
    beforeEach(() => backend.reset())

    test('200 with wcag_compliant false and an issue naming German; two calls, one credit, counted', async () => {
      backend.answer(ENGLISH, ENGLISH)
      const [credits, stillWrong] = [await backend.creditsUsed(), await backend.retries('still_wrong')]
      const res = await backend.generate({ image_url: backend.serve(png()), language: 'de' })
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({ alt_text: ENGLISH, language: 'de', wcag_compliant: false })
      expect(res.body.wcag_issues).toEqual([NOT_GERMAN])
      expect(backend.chats().map((chat) => chat.hasImage)).toEqual([true, false])
      expect(await backend.creditsUsed()).toBe(credits + 1)
      expect(await backend.retries('still_wrong')).toBe(stillWrong + 1)
    })

    test('the flagged answer is cached with its issue, and not asked for again', async () => {
      backend.answer(ENGLISH, ENGLISH)
      const url = backend.serve(png())
      await backend.generate({ image_url: url, language: 'de' })
      backend.reset()
      const again = await backend.generate({ image_url: url, language: 'de' })
      expect(again.body).toMatchObject({ alt_text: ENGLISH, cached: true, wcag_compliant: false, wcag_issues: [NOT_GERMAN] })
      expect(backend.chats()).toHaveLength(0)
    })

    test('a translation call that fails keeps the first answer, flagged: 200, one credit, counted', async () => {
      backend.answerThenFail(ENGLISH)
      const [credits, stillWrong] = [await backend.creditsUsed(), await backend.retries('still_wrong')]
      const res = await backend.generate({ image_url: backend.serve(png()), language: 'de' })
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({ alt_text: ENGLISH, wcag_compliant: false, wcag_issues: [NOT_GERMAN] })
      expect(backend.chats().map((chat) => chat.hasImage)).toEqual([true, false])
      expect(await backend.creditsUsed()).toBe(credits + 1)
      expect(await backend.retries('still_wrong')).toBe(stillWrong + 1)
    })

    test('a translation into a third language is not taken either', async () => {
      const french = 'Deux enfants font voler un cerf-volant rouge sur une plage venteuse au coucher du soleil.'
      backend.answer(ENGLISH, french)
      const res = await backend.generate({ image_url: backend.serve(png()), language: 'de' })
      expect(res.body).toMatchObject({ alt_text: ENGLISH, wcag_compliant: false, wcag_issues: [NOT_GERMAN] })
    })
  })
}
