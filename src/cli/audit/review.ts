// --review and --apply: the proposed changes as a CSV a person edits (or deletes rows of) in a
// spreadsheet or editor, and writing exactly the rows left. --apply sends nothing: it reads each file
// named, scans it with its format (HTML, Markdown, EPUB: the same code as --fix), finds each row's image
// again by document, line and column, and refuses a row whose image is not what was reviewed (the file
// changed since); the other rows are written, and each row's outcome is printed.
import { createHash, randomUUID } from 'node:crypto'
import { lstatSync, readFileSync, realpathSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { plural } from '../../shared/wording'
import { EXIT } from '../shared/args'
import { csvField, parseCsv, unguardField } from '../shared/csv'
import { type AltChange, formatFor, type ScannedDocument } from './formats'
import { displayPath, fixPath, type ImageTarget, type LoadedPage, loadFile, type Unresolved } from './pages'
import { type Finding, type PageResult, wantsSuggestion } from './report'
import type { FoundImage, PageScan } from './scan'
import { isInside, writeFileSafely } from './write'

/**
 * An alt text as it is written, in every format: each run of white space (line breaks too) one space,
 * none at the ends. A blank line inside an alt would end a Markdown HTML block and let what follows render.
 */
export const normaliseAlt = (alt: string): string => alt.replace(/\s+/gu, ' ').trim()

/**
 * What identifies an image's state at review time: its text attribute, its text (absent and empty
 * differ) and its address, as 16 bytes of SHA-256. A row is refused when it differs at apply time.
 */
export const imageFingerprint = (image: Pick<FoundImage, 'textAttribute' | 'text' | 'src'>): string =>
  createHash('sha256')
    .update(JSON.stringify([image.textAttribute, image.text, image.src]))
    .digest('hex')
    .slice(0, 32)

/** The entry of a book a document is ("OEBPS/ch1.xhtml" of "book.epub!OEBPS/ch1.xhtml"); "" for a page or Markdown file. */
const documentOf = (page: LoadedPage, document: ScannedDocument) => (document.name.startsWith(`${page.name}!`) ? document.name.slice(page.name.length + 1) : '')

/**
 * The review's columns. A person edits `proposed_alt` (or deletes the row); `file`, `document` (the
 * entry inside a book, empty otherwise), `line`, `column`, `root` and `fingerprint` are what --apply
 * needs to find the image again and to see that it is unchanged; the rest is there to decide with.
 */
export const REVIEW_COLUMNS = [
  'file',
  'document',
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
/** Optional: a review written before books were read has no `document` column; its rows name whole files. */
const OPTIONAL = ['document'] as const

type ReviewPage = { page: LoadedPage; result: PageResult; scan: PageScan | null; document: ScannedDocument | null }

/** A proposed change of a review: where the image is, what it holds now, and the alt text proposed. */
export type ReviewEntry = {
  /** Absolute paths of the file and of the audit's root. */
  file: string
  root: string
  /** The entry inside a book, "" for a page or Markdown file. */
  document: string
  line: number
  column: number
  image: FoundImage
  /** Where the image can be read from (for the queue's upload), or why not. */
  source: ImageTarget | Unresolved
  finding: Finding
  alt: string
  fingerprint: string
}

/**
 * The proposed changes of a run: one per image of a local file whose alt text the suggestion would
 * change, as --fix would write it (with `overwrite`, good alt texts too). Page URLs are left out:
 * --apply writes files. The review CSV and the review queue list exactly these.
 */
export function reviewEntries(pages: ReviewPage[], overwrite: boolean): { entries: ReviewEntry[]; urlPages: number } {
  const entries: ReviewEntry[] = []
  let urlPages = 0
  for (const { page, result, scan, document } of pages) {
    if (scan === null || document === null) continue
    if (page.source.kind !== 'file') {
      urlPages++
      continue
    }
    for (const [index, image] of scan.images.entries()) {
      const finding = result.images[index]!
      const suggestion = finding.suggestion
      if (!suggestion || !wantsSuggestion(finding.status, overwrite)) continue
      const alt = normaliseAlt(suggestion.alt)
      if (alt === (image.text ?? null) || (alt === '' && image.textAttribute !== 'alt')) continue
      const at = document.locations[index]!
      entries.push({
        file: page.source.path,
        root: page.source.root,
        document: documentOf(page, document),
        line: at.line,
        column: at.column,
        image,
        source: document.resolve(image.src, image),
        finding,
        alt,
        fingerprint: imageFingerprint(image),
      })
    }
  }
  return { entries, urlPages }
}

/** The review CSV of a run: one row per reviewEntries entry. */
export function reviewCsv(pages: ReviewPage[], overwrite: boolean, cwd: string): { text: string; rows: number; urlPages: number } {
  const lines = [REVIEW_COLUMNS.join(',')]
  const { entries, urlPages } = reviewEntries(pages, overwrite)
  for (const { file, root, document, line, column, image, finding, alt, fingerprint } of entries) {
    const suggestion = finding.suggestion!
    const details = [
      ...finding.issues,
      ...(suggestion.decorative ? [`judged decorative${suggestion.decorative_reason ? `: ${suggestion.decorative_reason}` : ''}`] : []),
    ]
    const row = [
      displayPath(file, cwd),
      document,
      line,
      column,
      finding.src,
      finding.verdict && finding.verdict.verdict !== 'ok' ? `judged ${finding.verdict.verdict}` : finding.status,
      details.join('; '),
      image.text,
      alt,
      image.textAttribute,
      displayPath(root, cwd),
      fingerprint,
    ]
    lines.push(row.map((field) => csvField(field)).join(','))
  }
  return { text: `${lines.join('\r\n')}\r\n`, rows: lines.length - 1, urlPages }
}

/** One row to write: set the alt text of the image at `line`:`column` of `document`, if it is still `fingerprint`. */
export type ReviewedChange = { document: string; line: number; column: number; fingerprint: string; alt: string }

/**
 * One change to write, from a CSV row or a decided suggestion: `label` names it in the outcome lines
 * ("row 3", "suggestion sug_…"), `row` orders them.
 */
export type ReviewRow = { row: number; label: string; file: string; root: string; change: ReviewedChange }

/** The rows of a review CSV; a row that cannot be read is returned as an error with its row number. */
export function readReview(text: string, cwd: string): { rows: ReviewRow[]; errors: string[] } {
  const records = parseCsv(text)
  const header = (records[0] ?? []).map((name) => name.trim().toLowerCase())
  const missing = REQUIRED.filter((name) => !header.includes(name))
  if (missing.length > 0) throw new Error(`not a review CSV of alttext audit: no column ${missing.join(', ')}`)
  const column = Object.fromEntries([...REQUIRED, ...OPTIONAL].map((name) => [name, header.indexOf(name)])) as Record<
    (typeof REQUIRED)[number] | (typeof OPTIONAL)[number],
    number
  >
  const rows: ReviewRow[] = []
  const errors: string[] = []
  for (const [index, record] of records.slice(1).entries()) {
    const row = index + 2
    const field = (name: keyof typeof column) => unguardField(record[column[name]] ?? '')
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
      label: `row ${row}`,
      file: resolve(cwd, file),
      root: resolve(cwd, field('root').trim() || dirname(file)),
      change: { document: field('document').trim(), line, column: col, fingerprint, alt: normaliseAlt(field('proposed_alt')) },
    })
  }
  return { rows, errors }
}

