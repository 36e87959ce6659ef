// How the crawl's leftovers are told: pages skipped (robots.txt, another origin) and pages read once
// under another address, for the "read N pages" line and the lines after it.
import { plural } from '../../../shared/wording'
import type { CrawlOutcome } from './crawl'

/** Skipped pages listed on stderr at most; the rest counted. */
const LISTED = 20

export function skippedLines(outcome: CrawlOutcome): { summary: string; lines: string[] } {
  let summary = ''
  if (outcome.skippedCount > 0) summary += `; ${plural(outcome.skippedCount, 'page')} skipped (robots.txt or another origin)`
  if (outcome.duplicates > 0) summary += `; ${plural(outcome.duplicates, 'page')} already read under another address (canonical or redirect)`
  const lines = outcome.skipped.slice(0, LISTED).map((skip) => `skipped: ${skip.url}: ${skip.reason}`)
  if (outcome.skippedCount > lines.length) lines.push(`skipped: ${plural(outcome.skippedCount - lines.length, 'more page')}`)
  return { summary, lines }
}
