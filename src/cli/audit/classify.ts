// What an image found on a page needs, by its markup and the service's own WCAG lint (wcag.ts), and the
// context a request for it carries.
import { checkLanguageTag } from '../../modules/alt-text/language-tag'
import { DEFAULT_LANGUAGE, MAX_CONTEXT_CHARS } from '../../modules/alt-text/model'
import { baseLanguage, characterCount } from '../../modules/alt-text/text'
import { checkWcag } from '../../modules/alt-text/wcag'
import { buttonText, type FoundImage, linkText, type PageScan, textAround, textOf } from './scan'

/**
 * - `missing`: no alt (nor aria-label) at all;
 * - `empty`: an empty text that leaves something without a name: alt="" on the only content of a link or
 *   button that has no name of its own, an empty aria-label, an <input type=image> with alt="";
 * - `poor`: a text the lint fails (a file name, "image of", a placeholder word...);
 * - `long`: a text longer than --max-length: WCAG sets no length and a person wrote it, so it is kept
 *   (replaced only with --overwrite) and reported for a look (a long description may suit it), not failed;
 * - `ok`: a text that passes the lint, or a name given by aria-labelledby;
 * - `decorative`: role=presentation|none, aria-hidden=true, a child of a named role=img, or alt=""
 *   anywhere it leaves no link or button unnamed (alt="" is how HTML marks an image decorative).
 */
export type Status = 'missing' | 'empty' | 'poor' | 'long' | 'ok' | 'decorative'

export const STATUSES: readonly Status[] = ['missing', 'empty', 'poor', 'long', 'ok', 'decorative']

export type Classification = { status: Status; issues: string[] }

/**
 * Lint issues that do not make a person's alt text poor: a missing final period is style (screen
 * readers pause at the end of an attribute anyway). The service still ends its own suggestions with one.
 */
const STYLE_ONLY = new Set(['does not end with punctuation'])

/** The linked image whose link has words of its own: its alt may be empty. */
const linkHasText = (scan: PageScan, image: FoundImage) => image.link !== null && linkText(scan, image) !== ''

/** Another image in the same link or button (`same`) gives it a name with its own text. */
const namedByAnother = (scan: PageScan, image: FoundImage, same: (other: FoundImage) => boolean) =>
  scan.images.some((other) => other !== image && same(other) && !other.decorativeByMarkup && (other.text?.trim() ?? '') !== '')

/**
 * The link or button that an image with an empty text leaves without an accessible name: the image is
 * its only content (no words, no aria-label, aria-labelledby or title, no other image with a text).
 */
function unnamedControl(scan: PageScan, image: FoundImage): 'link' | 'button' | null {
  const link = image.link
  if (link !== null && !link.named && linkText(scan, image) === '' && !namedByAnother(scan, image, (other) => other.link === link)) return 'link'
  const button = image.button
  if (button && !button.named && buttonText(scan, image) === '' && !namedByAnother(scan, image, (other) => other.button === button)) return 'button'
  return null
}

/** The lint's own length issue: a long text is `long`, with an issue of its own. */
const LENGTH_ISSUE = 'longer than max_length'

/** Lint results by language, length and text: a site repeats its alt texts (logos, icons) on every page. */
export type LintCache = Map<string, string[]>

export function classify(scan: PageScan, image: FoundImage, language: string, maxLength: number, cache?: LintCache): Classification {
  if (image.decorativeByMarkup) return { status: 'decorative', issues: [] }
  // Its text is code only the site's build evaluates: listed with why, not a finding (the gate passes it).
  if (image.unchecked !== undefined) return { status: 'ok', issues: [`not checked: ${image.unchecked}`] }
  if (image.labelledBy && image.text === null) return { status: 'ok', issues: [] }
  if (image.text === null) return { status: 'missing', issues: [`no ${image.textAttribute} attribute`] }
  if (image.text.trim() === '') {
    if (image.kind === 'img' && image.textAttribute === 'alt') {
      const control = unnamedControl(scan, image)
      if (control === null) return { status: 'decorative', issues: [] }
      return { status: 'empty', issues: [`empty alt on the only content of a ${control}: the ${control} has no name`] }
    }
    return { status: 'empty', issues: [`empty ${image.textAttribute}: the ${image.kind === 'input' ? 'button' : 'image'} has no name`] }
  }
  const text = image.text.trim()
  const key = `${language}\u0000${maxLength}\u0000${text}`
  let issues = cache?.get(key)
  if (issues === undefined) {
    issues = checkWcag(text, maxLength, language).issues.filter((issue) => !STYLE_ONLY.has(issue))
    cache?.set(key, issues)
  }
  const length = characterCount(text)
  if (length > maxLength) {
    const others = issues.filter((issue) => !issue.startsWith(LENGTH_ISSUE))
    return { status: 'long', issues: [`${length} characters, over --max-length ${maxLength}: kept; a long description may suit it`, ...others] }
  }
  return issues.length > 0 ? { status: 'poor', issues } : { status: 'ok', issues: [] }
}

/**
 * The language to write and lint in: the flag, else the page's own (<html lang>, xml:lang, dc:language)
 * as a canonical BCP 47 tag (pt-BR stays pt-BR; en_US, as some themes write it, is en-US), else its
 * base language when only that is valid ("de-DE-x-intranet"), else English.
 */
export function pageLanguage(flag: string | undefined, scan: PageScan): string {
  if (flag) return flag
  const lang = (scan.lang ?? '').replaceAll('_', '-')
  for (const candidate of [lang, baseLanguage(lang)]) {
    const checked = checkLanguageTag(candidate)
    if ('tag' in checked) return checked.tag
  }
  return DEFAULT_LANGUAGE
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
