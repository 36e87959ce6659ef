// conformance.md of the evidence pack: text a compliance officer can paste into an Accessibility
// Conformance Report (ITI VPAT 2.5 rows: Criteria | Conformance Level | Remarks and Explanations) and an
// accessibility statement, for the one criterion an image audit speaks to: WCAG SC 1.1.1 Non-text
// Content, as EN 301 549 V3.2.1 (9.1.1.1 web, 10.1.1.1 non-web documents) and Revised Section 508
// (E205.4) take it in. The level rule is documented in docs/audit.md, "Evidence for compliance".
import { plural } from '../../../shared/wording'
import type { PageResult, Report } from '../report'
import { type Outcome, outcomeOf } from './outcome'
import { decisionCounts, type ReviewLog } from './review-log'

export type ConformanceLevel = 'Supports' | 'Partially Supports' | 'Does Not Support' | 'Not Applicable' | 'Not Evaluated'

/** What the level of one scope (web pages, documents, all) rests on. */
export type Tally = {
  pages: number
  pagesUnread: number
  images: number
  needsWork: number
  missing: number
  empty: number
  poor: number
  acceptable: number
  notChecked: number
  ignored: number
  /** Pages with an image that needs work. */
  pagesFailing: number
}

/** A book's content document or a notebook: a non-web document in EN 301 549's terms (clause 10). */
export const isDocument = (page: Pick<PageResult, 'page'>): boolean => /\.epub!/iu.test(page.page) || /\.ipynb(?:!|$)/iu.test(page.page)

export function tally(pages: PageResult[]): Tally {
  const counts: Tally = {
    pages: pages.length,
    pagesUnread: 0,
    images: 0,
    needsWork: 0,
    missing: 0,
    empty: 0,
    poor: 0,
    acceptable: 0,
    notChecked: 0,
    ignored: 0,
    pagesFailing: 0,
  }
  for (const page of pages) {
    if (page.error !== null) counts.pagesUnread++
    let failing = false
    for (const image of page.images) {
      counts.images++
      const outcome: Outcome = outcomeOf(image)
      if (outcome === 'needs-work') {
        counts.needsWork++
        failing = true
        if (image.status === 'missing' || image.status === 'empty' || image.status === 'poor') counts[image.status]++
      } else if (outcome === 'good' || outcome === 'decorative') counts.acceptable++
      else if (outcome === 'not-checked') counts.notChecked++
      else counts.ignored++
    }
    if (failing) counts.pagesFailing++
  }
  return counts
}

/**
 * The level, by the ITI's terms:
 * - Supports: every image checked has an acceptable text alternative, none is left unchecked and every page was read;
 * - Does Not Support: more than half of the images checked lack one (the ITI: "the majority … does not meet");
 * - Partially Supports: some lack one, or some could not be checked (an unchecked image is no pass);
 * - Not Evaluated: images or pages exist but none could be checked (VPAT 2.5 reserves this for AAA: the row needs a person);
 * - Not Applicable: no page of this kind was audited, or none holds an image.
 */
export function levelOf(counts: Tally): ConformanceLevel {
  const checked = counts.needsWork + counts.acceptable
  if (counts.pages === 0 || (counts.images - counts.ignored === 0 && counts.pagesUnread === 0)) return 'Not Applicable'
  if (checked === 0) return 'Not Evaluated'
  if (counts.needsWork * 2 > checked) return 'Does Not Support'
  if (counts.needsWork > 0 || counts.notChecked > 0 || counts.pagesUnread > 0) return 'Partially Supports'
  return 'Supports'
}

const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll(/\r?\n/gu, ' ')

/** The counts behind a level, in the words of the Remarks column. */
function remarks(counts: Tally, scope: string, review: string): string {
  const parts = [
    `Automated audit of ${plural(counts.pages, scope.replace(/s$/u, ''), scope)}: ${plural(counts.images, 'image')}, ${counts.acceptable} with an acceptable text alternative (alt text, or alt="" on a decorative image).`,
  ]
  if (counts.needsWork > 0)
    parts.push(
      `${plural(counts.needsWork, 'image')} on ${plural(counts.pagesFailing, 'page')} ${counts.needsWork === 1 ? 'lacks' : 'lack'} one: ${failures(counts)}.`,
    )
  if (counts.notChecked > 0) parts.push(`${plural(counts.notChecked, 'image')} could not be checked.`)
  if (counts.pagesUnread > 0)
    parts.push(`${plural(counts.pagesUnread, 'page')} could not be read and ${counts.pagesUnread === 1 ? 'is' : 'are'} not evaluated.`)
  if (counts.ignored > 0) parts.push(`${plural(counts.ignored, 'image')} left out on purpose (marked to be ignored, or excluded).`)
  const level = levelOf(counts)
  if (level === 'Not Evaluated') parts.push('VPAT 2.5 allows Not Evaluated only for Level AAA criteria: this row needs a manual evaluation.')
  if (level === 'Not Applicable')
    parts.push(
      'No images were found; the audit looks at images only, so other non-text content (audio, video, canvas, charts drawn in script) needs its own check.',
    )
  parts.push(
    'Automated checks show that a text alternative is present and not a known bad pattern; they cannot show that it serves the equivalent purpose.',
    review,
  )
  return parts.join(' ')
}

