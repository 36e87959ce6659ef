// CSV as both client commands write it: RFC 4180 quoting (fields with a comma, quote or line break are
// quoted, quotes doubled), and a text that a spreadsheet would run as a formula (= + - @, tab, CR first)
// prefixed with ' so opening the file never executes it.

export function csvField(value: string | number | boolean | null): string {
  if (value === null) return ''
  let text = String(value)
  if (typeof value === 'string' && /^[=+\-@\t\r]/u.test(text)) text = `'${text}`
  return /[",\r\n]/u.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}
