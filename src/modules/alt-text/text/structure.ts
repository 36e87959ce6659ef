// Answers given as data when plain text was asked: a JSON object (in a code fence or not), YAML-ish
// `key: value` lines, labelled options ("Option 1: …", "**Short:** …"), or the alt text in two
// languages ("DE: … / EN: …", a line in each). One value is the answer: the one in the language asked
// for, else the one whose key names the alt text, else the first.
import ISO6391 from 'iso-639-1'
import { baseLanguage, rulesLanguage } from './count'
import { FUNCTION_WORDS, wordSet } from './words'
import type { WrapperRules } from './wrappers'

/** Keys that hold the alt text, normalised (lower case, `_` and `-` as spaces). */
const ALT_KEY =
  /^(?:alt(?: ?text| tag)?|alternative text|alternativ text|alternativtext|alternativer text|texte alternatif|texto alternativo|testo alternativo|tekst alternatywny|alternatieve tekst|alt tekst|alt tekst|description|caption|text|代替テキスト|替代文本|替代文字)$/u

const normaliseKey = (key: string) =>
  key
    .toLocaleLowerCase()
    .replace(/[_\-\s]+/gu, ' ')
    .trim()

/** The names a key may give a language by: its code ("DE"), its English and its own name ("German", "Deutsch"). */
function languageNames(language: string): Set<string> {
  const base = baseLanguage(language)
  const names = new Set([base])
  for (const name of [ISO6391.getName(base), ISO6391.getNativeName(base)]) {
    if (name) names.add(normaliseKey(name))
  }
  if (base === 'nb' || base === 'no' || base === 'nn') names.add('norsk').add('norwegian')
  return names
}

/** The string a parsed JSON value holds as the alt text, or null. */
function altTextOf(value: unknown, rules: WrapperRules): string | null {
  if (typeof value === 'string') return value.trim() ? value : null
  if (Array.isArray(value)) {
    for (const item of value) {
      const text = altTextOf(item, rules)
      if (text) return text
    }
    return null
  }
  if (typeof value !== 'object' || value === null) return null
  const entries = Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string' && entry[1].trim() !== '')
  const named = entries.find(([key]) => ALT_KEY.test(normaliseKey(key)) || rules.labelLine.test(normaliseKey(key)))
  if (named) return named[1]
  // Otherwise the longest string: "language": "en" and the like are short.
  const longest = entries.sort((a, b) => b[1].length - a[1].length)[0]
  if (longest) return longest[1]
  for (const nested of Object.values(value)) {
    const text = altTextOf(nested, rules)
    if (text) return text
  }
  return null
}

