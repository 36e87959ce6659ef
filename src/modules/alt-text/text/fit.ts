// Fitting into max_length: the longest prefix that ends at a sentence or word boundary and reads as
// finished (no dangling article, preposition or conjunction), closed with the sentence mark.
import { baseLanguage, characterCount, rulesLanguage } from './count'
import { CLOSERS, ensureSentenceEnd, sentenceEndFor, TERMINAL_MARKS } from './sentence'
import { ABBREVIATIONS, FUNCTION_WORDS, NO_SPACE_LANGUAGES, wordSet } from './words'

type WordClasses = {
  dangling: ReadonlySet<string>
  startsPhrase: ReadonlySet<string>
  startsClause: ReadonlySet<string>
  coordinators: ReadonlySet<string>
  determiners: ReadonlySet<string>
}

const WORD_CLASSES: ReadonlyMap<string, WordClasses> = new Map(
  Object.entries(FUNCTION_WORDS).map(([language, words]) => [
    language,
    {
      dangling: wordSet(Object.values(words).join(' ')),
      startsPhrase: wordSet(words.prepositions),
      startsClause: wordSet(words.subordinators),
      coordinators: wordSet(words.coordinators),
      determiners: wordSet(`${words.articles} ${words.prepositions}`),
    },
  ]),
)
const NO_SPACE: ReadonlySet<string> = wordSet(NO_SPACE_LANGUAGES)
const ABBREVIATION: ReadonlySet<string> = wordSet(ABBREVIATIONS)

function danglingWordsFor(language: string): ReadonlySet<string> {
  return WORD_CLASSES.get(rulesLanguage(language))?.dangling ?? new Set()
}

/** A word as the lists hold it: lower case, without the punctuation around it. */
const bare = (token: string) => token.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}'’]+$/gu, '').toLocaleLowerCase()

/**
 * Where a cut leaves whole phrases, as prefix ends (UTF-16 indices), longest first: after clause
 * punctuation (, ; : – —) and before a subordinator ("while", "während", "mientras") — clause breaks —
 * and, inside the first clause only, before a preposition or before a coordinator that opens a new
 * noun phrase ("and a …"). A phrase break after a clause break would leave a broken trailing clause.
 */
function phraseBreaks(text: string, language: string): number[] {
  const classes = WORD_CLASSES.get(rulesLanguage(language))
  const tokens = [...text.matchAll(/\S+/gu)].map((m) => ({ start: m.index, end: m.index + m[0].length, raw: m[0], word: bare(m[0]) }))
  const breaks: number[] = []
  let inFirstClause = true
  for (let i = 1; i < tokens.length; i++) {
    const previous = tokens[i - 1]
    const token = tokens[i]
    if (!previous || !token) continue
    const clause = /[,;:，；：]$/u.test(previous.raw) || /^[–—]$/u.test(token.raw) || (classes?.startsClause.has(token.word) ?? false)
    const phrase =
      (classes?.startsPhrase.has(token.word) ?? false) ||
      ((classes?.coordinators.has(token.word) ?? false) && (classes?.determiners.has(tokens[i + 1]?.word ?? '') ?? false))
    if (clause || (phrase && inFirstClause)) breaks.push(previous.end)
    if (clause) inFirstClause = false
  }
  return breaks.reverse()
}

/** The language to cut by when the caller did not say: only the script matters here. */
function inferLanguage(text: string): string {
  if (/[\p{Script=Hiragana}\p{Script=Katakana}]/u.test(text)) return 'ja'
  const scripts: Array<[RegExp, string]> = [
    [/\p{Script=Han}/gu, 'zh'],
    [/\p{Script=Thai}/gu, 'th'],
    [/\p{Script=Lao}/gu, 'lo'],
    [/\p{Script=Khmer}/gu, 'km'],
    [/\p{Script=Myanmar}/gu, 'my'],
    [/\p{Script=Tibetan}/gu, 'bo'],
    [/\p{Script=Devanagari}/gu, 'hi'],
    [/\p{Script=Bengali}/gu, 'bn'],
    [/\p{Script=Armenian}/gu, 'hy'],
    [/\p{Script=Ethiopic}/gu, 'am'],
  ]
  const letters = (text.match(/\p{L}/gu) ?? []).length
  for (const [pattern, language] of scripts) {
    if ((text.match(pattern) ?? []).length * 2 > letters) return language
  }
  return 'en'
}

