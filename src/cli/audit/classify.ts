// What an image found on a page needs, by its markup and the service's own WCAG lint (wcag.ts), and the
// context a request for it carries.
import ISO6391 from 'iso-639-1'
import { MAX_CONTEXT_CHARS } from '../../modules/alt-text/model'
import { baseLanguage } from '../../modules/alt-text/text'
import { checkWcag } from '../../modules/alt-text/wcag'
import { type FoundImage, linkText, type PageScan, textAround, textOf } from './scan'

/**
 * - `missing`: no alt (nor aria-label) at all;
 * - `empty`: alt="" on an image whose markup does not say it is decorative;
 * - `poor`: a text the lint fails (a file name, "image of", too long, a placeholder word...);
 * - `ok`: a text that passes the lint, or a name given by aria-labelledby;
 * - `decorative`: role=presentation|none or aria-hidden=true, or alt="" inside a link that has its
 *   own text (the text names the link; the image adds nothing).
 */
export type Status = 'missing' | 'empty' | 'poor' | 'ok' | 'decorative'

export const STATUSES: readonly Status[] = ['missing', 'empty', 'poor', 'ok', 'decorative']

export type Classification = { status: Status; issues: string[] }

/**
 * Lint issues that do not make a person's alt text poor: a missing final period is style (screen
 * readers pause at the end of an attribute anyway). The service still ends its own suggestions with one.
 */
const STYLE_ONLY = new Set(['does not end with punctuation'])

/** The linked image whose link has words of its own: its alt may be empty. */
const linkHasText = (scan: PageScan, image: FoundImage) => image.link !== null && linkText(scan, image) !== ''

/** Lint results by language, length and text: a site repeats its alt texts (logos, icons) on every page. */
export type LintCache = Map<string, string[]>

export function classify(scan: PageScan, image: FoundImage, language: string, maxLength: number, cache?: LintCache): Classification {
  if (image.decorativeByMarkup) return { status: 'decorative', issues: [] }
  if (image.labelledBy && image.text === null) return { status: 'ok', issues: [] }
  if (image.text === null) return { status: 'missing', issues: [`no ${image.textAttribute} attribute`] }
  if (image.text.trim() === '') {
    if (image.kind === 'img' && linkHasText(scan, image)) return { status: 'decorative', issues: [] }
    return { status: 'empty', issues: [`empty ${image.textAttribute} on an image the markup does not mark decorative`] }
  }
  const text = image.text.trim()
  const key = `${language}\u0000${maxLength}\u0000${text}`
  let issues = cache?.get(key)
  if (issues === undefined) {
    issues = checkWcag(text, maxLength, language).issues.filter((issue) => !STYLE_ONLY.has(issue))
    cache?.set(key, issues)
  }
  return issues.length > 0 ? { status: 'poor', issues } : { status: 'ok', issues: [] }
}

/** The language to write and lint in: the flag, else the page's <html lang> when it is ISO 639-1, else English. */
export function pageLanguage(flag: string | undefined, scan: PageScan): string {
  if (flag) return flag
  const base = baseLanguage(scan.lang ?? '')
  return ISO6391.validate(base) ? base : 'en'
}

/**
 * A missing alt in a link with its own text needs no model: alt="" is right (WCAG technique H2), so
 * the suggestion is made here and costs no credit.
 */
export function suggestionWithoutModel(scan: PageScan, image: FoundImage): string | null {
  return image.kind === 'img' && image.text === null && linkHasText(scan, image) ? '' : null
}

/** The image is the only content of a link: its alt must say where the link goes, and it is never decorative. */
export const isLinkOnly = (scan: PageScan, image: FoundImage) => image.link !== null && !linkHasText(scan, image)

/** The `context` of the request: the page, heading, caption and text around the image, and its link. */
export function contextFor(scan: PageScan, image: FoundImage, linkTarget: string | null): string {
  const parts: string[] = []
  if (image.link !== null && linkTarget !== null) {
    const words = linkText(scan, image).slice(0, 120)
    parts.push(
      words === ''
        ? `The image is the only content of a link to ${linkTarget}: its alt text must say where the link goes or what it does.`
        : `The image is in a link to ${linkTarget} with the text "${words}".`,
    )
  }
  if (scan.title) parts.push(`Page: ${scan.title.slice(0, 150)}.`)
  const heading = textOf(scan, image.heading, 150)
  if (heading) parts.push(`Section: ${heading}.`)
  const caption = textOf(scan, image.caption, 300)
  if (caption) parts.push(`Caption: ${caption}`)
  // The heading is given once: the text before starts after it.
  const headingEnd = image.heading?.end ?? 0
  const { before, after } = textAround(scan, image.at, 200, headingEnd <= image.at ? headingEnd : 0)
  if (before) parts.push(`Text before: ${before}`)
  if (after) parts.push(`Text after: ${after}`)
  const context = parts.join(' ')
  return context.length > MAX_CONTEXT_CHARS ? context.slice(0, MAX_CONTEXT_CHARS - 1).replace(/\s\S*$/u, '') : context
}
