// BCP 47 tags as requests give them: the canonical form of a good one, a message that says how to fix a
// bad one, and the words the prompt names each in.
import { describe, expect, test } from 'bun:test'
import { checkLanguageTag } from '../../src/modules/alt-text/language-tag'
import { AltTextRequestBody } from '../../src/modules/alt-text/model'
import { languageLabel } from '../../src/modules/alt-text/prompt'
import { pageLanguage } from '../../src/cli/audit/classify'
import type { PageScan } from '../../src/cli/audit/scan'
import { SuggestionListQuery } from '../../src/modules/suggestions/model'

const CANONICAL: [string, string][] = [
  ['en', 'en'],
  ['EN', 'en'],
  ['de', 'de'],
  ['pt-br', 'pt-BR'],
  ['PT-BR', 'pt-BR'],
  ['en-gb', 'en-GB'],
  ['zh-hant', 'zh-Hant'],
  ['ZH-HANT-tw', 'zh-Hant-TW'],
  ['sr-latn', 'sr-Latn'],
  ['es-419', 'es-419'],
  ['de-CH-1901', 'de-CH-1901'],
  ['en-Latn-US', 'en-Latn-US'],
  [' nb ', 'nb'],
  // Deprecated codes become their replacements, as Intl.Locale canonicalises them.
  ['iw', 'he'],
  ['in', 'id'],
  ['tlh', 'tlh'],
]

const REFUSED: [string, string][] = [
  ['xx-YY', 'unknown language "xx": not in the IANA language subtag registry'],
  ['en_US', 'BCP 47 separates subtags with "-", not "_": use en-US'],
  ['pt_br', 'use pt-BR'],
  ['de-DE-x-private-too-long', 'private-use subtags (-x-…) are not accepted: they mean nothing to the model; send de-DE'],
  ['de-DE-x-privatetoolong', 'is not a BCP 47 language tag (subtags of 1 to 8 letters or digits, separated by "-")'],
  ['x-klingon', 'must start with a language subtag'],
  ['i-klingon', 'must start with a language subtag'],
  ['en-US-u-ca-gregory', 'extension subtags (-u-…) are not accepted: they mean nothing to the model; send en-US'],
  ['de-YY', 'unknown region "YY"'],
  ['de-Qaaa', 'unknown script "Qaaa"'],
  ['und', '"und" (Undetermined) names no language to write in'],
  ['zxx', 'names no language to write in'],
  ['english', 'unknown language "english"'],
  ['', 'must be a BCP 47 language tag'],
  ['de--DE', 'is not a BCP 47 language tag'],
  ['de DE', 'is not a BCP 47 language tag'],
  ['d'.repeat(36), 'must be at most 35 characters'],
  ['ab-cd-ef', 'is not a well-formed BCP 47 language tag'],
]

describe('checkLanguageTag', () => {
  for (const [given, canonical] of CANONICAL) {
    test(`${JSON.stringify(given)} → ${canonical}`, () => expect(checkLanguageTag(given)).toEqual({ tag: canonical }))
  }
  for (const [given, problem] of REFUSED) {
    test(`${JSON.stringify(given)} is refused: ${problem}`, () => {
      const checked = checkLanguageTag(given)
      expect('problem' in checked && checked.problem).toContain(problem)
    })
  }
})

describe('the request schema', () => {
  const parse = (fields: Record<string, unknown>) => AltTextRequestBody.safeParse({ image_url: 'https://example.com/a.png', ...fields })

  test('language and every tag of languages come out canonical; no language means none given (the default applies later)', () => {
    expect(parse({ language: 'pt-br' }).data?.language).toBe('pt-BR')
    expect(parse({ languages: ['EN', 'zh-hant'] }).data?.languages).toEqual(['en', 'zh-Hant'])
    expect(parse({}).data?.language).toBeUndefined()
  })

  test('1 to 5 languages, none twice in canonical form, not with language', () => {
    expect(parse({ languages: ['en', 'de', 'fr', 'it', 'es'] }).success).toBe(true)
    expect(parse({ languages: ['en', 'de', 'fr', 'it', 'es', 'nl'] }).success).toBe(false)
    expect(parse({ languages: [] }).success).toBe(false)
    expect(parse({ languages: ['de', 'DE'] }).error?.issues[0]).toMatchObject({ path: ['languages', 1] })
    expect(parse({ language: 'en', languages: ['de'] }).error?.issues[0]).toMatchObject({ path: ['languages'] })
  })
})

test('the suggestions filter ?language= compares in canonical case, as the tags are stored', () => {
  expect(SuggestionListQuery.parse({ language: 'pt-br' }).language).toBe('pt-BR')
  expect(SuggestionListQuery.parse({ language: 'de' }).language).toBe('de')
})

describe('languageLabel: the words the prompt names a tag in', () => {
  const LABELS: [string, string][] = [
    ['de', 'German (Deutsch)'],
    ['pt-BR', 'Brazilian Portuguese (Português)'],
    ['pt-PT', 'European Portuguese (Português)'],
    ['en-GB', 'British English'],
    ['en-US', 'American English'],
    ['zh-Hant', 'Traditional Chinese (中文)'],
    ['sr-Latn', 'Serbian (Latin)'],
    ['es-419', 'Latin American Spanish (Español)'],
    // Not in ISO 639-1: CLDR's English name.
    ['tlh', 'Klingon'],
  ]
  for (const [tag, label] of LABELS) test(`${tag}: ${label}`, () => expect(languageLabel(tag)).toBe(label))
})

describe("audit: a page's own language is passed through as a tag", () => {
  const scan = (lang: string | null) => ({ lang }) as PageScan
  test('pt-BR stays pt-BR (canonical), en_US is en-US, private use falls back to the base, nonsense to English; the flag wins', () => {
    expect(pageLanguage(undefined, scan('pt-br'))).toBe('pt-BR')
    expect(pageLanguage(undefined, scan('zh-Hant-TW'))).toBe('zh-Hant-TW')
    expect(pageLanguage(undefined, scan('en_US'))).toBe('en-US')
    expect(pageLanguage(undefined, scan('de-DE-x-intranet'))).toBe('de')
    expect(pageLanguage(undefined, scan('klingon'))).toBe('en')
    expect(pageLanguage(undefined, scan(null))).toBe('en')
    expect(pageLanguage('fr-CA', scan('de'))).toBe('fr-CA')
  })
})