/** Closes quotes and brackets that a cut left open: „Willkommen → „Willkommen“. */
function closeOpenPairs(text: string): string {
  const stack: string[] = []
  for (const char of text) {
    const top = stack[stack.length - 1]
    if (char === '“' && top === '„') stack.pop()
    else if ('„“«‹([{「『（'.includes(char)) stack.push(char)
    else if (
      (char === '”' && (top === '“' || top === '„')) ||
      (char === '»' && top === '«') ||
      (char === '›' && top === '‹') ||
      (char === ')' && top === '(') ||
      (char === ']' && top === '[') ||
      (char === '}' && top === '{') ||
      (char === '」' && top === '「') ||
      (char === '』' && top === '『') ||
      (char === '）' && top === '（')
    )
      stack.pop()
  }
  const closers: Record<string, string> = { '„': '“', '“': '”', '«': '»', '‹': '›', '(': ')', '[': ']', '{': '}', '「': '」', '『': '』', '（': '）' }
  let out = text
  for (let i = stack.length - 1; i >= 0; i--) {
    const open = stack[i] ?? ''
    out += open === '«' && /«\s/u.test(text) ? ' »' : (closers[open] ?? '')
  }
  if ((out.match(/"/g) ?? []).length % 2 === 1) out += '"'
  return out
}

const TRAILING_SEPARATOR = /[\s,;:、，；：\-–—/&+·„“"«‹‚‘([{「『（]/u
const WORD_CHARACTER = /[\p{L}\p{M}'’]/u

/** The code point that ends at `end` (UTF-16 index) and where it starts. */
function codePointBefore(text: string, end: number): { char: string; start: number } {
  const low = text.charCodeAt(end - 1)
  const high = text.charCodeAt(end - 2)
  const pair = low >= 0xdc00 && low <= 0xdfff && high >= 0xd800 && high <= 0xdbff
  const start = end - (pair ? 2 : 1)
  return { char: text.slice(start, end), start }
}

/**
 * Ends the prefix of `text` up to `cut` cleanly: no trailing separators or dangling words, pairs closed,
 * a sentence mark. Read backwards from the cut: a prefix of nothing but separators and dangling words
 * ("a: a: a: …") is taken apart in linear time. `memo` (one per text) remembers where each position
 * read back to, so the next, shorter candidate of the same text stops there instead of reading it again.
 */
function finishCut(text: string, cut: number, language: string, stripDangling: boolean, memo?: Map<number, number>): string {
  const dangling = stripDangling ? danglingWordsFor(language) : new Set<string>()
  let end = cut
  const visited: number[] = []
  for (;;) {
    const known = memo?.get(end)
    if (known !== undefined) {
      end = known
      break
    }
    visited.push(end)
    while (end > 0 && TRAILING_SEPARATOR.test(codePointBefore(text, end).char)) end = codePointBefore(text, end).start
    if (!stripDangling) break
    let start = end
    while (start > 0 && WORD_CHARACTER.test(codePointBefore(text, start).char)) start = codePointBefore(text, start).start
    // A whole word: at the start, or after whitespace (not "Wi-Fi"'s "Fi").
    const whole = start < end && (start === 0 || /\s/u.test(codePointBefore(text, start).char))
    if (!whole || !dangling.has(text.slice(start, end).toLocaleLowerCase())) break
    end = start
  }
  for (const position of visited) memo?.set(position, end)
  let prefix = text.slice(0, end)
  if (!/[\p{L}\p{N}]/u.test(prefix)) return ''
  prefix = closeOpenPairs(prefix)
  return ensureSentenceEnd(prefix, language)
}

/** Prefix ends (UTF-16 indices) after a sentence mark that really ends a sentence, longest first. */
function sentenceEnds(text: string, language: string): number[] {
  const lang = baseLanguage(language)
  const ends: number[] = []
  const marks = lang === 'el' ? `${TERMINAL_MARKS};` : TERMINAL_MARKS
  const pattern = new RegExp(`[${marks}]+[${CLOSERS}]*`, 'gu')
  for (const match of text.matchAll(pattern)) {
    const end = match.index + match[0].length
    const after = text.slice(end)
    const fullWidth = /[。！？｡．]/u.test(match[0])
    if (!fullWidth && after !== '' && !/^\s/u.test(after)) continue // "3.5", "example.com"
    const next = after.trimStart()
    if (/^\p{Ll}/u.test(next)) continue // "e.g. a dog": no new sentence starts
    if (/…|\.\.|⋯/u.test(match[0])) continue // a kept "…" would read as our own truncation
    if (match[0].startsWith('.') && isAbbreviation(text.slice(0, match.index))) continue
    ends.push(end)
  }
  return ends.reverse()
}

/** "Dr", "Mr", a single initial ("J") or a dotted abbreviation ("U.S", "e.g") before the period. */
function isAbbreviation(before: string): boolean {
  const token = /(\S+)$/u.exec(before)?.[1] ?? ''
  const word = token.replace(/^[^\p{L}\p{N}]+/u, '')
  if (word.includes('.')) return true
  if (/^\p{L}$/u.test(word)) return true
  return ABBREVIATION.has(word.toLowerCase())
}

function graphemes(text: string, language: string): string[] {
  try {
    return Array.from(new Intl.Segmenter(language || undefined, { granularity: 'grapheme' }).segment(text), (s) => s.segment)
  } catch {
    return Array.from(text)
  }
}

/**
 * Shortens text to at most `maxLength` characters (code points, see `characterCount`).
 *
 * 1. The longest prefix ending at a sentence boundary, with its punctuation.
 * 2. Else the longest prefix ending at a word boundary (whitespace), without trailing commas,
 *    dashes or dangling articles/conjunctions/prepositions, closed with the sentence mark.
 *    Languages written without spaces (ja, zh, th, lo, km, my, …) cut at the last clause mark
 *    (、，；：) and, failing that, at an ICU word boundary (Intl.Segmenter).
 * 3. Else — one word longer than the limit — a hard cut: `maxLength - 1` characters (on a grapheme
 *    boundary) plus the sentence mark. Cutting the word is unavoidable there.
 * Never adds an ellipsis. `language` is optional; without it the script of the text decides.
 */
export function fitToLength(text: string, maxLength: number, language?: string): string {
  if (characterCount(text) <= maxLength) return text
  if (maxLength <= 0) return ''
  const lang = baseLanguage(language ?? inferLanguage(text))
  const fits = (candidate: string) => candidate !== '' && characterCount(candidate) <= maxLength
  // No cut can end beyond maxLength + 1 characters; a little more shows what follows a boundary.
  text = Array.from(text)
    .slice(0, maxLength + 64)
    .join('')

  for (const end of sentenceEnds(text, lang)) {
    const candidate = text.slice(0, end).trimEnd()
    if (fits(candidate) && /[\p{L}\p{N}]/u.test(candidate)) return candidate
  }

  if (NO_SPACE.has(lang)) {
    const clauseMemo = new Map<number, number>()
    const clauseEnds = [...text.matchAll(/[、，,；;：:]/gu)].map((m) => m.index).reverse()
    for (const end of clauseEnds) {
      const candidate = finishCut(text, end, lang, false, clauseMemo)
      if (fits(candidate)) return candidate
    }
    let segments: string[]
    try {
      segments = Array.from(new Intl.Segmenter(lang, { granularity: 'word' }).segment(text), (s) => s.segment)
    } catch {
      segments = Array.from(text)
    }
    const wordMemo = new Map<number, number>()
    let prefixEnd = 0
    const wordEnds: number[] = []
    for (const segment of segments) {
      prefixEnd += segment.length
      wordEnds.push(prefixEnd)
    }
    for (const end of wordEnds.reverse()) {
      if (characterCount(text.slice(0, end)) >= maxLength + 1) continue
      const candidate = finishCut(text, end, lang, false, wordMemo)
      if (fits(candidate)) return candidate
    }
  } else {
    // A phrase break, unless it keeps too little; then the last word that is not a function word.
    const memo = new Map<number, number>()
    for (const end of phraseBreaks(text, lang)) {
      const candidate = finishCut(text, end, lang, true, memo)
      if (fits(candidate) && characterCount(candidate) * 4 >= maxLength) return candidate
    }
    // Before a function word the phrase before it is whole ("fly | a kite"), which a bare word break may not be ("a red").
    const dangling = danglingWordsFor(lang)
    const beforeFunctionWord = [...text.matchAll(/\s+(?=(\S+))/gu)]
      .filter((m) => dangling.has(bare(m[1] ?? '')))
      .map((m) => m.index)
      .reverse()
    for (const end of beforeFunctionWord) {
      const candidate = finishCut(text, end, lang, true, memo)
      if (fits(candidate) && characterCount(candidate) * 4 >= maxLength) return candidate
    }
    const spaces = [...text.matchAll(/\s+/gu)].map((m) => m.index).reverse()
    for (const end of spaces) {
      if (characterCount(text.slice(0, end)) > maxLength + 1) continue // cannot fit even before tidying
      const candidate = finishCut(text, end, lang, true, memo)
      if (fits(candidate)) return candidate
    }
  }

  // One word longer than the limit: cut inside it, on a grapheme boundary.
  const mark = sentenceEndFor(lang)
  const budget = maxLength - characterCount(mark)
  let cut = ''
  for (const grapheme of graphemes(text.trimStart(), lang)) {
    if (characterCount(cut + grapheme) > budget) break
    cut += grapheme
  }
  cut = cut.replace(/[\s,;:、，；：\-–—/&+·]+$/u, '')
  if (!cut) return Array.from(text.trimStart()).slice(0, maxLength).join('')
  return cut + mark
}