const describe = (image: FoundImage) => (image.text === null ? `no ${image.textAttribute}` : `${image.textAttribute} "${image.text}"`)

/** Where a row's image is, as the outcome lines name it: `site/a.html:9:3`, `book.epub!OEBPS/ch1.xhtml:11:4`. */
export const placeOf = (row: Pick<ReviewRow, 'file' | 'change'>, cwd: string) =>
  `${displayPath(row.file, cwd)}${row.change.document ? `!${row.change.document}` : ''}:${row.change.line}:${row.change.column}`

/**
 * Why --apply may not touch `file`, or null: the rows name files of the site under the working
 * directory (where the review ran), each inside its root; a CSV naming "../" or an absolute path
 * elsewhere, or a symbolic link that leads out, is refused whatever its fingerprint.
 */
function outsideReason(file: string, root: string, cwd: string): string | null {
  const name = displayPath(file, cwd)
  if (!isInside(cwd, root)) return `its root ${displayPath(root, cwd)} is outside the working directory: --apply writes only under the folder it runs in`
  if (!isInside(root, file)) return `${name} is outside its root ${displayPath(root, cwd)}`
  try {
    if (lstatSync(file).isSymbolicLink()) return `${name} is a symbolic link: --apply does not follow it`
    const realRoot = realpathSync(root)
    if (!isInside(realpathSync(cwd), realRoot) || !isInside(realRoot, realpathSync(file))) return `${name} leads outside its root through a symbolic link`
  } catch {
    // A file that is not there is reported when it is read.
  }
  return null
}

/**
 * --apply: writes the rows of the review CSV into copies under `fix` (same relative names as --fix) or,
 * with `inPlace`, into the files themselves. Exit 0 when every row was written, 1 when any was refused.
 */
export function runApply(
  settings: { apply: string; fix: string | undefined; inPlace: boolean },
  cwd: string,
  say: (line: string) => void,
  warn: (line: string) => void,
): number {
  let parsed: ReturnType<typeof readReview>
  try {
    parsed = readReview(readFileSync(settings.apply, 'utf8'), cwd)
  } catch (error) {
    warn(`alttext audit: --apply ${displayPath(settings.apply, cwd)}: ${(error as Error).message}`)
    return EXIT.usage
  }
  return applyRows(
    parsed.rows,
    parsed.errors.map((text) => ({ row: Number(/^row (\d+)/u.exec(text)?.[1]), text })),
    { ...settings, noun: 'row' },
    cwd,
    say,
  )
}

