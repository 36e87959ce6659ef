// --review and --apply: the proposed changes as a CSV a person edits (or deletes rows of) in a
// spreadsheet or editor, and writing exactly the rows left. --apply sends nothing: it reads each file
// named, finds each row's image again by line and column, and refuses a row whose image is not what
// was reviewed (the file changed since); the other rows are written, and each row's outcome is printed.
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { plural } from '../../shared/wording'
import { EXIT } from '../shared/args'
import { csvField, parseCsv, unguardField } from '../shared/csv'
import { type AltChange, applyAltChanges, imageFingerprint } from './alt-changes'
import { displayPath, fixPath, type LoadedPage } from './pages'
import { NEEDS_ALT, type PageResult } from './report'
import type { PageScan } from './scan'

/**
 * The review's columns. A person edits `proposed_alt` (or deletes the row); `file`, `line`, `column`,
 * `root` and `fingerprint` are what --apply needs to find the image again and to see that it is
 * unchanged; the rest is there to decide with.
 */
export const REVIEW_COLUMNS = [
  'file',
  'line',
  'column',
  'image',
  'finding',
  'details',
  'current_alt',
  'proposed_alt',
  'attribute',
  'root',
  'fingerprint',
] as const

const REQUIRED = ['file', 'line', 'column', 'proposed_alt', 'root', 'fingerprint'] as const

type ReviewPage = { page: LoadedPage; result: PageResult; scan: PageScan | null }

/**
 * The review CSV of a run: one row per image of a local file whose alt text the suggestion would
 * change, as --fix would write it (with `overwrite`, good alt texts too). Page URLs are left out:
 * --apply writes files.
 */
export function reviewCsv(pages: ReviewPage[], overwrite: boolean): { text: string; rows: number; urlPages: number } {
  const lines = [REVIEW_COLUMNS.join(',')]
  let urlPages = 0
  for (const { page, result, scan } of pages) {
    if (scan === null) continue
    if (page.source.kind !== 'file') {
      urlPages++
      continue
    }
    const root = page.source.root
    for (const [index, image] of scan.images.entries()) {
      const finding = result.images[index]!
      const suggestion = finding.suggestion
      if (!suggestion || !(NEEDS_ALT.has(finding.status) || (overwrite && finding.status === 'ok'))) continue
      if (suggestion.alt === (image.text ?? null) || (suggestion.alt === '' && image.textAttribute !== 'alt')) continue
      const details = [
        ...finding.issues,
        ...(suggestion.decorative ? [`judged decorative${suggestion.decorative_reason ? `: ${suggestion.decorative_reason}` : ''}`] : []),
      ]
      const row = [
        displayPath(page.source.path),
        image.line,
        image.column,
        finding.src,
        finding.verdict && finding.verdict.verdict !== 'ok' ? `judged ${finding.verdict.verdict}` : finding.status,
        details.join('; '),
        image.text,
        suggestion.alt,
        image.textAttribute,
        displayPath(root),
        imageFingerprint(image),
      ]
      lines.push(row.map((field) => csvField(field)).join(','))
    }
  }
  return { text: `${lines.join('\r\n')}\r\n`, rows: lines.length - 1, urlPages }
}

type ReviewRow = { row: number; file: string; root: string; change: AltChange }

/** The rows of a review CSV; a row that cannot be read is returned as an error with its row number. */
export function readReview(text: string, cwd: string): { rows: ReviewRow[]; errors: string[] } {
  const records = parseCsv(text)
  const header = (records[0] ?? []).map((name) => name.trim().toLowerCase())
  const missing = REQUIRED.filter((name) => !header.includes(name))
  if (missing.length > 0) throw new Error(`not a review CSV of alttext audit: no column ${missing.join(', ')}`)
  const column = Object.fromEntries(REQUIRED.map((name) => [name, header.indexOf(name)])) as Record<(typeof REQUIRED)[number], number>
  const rows: ReviewRow[] = []
  const errors: string[] = []
  for (const [index, record] of records.slice(1).entries()) {
    const row = index + 2
    const field = (name: (typeof REQUIRED)[number]) => unguardField(record[column[name]] ?? '')
    const line = Number(field('line'))
    const col = Number(field('column'))
    const file = field('file').trim()
    const fingerprint = field('fingerprint').trim().toLowerCase()
    if (file === '' || !Number.isInteger(line) || line < 1 || !Number.isInteger(col) || col < 1 || !/^[0-9a-f]{32}$/u.test(fingerprint)) {
      errors.push(`row ${row}: refused: file, line, column or fingerprint is missing or changed; only proposed_alt may be edited`)
      continue
    }
    rows.push({
      row,
      file: resolve(cwd, file),
      root: resolve(cwd, field('root').trim() || dirname(file)),
      change: { line, column: col, fingerprint, alt: field('proposed_alt') },
    })
  }
  return { rows, errors }
}

