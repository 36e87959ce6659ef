// The result table (Markdown) and its JSON form.
import type { Figure } from './stats'

export type Unit = 'rps' | 'ms' | 'us' | 'MiB' | 'count' | 'per-s' | 'x' | 'bytes' | 'ssim' | 'rate'

export type Row = {
  scenario: string
  figure: string
  unit: Unit
  value: Figure
  /** What the value is compared with (bare server, floor, ideal, small database...). */
  baseline?: { label: string; value: Figure | number; unit?: Unit }
  /** value/baseline (kind "x") or value−baseline in ms (kind "plus-ms"), computed per round. */
  ratio?: { kind: 'x' | 'plus-ms'; value: Figure }
  target?: string
  /** true/false when the row has a target, null when it is information only. */
  met: boolean | null
  /** The same figure's value in the previous results (previous.json), and the relative move since. */
  last?: { value: number; ratio?: number; note?: string }
  moved?: number
}

/** A move of a figure against its last value beyond this share is flagged. */
export const MOVED_LIMIT = 0.1

const finite = (n: number) => Number.isFinite(n)

export function formatValue(n: number, unit: Unit): string {
  if (!finite(n)) return '—'
  switch (unit) {
    case 'rps':
      return `${Math.round(n).toLocaleString('en-US')}/s`
    case 'per-s':
      return `${n.toFixed(2)}/s`
    case 'ms':
      return n >= 100 ? `${n.toFixed(0)} ms` : n >= 10 ? `${n.toFixed(1)} ms` : `${n.toFixed(2)} ms`
    case 'us':
      return `${n.toFixed(1)} µs`
    case 'MiB':
      return `${n.toFixed(1)} MiB`
    case 'count':
      return `${Math.round(n)}`
    case 'x':
      return `${n.toFixed(2)}×`
    case 'bytes':
      return `${Math.round(n)} B`
    case 'ssim':
      return n.toFixed(4)
    case 'rate':
      return n.toFixed(3)
  }
}

function spread(f: Figure, unit: Unit): string {
  if (!finite(f.min) || !finite(f.max)) return '—'
  if (f.rounds.length < 2) return 'one round'
  return `${formatValue(f.min, unit)} – ${formatValue(f.max, unit)}`
}

function ratioText(r: Row['ratio']): string {
  if (!r) return ''
  const v = r.value.median
  if (!finite(v)) return '—'
  const text = r.kind === 'x' ? `${v.toFixed(2)}×` : `${v >= 0 ? '+' : '−'}${Math.abs(v).toFixed(2)} ms`
  const lo = r.value.min
  const hi = r.value.max
  if (r.value.rounds.length < 2 || !finite(lo) || !finite(hi)) return text
  const range = r.kind === 'x' ? `${lo.toFixed(2)}–${hi.toFixed(2)}` : `${lo.toFixed(1)}…${hi.toFixed(1)}`
  return `${text} (${range})`
}

function lastText(row: Row): string {
  if (!row.last) return 'new'
  const ratio = row.last.ratio === undefined ? '' : ` (${row.last.ratio.toFixed(2)}${row.ratio?.kind === 'plus-ms' ? ' ms' : '×'})`
  return `${formatValue(row.last.value, row.unit)}${ratio}${row.last.note ? ` ¹` : ''}`
}

/** The row's move against its last value, e.g. "+12 %" ("" without a last value or this run's value). */
export function movedPercent(row: Row): string {
  if (row.moved === undefined || Number.isNaN(row.moved)) return ''
  if (!finite(row.moved)) return 'from 0'
  return `${row.moved >= 0 ? '+' : '−'}${Math.abs(row.moved * 100).toFixed(0)} %`
}

export const movedBeyondLimit = (row: Row): boolean => row.moved !== undefined && !Number.isNaN(row.moved) && !(Math.abs(row.moved) <= MOVED_LIMIT)

function movedText(row: Row): string {
  const percent = movedPercent(row)
  return movedBeyondLimit(row) ? `**${percent} ⚠**` : percent
}

export function markdownTable(rows: Row[]): string {
  const header = ['scenario', 'figure', 'value (median)', 'spread (min – max)', 'baseline / floor', 'ratio', 'target', 'met?', 'last', 'Δ last']
  const lines = [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`]
  for (const row of rows) {
    const base = row.baseline
      ? `${row.baseline.label} ${typeof row.baseline.value === 'number' ? formatValue(row.baseline.value, row.baseline.unit ?? row.unit) : formatValue(row.baseline.value.median, row.baseline.unit ?? row.unit)}`
      : ''
    const met = row.met === null ? '' : row.met ? 'yes' : '**no**'
    const cells = [
      row.scenario,
      row.figure,
      formatValue(row.value.median, row.unit),
      spread(row.value, row.unit),
      base,
      ratioText(row.ratio),
      row.target ?? '',
      met,
      lastText(row),
      movedText(row),
    ]
    lines.push(`| ${cells.map((c) => c.replaceAll('|', '\\|')).join(' | ')} |`)
  }
  return lines.join('\n')
}
