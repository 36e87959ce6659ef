// test lane: quick
// `alttext describe --languages` against the real service, on both model backends: each image's record
// carries every language (jsonl), a CSV has a row per language, and the flag is checked like the API.
// (describe-support can spawn the binary; this file only runs the command in-process.)
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { parseCsv } from '../../src/cli/describe/output'
import { type Backend, type Chat, ENGLISH, FRENCH, GERMAN, ollamaBackend, openAiBackend } from '../alt-text/language-support'
import { describeCommand, fixtureDir, jsonLines, uniqueImage } from './describe-support'

const dirs: string[] = []
/** A fixture folder, removed after the file's tests. */
const folder = (files: Record<string, Uint8Array>) => {
  const dir = fixtureDir(files)
  dirs.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const polyglot = (chat: Pick<Chat, 'system' | 'hasImage'>) => {
  if (chat.hasImage) return ENGLISH
  if (chat.system.includes('Translate into German')) return GERMAN
  if (chat.system.includes('Translate into French')) return FRENCH
  throw new Error('no such translation scripted')
}

for (const start of [ollamaBackend, openAiBackend]) {
  describe(`${start === ollamaBackend ? 'Ollama' : 'OpenAI-compatible'}: describe --languages`, () => {
    let backend: Backend
    let vars: Record<string, string>
    beforeAll(async () => {
      backend = await start({ env: { ALTTEXT_FREE_CREDITS: '1000' } })
      vars = { ALTTEXT_URL: backend.service.url, ALTTEXT_API_KEY: backend.key }
    })
    afterAll(() => backend.stop())

    test('jsonl: one record per image with alt_texts by tag and failed_languages; a credit per language', async () => {
      backend.replyBy(polyglot)
      const dir = folder({ 'a.png': uniqueImage(), 'b.png': uniqueImage() })
      const credits = await backend.creditsUsed()
      const result = await describeCommand(['--languages', 'en,de', '--languages', 'fr', '.'], vars, dir)
      expect(result.code).toBe(0)
      const records = jsonLines(result.stdout)
      expect(records).toHaveLength(2)
      for (const record of records) {
        expect(record).toMatchObject({ alt_text: ENGLISH, language: 'en', failed_languages: [] })
        expect(Object.keys(record.alt_texts)).toEqual(['en', 'de', 'fr'])
        expect(record.alt_texts.fr).toEqual({ alt_text: FRENCH, wcag_compliant: true, wcag_issues: [] })
      }
      expect(await backend.creditsUsed()).toBe(credits + 6)
    })

    test('csv: a row per language, its language column naming it; a failed language is a row with its error', async () => {
      backend.replyBy((chat) => {
        if (chat.system.includes('French')) throw new Error('the model server failed this translation')
        return polyglot(chat)
      })
      const dir = folder({ 'a.png': uniqueImage() })
      const result = await describeCommand(['--languages', 'en,de,fr', '-o', 'out.csv', '.'], vars, dir)
      expect(result.code).toBe(0)
      const rows = parseCsv(readFileSync(join(dir, 'out.csv'), 'utf8'))
      expect(rows.slice(1).map((row) => [row[0], row[1], row[6], row[8]])).toEqual([
        ['a.png', ENGLISH, 'en', ''],
        ['a.png', GERMAN, 'de', ''],
        ['a.png', '', 'fr', 'language_failed'],
      ])
    })

    test('bad --languages are refused before anything is sent: exit 2, the flag named', async () => {
      const dir = folder({ 'a.png': uniqueImage() })
      for (const [args, says] of [
        [['--languages', 'de,DE'], '--languages names de twice'],
        [['--languages', 'en,xx-YY'], '--languages unknown language "xx"'],
        [['--languages', 'en,de,fr,it,es,nl'], '--languages must name at most 5 languages'],
        [['--language', 'en', '--languages', 'de'], '--languages give language or languages, not both'],
        [['--language', 'en_US'], 'use en-US'],
      ] as const) {
        const result = await describeCommand([...args, '.'], vars, dir)
        expect(result.code).toBe(2)
        expect(result.stderr).toContain(says)
      }
    })
  })
}
