// `languages` over HTTP with both model backends: one vision call for the first language, one text-only
// translation per further language, a credit per language returned; cached and shared per language.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { batchClient } from '../batches/support'
import { makePng } from '../support/images'
import { type Backend, type Chat, ENGLISH, FRENCH, GERMAN, ollamaBackend, openAiBackend, PORTUGUESE } from './language-support'

let size = 40
const png = () => makePng(++size, 19)

/** The model as a polyglot: English from the image, each translation in the language its prompt names. */
const polyglot = (chat: Pick<Chat, 'system' | 'user' | 'hasImage'>) => {
  if (chat.hasImage) return ENGLISH
  if (chat.system.includes('Translate into German')) return GERMAN
  if (chat.system.includes('Translate into French')) return FRENCH
  if (chat.system.includes('Translate into Brazilian Portuguese')) return PORTUGUESE
  throw new Error(`no translation scripted for: ${chat.system.split('\n')[1]}`)
}

for (const start of [ollamaBackend, openAiBackend]) {
  describe(`${start === ollamaBackend ? 'Ollama' : 'OpenAI-compatible'}: languages`, () => {
    let backend: Backend
    beforeAll(async () => {
      backend = await start()
    })
    afterAll(() => backend.stop())
    beforeEach(() => backend.reset())

    test('three tags: one vision call, two text-only translations of its text, three credits, alt_texts by tag', async () => {
      backend.replyBy(polyglot)
      const credits = await backend.creditsUsed()
      const res = await backend.generate({ image_url: backend.serve(png()), languages: ['en', 'de', 'pt-BR'] })
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({ alt_text: ENGLISH, language: 'en', cached: false, failed_languages: [] })
      expect(Object.keys(res.body.alt_texts)).toEqual(['en', 'de', 'pt-BR'])
      expect(res.body.alt_texts.de).toEqual({ alt_text: GERMAN, wcag_compliant: true, wcag_issues: [], character_count: Array.from(GERMAN).length })
      expect(res.body.alt_texts['pt-BR'].alt_text).toBe(PORTUGUESE)
      const chats = backend.chats()
      expect(chats).toHaveLength(3)
      expect(chats.filter((chat) => chat.hasImage)).toHaveLength(1)
      for (const chat of chats.filter((c) => !c.hasImage)) {
        expect(chat.structured).toBe(false)
        expect(chat.user).toContain(ENGLISH)
      }
      expect(await backend.creditsUsed()).toBe(credits + 3)
      // The top-level fields are the first language's, as a client that knows only `language` reads them.
      expect(res.body.character_count).toBe(Array.from(ENGLISH).length)
    })

    test('tags are answered in canonical case; the prompt names the variant in words ("Brazilian Portuguese")', async () => {
      backend.replyBy(polyglot)
      const res = await backend.generate({ image_url: backend.serve(png()), languages: ['EN', 'pt-br'] })
      expect(res.status).toBe(200)
      expect(Object.keys(res.body.alt_texts)).toEqual(['en', 'pt-BR'])
      expect(res.body.language).toBe('en')
      const translation = backend.chats().find((chat) => !chat.hasImage)!
      expect(`${translation.system}\n${translation.user}`).toContain('Brazilian Portuguese (Português)')
    })

    test('a single language tag is echoed canonically and named in the vision prompt', async () => {
      backend.replyBy(() => PORTUGUESE)
      const res = await backend.generate({ image_url: backend.serve(png()), language: 'pt-br' })
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({ alt_text: PORTUGUESE, language: 'pt-BR', wcag_compliant: true })
      expect(res.body.alt_texts).toBeUndefined()
      const chats = backend.chats()
      expect(chats).toHaveLength(1)
      expect(`${chats[0]!.system}\n${chats[0]!.user}`).toContain('Write in Brazilian Portuguese (Português).')
      for (const [tag, name] of [
        ['en-GB', 'British English'],
        ['zh-hant', 'Traditional Chinese'],
      ] as const) {
        backend.reset()
        backend.replyBy(() => 'A short one.')
        const other = await backend.generate({ image_url: backend.serve(png()), language: tag })
        expect(other.body.language).toBe(tag === 'zh-hant' ? 'zh-Hant' : tag)
        expect(backend.chats()[0]!.system).toContain(`Write in ${name}`)
      }
    })

    test('a cached language is free while the others run: only the uncached one is asked, one credit', async () => {
      backend.replyBy((chat) => (chat.hasImage ? GERMAN : polyglot(chat)))
      const url = backend.serve(png())
      expect((await backend.generate({ image_url: url, language: 'de' })).body.alt_text).toBe(GERMAN)
      backend.reset()
      backend.replyBy(polyglot)
      const credits = await backend.creditsUsed()
      const res = await backend.generate({ image_url: url, languages: ['de', 'fr'] })
      expect(res.status).toBe(200)
      expect(res.body.alt_texts).toMatchObject({ de: { alt_text: GERMAN }, fr: { alt_text: FRENCH } })
      expect(res.body.cached).toBe(false)
      const chats = backend.chats()
      expect(chats).toHaveLength(1)
      expect(chats[0]).toMatchObject({ hasImage: false })
      // The translation starts from the cached German text.
      expect(chats[0]!.user).toContain(GERMAN)
      expect(await backend.creditsUsed()).toBe(credits + 1)
      // Asked again: everything cached, free.
      backend.reset()
      const again = await backend.generate({ image_url: url, languages: ['de', 'fr'] })
      expect(again.body).toMatchObject({ cached: true, alt_texts: { de: { alt_text: GERMAN }, fr: { alt_text: FRENCH } } })
      expect(backend.chats()).toHaveLength(0)
      expect(await backend.creditsUsed()).toBe(credits + 1)
    })

    test('single-flight per language: two identical concurrent requests make one set of model calls, paid once', async () => {
      backend.replyBy(polyglot, 100)
      const url = backend.serve(png())
      const credits = await backend.creditsUsed()
      const body = { image_url: url, languages: ['en', 'de', 'fr'] }
      const [a, b] = await Promise.all([backend.generate(body), backend.generate(body)])
      expect([a.status, b.status]).toEqual([200, 200])
      expect(a.body.alt_texts).toEqual(b.body.alt_texts)
      expect(backend.chats()).toHaveLength(3)
      expect([a.body.cached, b.body.cached].sort()).toEqual([false, true])
      expect(await backend.creditsUsed()).toBe(credits + 3)
    })

    test('a translation still in another language after its retry is returned, flagged, and charged', async () => {
      backend.replyBy((chat) => (chat.hasImage || chat.system.includes('French') ? ENGLISH : polyglot(chat)))
      const credits = await backend.creditsUsed()
      const res = await backend.generate({ image_url: backend.serve(png()), languages: ['en', 'fr'] })
      expect(res.status).toBe(200)
      expect(res.body.failed_languages).toEqual([])
      expect(res.body.alt_texts.fr).toMatchObject({ alt_text: ENGLISH, wcag_compliant: false })
      expect(res.body.alt_texts.fr.wcag_issues).toContain('is not in French (fr)')
      // The vision call, the translation, and its one retry.
      expect(backend.chats()).toHaveLength(3)
      expect(await backend.creditsUsed()).toBe(credits + 2)
    })

    test('a batch item takes languages: one vision and one text-only call, two credits, alt_texts in its result', async () => {
      backend.replyBy(polyglot)
      const credits = await backend.creditsUsed()
      const batches = batchClient(backend.service.api, backend.key)
      const created = await batches.create({ items: [{ image_url: backend.serve(png()), languages: ['en', 'de'] }] })
      expect(created.status).toBe(202)
      const ended = await batches.ended(created.body.id)
      expect(ended.body.items[0]).toMatchObject({
        status: 'done',
        result: { alt_text: ENGLISH, language: 'en', alt_texts: { en: { alt_text: ENGLISH }, de: { alt_text: GERMAN } }, failed_languages: [] },
      })
      expect(backend.chats().map((chat) => chat.hasImage)).toEqual([true, false])
      expect(await backend.creditsUsed()).toBe(credits + 2)
      expect(ended.body.items[0].result.credits_remaining).toBeGreaterThanOrEqual(0)
    })

    test('multipart: languages repeated or comma-separated', async () => {
      backend.replyBy(polyglot)
      const form = new FormData()
      form.append('image', new Blob([png() as Uint8Array<ArrayBuffer>], { type: 'image/png' }), 'a.png')
      form.append('languages', 'en,de')
      form.append('languages', 'fr')
      const res = await fetch(`${backend.service.url}/api/alt-text`, { method: 'POST', headers: { 'x-api-key': backend.key }, body: form })
      expect(res.status).toBe(200)
      expect(Object.keys(((await res.json()) as { alt_texts: object }).alt_texts)).toEqual(['en', 'de', 'fr'])
    })
  })
}
