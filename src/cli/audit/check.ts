// `alttext audit --check`: the gate for CI. It is a dry run (the lint only: no key, no service, no
// credit), writes no fixed copy, prints one line per image that needs work in the `file:line:column:`
// form CI logs and editors link, then a verdict line, and exits 1 when anything needs work. Findings a
// --baseline accepted do not count; an image whose picture could not be read is listed as not checked
// and fails nothing by itself.
import { accessSync, constants, statSync } from 'node:fs'
import { plural } from '../../shared/wording'
import { EXIT } from '../shared/args'
import { NEEDS_ALT, type PageResult, type Totals } from './report'

/** Flags that would ask the service for something (credit) or write copies: refused with --check. */
export const CHECK_REFUSES = ['fix', 'overwrite', 'review', 'apply', 'judge', 'queue', 'from-queue'] as const

/**
 * The service's answers that mean it could not read the picture (not a fault of the run): an unusable
 * upload or image URL, an image over its size, and the client's own "the file cannot be read".
 */
export const NOT_CHECKED_CODES: ReadonlySet<string> = new Set(['invalid_image', 'invalid_image_url', 'payload_too_large', 'file_unreadable'])

/** Why a local image file cannot be read (`shown` names it), or null; `cache` keeps each path's answer for the run. */
export function unreadableImage(file: string, shown: string, cache: Map<string, string | null>): string | null {
  let why = cache.get(file)
  if (why !== undefined) return why
  try {
    accessSync(file, constants.R_OK)
    why = statSync(file).isFile() ? null : `${shown} is not a file`
  } catch (error) {
    why = (error as NodeJS.ErrnoException).code === 'ENOENT' ? `${shown} does not exist` : `${shown} cannot be read`
  }
  cache.set(file, why)
  return why
}

/**
 * `site/index.html:9:3: missing: no alt attribute (img/logo.png)`, one per image that needs work (not
 * those a baseline accepted), per image not checked, and per unreadable page.
 */
export function checkLines(pages: PageResult[]): string[] {
  const lines: string[] = []
  for (const page of pages) {
    if (page.error !== null) {
      lines.push(`${page.page}: cannot be checked: ${page.error}`)
      continue
    }
    for (const image of page.images) {
      const at = `${page.page}:${image.line}:${image.column}`
      const src = image.src ?? 'no src'
      if (NEEDS_ALT.has(image.status) && image.baseline !== 'unchanged') lines.push(`${at}: ${image.status}: ${image.issues.join('; ')} (${src})`)
      if (image.not_checked !== null) lines.push(`${at}: not checked: ${image.not_checked} (${src})`)
    }
  }
  return lines
}

/** Images that need work and are not accepted by a baseline: what fails the gate. */
const newNeeding = (totals: Totals) => totals.needing_alt - totals.baselined

/** The gate's verdict: 1 when an image needs alt text or fixing (and no baseline accepted it), or a page could not be read (unchecked is not passed). */
export const checkExitCode = (totals: Totals): number => (newNeeding(totals) > 0 || totals.pages_failed > 0 ? EXIT.failed : EXIT.ok)

export function checkSummary(totals: Totals, baseline?: { stale: number }): string {
  // A person's alt text over --max-length is kept and no failure: the summary only counts it.
  const notes: string[] = []
  if (totals.long > 0) notes.push(`${plural(totals.long, 'alt text')} over --max-length kept (see the report)`)
  if (totals.baselined > 0) notes.push(`${totals.baselined} accepted by the baseline`)
  if (baseline && baseline.stale > 0) notes.push(`${plural(baseline.stale, 'baseline entry', 'baseline entries')} no longer found (fixed or changed)`)
  if (totals.not_checked > 0) notes.push(`${plural(totals.not_checked, 'image')} not checked (listed)`)
  if (totals.ignored > 0) notes.push(`${totals.ignored} ignored`)
  const tail = notes.map((note) => `; ${note}`).join('')
  const fresh = newNeeding(totals)
  const what = baseline ? 'new image' : 'image'
  if (checkExitCode(totals) === EXIT.ok)
    return `check passed: no ${what} needs alt text (${plural(totals.images, 'image')} on ${plural(totals.pages, 'page')})${tail}`
  const unread = totals.pages_failed > 0 ? `; ${plural(totals.pages_failed, 'page')} could not be read` : ''
  return `check failed: ${plural(fresh, what)} ${fresh === 1 ? 'needs' : 'need'} alt text or fixing${unread}${tail}`
}
