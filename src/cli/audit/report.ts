// The audit's report: an HTML page for a person (pages grouped by folder, book or host; each image with
// its current and suggested alt, and counts; a filter), and the same facts as JSON and CSV for tools.
import { dirname, relative, sep } from 'node:path'
import { plural } from '../../shared/wording'
import { VERSION } from '../../version'
import { STATUSES, type Status } from './classify'
import type { ImageKind } from './scan'
import { csvField } from '../shared/csv'
import { groupOf, OUTCOMES, type Outcome, outcomeCount, outcomeOf } from './evidence/outcome'
import { FILTER_SCRIPT, filterControls, filterCss } from './evidence/report-filter'

export type Suggestion = {
  alt: string
  decorative: boolean
  decorative_reason: string | null
  wcag_issues: string[]
  cached: boolean
  /** With --long-description: a complex image's long description; null for any other. */
  long_description?: string | null
  /** Made by the command without asking the model (alt="" for an image in a link with its own text). */
  local: boolean
}

export type Finding = {
  line: number
  /** 1-based, in UTF-16 code units. */
  column: number
  kind: ImageKind
  /** The image's address as written in the page. */
  src: string | null
  /** What was sent: a file path, a URL, or "data: URL"; null when the address could not be resolved. */
  resolved: string | null
  attribute: 'alt' | 'aria-label' | 'title'
  /** The current text (null: the attribute is absent). */
  alt: string | null
  status: Status
  issues: string[]
  suggestion: Suggestion | null
  /** Why no suggestion came, when one was needed. */
  error: string | null
  /**
   * Why the image itself could not be checked (the service could not read it, its file is missing or
   * unreadable, its address is a template tag); null when it could. Never a failure by itself: the lint's
   * status of its markup stands.
   */
  not_checked: string | null
  /** With --baseline (or --write-baseline): the finding's fingerprint (baseline.ts), and whether the baseline accepted it. */
  fingerprint?: string
  baseline?: 'unchanged' | 'new'
  /** With --fix: the attribute was written; otherwise null. */
  written: boolean | null
  /** With --judge: the service's verdict on the alt text that passed the lint (absent otherwise). */
  verdict?: { verdict: string; reasons: string; suggested_alt_text: string | null; cached: boolean }
}

export type PageResult = {
  page: string
  /** The page's address: its URL, or the file's path. */
  address: string
  /** The page could not be read or fetched. */
  error: string | null
  language: string
  /** With --fix: where its copy was written. */
  fixed_copy: string | null
  /** Said of a page read all the same: a rendered page scanned before its network settled, say. */
  note?: string
  /** Images skipped by an ignore marker (data-alttext-ignore, an alttext-ignore comment): counted, not listed. */
  ignored: number
  images: Finding[]
}

export type Totals = Record<Status, number> & {
  pages: number
  pages_failed: number
  images: number
  needing_alt: number
  suggested: number
  suggested_decorative: number
  failed: number
  written: number
  /** Images skipped by an ignore marker. */
  ignored: number
  /** Images whose picture could not be checked (see Finding.not_checked). */
  not_checked: number
  /** Images needing alt text whose finding the --baseline accepted: they do not fail --check. */
  baselined: number
  /** Documents left out by --exclude (set by the command; not in `pages`). */
  excluded: number
}

export type Report = {
  tool: string
  created_at: string
  service: string | null
  dry_run: boolean
  overwrite: boolean
  /** Reading every page (files read or fetched, parsed, classified) and the parsing within it, in ms. */
  timings: { read_ms: number; parse_ms: number }
  totals: Totals
  /** With --baseline: its file, and its entries no longer found (fixed, or their image changed). */
  baseline?: { file: string; accepted: number; new: number; stale: number }
  /**
   * With --sitemap or --crawl: pages found but not read (robots.txt, another origin; the first 20 listed
   * with why), pages read twice under other addresses, links past --max-pages.
   */
  crawl?: { skipped: { url: string; reason: string }[]; skipped_count: number; duplicates: number; unfollowed: number }
  pages: PageResult[]
}

/** Statuses whose image needs a new alt. */
export const NEEDS_ALT: ReadonlySet<Status> = new Set(['missing', 'empty', 'poor'])

/** Statuses of a person's text that is kept: asked for and replaced only with --overwrite. */
const KEPT_UNLESS_OVERWRITE: ReadonlySet<Status> = new Set(['ok', 'long'])

/** Whether the image's alt text is to be asked for (and written by --fix): it needs one, or --overwrite replaces a kept one. */
export const wantsSuggestion = (status: Status, overwrite: boolean): boolean => NEEDS_ALT.has(status) || (overwrite && KEPT_UNLESS_OVERWRITE.has(status))