/** Writes a file through a temporary sibling and a rename, so a crash never leaves half a page. */
function writeAtomically(path: string, bytes: Uint8Array) {
  const temporary = join(dirname(path), `.${path.split(/[\\/]/u).at(-1)}.alttext-${process.pid}.tmp`)
  try {
    writeFileSync(temporary, bytes)
    renameSync(temporary, path)
  } finally {
    rmSync(temporary, { force: true })
  }
}

/**
 * --apply: writes the rows of the review CSV into copies under `fix` (same relative names as --fix) or,
 * with `inPlace`, into the files themselves. Exit 0 when every row was written, 1 when any was refused.
 */
export function runApply(settings: { apply: string; fix: string | undefined; inPlace: boolean }, cwd: string, say: (line: string) => void): number {
  let parsed: ReturnType<typeof readReview>
  try {
    parsed = readReview(readFileSync(settings.apply, 'utf8'), cwd)
  } catch (error) {
    process.stderr.write(`alttext audit: --apply ${displayPath(settings.apply)}: ${(error as Error).message}\n`)
    return EXIT.usage
  }
  const outcomes: string[] = [...parsed.errors]
  let written = 0
  let files = 0
  const byFile = Map.groupBy(parsed.rows, (row) => row.file)
  for (const [file, rows] of byFile) {
    const name = displayPath(file)
    const refuseAll = (why: string) => {
      for (const row of rows) outcomes.push(`row ${row.row}: ${name}:${row.change.line}:${row.change.column}: refused: ${why}`)
    }
    let target = file
    if (!settings.inPlace) {
      const root = rows[0]!.root
      const copy = fixPath({ source: { kind: 'file', path: file, root } } as LoadedPage, settings.fix!)
      if (copy === null || resolve(copy) === file) {
        refuseAll(`no safe place for its copy under --fix ${displayPath(settings.fix!)}`)
        continue
      }
      target = copy
    }
    let bytes: Uint8Array
    try {
      bytes = new Uint8Array(readFileSync(file))
    } catch (error) {
      refuseAll(`cannot read: ${(error as Error).message}`)
      continue
    }
    const result = applyAltChanges(
      file,
      bytes,
      rows.map((row) => row.change),
    )
    const applied = result.refused.filter((why) => why === null).length
    if (applied > 0) {
      try {
        mkdirSync(dirname(target), { recursive: true })
        if (settings.inPlace) writeAtomically(target, result.bytes)
        else writeFileSync(target, result.bytes)
      } catch (error) {
        refuseAll(`cannot write ${displayPath(target)}: ${(error as Error).message}`)
        continue
      }
      written += applied
      files++
    }
    for (const [index, row] of rows.entries()) {
      const why = result.refused[index]
      outcomes.push(`row ${row.row}: ${name}:${row.change.line}:${row.change.column}: ${why === null ? 'written' : `refused: ${why}`}`)
    }
  }
  outcomes.sort((a, b) => Number(/^row (\d+)/u.exec(a)?.[1]) - Number(/^row (\d+)/u.exec(b)?.[1]))
  for (const outcome of outcomes) say(outcome)
  const refused = outcomes.length - written
  const where = settings.inPlace ? 'in place' : `under ${displayPath(settings.fix!)}`
  say(`${plural(written, 'row')} written to ${plural(files, 'file')} ${where}, ${refused} refused`)
  return refused > 0 ? EXIT.failed : EXIT.ok
}
