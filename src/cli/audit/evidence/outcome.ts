// What a finding means for a reader of the evidence: needs work, good, decorative, not checked or
// ignored. The HTML report's filter, summary.json's coverage and the conformance rows all group by it.
import type { Finding } from '../report'

export type Outcome = 'needs-work' | 'good' | 'decorative' | 'not-checked' | 'ignored'

export const OUTCOMES: readonly Outcome[] = ['needs-work', 'good', 'decorative', 'not-checked', 'ignored']

export const OUTCOME_TEXT: Record<Outcome, string> = {
  'needs-work': 'Needs work',
  good: 'Good',
  decorative: 'Decorative',
  'not-checked': 'Not checked',
  ignored: 'Ignored',
}

/**
 * The outcome of a status. A status this module does not know (one added later, such as an image the
 * service could not read) counts as not checked: it never passes for good by default.
 */
export function outcomeOfStatus(status: string): Outcome {
  switch (status) {
    case 'missing':
    case 'empty':
    case 'poor':
      return 'needs-work'
    // A person's long alt text is kept: WCAG sets no length, so it is an acceptable text alternative.
    case 'ok':
    case 'long':
      return 'good'
    case 'decorative':
      return 'decorative'
    case 'ignored':
      return 'ignored'
    default:
      return 'not-checked'
  }
}

/** "1 needs work", "3 need work", "2 good": a count of an outcome in a sentence. */
export const outcomeCount = (outcome: Outcome, count: number): string =>
  `${count} ${outcome === 'needs-work' ? (count === 1 ? 'needs work' : 'need work') : OUTCOME_TEXT[outcome].toLowerCase()}`

/**
 * A finding's outcome: an alt text that needs work needs it whether or not its picture could be read;
 * otherwise an image whose picture (or alt: MDX code) could not be checked is not checked, never good.
 */
export function outcomeOf(finding: Pick<Finding, 'status' | 'not_checked'>): Outcome {
  const outcome = outcomeOfStatus(finding.status)
  return outcome !== 'needs-work' && finding.not_checked !== null ? 'not-checked' : outcome
}

/** Outcomes whose image has an acceptable text alternative (alt="" is one for a decorative image). */
export const ACCEPTABLE: ReadonlySet<Outcome> = new Set(['good', 'decorative'])

/**
 * The group a page is listed under: a book's file for its content documents ("book.epub!OEBPS/ch1.xhtml"),
 * a URL's host, a file's folder.
 */
export function groupOf(page: { page: string; address: string }): string {
  const bang = page.page.indexOf('!')
  if (bang > 0 && /\.epub$/iu.test(page.page.slice(0, bang))) return page.page.slice(0, bang)
  if (/^https?:\/\//iu.test(page.page)) {
    try {
      return new URL(page.page).host
    } catch {
      return page.page
    }
  }
  const slash = Math.max(page.page.lastIndexOf('/'), page.page.lastIndexOf('\\'))
  return slash === -1 ? '.' : page.page.slice(0, slash)
}