/** "6 without alt text, 4 with alt text that is a file name…": the kinds that occur, in words. */
function failures(counts: Tally): string {
  const kinds: [number, string][] = [
    [counts.missing, 'without alt text'],
    [counts.empty, 'with an empty alt text that leaves a link or button without a name'],
    [counts.poor, 'with alt text that is a file name, a placeholder or otherwise fails the lint'],
  ]
  return kinds
    .filter(([count]) => count > 0)
    .map(([count, what]) => `${count} ${what}`)
    .join(', ')
}

const STATUS_WORDING: Record<ConformanceLevel, string> = {
  Supports: 'fully compliant',
  'Partially Supports': 'partially compliant',
  'Does Not Support': 'not compliant',
  'Not Applicable': 'not evaluated',
  'Not Evaluated': 'not evaluated',
}

export function conformanceMarkdown(report: Report, options: { inputs: string[]; reviewLog: ReviewLog }): string {
  const date = report.created_at.slice(0, 10)
  const all = tally(report.pages)
  const web = tally(report.pages.filter((page) => !isDocument(page)))
  const documents = tally(report.pages.filter(isDocument))
  const log = options.reviewLog
  const decisions = log.included ? decisionCounts(log.entries) : null
  const decided = decisions ? decisions.accepted + decisions.edited + decisions.rejected : 0
  const review = decisions
    ? decided > 0
      ? `Human review: the organisation's review log holds ${plural(decided, 'decision')} on suggested text alternatives for ${plural(decisions.pages, 'page')} of this audit (${decisions.accepted} accepted, ${decisions.edited} edited, ${decisions.rejected} rejected; see review-log.csv): those texts were judged by a person.`
      : "Human review: the organisation's review log holds no decision on suggestions for these pages; no text alternative was judged by a person through alttext."
    : `Human review: no review log is included: ${log.included ? '' : log.reason}. No claim is made that a person judged the text alternatives.`
  // The rows repeat only the gist; the method paragraph says it in full.
  const reviewShort =
    decided > 0 ? `Human review: ${plural(decided, 'decision')} for ${plural(decisions!.pages, 'page')} in review-log.csv.` : 'Human review: none recorded.'
  const level = levelOf(all)
  const row = (criterion: string, counts: Tally, scope: string) => `| ${cell(criterion)} | ${levelOf(counts)} | ${cell(remarks(counts, scope, reviewShort))} |`
  const header = ['| Criteria | Conformance Level | Remarks and Explanations |', '| --- | --- | --- |']
  const withDocs = documents.pages > 0
  const absent = (clause: string, what: string) => `${clause}: no ${what} was audited, so this audit gives no evidence for that row.`
  const enTable = [
    web.pages > 0 && row('9.1.1.1 Non-text content (web pages: WCAG 2.1 SC 1.1.1)', web, 'web pages'),
    withDocs && row('10.1.1.1 Non-text content (non-web documents: EPUB books, notebooks)', documents, 'non-web documents'),
  ].filter((line): line is string => typeof line === 'string')
  const enRows = [
    [...header, ...enTable].join('\n'),
    ...(web.pages > 0 ? [] : [absent('9.1.1.1 Non-text content (web pages)', 'web page')]),
    ...(withDocs ? [] : [absent('10.1.1.1 Non-text content (non-web documents)', 'EPUB book or notebook')]),
  ]

  const nonAccessible: string[] = []
  if (all.needsWork > 0) {
    nonAccessible.push(
      `${plural(all.needsWork, 'image')} on ${plural(all.pagesFailing, 'page')} ${all.needsWork === 1 ? 'has' : 'have'} no acceptable text alternative (${failures(all)}); this fails WCAG 2.1 success criterion 1.1.1 (EN 301 549 clause ${withDocs ? '9.1.1.1 for web pages, 10.1.1.1 for documents' : '9.1.1.1'}).`,
    )
  }
  if (all.notChecked > 0 || all.pagesUnread > 0)
    nonAccessible.push(
      `${[all.notChecked > 0 && plural(all.notChecked, 'image'), all.pagesUnread > 0 && plural(all.pagesUnread, 'page')].filter(Boolean).join(' and ')} could not be checked and ${all.notChecked + all.pagesUnread === 1 ? 'is' : 'are'} not claimed as accessible.`,
    )

  return `# Conformance evidence: text alternatives for images

Evaluated on ${date} by ${report.tool}: ${plural(all.pages, 'page')} (${plural(report.pages.filter((page) => page.images.length > 0).length, 'page')} with images), ${plural(all.images, 'image')}${
    options.inputs.length > 0 ? `, from ${options.inputs.map((input) => `\`${input.replaceAll('`', '')}\``).join(', ')}` : ''
  }.${skippedScope(report)} Coverage: ${all.images - all.ignored > 0 ? `${((all.acceptable / (all.images - all.ignored)) * 100).toFixed(1)}%` : 'none to count'} of the images have an acceptable text alternative.

**Method.** An automated audit with alttext: every \`<img>\`, \`<input type="image">\` and \`role="img"\` element (and SVG \`<image>\` in books) is checked for a text alternative that is present, not empty where it must name a link or button, and not a known bad pattern (a file name, "image of", a placeholder word); \`alt=""\` on a decorative image counts as acceptable. ${review}

**What this does not show.** Automated checks cannot show that alt text is *equivalent* to the image (that it serves the same purpose); only a person can judge that, and the review log covers only the images whose suggestions a person decided. The audit covers images only, not other non-text content (audio, video, canvas), and only WCAG success criterion 1.1.1, not the other criteria of any standard below.

The conformance levels follow the ITI VPAT 2.5 terms, by this rule: **Supports** when every image checked has an acceptable text alternative, none was left unchecked and every page was read; **Partially Supports** when some lack one or could not be checked; **Does Not Support** when more than half of the images checked lack one; **Not Evaluated** when none could be checked (VPAT 2.5 allows it only for Level AAA criteria: such a row needs a manual evaluation); **Not Applicable** when no such content was audited.

## WCAG 2.2, Success Criterion 1.1.1 Non-text Content (Level A)

${header.join('\n')}
${row('1.1.1 Non-text Content (Level A)', all, 'pages')}

The criterion's text is the same in WCAG 2.0, 2.1 and 2.2, so this row also serves the standards below, which refer to WCAG 2.1 (EN 301 549 V3.2.1) and WCAG 2.0 (Section 508).

## EN 301 549 V3.2.1 (2021-03)

${enRows.join('\n\n')}

## Revised Section 508 (36 CFR Part 1194)

Section 508 applies WCAG 2.0 Level A and AA to electronic content (E205.4, web pages and non-web documents) and to software (501.1) and support documentation (602.3). In the ACR's WCAG table the row is:

${header.join('\n')}
${row('1.1.1 Non-text Content (Level A). Revised Section 508: E205.4 (electronic content); also 602.3 when the content audited is support documentation', all, 'pages')}

This audit read documents and pages, not software: a software row (501.1) needs its own evaluation.

## Accessibility statement (EU Web Accessibility Directive model, European Accessibility Act)

**Compliance status.** As regards text alternatives for images (WCAG 2.1 success criterion 1.1.1, EN 301 549 V3.2.1 clause ${withDocs ? '9.1.1.1 and 10.1.1.1' : '9.1.1.1'}), this content is ${STATUS_WORDING[level]}${level === 'Partially Supports' || level === 'Does Not Support' ? ', owing to the non-accessible content listed below' : ''}. This statement covers that criterion only; the other requirements of EN 301 549 need their own evaluation before a full accessibility statement is published.

**Non-accessible content.** ${nonAccessible.length > 0 ? nonAccessible.join(' ') : 'No image without an acceptable text alternative was found.'}

**Preparation of this statement.** This statement was prepared on ${date}. The method used was a self-assessment: an automated audit of every image with ${report.tool}${
    decided > 0
      ? `, with human review of ${plural(decided, 'suggested text alternative')} recorded in the organisation's review log`
      : ', without a recorded human review'
  }.
`
}

/** The pages a crawl found and left unread are outside the evidence: said where its scope is. */
function skippedScope(report: Report): string {
  const skipped = report.crawl?.skipped_count ?? 0
  if (skipped === 0) return ''
  return ` ${plural(skipped, 'page')} the crawl found ${skipped === 1 ? 'was' : 'were'} not read (robots.txt disallows ${skipped === 1 ? 'it' : 'them'} for the user agent alttext, or ${skipped === 1 ? 'it is' : 'they are'} on another origin) and ${skipped === 1 ? 'is' : 'are'} not evaluated.`
}
