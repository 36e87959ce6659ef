// The answer to a request and the cache entry it is built from: a generation leaves its reply, checked
// against WCAG, in the cache; every answer (fresh, shared with an identical request, or cached) is read
// from such an entry.
import type { FetchedImage, ImageSource } from '../../intake'
import type { CachedAltText } from '../../store/contract'
import type { Reply } from './conversation'
import { showsText, unshownQuoteIssue, unshownQuotes } from './image-text'
import { wrongLanguageIssue } from './language'
import type { AltTextResult } from './model'
import type { PromptInput } from './prompt'
import { characterCount } from './text'
import { checkWcag, LEAVES_OUT_TEXT_ISSUE } from './wcag'

/** The cache entry of a reply: its text (empty for a decorative image), its WCAG check and the image's facts. */
export function cacheEntry(reply: Reply, input: PromptInput, model: string, image: FetchedImage): CachedAltText {
  // A decorative image's alt text is empty, which is what WCAG asks of it (alt="").
  let wcag =
    'text' in reply ? checkWcag(reply.text, input.maxLength, input.language, reply.reading ? null : reply.textInImage) : { compliant: true, issues: [] }
  const seen = reply.reading?.seen
  if ('text' in reply && seen) {
    // With the OCR's reading (image-text.ts): quotes must be words the image shows, and an image of text
    // needs its text in the alt text, or in the long description beside it.
    const issues = unshownQuotes(reply.text, seen, [input.context ?? '', ...input.keywords]).map(unshownQuoteIssue)
    const carried = showsText(seen.text, reply.text) || (reply.longDescription !== null && showsText(seen.text, reply.longDescription))
    if (seen.mostlyText && !carried) issues.push(LEAVES_OUT_TEXT_ISSUE)
    if (issues.length > 0) wcag = { compliant: false, issues: [...wcag.issues, ...issues] }
  }
  if ('text' in reply && reply.wrongLanguage) wcag = { compliant: false, issues: [...wcag.issues, wrongLanguageIssue(input.language)] }
  return {
    altText: 'text' in reply ? reply.text : '',
    decorativeReason: 'decorative' in reply ? reply.decorative : null,
    textInImage: reply.textInImage,
    longDescription: 'text' in reply ? reply.longDescription : null,
    wcagCompliant: wcag.compliant,
    wcagIssues: wcag.issues,
    language: input.language,
    model,
    width: image.width,
    height: image.height,
    format: image.format,
    animated: (image.frames ?? 1) > 1,
  }
}

/** What the body says of the request itself: when it started, where its image came from, what it asked for. */
export type Answering = {
  /** On the monotonic clock (performance.now()). */
  startedAt: number
  source: ImageSource
  /** The request asked for long_description: its answer carries the field, null or not. */
  longDescription: boolean
}

/**
 * The body of a `languages` request: the first language returned as the whole body (so a client that
 * reads only alt_text and language still works), and every language returned in alt_texts.
 */
export function languagesBody(
  returned: { tag: string; entry: CachedAltText }[],
  failed: string[],
  cached: boolean,
  creditsRemaining: number,
  request: Answering,
): AltTextResult {
  const first = returned[0]
  if (!first) throw new Error('a languages answer without its first language')
  const altTexts = Object.fromEntries(
    returned.map(({ tag, entry }) => [
      tag,
      { alt_text: entry.altText, wcag_compliant: entry.wcagCompliant, wcag_issues: entry.wcagIssues, character_count: characterCount(entry.altText) },
    ]),
  )
  return { ...responseBody(first.entry, cached, creditsRemaining, request), language: first.tag, alt_texts: altTexts, failed_languages: failed }
}

/** The response body for an entry; `cached` when this request did not pay for it. */
export function responseBody(entry: CachedAltText, cached: boolean, creditsRemaining: number, request: Answering): AltTextResult {
  const count = characterCount(entry.altText)
  return {
    alt_text: entry.altText,
    credits_remaining: creditsRemaining,
    wcag_compliant: entry.wcagCompliant,
    character_count: count,
    processing_time_ms: Math.round(performance.now() - request.startedAt),
    length: count,
    language: entry.language,
    cached,
    wcag_issues: entry.wcagIssues,
    model: entry.model,
    image: { width: entry.width, height: entry.height, format: entry.format },
    animated: entry.animated ?? false,
    decorative: entry.decorativeReason != null,
    decorative_reason: entry.decorativeReason ?? null,
    text_in_image: entry.textInImage ?? null,
    source: request.source,
    ...(request.longDescription && { long_description: entry.longDescription ?? null }),
  }
}
