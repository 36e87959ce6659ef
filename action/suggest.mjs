// Suggest mode's reading of an audit: `alttext audit --fix` wrote copies with the new alt texts and
// nothing else changed, so each line a copy changes is a suggestion for that line of the file.
import { existsSync, readFileSync, statSync } from 'node:fs'
import { isAbsolute, relative, resolve, sep } from 'node:path'

/**
 * The suggestions of an audit's JSON report (`pages[].fixed_copy`, `images[].written`), paths relative
 * to `cwd` with "/", and the pages that got alt text but cannot be suggested on a line, with why.
 * @param {{pages: {page: string, fixed_copy: string | null, images: {line: number, src: string, status: string, written?: boolean}[]}[]}} report
 * @param {string} cwd
 */
export function suggestionsFrom(report, cwd) {
  const suggestions = []
  const notSuggested = []
  const seen = new Set()
  for (const page of report.pages) {
    const written = page.images.filter((image) => image.written)
    if (!page.fixed_copy || written.length === 0) continue
    const unsuggested = (reason) => notSuggested.push({ page: page.page, images: written.length, reason })
    if (/^https?:\/\//.test(page.page)) {
      unsuggested('a page URL, not a file of the repository')
      continue
    }
    const file = resolve(cwd, page.page.split('!')[0])
    const path = relative(cwd, file).split(sep).join('/')
    if (path.startsWith('../') || isAbsolute(path)) {
      unsuggested('outside the working directory')
      continue
    }
    if (seen.has(path)) continue
    seen.add(path)
    if (/\.epub$/i.test(path)) {
      unsuggested('an EPUB book is a zip file: run alttext audit --fix on it for a fixed copy')
      continue
    }
    if (!existsSync(file) || !statSync(file).isFile()) {
      unsuggested('not found as a file')
      continue
    }
    const before = readFileSync(file, 'utf8').split('\n')
    const after = readFileSync(page.fixed_copy, 'utf8').split('\n')
    if (before.length !== after.length) {
      unsuggested('its fixed copy has a different number of lines')
      continue
    }
    const changed = []
    for (let index = 0; index < before.length; index++) if (before[index] !== after[index]) changed.push(index + 1)
    // Each image to the first changed line at or after where its tag starts (an alt may sit on a later line of the tag).
    const imagesOf = new Map(changed.map((line) => [line, []]))
    for (const image of written) {
      const line = changed.find((each) => each >= image.line)
      if (line !== undefined) imagesOf.get(line).push({ src: image.src, status: image.status })
    }
    for (const line of changed) {
      suggestions.push({ path, line, text: after[line - 1].replace(/\r$/, ''), images: imagesOf.get(line) })
    }
  }
  return { suggestions, notSuggested }
}

/** Which suggestions may be posted: on lines the pull request adds, not posted before. */
export function sortSuggestions(suggestions, changedLines, posted, markerOf) {
  const post = []
  const outside = []
  const already = []
  for (const suggestion of suggestions) {
    if (!changedLines.get(suggestion.path)?.has(suggestion.line)) outside.push(suggestion)
    else if (posted.has(markerOf(suggestion.path, suggestion.line, suggestion.text))) already.push(suggestion)
    else post.push(suggestion)
  }
  return { post, outside, already }
}

/** The job summary: one table row per suggestion, with what became of it. */
export function summaryOf({ rows, notSuggested, notes }) {
  const cell = (text) =>
    String(text)
      .replaceAll('|', '\\|')
      .replace(/[\r\n]+/g, ' ')
  const lines = ['## alttext: proposed alt text', '']
  for (const note of notes) lines.push(note, '')
  if (rows.length) {
    lines.push('| file | line | images | the line with its alt text | review comment |', '|---|---|---|---|---|')
    for (const row of rows) {
      const images = row.images.map((image) => `${image.src} (${image.status})`).join(', ')
      lines.push(`| ${cell(row.path)} | ${row.line} | ${cell(images)} | <code>${cell(escapeHtml(row.text.trim()))}</code> | ${cell(row.outcome)} |`)
    }
    lines.push('')
  }
  for (const page of notSuggested) lines.push(`- ${cell(page.page)}: ${page.images} image(s) got alt text, not suggested on a line: ${cell(page.reason)}`)
  return `${lines.join('\n')}\n`
}

const escapeHtml = (text) => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;').replaceAll('@', '&#64;')
