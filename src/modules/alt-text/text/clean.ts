// Cleaning: the model's raw answer becomes one line of plain alt text. Wrappers are what chat-tuned
// models put around the description (greetings, "Here is the alt text:", "Alt text:", "As an AI…",
// "I hope this helps!", "(98 characters)", one-item lists); they are stripped per language from the
// phrase table in wrappers.ts, and each cut keeps the description (a sentence goes only when
// something is left after it, a closing only when something precedes it).
import { continuesList, joinContinuations } from './continuation'
import { baseLanguage, characterCount, rulesLanguage } from './count'
import { stripRedundantOpening } from './openings'
import { hasContent, toPlainText } from './plain'
import { stripReasoning, stripTemplateTokens } from './reasoning'
import { keepAskedLanguage, pickLabelledValue, stripTranslationNote, unwrapAltAttribute, unwrapJson } from './structure'
import { ensureSentenceEnd, TERMINAL_MARKS } from './sentence'
import { type WrapperRules, wrapperRulesFor } from './wrappers'

/** Emoji and pictographs with their modifiers, variation selectors, tags and ZWJ joins. */
const PICTOGRAPH_SEQUENCE =
  /(?:\p{Extended_Pictographic}|\p{Regional_Indicator}|[\u{1F3FB}-\u{1F3FF}])(?:[\u{FE0E}\u{FE0F}\u{20E3}\u{1F3FB}-\u{1F3FF}\u{E0020}-\u{E007F}]|\u{200D}(?:\p{Extended_Pictographic}|\p{Regional_Indicator})?)*/gu
