// The previous results (previous.json): each figure's last value, shown beside this run's and flagged
// when it moved by more than MOVED_LIMIT. A full run started with `--update-previous` replaces them.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { BENCH_DIR } from './common'
import type { Row } from './report'

type PreviousEntry = { value: number; ratio?: number; note?: string }
type Previous = { source: string; rows: Record<string, PreviousEntry> }

const PREVIOUS_PATH = join(BENCH_DIR, 'previous.json')
const keyOf = (row: Row) => `${row.scenario} | ${row.figure}`

/** Sets `last` and `moved` on every row that has a previous value; returns where they came from. */
export function attachPrevious(rows: Row[]): string {
  if (!existsSync(PREVIOUS_PATH)) return 'none (no previous.json)'
  const previous = JSON.parse(readFileSync(PREVIOUS_PATH, 'utf8')) as Previous
  for (const row of rows) {
    const entry = previous.rows[keyOf(row)]
    if (!entry) continue
    row.last = entry
    const value = row.value.median
    // From 0 to 0 is no move; from 0 to anything else is an infinite one.
    row.moved = entry.value === 0 ? (value === 0 ? 0 : Number.POSITIVE_INFINITY) : (value - entry.value) / Math.abs(entry.value)
  }
  return previous.source
}

/** Replaces previous.json with this run's medians (and ratios). */
export function savePrevious(rows: Row[], source: string): void {
  const entries: Record<string, PreviousEntry> = {}
  for (const row of rows) {
    if (!Number.isFinite(row.value.median)) continue
    const ratio = row.ratio?.value.median
    entries[keyOf(row)] = {
      value: Number(row.value.median.toPrecision(4)),
      ...(ratio !== undefined && Number.isFinite(ratio) ? { ratio: Number(ratio.toFixed(2)) } : {}),
    }
  }
  writeFileSync(PREVIOUS_PATH, `${JSON.stringify({ source, rows: entries }, null, 2)}\n`)
}
