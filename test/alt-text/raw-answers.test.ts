import { describe, expect, test } from 'bun:test'
import { cleanAltText } from '../../src/modules/alt-text/text'
import { WRAPPER_LANGUAGES } from '../../src/modules/alt-text/text'
import { RAW_ANSWERS } from './raw-answers'

/** The cleaned text is NFC; so is what we compare it with, whatever the editor saved. */
const nfc = (text: string) => text.normalize('NFC')
const shorten = (text: string) => {
  const line = text.replace(/\s+/gu, ' ').trim()
  return line.length > 60 ? `${line.slice(0, 57)}…` : line
}

describe('the corpus', () => {
  test('covers every language with wrapper phrases, and only those', () => {
    const languages = new Set(RAW_ANSWERS.map((entry) => entry.language))
    expect([...languages].sort()).toEqual([...WRAPPER_LANGUAGES].sort())
    expect(WRAPPER_LANGUAGES).toEqual(
      expect.arrayContaining(['en', 'de', 'fr', 'es', 'it', 'pt', 'nl', 'pl', 'sv', 'da', 'nb', 'fi', 'cs', 'ru', 'uk', 'tr', 'ja', 'zh', 'ko', 'ar', 'hi']),
    )
  })

  test('has at least three answers per language, and hard negatives', () => {
    for (const language of WRAPPER_LANGUAGES) {
      expect(RAW_ANSWERS.filter((entry) => entry.language === language).length).toBeGreaterThanOrEqual(3)
    }
    expect(RAW_ANSWERS.filter((entry) => entry.hard).length).toBeGreaterThanOrEqual(20)
  })
})

for (const language of WRAPPER_LANGUAGES) {
  describe(`cleanAltText on raw answers: ${language}`, () => {
    const entries = RAW_ANSWERS.filter((entry) => entry.language === language)
    test.each(entries.map((entry) => [`${entry.model}: ${shorten(entry.raw)}`, entry] as const))('%s', (_name, entry) => {
      expect(cleanAltText(entry.raw, entry.language)).toBe(nfc(entry.expected))
    })
  })
}

describe('cleanAltText properties over the corpus', () => {
  test('never returns "" for an answer that holds a description', () => {
    for (const entry of RAW_ANSWERS) expect(cleanAltText(entry.raw, entry.language)).not.toBe('')
  })

  test('is idempotent: cleaning a cleaned text changes nothing', () => {
    for (const entry of RAW_ANSWERS) {
      const once = cleanAltText(entry.raw, entry.language)
      expect(cleanAltText(once, entry.language)).toBe(once)
    }
  })

  test('leaves each expected description as it is: nothing in it looks like a wrapper', () => {
    for (const entry of RAW_ANSWERS) expect(cleanAltText(entry.expected, entry.language)).toBe(nfc(entry.expected))
  })

  test('a hard negative keeps all its words', () => {
    for (const entry of RAW_ANSWERS.filter((item) => item.hard)) {
      const words = (text: string) => nfc(text).match(/[\p{L}\p{M}\p{N}]+/gu) ?? []
      expect(words(cleanAltText(entry.raw, entry.language))).toEqual(words(entry.raw))
    }
  })

  test('the same wrappers around each expected description in another language are stripped too (English phrases apply everywhere)', () => {
    for (const entry of RAW_ANSWERS.filter((item) => !item.hard)) {
      const wrapped = `Sure! Here is the alt text for the image:\n\n"${entry.expected}"\n\nI hope this helps!`
      expect(cleanAltText(wrapped, entry.language)).toBe(nfc(entry.expected))
    }
  })
})

describe('cleanAltText: wrappers outside the corpus languages', () => {
  test('a language without its own phrases is cleaned with the English ones', () => {
    expect(cleanAltText('Sure! Here is the alt text:\n\nΈνας σκύλος στην παραλία.\n\nI hope this helps!', 'el')).toBe('Ένας σκύλος στην παραλία.')
  })

  test('Norwegian written as "no" or "nn" uses the Bokmål phrases', () => {
    expect(cleanAltText('Her er alt-teksten: Et rødt hus ved sjøen. Jeg håper dette hjelper!', 'no')).toBe('Et rødt hus ved sjøen.')
  })

  test('a reply that is only a wrapper keeps its words rather than come back empty', () => {
    expect(cleanAltText('Sure!', 'en')).toBe('Sure!')
    expect(cleanAltText('I hope this helps!', 'en')).toBe('I hope this helps!')
  })

  test('template tokens with nothing else leave nothing', () => {
    expect(cleanAltText('<|im_start|>assistant\n<|im_end|>', 'en')).toBe('')
    expect(cleanAltText('</s>', 'en')).toBe('')
  })
})
