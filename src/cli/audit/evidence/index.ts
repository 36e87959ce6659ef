// --evidence DIR and --diff OLD: the evidence pack (report.html, summary.json, findings.csv, the review
// log, conformance.md) written after the reports, and the comparison with an older run's summary. The
// folder is checked before any page is read, so a run of an hour does not end in "cannot write".
import { accessSync, constants, mkdirSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ConfigError, type Env, loadClientConfig } from '../../../config'
import { UsageError } from '../../shared/args'
import { displayPath } from '../pages'
import { type Report, reportHtml } from '../report'
import { conformanceMarkdown } from './conformance'
import { diffSummaries, diffVerdict, regressionLines, type SummaryDiff } from './diff'
import { findingsCsv } from './findings-csv'
import { readReviewLog, type ReviewLog, reviewLogCsv, reviewLogJson } from './review-log'
import { readSummaryFile, type Summary, summaryJson, summaryOf } from './summary'

/** The folder exists (made if need be), is a folder and can be written; else a usage error before anything is read. */
export function prepareEvidenceDir(dir: string, cwd: string): void {
  const shown = displayPath(dir, cwd)
  try {
    if (statSync(dir, { throwIfNoEntry: false })?.isDirectory() === false) throw new UsageError(`--evidence ${shown} is a file, not a folder`)
    mkdirSync(dir, { recursive: true })
    accessSync(dir, constants.W_OK)
  } catch (error) {
    if (error instanceof UsageError) throw error
    throw new UsageError(`--evidence ${shown}: cannot write there (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`)
  }
}

/** --diff's older summary, read before any page is (a file that is not one: exit 2). */
export const readPreviousSummary = (path: string, cwd: string): Summary => readSummaryFile(path, displayPath(path, cwd))

type Run = {
  report: Report
  inputs: string[]
  check: boolean
  /** The service and key, when a key was given (also with --dry-run and --check): the review log is read with it. */
  flags: { url: string | undefined; key: string | undefined }
  env: Env
  cwd: string
}

/** Why there is no review log, or the service to read it from. */
function reviewService(run: Run): { url: string; key: string } | { reason: string } {
  try {
    return loadClientConfig(run.env, run.flags)
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    if (/API key is needed/u.test(error.message))
      return {
        reason: `no key was given (--key or ALTTEXT_API_KEY), so the organisation's activity log was not read${run.check ? ' (--check itself needs no key)' : ''}`,
      }
    return { reason: `the service settings are not usable: ${error.message}` }
  }
}

/** The run's summary (for --diff), with the review log when --evidence asks for one. */
export async function evidenceOf(run: Run, withReviewLog: boolean): Promise<{ summary: Summary; reviewLog: ReviewLog | null }> {
  let reviewLog: ReviewLog | null = null
  if (withReviewLog) {
    const service = reviewService(run)
    reviewLog = 'reason' in service ? { included: false, reason: service.reason } : await readReviewLog(service, run.report.pages)
  }
  const note = reviewLog
    ? reviewLog.included
      ? { included: true, reason: null, organisation: reviewLog.organisation, entries: reviewLog.entries.length }
      : { included: false, reason: reviewLog.reason, organisation: null, entries: 0 }
    : { included: false, reason: 'no --evidence pack was written', organisation: null, entries: 0 }
  return { summary: summaryOf(run.report, { inputs: run.inputs, check: run.check }, note), reviewLog }
}

/** Writes the pack into `dir`; returns the lines to tell the user. */
export function writeEvidence(dir: string, run: Run, summary: Summary, reviewLog: ReviewLog): string[] {
  const write = (name: string, text: string) => writeFileSync(join(dir, name), text)
  write('report.html', reportHtml(run.report, join(dir, 'report.html')))
  write('summary.json', summaryJson(summary))
  write('findings.csv', findingsCsv(run.report))
  write('review-log.json', reviewLogJson(reviewLog, run.report.created_at))
  if (reviewLog.included) write('review-log.csv', reviewLogCsv(reviewLog.entries))
  write('conformance.md', conformanceMarkdown(run.report, { inputs: summary.run.inputs, reviewLog }))
  const shown = displayPath(dir, run.cwd)
  const lines = [
    `evidence: ${shown} (report.html, summary.json, findings.csv, ${reviewLog.included ? 'review-log.csv/.json' : 'review-log.json'}, conformance.md)`,
  ]
  lines.push(
    reviewLog.included
      ? `review log: ${reviewLog.entries.length} entries of ${reviewLog.organisation} for these pages${reviewLog.truncated ? ' (the activity log was read only in part: it is longer than the command reads)' : ''}`
      : `review log: not included: ${reviewLog.reason}`,
  )
  return lines
}

/** --diff: the comparison and its lines (regressions first, then the verdict). */
export function diffWith(previous: Summary, summary: Summary, shown: string): { diff: SummaryDiff; lines: string[] } {
  const diff = diffSummaries(previous, summary)
  return { diff, lines: [...regressionLines(diff), diffVerdict(diff, shown)] }
}
