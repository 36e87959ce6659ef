// summary.json of the evidence pack: the run's counts by finding kind and by page, the coverage, and what
// the run was given, in a versioned shape (documented in docs/audit.md, "Evidence for compliance") that
// `--diff` reads back from an older run.
import { readFileSync } from 'node:fs'
import { z } from 'zod'
import { UsageError } from '../../shared/args'
import type { PageResult, Report } from '../report'
import { ACCEPTABLE, groupOf, OUTCOMES, type Outcome, outcomeOf } from './outcome'

export const SUMMARY_FORMAT = 'alttext-audit-summary'
export const SUMMARY_VERSION = 1

/** The finding kinds always present in `findings` (a status added later is counted under its own name too). */
export const FINDING_KINDS = ['missing', 'empty', 'poor', 'long', 'ok', 'decorative', 'not_checked', 'ignored'] as const

/** `not-checked` → `not_checked`: JSON keys in snake case, as in the JSON report. */
const key = (name: string) => name.replaceAll('-', '_')

const Counts = z.record(z.string(), z.number().int().min(0))

const SummaryPage = z.object({
  page: z.string(),
  group: z.string(),
  images: z.number().int().min(0),
  findings: Counts,
  /** An image needs work, or the page could not be read. */
  failing: z.boolean(),
  error: z.string().nullable(),
})

export const SummarySchema = z.object({
  format: z.literal(SUMMARY_FORMAT),
  version: z.literal(SUMMARY_VERSION),
  tool: z.string(),
  created_at: z.string(),
  run: z.object({
    inputs: z.array(z.string()),
    dry_run: z.boolean(),
    check: z.boolean(),
    service: z.string().nullable(),
    read_ms: z.number(),
    /** Pages a crawl found but did not read: robots.txt disallowed them, or they are on another origin (added after version 1 began: optional). */
    pages_skipped: z.number().int().min(0).optional(),
  }),
  totals: z.object({
    pages: z.number().int().min(0),
    pages_with_images: z.number().int().min(0),
    pages_unread: z.number().int().min(0),
    pages_failing: z.number().int().min(0),
    images: z.number().int().min(0),
    findings: Counts,
    outcomes: Counts,
    /** Images with an acceptable text alternative (good or decorative). */
    acceptable: z.number().int().min(0),
    /** acceptable ÷ (images − ignored), 0…1 to 4 decimals; null when there is no image to count. */
    coverage: z.number().min(0).max(1).nullable(),
  }),
  /** Pages with images or an error, in the report's order (pages without images are only counted). */
  pages: z.array(SummaryPage),
  review_log: z.object({ included: z.boolean(), reason: z.string().nullable(), organisation: z.string().nullable(), entries: z.number().int().min(0) }),
})

export type Summary = z.infer<typeof SummarySchema>
export type SummaryPage = z.infer<typeof SummaryPage>
export type ReviewLogNote = Summary['review_log']

/** Counts by finding kind and by outcome of one page's (or every page's) images. */
function countFindings(pages: PageResult[]): { findings: Record<string, number>; outcomes: Record<string, number> } {
  const findings: Record<string, number> = Object.fromEntries(FINDING_KINDS.map((kind) => [kind, 0]))
  const outcomes: Record<string, number> = Object.fromEntries(OUTCOMES.map((outcome) => [key(outcome), 0]))
  for (const page of pages) {
    for (const image of page.images) {
      const outcome = key(outcomeOf(image))
      const kind = outcome === 'not_checked' ? outcome : key(image.status)
      findings[kind] = (findings[kind] ?? 0) + 1
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1
    }
  }
  return { findings, outcomes }
}

/** Images the gate leaves out on purpose (data-alttext-ignore, --exclude) are counted in the totals, when the report has them. */
const ignoredOf = (report: Report): number => {
  const ignored = (report.totals as Record<string, unknown>).ignored
  return typeof ignored === 'number' ? ignored : 0
}

export const outcomeTotal = (counts: Record<string, number>, outcome: Outcome): number => counts[key(outcome)] ?? 0

export function summaryOf(report: Report, run: { inputs: string[]; check: boolean }, reviewLog: ReviewLogNote): Summary {
  const { findings, outcomes } = countFindings(report.pages)
  const acceptable = [...ACCEPTABLE].reduce((sum, outcome) => sum + outcomeTotal(outcomes, outcome), 0)
  const images = report.pages.reduce((sum, page) => sum + page.images.length, 0)
  // Coverage is of the images listed that were not left out on purpose.
  const counted = images - outcomeTotal(outcomes, 'ignored')
  // Ignored images the report only counts (not listed as findings) are counted here too, outside `images`.
  const ignored = ignoredOf(report)
  if (ignored > findings.ignored!) {
    findings.ignored = ignored
    outcomes.ignored = ignored
  }
  const pages = report.pages
    .filter((page) => page.error !== null || page.images.length > 0)
    .map((page): SummaryPage => {
      const counts = countFindings([page])
      return {
        page: page.page,
        group: groupOf(page),
        images: page.images.length,
        findings: Object.fromEntries(Object.entries(counts.findings).filter(([, count]) => count > 0)),
        failing: page.error !== null || outcomeTotal(counts.outcomes, 'needs-work') > 0,
        error: page.error,
      }
    })
  return {
    format: SUMMARY_FORMAT,
    version: SUMMARY_VERSION,
    tool: report.tool,
    created_at: report.created_at,
    run: {
      inputs: run.inputs.map(withoutCredentials),
      dry_run: report.dry_run,
      check: run.check,
      service: report.service,
      read_ms: report.timings.read_ms,
      pages_skipped: report.crawl?.skipped_count ?? 0,
    },
    totals: {
      pages: report.pages.length,
      pages_with_images: report.pages.filter((page) => page.images.length > 0).length,
      pages_unread: report.pages.filter((page) => page.error !== null).length,
      pages_failing: pages.filter((page) => page.failing).length,
      images,
      findings,
      outcomes,
      acceptable,
      coverage: counted > 0 ? Math.round((acceptable / counted) * 10_000) / 10_000 : null,
    },
    pages,
    review_log: reviewLog,
  }
}

/** A URL given as input keeps no user name or password in the evidence. */
function withoutCredentials(input: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\//iu.test(input)) return input
  try {
    const url = new URL(input)
    if (url.username === '' && url.password === '') return input
    url.username = ''
    url.password = ''
    return url.href
  } catch {
    return input
  }
}

export const summaryJson = (summary: Summary): string => `${JSON.stringify(summary, null, 2)}\n`

/** An older run's summary.json for --diff; a file that is not one is a usage error (exit 2, nothing read). */
export function readSummaryFile(path: string, shown: string): Summary {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    throw new UsageError(`--diff ${shown}: cannot read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`)
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    throw new UsageError(`--diff ${shown}: not JSON: give the summary.json of an earlier --evidence run`)
  }
  const format = (json as { format?: unknown } | null)?.format
  if (format !== SUMMARY_FORMAT)
    throw new UsageError(`--diff ${shown}: not an alttext audit summary (no "format": "${SUMMARY_FORMAT}"): give the summary.json of an earlier --evidence run`)
  const version = (json as { version?: unknown }).version
  if (version !== SUMMARY_VERSION) throw new UsageError(`--diff ${shown}: summary version ${String(version)}; this alttext reads version ${SUMMARY_VERSION}`)
  const parsed = SummarySchema.safeParse(json)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    throw new UsageError(`--diff ${shown}: not a valid summary: ${issue.path.join('.') || '(top)'}: ${issue.message}`)
  }
  return parsed.data
}
