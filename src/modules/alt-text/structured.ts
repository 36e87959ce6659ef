// Structured answers: where the model server can constrain its output to a JSON schema (Ollama `format`,
// OpenAI-compatible `response_format` json_schema), one call returns the alt text, the decorative
// judgement and the text the image shows. The schema is defined here once; the providers pass it on.
//
// The fields are generated in schema order: the judgement first (a decorative image then needs no
// alt text), the alt text next, and the transcription last, so that an answer cut off by the token
// limit has lost the least useful field and its alt text can still be read.
import { z } from 'zod'
import type { AnswerSchema } from '../../model-provider/provider'
import { characterCount, endsWithTerminalPunctuation, sentenceEndFor, toPlainText, withoutTrailingPunctuation } from './text'
import { includesText } from './wcag'

export const StructuredAnswer = z
  .object({
    decorative: z.boolean(),
    decorative_reason: z.string().nullable(),
    alt_text: z.string(),
    text_in_image: z.string().nullable(),
  })
  .strict()

/**
 * With `long_description: true`: the same fields and the long description last, as the longest and the
 * one an answer cut off by the token limit can best do without.
 */
const StructuredLongAnswer = StructuredAnswer.extend({ long_description: z.string().nullable() }).strict()

/** A server that does not enforce the schema may leave the long description out: the rest still counts. */
const ReadLongAnswer = StructuredAnswer.extend({ long_description: z.string().nullish() }).strict()

export type StructuredAnswer = z.output<typeof StructuredAnswer> & { long_description?: string | null }

/** The schema sent to the model server: strict (every field required, no others), as OpenAI's strict mode demands. */
const answerSchema = (answer: z.ZodType, name: string): AnswerSchema => {
  const { $schema: _dialect, ...schema } = z.toJSONSchema(answer) as Record<string, unknown>
  return { name, schema }
}
export const ANSWER_SCHEMA: AnswerSchema = answerSchema(StructuredAnswer, 'alt_text_answer')
export const LONG_ANSWER_SCHEMA: AnswerSchema = answerSchema(StructuredLongAnswer, 'alt_text_long_answer')

/** Longest text_in_image kept: a poster's worth; more is a page of text, which alt text cannot carry anyway. */
export const MAX_TEXT_IN_IMAGE_CHARS = 300

/**
 * The schema's answer, read from what the model sent: the JSON object itself, or one found inside
 * other text (a fence, a preamble, reasoning before it) when the server did not enforce the schema.
 */
export function parseStructuredAnswer(content: string, withLong = false): StructuredAnswer | null {
  const value = embeddedJson(content)
  if (value === undefined) return null
  const parsed = (withLong ? ReadLongAnswer : StructuredAnswer).safeParse(value)
  return parsed.success ? parsed.data : null
}

/**
 * The first `{`…last `}` span of the text that parses as JSON (the whole text when it is the object), or
 * undefined when none does. The alt-text and review answers both read their structured form through it.
 */
export function embeddedJson(content: string): unknown {
  const end = content.lastIndexOf('}')
  for (let start = content.indexOf('{'); start !== -1 && start < end; start = content.indexOf('{', start + 1)) {
    try {
      return JSON.parse(content.slice(start, end + 1))
    } catch {}
  }
  return undefined
}

/** A complete `"alt_text": "…"` member, even in JSON that is broken elsewhere (cut off, a field missing). */
const ALT_TEXT_MEMBER = /(?:^|[{,])\s*"alt_text"\s*:\s*("(?:[^"\\\u0000-\u001f]|\\.)*")/u

/** The alt text of an answer that is not the schema's JSON, when it is clearly there; else null. */
export function salvageAltText(content: string): string | null {
  const member = ALT_TEXT_MEMBER.exec(content)
  if (!member) return null
  try {
    const text = JSON.parse(member[1] ?? '') as unknown
    return typeof text === 'string' && text.trim() !== '' ? text : null
  } catch {
    return null
  }
}

/** Words small models write instead of null. */
const NO_TEXT = /^(?:none|null|n\/a|no text|no visible text|-|—)?$/iu

/** What the model says the image shows in writing, as plain bounded text; null when it shows none. */
export function normaliseTextInImage(value: string | null): string | null {
  if (value === null) return null
  let text = toPlainText(value).replace(/\s+/gu, ' ').trim()
  // One layer of quotes around the whole: "\"SALE 50%\"".
  const quoted = /^["'“”„«»‘’「『](.*)["'“”«»‘’」』]$/u.exec(text)
  if (quoted) text = (quoted[1] ?? '').trim()
  if (NO_TEXT.test(text) || !/[\p{L}\p{N}]/u.test(text)) return null
  if (characterCount(text) <= MAX_TEXT_IN_IMAGE_CHARS) return text
  const cut = Array.from(text).slice(0, MAX_TEXT_IN_IMAGE_CHARS).join('')
  const lastSpace = cut.lastIndexOf(' ')
  return (lastSpace > MAX_TEXT_IN_IMAGE_CHARS / 2 ? cut.slice(0, lastSpace) : cut).trim()
}

/**
 * The alt text with the text the image shows kept in it (WCAG 1.1.1 for images of text): when the alt
 * text lacks it, it is appended as `: "TEXT"` in place of the sentence mark, which then follows — a colon
 * and straight quotes read as a quotation in every language we write — if that fits within
 * `maxLength`. When it does not fit, the alt text stays as it was and the WCAG check flags it.
 */
export function keepTextInImage(altText: string, textInImage: string | null, maxLength: number, language: string): string {
  if (textInImage === null || includesText(altText, textInImage)) return altText
  // The sentence mark gives way to the colon; a closing quote or bracket stays, and the text follows it.
  const base = withoutTrailingPunctuation(altText)
  const closed = /[\p{Pe}\p{Pf}"']/u.test(altText.trim().slice(base.length))
  const quoted = closed ? `${altText.trim()} "${textInImage}"` : `${base}: "${textInImage}"`
  const text = endsWithTerminalPunctuation(quoted, language) ? quoted : `${quoted}${sentenceEndFor(language)}`
  return characterCount(text) <= maxLength ? text : altText
}
