// Sentence ends per language: which mark closes a sentence, and whether a text already ends with one.
import { SENTENCE_END } from './words'
import { baseLanguage } from './count'
/** The mark that ends a sentence in `language`: '.' unless words.ts says otherwise. */
export function sentenceEndFor(language: string): string {
  return SENTENCE_END[baseLanguage(language)] ?? '.'
}

/** Marks that end a sentence in any language we write (incl. full-width and Indic, Ethiopic, … marks). */
export const TERMINAL_MARKS = '.!?…。！？．｡؟۔।॥։።။។‼⁇⁈⁉'
/** Closing quotes and brackets that may follow the mark: `A sign reading "Stop."`. */
export const CLOSERS = `"'”’»›)\\]}」』）】〕`
const TERMINAL_AT_END = new RegExp(`[${TERMINAL_MARKS}][${CLOSERS}]*$`, 'u')
/** NFC turns the Greek question mark (U+037E) into ';', so for Greek ';' ends a question. */
const GREEK_TERMINAL_AT_END = new RegExp(`[${TERMINAL_MARKS};][${CLOSERS}]*$`, 'u')

export function endsWithTerminalPunctuation(text: string, language: string): boolean {
  const lang = baseLanguage(language)
  if (sentenceEndFor(lang) === '') return true // nothing to require for scripts without a full stop
  return (lang === 'el' ? GREEK_TERMINAL_AT_END : TERMINAL_AT_END).test(text.trimEnd())
}

/** Text with its trailing sentence mark (and closers after it) removed: for checks on the last word. */
export function withoutTrailingPunctuation(text: string): string {
  return text.trim().replace(new RegExp(`[${TERMINAL_MARKS}${CLOSERS}\\s]+$`, 'u'), '')
}

export const TRAILING_SEPARATORS = /[\s,;:、，；：\-–—/&+·]+$/u

/** The text ending with the language's sentence mark (trailing commas or dashes dropped first). */
export function ensureSentenceEnd(text: string, language: string): string {
  const mark = sentenceEndFor(language)
  if (mark === '') return text.replace(TRAILING_SEPARATORS, '')
  if (endsWithTerminalPunctuation(text, language)) return text
  const stripped = text.replace(TRAILING_SEPARATORS, '')
  return stripped ? stripped + mark : text
}
