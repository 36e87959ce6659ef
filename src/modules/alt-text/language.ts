// Which language an alt text is in, judged offline with ELD (the `eld` package, its "small" n-gram
// set): of the identifiers compared on alt-text-sized sentences in every language the prompts name
// (scripts/language/compare.ts), the most accurate on short texts and the fastest. See docs/design.md.
import ISO6391 from 'iso-639-1'
import { eld } from 'eld/small'
import { baseLanguage } from './text'

/**
 * Texts shorter than this (in judged characters, see judgedText) pass unjudged: on the samples cut to
 * 20 characters ELD named the wrong language for one in ten; judged from 30 on, the rule below
 * called one correct text of 126 wrong (at 35–40 characters) and none from 45 on.
 */
export const MIN_JUDGED_CHARS = 30

/**
 * A text is in another language only when the asked language scores under this share of the best
 * score: close relatives (Danish, Norwegian, Swedish) score near each other on a short text, and a
 * slip between them is more likely the identifier's than the model's.
 */
const SCORE_MARGIN = 0.9

/** Quoted text (a sign's words, text_in_image appended as `: "…"`) is the image's language, not the answer's. */
const QUOTED = /"[^"]*"|“[^”]*”|„[^“”]*[“”]|«[^»]*»|「[^」]*」|『[^』]*』/gu

/** Han, kana and Hangul carry about a word each: one counts as three characters (ELD named all CJK samples right at 12). */
const IDEOGRAPHIC = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/gu

/** ELD names Norwegian (Bokmål and Nynorsk alike) `no`. */
const eldCode = (language: string) => {
  const base = baseLanguage(language)
  return base === 'nb' || base === 'nn' ? 'no' : base
}

/** The languages ELD knows, by its codes: any other asked for is not judged. */
const KNOWN = new Set(Object.values(eld.info().Languages as Record<string, string>))

/** The text without what is quoted in it, and how long it counts for judging. */
function judgedText(text: string): { text: string; length: number } {
  const bare = text.replace(QUOTED, ' ').replace(/\s+/gu, ' ').trim()
  const ideographs = bare.match(IDEOGRAPHIC)?.length ?? 0
  return { text: bare, length: Array.from(bare).length + 2 * ideographs }
}

/**
 * Whether `text` is clearly not in `language` (a BCP 47 tag: a variant such as "pt-BR" or "zh-Hant" counts
 * as its base language; spelling such as en-GB's "colour" is left to the model). False when the text is too short to judge or ELD does not know the language.
 */
export function notInLanguage(text: string, language: string): boolean {
  const code = eldCode(language)
  if (!KNOWN.has(code)) return false
  const judged = judgedText(text)
  if (judged.length < MIN_JUDGED_CHARS) return false
  const scores = eld.detect(judged.text).getScores() as Record<string, number>
  const best = Math.max(0, ...Object.values(scores))
  return best > 0 && (scores[code] ?? 0) < SCORE_MARGIN * best
}

/** The WCAG issue of an alt text that is still not in the language asked for: "is not in German (de)". */
export function wrongLanguageIssue(language: string): string {
  const base = baseLanguage(language)
  const name = ISO6391.getName(base)
  return name ? `is not in ${name} (${base})` : `is not in the language asked for (${base})`
}

/** What came of asking for a translation, as /metrics counts it. */
export const LANGUAGE_RETRY_OUTCOMES = ['translated', 'still_wrong'] as const
export type LanguageRetryOutcome = (typeof LANGUAGE_RETRY_OUTCOMES)[number]
