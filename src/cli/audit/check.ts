// `alttext audit --check`: the gate for CI. It is a dry run (the lint only: no key, no service, no
// credit), writes no fixed copy, prints one line per image that needs work in the `file:line:column:`
// form CI logs and editors link, then a verdict line, and exits 1 when anything needs work.
import { plural } from '../../shared/wording'
import { EXIT } from '../shared/args'
import { NEEDS_ALT, type PageResult, type Totals } from './report'

/** Flags that would ask the service for something (credit) or write copies: refused with --check. */
export const CHECK_REFUSES = ['fix', 'overwrite', 'review', 'apply', 'judge', 'queue', 'from-queue'] as const

/** `site/index.html:9:3: missing: no alt attribute (img/logo.png)`, one per image that needs work and per unreadable page. */
export function checkLines(pages: PageResult[]): string[] {
  const lines: string[] = []
  for (const page of pages) {
    if (page.error !== null) {
      lines.push(`${page.page}: cannot be checked: ${page.error}`)
      continue
    }
    for (const image of page.images) {
      if (!NEEDS_ALT.has(image.status)) continue
      lines.push(`${page.page}:${image.line}:${image.column}: ${image.status}: ${image.issues.join('; ')} (${image.src ?? 'no src'})`)
    }
  }
  return lines
}

/** The gate's verdict: 1 when an image needs alt text or fixing, or a page could not be read (unchecked is not passed). */
export const checkExitCode = (totals: Totals): number => (totals.needing_alt > 0 || totals.pages_failed > 0 ? EXIT.failed : EXIT.ok)

export function checkSummary(totals: Totals): string {
  // A person's alt text over --max-length is kept and no failure: the summary only counts it.
  const long = totals.long > 0 ? `; ${plural(totals.long, 'alt text')} over --max-length kept (see the report)` : ''
  if (checkExitCode(totals) === EXIT.ok)
    return `check passed: no image needs alt text (${plural(totals.images, 'image')} on ${plural(totals.pages, 'page')})${long}`
  const unread = totals.pages_failed > 0 ? `; ${plural(totals.pages_failed, 'page')} could not be read` : ''
  return `check failed: ${plural(totals.needing_alt, 'image')} ${totals.needing_alt === 1 ? 'needs' : 'need'} alt text or fixing${unread}${long}`
}