/** "1️⃣" reads as "1": keep the digit, drop the keycap. */
const KEYCAP = /([#*0-9])\u{FE0F}?\u{20E3}/gu
const STRAY_EMOJI_PARTS = /[\u{FE0E}\u{FE0F}\u{20E3}\u{E0020}-\u{E007F}]/gu

function stripEmoji(text: string): string {
  return text.replace(KEYCAP, '$1').replace(PICTOGRAPH_SEQUENCE, ' ').replace(STRAY_EMOJI_PARTS, '')
}

/** Bold, italics, strike-through, links and code spans on one line or across lines: their text stays. */
function stripInlineMarkdown(text: string): string {
  return text
    .replace(/!?\[([^\]]*)\]\((?:[^()\s]|\([^()]*\))*(?:\s+"[^"]*")?\)/g, '$1') // [x](y) → x
    .replace(/(\*\*|__)(?=\S)([\s\S]*?\S)\1/g, '$2')
    .replace(/(?<![\p{L}\p{N}])([*_])(?=\S)([^*_]*?\S)\1(?![\p{L}\p{N}])/gu, '$2')
    .replace(/~~(?=\S)([\s\S]*?\S)~~/g, '$1')
    .replace(/[*`]+/g, '')
}

type AnswerLine = { text: string; bullet: boolean; numbered: boolean }

const BULLET = /^\s*[-*+•‣◦▪]\s+/u
const NUMBER = /^\s*\d{1,2}[.)]\s+/u
/** "---", "***", "===": a rule or underline, nothing to read. */
const RULE_LINE = /^\s*[-*_=~]{3,}\s*$/u

/** The answer's lines without code fences, rules, headings, quote and bullet markers; numbers are only flagged here. */
function answerLines(text: string): AnswerLine[] {
  const lines: AnswerLine[] = []
  for (const raw of text.split(/\r\n|\r|\n/)) {
    if (/^\s*(?:```|~~~)/.test(raw) || RULE_LINE.test(raw) || !raw.trim()) continue
    const line = raw.replace(/^\s{0,3}#{1,6}\s+/, '').replace(/^\s*>\s?/, '')
    const bullet = BULLET.test(line)
    lines.push({ text: bullet ? line.replace(BULLET, '') : line, bullet, numbered: !bullet && NUMBER.test(line) })
  }
  return lines
}

/** A line as it reads, for matching wrapper phrases: no markdown or emoji, one line of single spaces. */
function readable(line: string): string {
  return collapseWhitespace(stripEmoji(stripInlineMarkdown(line)))
}

/** A line that only wraps the answer: a preamble ("Sure! Here are three options:"), a label or heading ("**Alt text**"). */
function isWrapperLine(line: string, rules: WrapperRules): boolean {
  const text = readable(line)
  return rules.labelLine.test(text) || !hasContent(stripLeadingWrappers(text, rules, true))
}

/**
 * Drops whole lines that wrap the answer: preamble and label lines before it, closing lines after it
 * ("I hope this helps!", "**Explanation:** …" and all that follows). A list announced as alternatives
 * ("Here are three options:") keeps only its first item. Numbers ("1. ") are list markers only in a
 * list or after a preamble, so a lone "1. FC Köln fans" keeps its number.
 */
function unwrapLines(text: string, rules: WrapperRules, language: string): string {
  let lines = answerLines(text)
  let preamble = false
  let alternatives = false
  while (lines.length > 1 && isWrapperLine(lines[0]?.text ?? '', rules)) {
    alternatives ||= rules.alternatives.test(readable(lines[0]?.text ?? ''))
    preamble = true
    lines = lines.slice(1)
  }
  const closing = lines.findIndex((line, index) => index > 0 && rules.closing.test(readable(line.text)))
  if (closing > 0) lines = lines.slice(0, closing)
  const items = lines.filter((line) => line.bullet || line.numbered)
  // Several numbered or bulleted lines and nothing else: alternatives, announced or not, unless each
  // item after the first refers back to the one before ("… beside it"): then they are one alt text.
  if ((alternatives || items.length === lines.length) && items.length > 1 && items[0]) {
    const texts = items.map((item) => readable(item.text.replace(NUMBER, '')))
    if (!alternatives && continuesList(texts, language)) return joinContinuations(texts, language)
    return withoutItemLabel(items[0].text.replace(NUMBER, ''))
  }
  const labelled = pickLabelledValue(
    lines.map((line) => readable(line.text.replace(NUMBER, ''))),
    language,
    rules,
  )
  if (labelled !== null) return labelled
  // One line with a translation after a slash or bar: "Ein Hund am Strand. / A dog on the beach."
  // The lookbehind starts a match only where a whitespace run starts: linear, however long the run.
  const parts = lines.length === 1 ? (lines[0]?.text ?? '').split(/(?<!\s)\s+[/|]\s+/u) : lines.map((line) => line.text)
  const kept = keepAskedLanguage(parts, language)
  if (kept.length < parts.length) return kept.join('\n')
  const list = preamble || lines.length > 1
  return lines.map((line) => (list && line.numbered ? line.text.replace(NUMBER, '') : line.text)).join('\n')
}

/** An alternative without its own short label: "**Short:** A black cat." → "A black cat." */
function withoutItemLabel(item: string): string {
  const text = readable(item)
  const label = /^(?:[^\s:：]+\s+){0,3}[^\s:：]+\s?[:：]\s+/u.exec(text)
  return label && hasContent(text.slice(label[0].length)) ? text.slice(label[0].length) : item
}

/** Where the first sentence or colon lead-in ends: "Sure! ", "Here is the alt text: ", "以下是替代文本：". */
const LEAD_END = /[:：](?=\s|$|["'“„«「])|[.!?…。！？؟।]+["'”’»」)]*(?=\s|$)|[。！？：]/u
/** Where a new sentence starts (for closings): after a sentence mark, after a note in parentheses, or at a parenthesis that opens one. */
// A match starts only where its run of marks or spaces starts: one started inside a long run ("!!!!…")
// would re-read the run from each of its characters (quadratic time).
const SENTENCE_START = /(?<![.!?…。！？؟।])[.!?…。！？؟।]+["'”’»」)]*\s+|[。！？]|[)）]\s+(?=\p{Lu})|(?<!\s)\s+(?=[(（])/gu
/** A list marker left in front of the answer after its preamble: "Here is the alt text: 1. A dog". */
const LEADING_LIST_MARKER = /^(?:\d{1,2}[.)]|[-*+•‣◦▪])\s+/u

/**
 * Strips what wraps the start of the answer, repeatedly: an acknowledgement ("Sure!"), a label
 * ("Alt text:"), a preamble lead-in ("Here is the alt text for the image:") or a sentence in which the
 * model talks about itself ("As an AI, I cannot identify people."). Inside an answer, each goes only
 * when something is left after it; `wholeLine` is for judging a line that may be all wrapper.
 */
function stripLeadingWrappers(text: string, rules: WrapperRules, wholeLine: boolean): string {
  let out = text
  let stripped = false
  for (;;) {
    const next = stripLeadingWrapper(out, rules, wholeLine).trimStart()
    if (next === out) break
    out = next
    stripped = true
  }
  return stripped ? out.replace(LEADING_LIST_MARKER, '') : out
}

function stripLeadingWrapper(text: string, rules: WrapperRules, wholeLine: boolean): string {
  const acknowledgement = rules.acknowledgement.exec(text)
  if (acknowledgement && (wholeLine || hasContent(text.slice(acknowledgement[0].length)))) return text.slice(acknowledgement[0].length)
  const label = rules.label.exec(text)
  if (label) return text.slice(label[0].length)
  const quoted = proposalBeforeQuote(text, rules)
  if (quoted > 0) return text.slice(quoted)
  const end = LEAD_END.exec(text.length > 400 ? text.slice(0, 400) : text)
  const cut = end ? end.index + end[0].length : wholeLine ? text.length : -1
  if (cut <= 0) return text
  const lead = text.slice(0, cut)
  const rest = text.slice(cut)
  if (!wholeLine && !hasContent(rest)) return text
  // "Here is the alt text:", or a bare presenting lead-in of a few words before a colon: "Voici :", "Ecco a te:".
  const bareLead = /[:：]\s*$/u.test(lead) && lead.trim().split(/\s+/u).length <= 3
  // "WCAG-konformer Alt-Text:", "Texte alternatif conforme WCAG :": a label that grades itself.
  const gradedLabel = /[:：]\s*$/u.test(lead) && WCAG_CLAIM.test(lead) && rules.about.test(lead)
  const preamble = (rules.presenting.test(lead) && (rules.about.test(lead) || bareLead)) || gradedLabel || proposal(lead, rules)
  return preamble || rules.selfReference.test(lead) ? rest : text
}

/** Words at most in a lead-in that proposes: "A suitable alt text for this image could be:" has nine. */
const MAX_PROPOSAL_WORDS = 12

/** "The alt text for this image would be:", "Ein passender Alt-Text wäre:": a short colon lead-in that proposes an answer. */
function proposal(lead: string, rules: WrapperRules): boolean {
  return /[:：]\s*$/u.test(lead) && lead.trim().split(/\s+/u).length <= MAX_PROPOSAL_WORDS && rules.proposing.test(lead) && rules.about.test(lead)
}

/** Where the quoted answer starts after a lead-in that proposes it without a colon ("The alt text would be 'A taxi.'"); -1 if none. */
function proposalBeforeQuote(text: string, rules: WrapperRules): number {
  const quote = /["'“„«‘‚「『]/u.exec(text.length > 200 ? text.slice(0, 200) : text)
  if (!quote || quote.index === 0) return -1
  const lead = text.slice(0, quote.index)
  if (!/\s$/u.test(lead) || /[:：.!?。]/u.test(lead) || !hasContent(text.slice(quote.index))) return -1
  return lead.trim().split(/\s+/u).length <= MAX_PROPOSAL_WORDS && rules.proposing.test(lead) && rules.about.test(lead) ? quote.index : -1
}

/** Cuts a closing ("I hope this helps!") and all after it, then a trailing "(98 characters)". */
/** A claim that the text meets WCAG, in any language: only a note about the text says that of itself. */
const WCAG_CLAIM =
  /\bWCAG\b[^.!?。]{0,40}?(?:konform|compliant|conforme|conformidad|conformità|zgodn|準拠|符合)|(?:konform|compliant|conforme|zgodn)\p{L}*[^.!?。]{0,20}?\bWCAG\b|WCAG[^.!?。]{0,10}(?:準拠|符合)/iu

/** Every claim in a text (matchAll works on a copy, so the shared pattern keeps no state). */
const WCAG_CLAIMS = new RegExp(WCAG_CLAIM.source, `${WCAG_CLAIM.flags}g`)

/** A trailing note about the text's own compliance: "(WCAG 2.1 compliant, 47 characters)", "— WCAG-compliant". */
const WCAG_NOTE = /\s*(?:[(（[][^()（）[\]]{0,60}\bWCAG\b[^()（）[\]]{0,60}[)）\]]|\s[-–—]\s*WCAG[\w\s.-]{0,30})\s*[.。]?\s*$/iu
/**
 * Hashtags at the end: social-media tagging, not description. Two or more ("#sunset #beach"), or one
 * after the sentence has ended ("A beach. #summer"); a lone one ("a sign reading #LoveWins") may be the
 * text the image shows.
 */
const TRAILING_HASHTAGS = /(?:(?:\s*#\p{L}[\p{L}\p{M}\p{N}_]*){2,}|(?<=[.!?。！？]\s*)#\p{L}[\p{L}\p{M}\p{N}_]*)\s*[.。]?\s*$/u

/** Trailing hashtags are looked for in this many last characters: far more than a few tags take. */
const MAX_HASHTAG_TAIL = 400

/** Sentences as written, with the marks and spaces after them; for dropping one said twice. */
const SENTENCE_PIECE = /[^.!?…。！？]+(?:[.!?…。！？]+["'”’»」)]*|$)\s*/gu

/** The text without a sentence that repeats an earlier one word for word (models that loop). */
function withoutRepeatedSentences(text: string): string {
  const seen = new Set<string>()
  let out = ''
  for (const piece of text.match(SENTENCE_PIECE) ?? [text]) {
    const key = piece
      .toLocaleLowerCase()
      .replace(/[^\p{L}\p{N}]+/gu, ' ')
      .trim()
    if (key !== '' && key.includes(' ') === false && characterCount(key) < 4) {
      out += piece
      continue
    }
    if (key !== '' && seen.has(key)) continue
    seen.add(key)
    out += piece
  }
  return out.trim()
}

function stripTrailingWrappers(text: string, rules: WrapperRules): string {
  let out = text
  // Where the last claim of compliance starts: a sentence start before it has one in its rest. Found
  // once, not searched for again in the rest of every sentence (which took quadratic time).
  const claims = [...out.matchAll(WCAG_CLAIMS)]
  const lastClaim = claims.length > 0 ? (claims.at(-1)?.index ?? -1) : -1
  for (const match of out.matchAll(SENTENCE_START)) {
    const start = match.index + match[0].length
    if ((rules.closing.test(out.slice(start)) || start <= lastClaim) && hasContent(out.slice(0, start))) {
      out = out.slice(0, start)
      break
    }
  }
  const count = rules.characterCount.exec(out)
  if (count && hasContent(out.slice(0, count.index))) out = out.slice(0, count.index)
  const note = WCAG_NOTE.exec(out)
  if (note && hasContent(out.slice(0, note.index))) out = out.slice(0, note.index)
  return out.trimEnd()
}

const QUOTE_PAIRS: ReadonlyArray<readonly [string, string]> = [
  ['"', '"'],
  ["'", "'"],
  ['“', '”'],
  ['„', '“'],
  ['„', '”'],
  ['«', '»'],
  ['»', '«'],
  ['‘', '’'],
  ['‚', '‘'],
  ['‚', '’'],
  ['”', '”'],
  ['‹', '›'],
  ['›', '‹'],
  ['「', '」'],
  ['『', '』'],
  ['`', '`'],
]

/** Removes quotes around the whole text, keeping a mark that sat outside them (`"A dog".`). */
function unwrapQuotes(text: string): string {
  for (const [open, close] of QUOTE_PAIRS) {
    if (!text.startsWith(open)) continue
    const tail = new RegExp(`${escapeRegExp(close)}([${TERMINAL_MARKS}]?)$`, 'u').exec(text)
    if (!tail || tail.index < open.length) continue
    const inner = text.slice(open.length, tail.index)
    // Apostrophes inside words ("dog's") are not quotes.
    const quotesInside = inner.replace(/(?<=\p{L})['’](?=\p{L})/gu, '')
    if (quotesInside.includes(open) || quotesInside.includes(close)) continue
    return (inner.trim() + (tail[1] ?? '')).trim()
  }
  return text
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/** One line: whitespace runs become one space (a lone no-break space, as French uses, stays). */
function collapseWhitespace(text: string): string {
  return text.replace(/\s+/gu, (run) => (run === '\u00A0' || run === '\u202F' ? run : ' ')).trim()
}

function tidySpacing(text: string, language: string): string {
  const lang = baseLanguage(language)
  let out = text.replace(/\s+([,.…])/gu, '$1')
  // French puts a (narrow) space before ; : ! ?; everyone else does not.
  if (lang !== 'fr') out = out.replace(/\s+([;:!?])/gu, '$1')
  // Leftovers of a stripped label or bullet; a leading "-5 °C" keeps its minus.
  return out.replace(/^(?:[\s,;:·|]|[.\-–—](?=\s))+/u, '').trim()
}

/** Uppercases the first letter, locale-aware. Leaves alone what must not change (see comments). */
function capitaliseFirstLetter(text: string, language: string): string {
  const lang = baseLanguage(language)
  if (lang === 'ka') return text // Georgian has no sentence case; its "capitals" are an all-caps style
  const first = /[\p{L}\p{N}]/u.exec(text)
  if (!first || !/\p{Ll}/u.test(first[0])) return text
  const start = first.index
  const word = /^[\p{L}\p{M}]+/u.exec(text.slice(start))?.[0] ?? ''
  // "iPhone", "eBay", "macOS": a capital inside the first word means the case is deliberate.
  if (/\p{Lu}/u.test(word.slice(1))) return text
  if (lang === 'nl' && /^ij/u.test(word)) return `${text.slice(0, start)}IJ${text.slice(start + 2)}`
  const char = String.fromCodePoint(text.codePointAt(start) ?? 0)
  let upper: string
  try {
    upper = char.toLocaleUpperCase(lang || undefined)
  } catch {
    upper = char.toUpperCase()
  }
  // "ß" would become "SS": only a one-to-one mapping capitalises a single letter.
  if (characterCount(upper) !== 1) return text
  return text.slice(0, start) + upper + text.slice(start + char.length)
}

/**
 * Cleans a model answer into one line of plain alt text: no reasoning, template tokens, markup,
 * control or invisible characters, wrapping quotes, markdown, emoji; none of what chat models wrap
 * around the answer (see wrappers.ts: acknowledgements, preambles, labels, talk about themselves,
 * closings, character counts, lists of alternatives) and no redundant opening; first letter
 * capitalised; ends with the language's sentence mark. Returns "" when nothing but those stripped
 * parts was there.
 */
export function cleanAltText(raw: string, language: string): string {
  const rules = wrapperRulesFor(rulesLanguage(language))
  const answer = unwrapAltAttribute(unwrapJson(stripTemplateTokens(stripReasoning(raw)), rules))
  const lines = unwrapLines(toPlainText(answer), rules, language)
  let text = collapseWhitespace(stripEmoji(stripInlineMarkdown(lines)))
  // Looked for in the tail only: tried from every position of a long text, the pattern takes quadratic time.
  const tailStart = Math.max(0, text.length - MAX_HASHTAG_TAIL)
  const hashtags = TRAILING_HASHTAGS.exec(text.slice(tailStart))
  if (hashtags && hasContent(text.slice(0, tailStart + hashtags.index))) text = text.slice(0, tailStart + hashtags.index)
  for (let round = 0; round < 16; round++) {
    const before = text
    text = stripLeadingWrappers(text, rules, false)
    text = stripTrailingWrappers(text, rules)
    text = stripTranslationNote(text, language)
    text = unwrapQuotes(text)
    text = stripRedundantOpening(text, language)
    text = tidySpacing(text, language)
    if (text === before) break
  }
  text = withoutRepeatedSentences(text)
  if (!hasContent(text)) return ''
  return ensureSentenceEnd(capitaliseFirstLetter(text, language), language)
}
