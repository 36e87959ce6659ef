// Where `alttext describe` writes its results, and what it resumes from.
//
// jsonl and csv: one record per image, appended (write(2), no buffer) the moment its answer arrives, so
// a run killed at any point leaves every answer it had received in the file, at worst with its last
// line cut off. json: one array, written at the end (temporary file, then rename); until then the
// records go to FILE.partial.jsonl the same way.
//
// With --languages a jsonl or json record carries alt_texts (by tag) and failed_languages; a CSV has one
// row per language of an image (its language column names it), a failed language a row with its error.
//
// Resume: an existing output file is read first; records with an alt text are kept and their images
// skipped, failed records and a cut-off last line are dropped (the file is rewritten without them), and
// the failed images are tried again. --restart discards the file instead.
import { closeSync, existsSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import type { AltTextResult } from '../../modules/alt-text/model'
import { UsageError } from '../shared/args'
import { appender } from '../shared/io'
import { sourceKey } from './inputs'
import type { Format } from './options'
import { csvField, unguardInner } from '../shared/csv'

export type ResultRecord = {
  source: string
  alt_text: string
  decorative: boolean
  decorative_reason: string | null
  /** The text the image shows, as the model read it (null: none, or a plain-text answer). */
  text_in_image: string | null
  /** A complex image's long description (asked with --long-description); null: none, or not asked. */
  long_description: string | null
  wcag_compliant: boolean
  wcag_issues: string[]
  language: string
  cached: boolean
  model: string
  image: { width: number; height: number; format: string }
  /** Only with --languages: each language returned, by tag, and those that failed (nothing charged). */
  alt_texts?: Record<string, { alt_text: string; wcag_compliant: boolean; wcag_issues: string[] }>
  failed_languages?: string[]
}
export type FailureRecord = { source: string; error: { status: number; code: string; message: string } }
export type OutputRecord = ResultRecord | FailureRecord

export function resultRecord(source: string, body: AltTextResult): ResultRecord {
  return {
    source,
    alt_text: body.alt_text,
    decorative: body.decorative,
    decorative_reason: body.decorative_reason,
    text_in_image: body.text_in_image ?? null,
    long_description: body.long_description ?? null,
    wcag_compliant: body.wcag_compliant,
    wcag_issues: body.wcag_issues,
    language: body.language,
    cached: body.cached,
    model: body.model,
    image: body.image,
    ...(body.alt_texts && {
      alt_texts: Object.fromEntries(
        Object.entries(body.alt_texts).map(([tag, text]) => [
          tag,
          { alt_text: text.alt_text, wcag_compliant: text.wcag_compliant, wcag_issues: text.wcag_issues },
        ]),
      ),
      failed_languages: body.failed_languages ?? [],
    }),
  }
}

const isResult = (record: unknown): record is ResultRecord =>
  typeof record === 'object' &&
  record !== null &&
  typeof (record as ResultRecord).source === 'string' &&
  typeof (record as ResultRecord).alt_text === 'string' &&
  !('error' in record)

// ---- CSV (RFC 4180: fields with a comma, quote or line break are quoted, quotes doubled; CRLF rows) ----

export const CSV_COLUMNS = [
  'source',
  'alt_text',
  'decorative',
  'decorative_reason',
  'wcag_compliant',
  'wcag_issues',
  'language',
  'cached',
  'error_code',
  'error_message',
  // Last, so that the columns of earlier versions keep their places.
  'text_in_image',
  'long_description',
] as const

/** The columns of the version before long_description: its files are resumed, their rows given the empty new cell. */
const EARLIER_COLUMNS = CSV_COLUMNS.slice(0, -1)

// Every text cell is guarded against spreadsheet formulas, the source too: a file can be named
// "=HYPERLINK(...).png". A source that starts with ' gets one more, so that resume, which strips one
// leading ' from the source (and the ' put after a separator inside it), reads back the name written.
const sourceCell = (source: string) => (source.startsWith("'") ? `'${source}` : source)
const sourceOfCell = (cell: string) => unguardInner(cell.startsWith("'") ? cell.slice(1) : cell)
const csvRow = (fields: string[]) => `${fields.map((field, i) => csvField(i === 0 ? sourceCell(field) : field)).join(',')}\r\n`

/** A record's CSV rows: one per language with --languages (the long description and the text in the image on the first). */
function csvRows(record: OutputRecord): string[][] {
  if ('error' in record || !record.alt_texts) return [csvFields(record)]
  const rows = Object.entries(record.alt_texts).map(([tag, text], index) => {
    const fields = csvFields({ ...record, ...text, language: tag })
    return index === 0 ? fields : [...fields.slice(0, -2), '', '']
  })
  for (const tag of record.failed_languages ?? []) {
    rows.push([record.source, '', '', '', '', '', tag, '', 'language_failed', `the translation into ${tag} failed; nothing was charged for it`, '', ''])
  }
  return rows
}

function csvFields(record: OutputRecord): string[] {
  if ('error' in record) return [record.source, '', '', '', '', '', '', '', record.error.code, record.error.message, '', '']
  return [
    record.source,
    record.alt_text,
    String(record.decorative),
    record.decorative_reason ?? '',
    String(record.wcag_compliant),
    record.wcag_issues.join('; '),
    record.language,
    String(record.cached),
    '',
    '',
    record.text_in_image ?? '',
    record.long_description ?? '',
  ]
}

/** Rows of a CSV text; a last row without its line end (a cut-off write) is left out. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = []
  let row: string[] = []
  let field = ''
  let quoted = false
  let i = 0
  while (i < text.length) {
    const char = text[i]!
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        field += '"'
        i += 2
        continue
      }
      if (char === '"') quoted = false
      else field += char
      i++
      continue
    }
    if (char === '"' && field === '') quoted = true
    else if (char === ',') {
      row.push(field)
      field = ''
    } else if (char === '\n' || (char === '\r' && text[i + 1] === '\n')) {
      row.push(field)
      rows.push(row)
      row = []
      field = ''
      if (char === '\r') i++
    } else field += char
    i++
  }
  return rows
}

// ---- reading what an earlier run wrote ----

function readJsonl(path: string, text: string): { kept: string[]; results: ResultRecord[] } {
  const lines = text.split('\n')
  // The last element is '' after a final line end, or a line cut off by a kill: neither counts.
  lines.pop()
  const kept: string[] = []
  const results: ResultRecord[] = []
  lines.forEach((line, index) => {
    if (line.trim() === '') return
    let record: unknown
    try {
      record = JSON.parse(line)
    } catch {
      throw new UsageError(`${path}: line ${index + 1} is not JSON; is it the output of alttext describe? (--restart overwrites it)`)
    }
    if (isResult(record)) {
      kept.push(line)
      results.push(record)
    }
  })
  return { kept, results }
}

function readCsv(path: string, text: string): { kept: string[][]; sources: string[] } {
  let rows = parseCsv(text)
  if (rows.length === 0) return { kept: [], sources: [] }
  const earlier = rows[0]!.join(',') === EARLIER_COLUMNS.join(',')
  if (earlier) rows = rows.map((row, index) => (index > 0 && row.length === EARLIER_COLUMNS.length ? [...row, ''] : row))
  else if (rows[0]!.join(',') !== CSV_COLUMNS.join(',')) {
    throw new UsageError(`${path}: its header is not that of alttext describe's CSV (${CSV_COLUMNS.join(',')}); --restart overwrites it`)
  }
  const kept = rows
    .slice(1)
    .filter((row) => row.length === CSV_COLUMNS.length && row[8] === '' && row[0] !== '')
    .map(([source, ...rest]) => [sourceOfCell(source!), ...rest])
  return { kept, sources: kept.map((row) => row[0]!) }
}

function readJsonArray(path: string): ResultRecord[] {
  if (!existsSync(path)) return []
  let parsed: unknown
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'))
  } catch {
    throw new UsageError(`${path} is not JSON; is it the output of alttext describe? (--restart overwrites it)`)
  }
  if (!Array.isArray(parsed)) throw new UsageError(`${path} is not a JSON array of results; --restart overwrites it`)
  return parsed.filter(isResult)
}

/** Replaces `path` with `text` in one step (a kill leaves the old file or the new one, never half). */
function replaceFile(path: string, text: string): void {
  const temporary = `${path}.tmp-${process.pid}`
  writeFileSync(temporary, text)
  renameSync(temporary, path)
}

// ---- the sink ----

export type OutputSink = {
  /** Keys (see sourceKey) of the images that already have a result: skip them. */
  done: Set<string>
  write(record: OutputRecord): void
  /** Writes what is left (the json array) and closes the file. */
  close(): void
}

/** `stdout` takes what goes to standard output (no -o FILE). */
export function openOutput(format: Format, output: string | undefined, restart: boolean, cwd: string, stdout: (text: string) => void): OutputSink {
  const done = new Set<string>()

  if (format === 'json') {
    const partial = output === undefined ? undefined : `${output}.partial.jsonl`
    const records = new Map<string, OutputRecord>()
    if (output !== undefined && partial !== undefined && !restart) {
      const fromPartial = existsSync(partial) ? readJsonl(partial, readFileSync(partial, 'utf8')).results : []
      for (const record of [...readJsonArray(output), ...fromPartial]) {
        records.set(sourceKey(record.source, cwd), record)
        done.add(sourceKey(record.source, cwd))
      }
    }
    const fd = partial === undefined ? undefined : openSync(partial, restart ? 'w' : 'a')
    const append = fd === undefined ? undefined : appender(fd)
    return {
      done,
      write(record) {
        records.set(sourceKey(record.source, cwd), record)
        append?.(`${JSON.stringify(record)}\n`)
      },
      close() {
        const text = `${JSON.stringify([...records.values()], null, 2)}\n`
        if (output === undefined) stdout(text)
        else replaceFile(output, text)
        if (fd !== undefined) closeSync(fd)
        if (partial !== undefined) rmSync(partial, { force: true })
      },
    }
  }

  let header = format === 'csv' ? csvRow([...CSV_COLUMNS]) : ''
  if (output !== undefined && existsSync(output) && !restart) {
    const text = readFileSync(output, 'utf8')
    if (format === 'jsonl') {
      const { kept, results } = readJsonl(output, text)
      for (const record of results) done.add(sourceKey(record.source, cwd))
      replaceFile(output, kept.map((line) => `${line}\n`).join(''))
    } else {
      const { kept, sources } = readCsv(output, text)
      for (const source of sources) done.add(sourceKey(source, cwd))
      replaceFile(output, [header, ...kept.map(csvRow)].join(''))
    }
    header = ''
  }
  const fd = output === undefined ? undefined : openSync(output, restart || header !== '' ? 'w' : 'a')
  const append = fd === undefined ? stdout : appender(fd)
  if (header !== '') append(header)
  return {
    done,
    write(record) {
      append(format === 'csv' ? csvRows(record).map(csvRow).join('') : `${JSON.stringify(record)}\n`)
    },
    close() {
      if (fd !== undefined) closeSync(fd)
    },
  }
}
