// CSV as every CSV the project writes (audit, describe, the console's export) writes it: RFC 4180
// quoting (fields with a comma, quote or line break are quoted, quotes doubled), and a text that a
// spreadsheet would run as a formula (= + - @, tab, CR first) prefixed with ' so opening the file never
// executes it. A spreadsheet in a locale that splits on ";" (or a reader that ignores the quotes) starts
// a new cell after every ";", "," or line break inside a field: a formula character there gets the ' too.

/** A character a spreadsheet reads as the start of a formula, at the start of a cell. */
const FORMULA_START = /^[=+\-@\t\r]/u
/** A separator or line break (with any quotes after it) that a formula character follows inside a field. */
const INNER_FORMULA = /([;,\r\n]"*)(?=[=+\-@\t\r])/gu
const GUARDED_INNER = /([;,\r\n]"*)'(?=[=+\-@\t\r])/gu

/** `text` with a ' before every formula character that could start a cell, in a ","- or a ";"-split reading. */
function guardFormula(text: string): string {
  const inner = text.replace(INNER_FORMULA, "$1'")
  return FORMULA_START.test(inner) ? `'${inner}` : inner
}

export function csvField(value: string | number | boolean | null): string {
  if (value === null) return ''
  const text = typeof value === 'string' ? guardFormula(value) : String(value)
  return /[",\r\n]/u.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

/** `text` without the ' guardFormula put after a separator or line break. */
export const unguardInner = (text: string): string => text.replace(GUARDED_INNER, '$1')

/** A text csvField guarded: the ' it put before each formula character is taken off again. */
export const unguardField = (text: string): string => {
  const inner = unguardInner(text)
  return /^'[=+\-@\t\r]/u.test(inner) ? inner.slice(1) : inner
}

/**
 * Rows of a CSV file as spreadsheets save it: a UTF-8 byte-order mark skipped, fields separated by the
 * header's delimiter (`,`, or `;` as some locales save), quoted fields with doubled quotes, commas and
 * line breaks inside, records ended by CRLF, LF or CR; lines with no field at all skipped.
 * Throws on a quote left open, which would otherwise swallow every row after it.
 */
export function parseCsv(text: string): string[][] {
  let input = text.startsWith('\uFEFF') ? text.slice(1) : text
  const firstLine = input.slice(0, input.search(/[\r\n]|$/u))
  const delimiter = !firstLine.includes(',') && firstLine.includes(';') ? ';' : ','
  if (!/[\r\n]$/u.test(input)) input += '\n'
  const rows: string[][] = []
  let row: string[] = []
  let field = ''
  let quoted = false
  let line = 1
  let quoteLine = 0
  for (let i = 0; i < input.length; i++) {
    const char = input[i]!
    if (quoted) {
      if (char === '"') {
        if (input[i + 1] === '"') {
          field += '"'
          i++
        } else quoted = false
      } else {
        if (char === '\n') line++
        field += char
      }
      continue
    }
    if (char === '"' && field === '') {
      quoted = true
      quoteLine = line
    } else if (char === delimiter) {
      row.push(field)
      field = ''
    } else if (char === '\r' || char === '\n') {
      if (char === '\r' && input[i + 1] === '\n') i++
      line++
      row.push(field)
      if (row.length > 1 || row[0] !== '') rows.push(row)
      row = []
      field = ''
    } else field += char
  }
  if (quoted) throw new Error(`a quoted field opened on line ${quoteLine} is never closed`)
  return rows
}
