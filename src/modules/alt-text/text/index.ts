// Turning a vision model's raw answer into clean alt text, and fitting it into `max_length`. One file
// per concern:
//   count.ts     code-point lengths and language codes
//   sentence.ts  sentence marks per language
//   plain.ts     markup, control and invisible characters out (also for caller text into a prompt)
//   reasoning.ts inline reasoning and chat-template tokens out
//   wrappers.ts  what chat models say around the answer, per language (phrase data)
//   openings.ts  redundant openings ("Image of …") out, grammar repaired
//   continuation.ts list items that refer back ("… beside it"): one alt text, not options
//   clean.ts     the cleaning pipeline: `cleanAltText`
//   fit.ts       shortening to `max_length` at a sentence, clause or word boundary
//   words.ts     the word lists (dangling words, abbreviations, sentence marks) as data
export { cleanAltText } from './clean'
export { baseLanguage, characterCount, rulesLanguage } from './count'
export { fitToLength } from './fit'
export { findRedundantOpening, hasRedundantOpening, REDUNDANT_OPENINGS } from './openings'
export { markupResidue, toPlainText, withoutHiddenCharacters } from './plain'
export { endsWithTerminalPunctuation, sentenceEndFor, withoutTrailingPunctuation } from './sentence'
export { WRAPPER_LANGUAGES } from './wrappers'
