// Long descriptions (`long_description: true`): for a complex image (a chart, graph, diagram, map,
// infographic, a screenshot of a table) WCAG 1.1.1 wants more than alt text can carry. The model judges
// the image and, when it is complex, writes a long description beside a short alt text that names the
// kind of image and its point. Here: the prompt's wording, the plain answer's marker, and the cleaning
// that makes whatever the model wrote one bounded paragraph of plain text, or null.
import { MAX_LONG_DESCRIPTION_CHARS } from '../../shared/limits'
import { characterCount, endsWithTerminalPunctuation, fitToLength, sentenceEndFor, toPlainText } from './text'

/** How a plain answer gives the long description: on a line of its own after the alt text. */
export const LONG_DESCRIPTION_MARKER = 'LONG DESCRIPTION:'

/** Shorter than this, a "long description" carries nothing a chart's data needs: it counts as none. */
const MIN_LONG_DESCRIPTION_CHARS = 20

const COMPLEX_MEANS = 'a chart, graph, diagram, map, infographic, or a screenshot of a table'
const WHAT_TO_WRITE = `plain sentences (no markdown, no lists, no labels) of at most ${MAX_LONG_DESCRIPTION_CHARS} characters: what the image shows, its data or structure in order, and its conclusion`

/** The rules added to the system prompt when a long description is asked for, plain or structured; `lang` names the language. */
export function longDescriptionRules(lang: string, structured: boolean): string[] {
  const altRule = `- Judge whether the image is complex: ${COMPLEX_MEANS}. If it is, the alt text names the kind of image and its main point, and may end by saying that a longer description follows.`
  if (structured) {
    return [altRule]
  }
  return [
    altRule,
    `- Only for a complex image: after the alt text, on a new line, write ${LONG_DESCRIPTION_MARKER} followed by a long description in ${lang}, as ${WHAT_TO_WRITE}. For any other image write no such line.`,
  ]
}

/** The structured answer's long_description field, explained in the system prompt. */
export function longDescriptionField(lang: string): string {
  return `  long_description: only for a complex image (${COMPLEX_MEANS}): a long description in ${lang}, as ${WHAT_TO_WRITE}; else null.`
}

/** The marker, with the markdown and quotes models put around it, and a colon or dash after it (or a line of its own: a heading). */
// The marks before and after a label are bounded: a match may start after every space of a long run,
// and an unbounded run of marks would make each of those starts read the whole run (quadratic time).
const LONG_LABEL = /(?:^|(?<=[\s.!?。]))[*_#>`"'\t -]{0,8}long[\t _-]?description[\t *_`"']{0,8}(?:[:\u2013\u2014]|(?=\r?\n))/imu
/** An alt-text label at the start of a line: a model that gives the long description first labels the alt text after it. */
const ALT_LABEL = /^[*_#>`"'\t -]{0,8}alt(?:ernative)?[\t _-]?text[\t *_`"']{0,8}[:\u2013\u2014]/imu

/**
 * A plain answer split at the marker: the alt text before it, the long description after it (null
 * when there is no marker). A model that wrote the long description first and labelled the alt text
 * after it is forgiven.
 */
export function splitPlainAnswer(raw: string): { alt: string; long: string | null } {
  const marker = LONG_LABEL.exec(raw)
  if (!marker) return { alt: raw, long: null }
  const before = raw.slice(0, marker.index)
  const after = raw.slice(marker.index + marker[0].length)
  const altLater = ALT_LABEL.exec(after)
  if (!/[\p{L}\p{N}]/u.test(before) && altLater) {
    return { alt: after.slice(altLater.index), long: after.slice(0, altLater.index) }
  }
  return { alt: before, long: after }
}

/** Words small models write for "none". */
const NONE = /^(?:none|null|n\/a|na|no|not applicable|not complex|no long description(?: needed)?|-|—)[.!]?$/iu

/** One line of markdown as plain text: no heading marks, list bullets or numbers, emphasis, code marks or table pipes. */
function plainLine(line: string): string {
  if (/^\|?\s*:?-{2,}:?(?:\s*\|\s*:?-{2,}:?)*\s*\|?$/u.test(line.trim())) return '' // a table's separator row
  return (
    line
      .replace(/^\s*(?:#{1,6}\s+|>\s*|[-*+•]\s+|\d{1,3}[.)]\s+)/u, '')
      .replace(/^\s*\|(.*)\|\s*$/u, '$1')
      // Cells joined by commas; split, not /\s*\|\s*/, which reads a long run of spaces once per space.
      .split('|')
      .map((cell) => cell.trim())
      .join(', ')
      .replace(/(\*\*|__|\*|`+|~~)(?=\S)([^*_`~]*?\S)\1/gu, '$2')
      .replace(/(?<![\p{L}\p{N}])_(\S(?:[^_]*\S)?)_(?![\p{L}\p{N}])/gu, '$1')
      .replace(/[*`]+/gu, '')
      .trim()
  )
}

/**
 * What the model wrote as a long description, made one paragraph of plain text: no markup, markdown or
 * label, lines joined as sentences, cut at a sentence boundary within MAX_LONG_DESCRIPTION_CHARS. Null
 * when nothing usable is left, or when it only repeats the alt text.
 */
export function cleanLongDescription(raw: string | null, language: string, altText = ''): string | null {
  if (raw === null) return null
  const lines = toPlainText(raw)
    .split(/\r?\n/u)
    .map(plainLine)
    .filter((line) => /[\p{L}\p{N}]/u.test(line))
  // A leading label of its own ("Description:") says nothing; the text after it does.
  if (lines[0] !== undefined) lines[0] = lines[0].replace(/^(?:long\s*)?description\s*[:\u2013\u2014]\s*/iu, '')
  const mark = sentenceEndFor(language)
  const sentences = lines.map((line) => (endsWithTerminalPunctuation(line, language) || /[:;,]$/u.test(line) ? line : `${line}${mark}`))
  const text = sentences.join(' ').replace(/\s+/gu, ' ').trim()
  if (NONE.test(text) || characterCount(text) < MIN_LONG_DESCRIPTION_CHARS) return null
  if (altText !== '' && text.toLowerCase() === altText.toLowerCase()) return null
  return characterCount(text) <= MAX_LONG_DESCRIPTION_CHARS ? text : fitToLength(text, MAX_LONG_DESCRIPTION_CHARS, language)
}
