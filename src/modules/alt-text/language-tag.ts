// BCP 47 language tags (RFC 5646) as requests give them: parsed by Intl.Locale, which also gives the
// canonical form (case, aliases such as iw → he), and each subtag looked up in the IANA language subtag
// registry (the `language-tags` package and its registry data), so a tag the model could not know is a 400.
import tags from 'language-tags'

/** RFC 5646 §4.4.1: a tag of up to 35 characters covers every language, script, region and variant. */
export const MAX_LANGUAGE_TAG_CHARS = 35

export const TAG_EXAMPLES = 'such as en, de, pt-BR, en-GB, zh-Hant or sr-Latn'

/** Registry languages that name no language to write in (undetermined, multiple, no linguistic content, uncoded). */
const NO_LANGUAGE = new Set(['und', 'mul', 'zxx', 'mis'])

/** The registry check's codes for advice (Tag.ERR_DEPRECATED, ERR_SUPPRESS_SCRIPT, ERR_SUBTAG_DEPRECATED of `language-tags`). */
const ADVICE = new Set([1, 10, 11])

export type TagCheck = { tag: string } | { problem: string }

/**
 * The tag in its canonical form (`pt-br` → `pt-BR`, `zh-hant` → `zh-Hant`), or what is wrong with it,
 * said so a caller can fix it. Private-use (`-x-…`) and extension (`-u-…`, `-t-…`) subtags are refused:
 * they tell the model nothing, and every spelling of them would be a cache entry of its own.
 */
export function checkLanguageTag(given: string): TagCheck {
  const value = given.trim()
  if (value === '') return { problem: `must be a BCP 47 language tag ${TAG_EXAMPLES}` }
  if (value.length > MAX_LANGUAGE_TAG_CHARS) return { problem: `must be at most ${MAX_LANGUAGE_TAG_CHARS} characters` }
  if (value.includes('_')) {
    const hyphenated = value.replaceAll('_', '-')
    const fixed = checkLanguageTag(hyphenated)
    return { problem: `BCP 47 separates subtags with "-", not "_": use ${'tag' in fixed ? fixed.tag : hyphenated}` }
  }
  const subtags = value.split('-')
  if (subtags.some((subtag) => !/^[a-z0-9]{1,8}$/i.test(subtag))) {
    return { problem: `is not a BCP 47 language tag (subtags of 1 to 8 letters or digits, separated by "-"), ${TAG_EXAMPLES}` }
  }
  const singleton = subtags.findIndex((subtag) => subtag.length === 1)
  if (singleton === 0) return { problem: `must start with a language subtag, ${TAG_EXAMPLES}` }
  if (singleton > 0) {
    const kept = subtags.slice(0, singleton).join('-')
    const what = subtags[singleton]!.toLowerCase() === 'x' ? 'private-use subtags (-x-…)' : `extension subtags (-${subtags[singleton]}-…)`
    return { problem: `${what} are not accepted: they mean nothing to the model; send ${kept}` }
  }
  let locale: Intl.Locale
  try {
    locale = new Intl.Locale(value)
  } catch {
    return { problem: `is not a well-formed BCP 47 language tag, ${TAG_EXAMPLES}` }
  }
  const language = locale.language
  const registered = tags.language(language)
  if (registered === null) return { problem: `unknown language "${language}": not in the IANA language subtag registry` }
  if (NO_LANGUAGE.has(language)) return { problem: `"${language}" (${registered.descriptions()[0]}) names no language to write in` }
  if (locale.script && tags.type(locale.script, 'script') === null) return { problem: `unknown script "${locale.script}": not in the IANA registry` }
  if (locale.region && tags.region(locale.region) === null) return { problem: `unknown region "${locale.region}": not in the IANA registry` }
  const canonical = locale.toString()
  // A redundant script (en-Latn) and a deprecated subtag the registry still knows are advice, not errors.
  const wrong = tags(canonical)
    .errors()
    .find((error) => !ADVICE.has(error.code))
  if (wrong) return { problem: `is not a valid BCP 47 language tag: ${wrong.message}` }
  return { tag: canonical }
}

/** The canonical form of a tag that checkLanguageTag accepts; the value as given otherwise (its check reports it). */
export function canonicalTag(value: string): string {
  const checked = checkLanguageTag(value)
  return 'tag' in checked ? checked.tag : value
}

const ENGLISH_NAMES = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'none' })

/** The tag's English name as CLDR gives it ("Brazilian Portuguese", "British English", "Traditional Chinese"); null when it has none. */
export function englishName(tag: string): string | null {
  try {
    return ENGLISH_NAMES.of(tag) ?? null
  } catch {
    return null
  }
}

/** The registry's name of a language subtag ("Klingon"), for a language CLDR does not name. */
export function registryName(language: string): string | null {
  return tags.language(language)?.descriptions()[0] ?? null
}
