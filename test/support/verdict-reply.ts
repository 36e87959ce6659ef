// How the fake model servers answer POST /api/alt-text/review: a verdict as the structured fields its
// schema asks for (the fakes fit them to the schema sent), or as the plain three labelled lines a
// model without structured outputs writes. `judgeLike` decides by the alt text under review, as a model would.
import type { ReplyContext } from './fake-ollama'
import type { StructuredReply } from './structured-reply'

export type VerdictFields = { verdict: string; reasons: string; suggested_alt_text: string }

export const verdictFields = (verdict: string, reasons = 'a reason', suggested = ''): VerdictFields => ({ verdict, reasons, suggested_alt_text: suggested })

/** The plain-text form of a verdict: three labelled lines. */
export const plainVerdict = (fields: VerdictFields) => `VERDICT: ${fields.verdict}\nREASONS: ${fields.reasons}\nSUGGESTED: ${fields.suggested_alt_text}`

/** The alt text the review prompt asks about (the JSON string between its tags), or null. */
export function judgedAltText(context: Pick<ReplyContext, 'prompt'>): string | null {
  const match = /<alt_text_to_judge>(.*)<\/alt_text_to_judge>/u.exec(context.prompt)
  return match ? (JSON.parse(match[1] ?? '""') as string) : null
}

/** A judge: "boat" and other one-word alt texts need a fix, comma lists are keyword stuffing, the rest is ok. */
export function judgeLike(altText: string | null): VerdictFields {
  if (altText === null) return verdictFields('ok')
  if (altText.split(',').length >= 4) return verdictFields('keyword_stuffed', 'a list of search terms', 'Sailing boats in a small harbour.')
  if (!altText.includes(' ')) return verdictFields('needs_fix', 'too vague for this image', 'Sailing boats moored in a small harbour at sunset.')
  return verdictFields('ok', 'accurate and brief')
}

export const structuredJudge = (context: ReplyContext): StructuredReply => judgeLike(judgedAltText(context))