/** A code fence's line. Blanks within the line only: `\s*` would re-read a run of blank lines from each line start. */
const FENCE_LINE = /^[^\S\r\n\u2028\u2029]*(?:```|~~~)[\w-]*[^\S\r\n\u2028\u2029]*$/gmu

/** The alt text of an answer that is a JSON object or array (fenced or not), or the answer as it was. */
export function unwrapJson(text: string, rules: WrapperRules): string {
  const bare = text.replace(FENCE_LINE, '').trim()
  if (!/^[{[]/u.test(bare)) return text
  const close = bare.startsWith('{') ? '}' : ']'
  const end = bare.lastIndexOf(close)
  if (end < 0) return text
  try {
    return altTextOf(JSON.parse(bare.slice(0, end + 1)), rules) ?? text
  } catch {
    return text
  }
}

/** An HTML image with its alt attribute, or the attribute alone: `<img src="…" alt="A dog">`, `alt="A dog"`. */
const ALT_ATTRIBUTE = /^\s*(?:<img\b[^>]*?\s)?alt\s*=\s*(?:"([^"]*)"|'([^']*)')[^<>]*?\/?>?\s*$/iu

/** The alt text of an answer that is an `<img>` tag or an `alt="…"` attribute and nothing else; otherwise the answer. */
export function unwrapAltAttribute(text: string): string {
  const bare = text.replace(FENCE_LINE, '').trim()
  const match = ALT_ATTRIBUTE.exec(bare)
  const value = match?.[1] ?? match?.[2]
  return value?.trim() ? value : text
}

/** `key: value`, the key a few words at most: "alt_text: …", "Option 1: …", "DE: …", "日本語：…". */
const LABELLED = /^([^\s:：.!?。][^:：.!?。]{0,38}?)\s*[:：]\s*(\S[\s\S]*)$/u

/**
 * For an answer of two or more lines that are all `key: value`: the one value that is the answer (see
 * the file comment). Null when the lines are not all labelled.
 */
export function pickLabelledValue(lines: string[], language: string, rules: WrapperRules): string | null {
  if (lines.length < 2) return null
  const pairs: Array<{ key: string; value: string }> = []
  for (const line of lines) {
    const match = LABELLED.exec(line.trim())
    if (!match || (match[1] ?? '').split(/\s+/u).length > 4) return null
    pairs.push({ key: normaliseKey(match[1] ?? ''), value: match[2] ?? '' })
  }
  const names = languageNames(language)
  // "DE", "Deutsch", or a language in parentheses: "Alt text (German)".
  const namesLanguage = (key: string) => names.has(key) || names.has(/\(([^()]+)\)/u.exec(key)?.[1]?.trim() ?? '')
  const chosen = pairs.find((pair) => namesLanguage(pair.key)) ?? pairs.find((pair) => ALT_KEY.test(pair.key) || rules.labelLine.test(pair.key)) ?? pairs[0]
  return chosen?.value ?? null
}

const LATIN_LISTS: ReadonlyMap<string, ReadonlySet<string>> = new Map(
  Object.entries(FUNCTION_WORDS).map(([language, words]) => [language, wordSet(Object.values(words).join(' '))]),
)

/** Function words of each listed language found in a line. */
function functionWordCounts(text: string): Map<string, number> {
  const words = text.toLocaleLowerCase().match(/[\p{L}'’]+/gu) ?? []
  return new Map([...LATIN_LISTS].map(([language, list]) => [language, words.filter((word) => list.has(word)).length]))
}

/** The script a line is mostly written in, where that tells the language family. */
function scriptOf(text: string): string | null {
  if (/[\p{Script=Hiragana}\p{Script=Katakana}]/u.test(text)) return 'ja'
  if (/\p{Script=Hangul}/u.test(text)) return 'ko'
  const letters = (text.match(/\p{L}/gu) ?? []).length
  if ((text.match(/\p{Script=Han}/gu) ?? []).length * 2 > letters) return 'zh'
  if ((text.match(/\p{Script=Cyrillic}/gu) ?? []).length * 2 > letters) return 'cyrillic'
  if ((text.match(/\p{Script=Latin}/gu) ?? []).length * 2 > letters) return 'latin'
  return null
}

const CYRILLIC_LANGUAGES = new Set(['ru', 'uk', 'bg', 'sr', 'mk', 'be'])

/**
 * Whether a line is in the language asked for (true), clearly in another (false), or cannot tell
 * (null): by script for Japanese, Chinese, Korean and Cyrillic, by function words for the languages
 * that have lists. Only to tell two translations of one answer apart, never to judge a whole answer.
 */
function inAskedLanguage(line: string, language: string): boolean | null {
  const lang = rulesLanguage(language)
  const script = scriptOf(line)
  const expected = CYRILLIC_LANGUAGES.has(lang) ? 'cyrillic' : ['ja', 'zh', 'ko'].includes(lang) ? lang : 'latin'
  if (script === null) return null
  if (script !== expected) return lang === 'ja' && script === 'zh' ? null : false
  if (script !== 'latin' || !LATIN_LISTS.has(lang)) return true
  const counts = functionWordCounts(line)
  const own = counts.get(lang) ?? 0
  const other = Math.max(0, ...[...counts].filter(([name]) => name !== lang).map(([, count]) => count))
  if (own >= 1 && own >= other) return true
  return other >= 2 && own < other ? false : null
}

/**
 * The lines of an answer given in two languages, without those in another language than the one asked
 * for, when some line is in that language; otherwise the lines as they were.
 */
export function keepAskedLanguage(lines: string[], language: string): string[] {
  if (lines.length < 2) return lines
  const verdicts = lines.map((line) => inAskedLanguage(line, language))
  if (!verdicts.includes(true) || !verdicts.includes(false)) return lines
  return lines.filter((_line, i) => verdicts[i] !== false)
}

/** Every language name the trailing translation note may use: "(English: …)", "(In English: …)". */
const ANY_LANGUAGE_NAME = ISO6391.getAllCodes()
  .flatMap((code) => [ISO6391.getName(code), ISO6391.getNativeName(code)])
  .filter((name) => name && !/[()]/u.test(name))
  .map((name) => name.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&'))
  .join('|')
const TRANSLATION_NOTE = new RegExp(
  String.raw`\s*[(（]\s*(?:in\s+|en\s+|auf\s+|in\s+het\s+)?(${ANY_LANGUAGE_NAME}|translation|traduction|traducción|tradução|traduzione|übersetzung|vertaling)\s*[:：][^()（）]*[)）]\s*[.。]?\s*$`,
  'iu',
)

/** A trailing translation in parentheses, "(English: A dog on a beach.)", unless it is in the language asked for. */
export function stripTranslationNote(text: string, language: string): string {
  const match = TRANSLATION_NOTE.exec(text)
  if (!match || !/[\p{L}\p{N}]/u.test(text.slice(0, match.index))) return text
  if (languageNames(language).has(normaliseKey(match[1] ?? ''))) return text
  return text.slice(0, match.index)
}
