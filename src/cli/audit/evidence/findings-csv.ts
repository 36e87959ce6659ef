// findings.csv of the evidence pack: one row per image found (and one per page that could not be read),
// in columns that stay put from release to release (new ones are only ever added at the end). Fields are
// written by the project's one CSV writer: RFC 4180 quoting, formula characters made inert.
import type { Report } from '../report'
import { csvField } from '../../shared/csv'
import { groupOf, outcomeOf } from './outcome'

export const FINDINGS_COLUMNS = [
  'group',
  'page',
  'line',
  'column',
  'element',
  'src',
  'finding',
  'outcome',
  'issues',
  'attribute',
  'current_alt',
  'suggested_alt',
  'error',
] as const

export function findingsCsv(report: Report): string {
  const rows = [FINDINGS_COLUMNS.join(',')]
  const row = (fields: (string | number | boolean | null)[]) => rows.push(fields.map(csvField).join(','))
  for (const page of report.pages) {
    const group = groupOf(page)
    if (page.error !== null) {
      row([group, page.page, null, null, null, null, 'page_unread', 'not-checked', null, null, null, null, page.error])
      continue
    }
    for (const image of page.images) {
      row([
        group,
        page.page,
        image.line,
        image.column,
        image.kind,
        image.src,
        image.status,
        outcomeOf(image),
        image.issues.join('; '),
        image.attribute,
        image.alt,
        image.suggestion?.alt ?? null,
        image.error,
      ])
    }
  }
  return `${rows.join('\r\n')}\r\n`
}