/**
 * Writes `rows` (from a review CSV or from the review queue) with the same checks whatever their
 * origin; `unread` are the ones refused before (unreadable), reported in order with the others.
 */
export function applyRows(
  rows: ReviewRow[],
  unread: { row: number; text: string }[],
  settings: { fix: string | undefined; inPlace: boolean; noun: string },
  cwd: string,
  say: (line: string) => void,
): number {
  const outcomes: { row: number; text: string }[] = [...unread]
  const outcome = (row: ReviewRow, text: string) => outcomes.push({ row: row.row, text: `${row.label}: ${placeOf(row, cwd)}: ${text}` })
  let written = 0
  let files = 0
  // Each row's file must lie inside its own root, under the working directory: refused one by one.
  const inside: ReviewRow[] = []
  for (const row of rows) {
    const outside = outsideReason(row.file, row.root, resolve(cwd))
    if (outside === null) inside.push(row)
    else outcome(row, `refused: ${outside}`)
  }
  const byFile = Map.groupBy(inside, (row) => row.file)
  const token = `alttext-apply-${randomUUID()}`
  for (const [file, fileRows] of byFile) {
    const refuseAll = (why: string) => {
      for (const row of fileRows) outcome(row, `refused: ${why}`)
    }
    const root = fileRows[0]!.root
    const page = loadFile({ kind: 'file', path: file, root }, cwd)
    let target = file
    if (!settings.inPlace) {
      const copy = fixPath(page, settings.fix!)
      if (copy === null || resolve(copy) === file) {
        refuseAll(`no safe place for its copy under --fix ${displayPath(settings.fix!, cwd)}`)
        continue
      }
      target = copy
    }
    if (page.bytes === null) {
      refuseAll(page.error ?? 'cannot read')
      continue
    }
    const format = formatFor(page.source)
    let documents: ScannedDocument[]
    try {
      documents = format.scan(page, { token, context: false })
    } catch (error) {
      refuseAll(`cannot parse: ${(error as Error).message}`)
      continue
    }
    const images = new Map<string, { document: ScannedDocument; index: number }>()
    for (const document of documents) {
      const entry = documentOf(page, document)
      for (const [index, at] of document.locations.entries()) images.set(`${entry}\u0000${at.line}\u0000${at.column}`, { document, index })
    }
    // Per row, in order: null when written (or already what it asks), else why not.
    const refused: (string | null)[] = []
    const changes = new Map<AltChange, number>()
    const used = new Set<string>()
    for (const [rowIndex, { change }] of fileRows.entries()) {
      const key = `${change.document}\u0000${change.line}\u0000${change.column}`
      const found = images.get(key)
      if (found === undefined) {
        refused.push(`no image starts at line ${change.line}, column ${change.column} any more: the file changed since the review`)
        continue
      }
      const image = found.document.scan.images[found.index]!
      if (used.has(key)) refused.push('the same image is listed in an earlier row')
      else if (imageFingerprint(image) !== change.fingerprint) {
        refused.push(`the image there changed since the review (now ${describe(image)}${image.src ? `, ${image.src}` : ''})`)
      } else if (change.alt === '' && image.textAttribute !== 'alt') refused.push(`an empty ${image.textAttribute} names nothing: give a text`)
      else {
        used.add(key)
        refused.push(null)
        if (change.alt !== image.text) changes.set({ ...found.document.locations[found.index]!, alt: change.alt, expected: image.text ?? null }, rowIndex)
      }
    }
    let bytes: Uint8Array = page.bytes
    if (changes.size > 0) {
      try {
        const applied = format.apply(page, [...changes.keys()], { token, context: false, documents })
        for (const { change, reason } of applied.refused) refused[changes.get(change)!] = reason
        bytes = applied.bytes
      } catch (error) {
        for (const index of changes.values()) refused[index] = `cannot write: ${(error as Error).message}`
      }
    }
    const applied = refused.filter((why) => why === null).length
    if (applied > 0) {
      try {
        writeFileSafely(target, bytes, settings.inPlace ? root : settings.fix!, cwd)
      } catch (error) {
        refuseAll(`cannot write ${displayPath(target, cwd)}: ${(error as Error).message}`)
        continue
      }
      written += applied
      files++
    }
    for (const [index, row] of fileRows.entries()) {
      const why = refused[index]
      outcome(row, why === null ? 'written' : `refused: ${why}`)
    }
  }
  outcomes.sort((a, b) => a.row - b.row)
  for (const { text } of outcomes) say(text)
  const refused = outcomes.length - written
  const where = settings.inPlace ? 'in place' : `under ${displayPath(settings.fix!, cwd)}`
  say(`${plural(written, settings.noun)} written to ${plural(files, 'file')} ${where}, ${refused} refused`)
  return refused > 0 ? EXIT.failed : EXIT.ok
}