export function totalsOf(pages: PageResult[]): Totals {
  const totals: Totals = {
    pages: pages.length,
    pages_failed: 0,
    images: 0,
    missing: 0,
    empty: 0,
    poor: 0,
    long: 0,
    ok: 0,
    decorative: 0,
    needing_alt: 0,
    suggested: 0,
    suggested_decorative: 0,
    failed: 0,
    written: 0,
    ignored: 0,
    not_checked: 0,
    baselined: 0,
    excluded: 0,
  }
  for (const page of pages) {
    if (page.error !== null) totals.pages_failed++
    totals.ignored += page.ignored
    for (const image of page.images) {
      totals.images++
      totals[image.status]++
      if (NEEDS_ALT.has(image.status)) totals.needing_alt++
      if (NEEDS_ALT.has(image.status) && image.baseline === 'unchanged') totals.baselined++
      if (image.not_checked !== null) totals.not_checked++
      if (image.suggestion) {
        totals.suggested++
        if (image.suggestion.decorative || image.suggestion.alt === '') totals.suggested_decorative++
      }
      // An image whose picture could not be read is "not checked", not failed.
      if (image.error !== null && image.not_checked === null) totals.failed++
      if (image.written) totals.written++
    }
  }
  return totals
}

export function reportJson(report: Report): string {
  return `${JSON.stringify(report, null, 2)}\n`
}

const CSV_COLUMNS = [
  'page',
  'line',
  'kind',
  'src',
  'status',
  'issues',
  'attribute',
  'current_alt',
  'suggested_alt',
  'decorative',
  'suggestion_issues',
  'error',
  'written',
  'not_checked',
] as const

export function reportCsv(report: Report): string {
  const rows = [CSV_COLUMNS.join(',')]
  for (const page of report.pages) {
    if (page.error !== null) {
      rows.push([page.page, '', '', '', 'page_error', '', '', '', '', '', '', page.error, '', ''].map((field) => csvField(field)).join(','))
      continue
    }
    for (const image of page.images) {
      rows.push(
        [
          page.page,
          image.line,
          image.kind,
          image.src,
          image.status,
          image.issues.join('; '),
          image.attribute,
          image.alt,
          image.suggestion?.alt ?? null,
          image.suggestion ? image.suggestion.decorative || image.suggestion.alt === '' : null,
          image.suggestion?.wcag_issues.join('; ') ?? null,
          image.error,
          image.written,
          image.not_checked,
        ]
          .map((field) => csvField(field))
          .join(','),
      )
    }
  }
  return `${rows.join('\r\n')}\r\n`
}

const html = (text: string) => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;')

const STATUS_TEXT: Record<Status, string> = {
  missing: 'Missing alt',
  empty: 'Empty alt',
  poor: 'Poor alt',
  long: 'Long alt',
  ok: 'Good alt',
  decorative: 'Decorative',
}

