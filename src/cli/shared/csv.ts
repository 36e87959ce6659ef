// CSV as both client commands write it: RFC 4180 quoting (fields with a comma, quote or line break are
// quoted, quotes doubled), and a text that a spreadsheet would run as a formula (= + - @, tab, CR first)
// prefixed with ' so opening the file never executes it.

export function csvField(value: string | number | boolean | null): string {
  if (value === null) return ''
  let text = String(value)
  if (typeof value === 'string' && /^[=+\-@\t\r]/u.test(text)) text = `'${text}`
  return /[",\r\n]/u.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

/** A text csvField guarded: the ' it put before a formula character is taken off again. */
export const unguardField = (text: string): string => (/^'[=+\-@\t\r]/u.test(text) ? text.slice(1) : text)

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
