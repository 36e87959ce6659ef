// The language check, pure, on the labelled sample set the identifiers were compared on
// (scripts/language/samples.ts): no sample is called wrong in its own language, every one is called
// wrong in English and English ones in every other language, and what is too short or unknown passes.
import { describe, expect, test } from 'bun:test'
import { cut, LANGUAGE_SAMPLES, QUOTING_SAMPLES } from '../../scripts/language/samples'
import { MIN_JUDGED_CHARS, notInLanguage, wrongLanguageIssue } from '../../src/modules/alt-text/language'

const LANGUAGES = Object.keys(LANGUAGE_SAMPLES)
const samples = LANGUAGES.flatMap((language) => LANGUAGE_SAMPLES[language]!.map((text) => [language, text] as const))

describe('notInLanguage on the sample set', () => {
  test('no sample is judged out of its own language, whole or cut to 45 characters', () => {
    const alarms = samples.filter(([language, text]) => notInLanguage(text, language) || notInLanguage(cut(text, 45), language))
    expect(alarms).toEqual([])
  })

  test('every English sample is caught in a request for any other language, and every other sample in one for English', () => {
    const missed = [
      ...LANGUAGE_SAMPLES.en!.flatMap((text) => LANGUAGES.filter((l) => l !== 'en' && !notInLanguage(text, l)).map((l) => `en as ${l}: ${text}`)),
      ...samples.filter(([language, text]) => language !== 'en' && !notInLanguage(text, 'en')).map(([l, text]) => `${l} as en: ${text}`),
    ]
    expect(missed).toEqual([])
  })

  test('across all pairs, only close relatives slip through (es/pt/fr, da/nb/sv, ru/uk), under 2%', () => {
    const relatives = new Set(['es-fr', 'es-pt', 'pt-es', 'da-nb', 'da-sv', 'nb-da', 'nb-sv', 'sv-da', 'sv-nb', 'ru-uk', 'uk-ru'])
    let pairs = 0
    const missed: string[] = []
    for (const [language, text] of samples) {
      for (const other of LANGUAGES.filter((l) => l !== language)) {
        pairs++
        if (!notInLanguage(text, other)) missed.push(`${language}-${other}`)
      }
    }
    expect(missed.filter((pair) => !relatives.has(pair))).toEqual([])
    expect(missed.length / pairs).toBeLessThan(0.02)
  })

  test('text in quotation marks (what a sign says) does not count', () => {
    for (const [language, text] of QUOTING_SAMPLES) expect(notInLanguage(text, language)).toBe(false)
  })
})

describe('what passes unjudged', () => {
  test(`texts under ${MIN_JUDGED_CHARS} characters, Han, kana and Hangul counting three`, () => {
    expect(notInLanguage('A red kite on a windy beach.', 'de')).toBe(false)
    expect(notInLanguage('Two children fly a red kite on a windy beach.', 'de')).toBe(true)
    // Eleven characters of Japanese are judged: as long as a short sentence.
    expect(notInLanguage('浜辺で赤い凧を揚げる子ども。', 'de')).toBe(true)
  })

  test('a language the identifier does not know', () => {
    expect(notInLanguage('Two children fly a red kite on a windy beach at sunset.', 'sw')).toBe(false)
    expect(notInLanguage('Two children fly a red kite on a windy beach at sunset.', 'cy')).toBe(false)
  })
})

describe('language variants', () => {
  test('en-GB, pt-BR, zh-Hant, de_AT and Norwegian nb, nn, no are judged as their base language', () => {
    expect(notInLanguage(LANGUAGE_SAMPLES.en![0]!, 'en-GB')).toBe(false)
    expect(notInLanguage(LANGUAGE_SAMPLES.pt![1]!, 'pt-BR')).toBe(false)
    expect(notInLanguage(LANGUAGE_SAMPLES.zh![0]!, 'zh-Hant')).toBe(false)
    expect(notInLanguage(LANGUAGE_SAMPLES.de![1]!, 'de_AT')).toBe(false)
    for (const code of ['nb', 'nn', 'no']) expect(notInLanguage(LANGUAGE_SAMPLES.nb![1]!, code)).toBe(false)
    expect(notInLanguage(LANGUAGE_SAMPLES.en![1]!, 'pt-BR')).toBe(true)
  })
})

test('the WCAG issue names the language asked for, by name and base code', () => {
  expect(wrongLanguageIssue('de')).toBe('is not in German (de)')
  expect(wrongLanguageIssue('pt-BR')).toBe('is not in Portuguese (pt)')
})