/** An address the report page can show the image from: a path relative to the report, or the URL. */
function thumbnailHref(finding: Finding, reportPath: string): string | null {
  const resolved = finding.resolved
  if (resolved === null || resolved === 'data: URL') return null
  if (/^https?:\/\//iu.test(resolved)) return resolved
  return relative(dirname(reportPath), resolved).split(sep).map(encodeURIComponent).join('/')
}

function pageHref(page: PageResult, reportPath: string): string {
  if (/^https?:\/\//iu.test(page.address)) return page.address
  return relative(dirname(reportPath), page.address).split(sep).map(encodeURIComponent).join('/')
}

function altCell(text: string | null, attribute: string): string {
  if (text === null) return `<span class="none">no ${attribute}</span>`
  if (text.trim() === '') return `<span class="none">${attribute}="" (empty)</span>`
  return `<q>${html(text)}</q>`
}

function suggestionCell(finding: Finding): string {
  if (finding.error !== null) return `<span class="error">Failed: ${html(finding.error)}</span>`
  const suggestion = finding.suggestion
  if (!suggestion) {
    if (NEEDS_ALT.has(finding.status)) return '<span class="none">not asked (dry run)</span>'
    if (finding.status === 'long')
      return '<span class="none">kept (replaced only with --overwrite): if the image needs this much, a short alt and a long description may serve better</span>'
    return '<span class="none">nothing to do</span>'
  }
  const notes: string[] = []
  if (suggestion.local) notes.push('the link’s own text names the target: alt="" (no credit spent)')
  else if (suggestion.decorative) notes.push(`decorative${suggestion.decorative_reason ? `: ${html(suggestion.decorative_reason)}` : ''}`)
  if (suggestion.wcag_issues.length > 0) notes.push(`lint: ${html(suggestion.wcag_issues.join('; '))}`)
  if (finding.written === true) notes.push('written by --fix')
  if (finding.written === false && NEEDS_ALT.has(finding.status)) notes.push('not written')
  const text = suggestion.alt === '' ? '<span class="none">alt="" (decorative)</span>' : `<q>${html(suggestion.alt)}</q>`
  return `${text}${notes.length > 0 ? `<br><small>${notes.join('<br>')}</small>` : ''}`
}

function countsList(totals: Totals, label: string): string {
  const items = STATUSES.map((status) => `<li class="s-${status}"><span class="count">${totals[status]}</span> ${STATUS_TEXT[status].toLowerCase()}</li>`)
  return `<ul class="counts" aria-label="${html(label)}">${items.join('')}</ul>`
}

/** "3 images: 1 needs work, 2 good": a page's or a group's counts in one short line (the report stays small at 1,000 pages). */
function outcomeLine(counts: Record<Outcome, number>, images: number): string {
  const parts = OUTCOMES.filter((outcome) => counts[outcome] > 0).map((outcome) => outcomeCount(outcome, counts[outcome]))
  return `${plural(images, 'image')}${parts.length > 0 ? `: ${parts.join(', ')}` : ''}`
}

const noOutcomes = (): Record<Outcome, number> => ({ 'needs-work': 0, good: 0, decorative: 0, 'not-checked': 0, ignored: 0 })

function imageRow(finding: Finding, reportPath: string): string {
  const href = thumbnailHref(finding, reportPath)
  const thumbnail = href ? `<img src="${html(href)}" alt="" loading="lazy" width="96">` : ''
  const issues = finding.issues.length > 0 ? `<br><small>${html(finding.issues.join('; '))}</small>` : ''
  const kind = finding.kind === 'img' ? '&lt;img&gt;' : finding.kind === 'input' ? '&lt;input type=image&gt;' : 'role=img'
  return [
    `<tr data-o="${outcomeOf(finding)}">`,
    `<td class="thumb">${thumbnail}</td>`,
    `<td><code>${html(finding.src ?? '(no src)')}</code><br><small>line ${finding.line}, ${kind}</small></td>`,
    `<td><span class="status s-${finding.status}">${STATUS_TEXT[finding.status] ?? html(finding.status)}</span>${issues}</td>`,
    `<td>${altCell(finding.alt, finding.attribute)}</td>`,
    `<td>${suggestionCell(finding)}</td>`,
    '</tr>',
  ].join('')
}

/**
 * The report as one self-contained HTML page (no external styles or scripts): the pages with images (or
 * an error) grouped by folder, book or host, with a contents list and a filter by outcome and text.
 * Everything reads without a script; the small inline one only adds the text filter.
 */
export function reportHtml(report: Report, reportPath: string): string {
  const { totals } = report
  // A book has a document per chapter, most without images: only the pages with images (or an error) are listed.
  const listed = report.pages.filter((page) => page.error !== null || page.images.length > 0 || page.note !== undefined)
  const withoutImages = report.pages.length - listed.length
  const overall = noOutcomes()
  const groups = new Map<string, { pages: string[]; counts: Record<Outcome, number>; images: number; unread: number }>()
  for (const [index, page] of listed.entries()) {
    const name = groupOf(page)
    let group = groups.get(name)
    if (!group) {
      group = { pages: [], counts: noOutcomes(), images: 0, unread: 0 }
      groups.set(name, group)
    }
    const id = `page-${index + 1}`
    const heading = `<h3 id="${id}"><a href="${html(pageHref(page, reportPath))}">${html(page.page)}</a></h3>`
    const named = `class="page" data-name="${html(page.page)}" aria-labelledby="${id}"`
    if (page.error !== null) {
      group.unread++
      overall['not-checked']++
      group.pages.push(`<section ${named} data-o="not-checked">${heading}<p class="error">This page could not be read: ${html(page.error)}</p></section>`)
      continue
    }
    const counts = noOutcomes()
    for (const finding of page.images) counts[outcomeOf(finding)]++
    for (const outcome of OUTCOMES) {
      group.counts[outcome] += counts[outcome]
      overall[outcome] += counts[outcome]
    }
    group.images += page.images.length
    group.pages.push(
      [
        `<section ${named}>`,
        heading,
        page.note === undefined ? '' : `<p class="note">Note: ${html(page.note)}</p>`,
        `<p class="meta">${outcomeLine(counts, page.images.length)}</p>`,
        `<div class="scroll" role="region" tabindex="0" aria-labelledby="${id}">`,
        `<table><caption>Images on ${html(page.page)} (${page.images.length})</caption>`,
        '<thead><tr><th scope="col"><span class="visually-hidden">Preview</span></th><th scope="col">Image</th><th scope="col">Finding</th><th scope="col">Current alt</th><th scope="col">Suggested alt</th></tr></thead>',
        `<tbody>${page.images.map((finding) => imageRow(finding, reportPath)).join('')}</tbody></table></div>`,
        '</section>',
      ].join(''),
    )
  }
  const groupList = [...groups.entries()]
  const unreadText = (unread: number) => (unread > 0 ? `; ${plural(unread, 'page')} could not be read` : '')
  const contents = groupList.map(
    ([name, group], index) =>
      `<li><a href="#group-${index + 1}">${html(name)}</a>: ${plural(group.pages.length, 'page')}, ${outcomeLine(group.counts, group.images)}${unreadText(group.unread)}</li>`,
  )
  const sections = groupList.map(([name, group], index) =>
    [
      `<section class="group" aria-labelledby="group-${index + 1}">`,
      `<h2 id="group-${index + 1}">${html(name)}</h2>`,
      `<p class="meta">${plural(group.pages.length, 'page')}, ${outcomeLine(group.counts, group.images)}${unreadText(group.unread)}</p>`,
      group.pages.join('\n'),
      '</section>',
    ].join('\n'),
  )

  const needs = totals.needing_alt === 1 ? 'needs' : 'need'
  const mode = report.dry_run ? 'Dry run: findings only, no suggestions asked.' : `Suggestions by ${html(report.service ?? 'alttext')}.`
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Alt text audit: ${totals.needing_alt} of ${plural(totals.images, 'image')} ${needs} alt text</title>
<style>
:root { color-scheme: light; --ink: #1b1f24; --muted: #4a5561; --line: #d0d7de; --bg: #fff; --soft: #f6f8fa; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--bg); }
main { max-width: 1200px; margin: 0 auto; padding: 1.5rem 1rem 3rem; }
h1 { font-size: 1.75rem; margin: 0 0 .25rem; }
h2 { font-size: 1.25rem; margin: 2rem 0 .5rem; overflow-wrap: anywhere; }
a { color: #0a58ca; }
.meta { color: var(--muted); margin: 0 0 1rem; }
.counts { display: flex; flex-wrap: wrap; gap: .5rem; list-style: none; padding: 0; margin: .5rem 0 1rem; }
.counts li { border: 1px solid var(--line); border-radius: 6px; padding: .25rem .75rem; background: var(--soft); }
.count { font-weight: 700; font-variant-numeric: tabular-nums; }
.scroll { overflow-x: auto; }
.scroll:focus { outline: 2px solid #0a58ca; outline-offset: 2px; }
table { border-collapse: collapse; width: 100%; min-width: 640px; }
caption { text-align: left; font-weight: 600; padding: .25rem 0; }
th, td { text-align: left; vertical-align: top; padding: .5rem; border-top: 1px solid var(--line); overflow-wrap: anywhere; }
thead th { background: var(--soft); }
td.thumb { width: 112px; }
td.thumb img { max-width: 96px; max-height: 96px; height: auto; border: 1px solid var(--line); border-radius: 4px; }
small { color: var(--muted); }
q { quotes: "“" "”"; }
.none { color: var(--muted); font-style: italic; }
.error { color: #a40e26; }
.status { display: inline-block; font-weight: 600; border-radius: 4px; padding: 0 .4rem; border: 1px solid; }
.s-missing .count, .status.s-missing { color: #a40e26; }
.s-empty .count, .status.s-empty { color: #8a4600; }
.s-poor .count, .status.s-poor { color: #7d4e00; }
.s-long .count, .status.s-long { color: #0a58ca; }
.s-ok .count, .status.s-ok { color: #116329; }
.s-decorative .count, .status.s-decorative { color: #4a5561; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.contents ul { padding-left: 1.25rem; margin: .25rem 0 1rem; }
.group > h2 { border-bottom: 2px solid var(--line); padding-bottom: .25rem; }
h3 { font-size: 1.1rem; margin: 1.5rem 0 .25rem; overflow-wrap: anywhere; }
${filterCss()}
</style>
</head>
<body>
<main>
<h1>Alt text audit</h1>
<p class="meta">${plural(totals.pages, 'page')}, ${plural(totals.images, 'image')}: ${totals.needing_alt} ${needs} alt text. ${mode}${report.dry_run ? '' : ` ${totals.suggested} suggested, ${totals.failed} failed.`}${totals.written > 0 ? ` ${totals.written} written by --fix.` : ''} Made by ${html(report.tool)} on ${html(report.created_at.slice(0, 16).replace('T', ' '))} UTC.</p>
${countsList(totals, 'All images')}
${withoutImages > 0 ? `<p>${plural(withoutImages, 'page')} without images ${withoutImages === 1 ? 'is' : 'are'} not listed.</p>\n` : ''}${
  groupList.length > 0
    ? `<nav class="contents" aria-labelledby="contents"><h2 id="contents">Contents</h2><ul>${contents.join('')}</ul></nav>\n${filterControls(overall)}\n`
    : ''
}${sections.join('\n')}
</main>
${groupList.length > 0 ? FILTER_SCRIPT : ''}
</body>
</html>
`
}

export const TOOL = `alttext audit ${VERSION}`
