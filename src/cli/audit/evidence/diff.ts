// --diff OLD-summary.json: what got worse since an older run, by finding kind, by page and in coverage.
// Only a regression counts: a page fixed, a finding gone or an image added with good alt text is no
// failure. With --check, the gate then fails on regressions only (a nightly audit a team can live with).
import { plural } from '../../../shared/wording'
import type { Summary } from './summary'

/** Kinds whose rise is a regression: an image that needs work. Not checked is listed, never a failure. */
const WORSE_KINDS = ['missing', 'empty', 'poor'] as const

export type Regression =
  | { kind: 'findings'; finding: string; before: number; after: number }
  | { kind: 'page'; page: string; before: number | null; after: number; error: string | null }
  | { kind: 'coverage'; before: number; after: number }

export type SummaryDiff = {
  regressions: Regression[]
  /** What changed without failing: fewer findings, pages fixed, images not checked. */
  notes: string[]
}

const needsWork = (findings: Record<string, number>) => WORSE_KINDS.reduce((sum, kind) => sum + (findings[kind] ?? 0), 0)

const percent = (share: number) => `${(share * 100).toFixed(2).replace(/\.?0+$/u, '')}%`

export function diffSummaries(before: Summary, after: Summary): SummaryDiff {
  const regressions: Regression[] = []
  const notes: string[] = []
  for (const finding of WORSE_KINDS) {
    const was = before.totals.findings[finding] ?? 0
    const now = after.totals.findings[finding] ?? 0
    if (now > was) regressions.push({ kind: 'findings', finding, before: was, after: now })
    else if (now < was) notes.push(`${finding}: ${was} → ${now}`)
  }
  const wasUnchecked = before.totals.findings.not_checked ?? 0
  const nowUnchecked = after.totals.findings.not_checked ?? 0
  if (nowUnchecked !== wasUnchecked) notes.push(`not checked: ${wasUnchecked} → ${nowUnchecked} (never a regression: the service could not read them)`)

  const old = new Map(before.pages.map((page) => [page.page, page]))
  let fixed = 0
  for (const page of after.pages) {
    const previous = old.get(page.page)
    old.delete(page.page)
    if (!page.failing) {
      if (previous?.failing) fixed++
      continue
    }
    const now = needsWork(page.findings)
    // A page newly unreadable, newly failing, or with more images needing work than before.
    if (previous === undefined || !previous.failing || now > needsWork(previous.findings) || (page.error !== null && previous.error === null)) {
      regressions.push({ kind: 'page', page: page.page, before: previous === undefined ? null : needsWork(previous.findings), after: now, error: page.error })
    }
  }
  for (const gone of old.values()) if (gone.failing) fixed++
  if (fixed > 0) notes.push(`${plural(fixed, 'page')} no longer failing`)

  const { coverage: was } = before.totals
  const { coverage: now } = after.totals
  if (was !== null && now !== null && now < was) regressions.push({ kind: 'coverage', before: was, after: now })
  return { regressions, notes }
}

/** One line per regression, for the log (and the verdict line of --check --diff). */
export function regressionLines(diff: SummaryDiff): string[] {
  return diff.regressions.map((regression) => {
    switch (regression.kind) {
      case 'findings':
        return `regression: ${regression.finding}: ${regression.before} → ${regression.after} (+${regression.after - regression.before})`
      case 'page':
        if (regression.error !== null) return `regression: ${regression.page}: cannot be checked: ${regression.error}`
        if (regression.before === null)
          return `regression: ${regression.page}: new page, ${regression.after} ${regression.after === 1 ? 'image needs' : 'images need'} work`
        return `regression: ${regression.page}: ${regression.before} → ${regression.after} ${regression.after === 1 ? 'image needs' : 'images need'} work`
      default:
        return `regression: coverage ${percent(regression.before)} → ${percent(regression.after)}`
    }
  })
}

export function diffVerdict(diff: SummaryDiff, shown: string): string {
  if (diff.regressions.length === 0) return `diff: nothing got worse since ${shown}${diff.notes.length > 0 ? ` (${diff.notes.join('; ')})` : ''}`
  return `diff: ${plural(diff.regressions.length, 'regression')} since ${shown}`
}
