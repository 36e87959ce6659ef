// What a Markdown file may hold before micromark is asked to parse it. micromark (through
// mdast-util-from-markdown) keeps a token per piece of markup and is worse than linear on some shapes:
// deeply nested block quotes or lists, long nested lists, many open brackets, long runs of emphasis
// delimiters in one paragraph. `--check` needs no key, so a pull request can put such a file in front
// of a CI runner. Each limit is counted in one linear pass, before parsing; the largest real Markdown
// files (release notes of Node.js and Rust, 0.8 MB each) are well within all of them, and at the
// limits a file costs a few seconds and some hundreds of MB. A file over one is reported, not parsed.

export const MARKDOWN_LIMITS = {
  /** Bytes in the file. */
  bytes: 2 * 1024 * 1024,
  lines: 40_000,
  /** Block quotes and list items opened at the start of one line (`> > - a`: 3). */
  depth: 16,
  /** List markers starting a line, nested ones included. */
  listItems: 10_000,
  /** `[`: every link and image label starts with one. */
  brackets: 20_000,
  /** Characters that start or end markup: ! # & * + - < = > [ \ ] _ ` | ~ */
  markup: 150_000,
  /** Runs of `*` or `_` that may open or close emphasis, in one paragraph (between blank lines). */
  emphasis: 1_000,
} as const

const MARKUP = new Set([...'!#&*+-<=>[\\]_`|~'].map((char) => char.charCodeAt(0)))

const THEMATIC_BREAK = /^[ \t]*([-*])(?:[ \t]*\1)+[ \t]*\r?$/u

const SPACE = 0x20
const TAB = 0x09
const LF = 0x0a
const CR = 0x0d
const GT = 0x3e
const STAR = 0x2a
const UNDERSCORE = 0x5f
const BRACKET = 0x5b

const isDigit = (code: number) => code >= 0x30 && code <= 0x39
const isAlphanumeric = (code: number) => isDigit(code) || ((code | 0x20) >= 0x61 && (code | 0x20) <= 0x7a) || code >= 0x80
const isBlank = (code: number) => code === SPACE || code === TAB

const count = (value: number) => value.toLocaleString('en-US')

const over = (what: string, found: number, limit: number) => `too complex to parse safely: ${what} ${count(found)} (at most ${count(limit)})`

/** Why a Markdown file of `size` bytes is not even decoded; null when it is not too large. */
export const markdownTooLarge = (size: number): string | null => (size > MARKDOWN_LIMITS.bytes ? over('bytes:', size, MARKDOWN_LIMITS.bytes) : null)

/** Why micromark must not be given `text`: the first limit it passes, and where; null when it is within every limit. */
export function markdownOverLimit(text: string): string | null {
  const limits = MARKDOWN_LIMITS
  let line = 1
  let listItems = 0
  let brackets = 0
  let markup = 0
  let emphasis = 0
  const length = text.length
  let at = 0
  for (;;) {
    // The line's container prefix: block quote markers and list markers, with the blanks between them.
    let depth = 0
    let item = false
    let i = at
    for (;;) {
      while (i < length && isBlank(text.charCodeAt(i))) i++
      const code = text.charCodeAt(i)
      let next = i + 1
      if (code !== GT) {
        if (isDigit(code)) {
          while (next < length && next - i < 9 && isDigit(text.charCodeAt(next))) next++
          const mark = text.charCodeAt(next)
          if (mark !== 0x2e && mark !== 0x29) break
          next++
        } else if (code !== 0x2d && code !== 0x2b && code !== STAR) break
        const after = text.charCodeAt(next)
        if (next < length && !isBlank(after) && after !== LF && after !== CR) break
        listItems++
        item = true
      }
      depth++
      i = next
    }
    let end = text.indexOf('\n', at)
    if (end < 0) end = length
    // `- - - - …` alone on a line is a thematic break, not nested lists.
    if (depth > 2 && THEMATIC_BREAK.test(text.slice(at, end))) {
      listItems -= depth
      depth = 0
    }
    if (depth > limits.depth) return over(`block quotes and list items opened on line ${count(line)}:`, depth, limits.depth)
    if (listItems > limits.listItems) return over('list items:', listItems, limits.listItems)
    markup += depth
    // Emphasis is resolved within one paragraph: a blank line, a new list item or a heading starts another.
    let blank = true
    for (let j = i; j < end; j++) {
      const code = text.charCodeAt(j)
      if (!isBlank(code) && code !== CR) {
        if (blank && (item || code === 0x23)) emphasis = 0
        blank = false
      }
      if (!MARKUP.has(code)) continue
      markup++
      if (code === BRACKET) brackets++
      else if ((code === STAR || code === UNDERSCORE) && text.charCodeAt(j - 1) !== code) {
        // A run of one delimiter counts once; `_` inside a word (snake_case) never opens or closes emphasis.
        let k = j + 1
        while (k < end && text.charCodeAt(k) === code) k++
        if (code === STAR || !(j > 0 && isAlphanumeric(text.charCodeAt(j - 1)) && k < end && isAlphanumeric(text.charCodeAt(k)))) emphasis++
      }
    }
    if (blank) emphasis = 0
    if (emphasis > limits.emphasis) return over(`emphasis delimiters in one paragraph, by line ${count(line)}:`, emphasis, limits.emphasis)
    if (brackets > limits.brackets) return over('“[” (link and image labels):', brackets, limits.brackets)
    if (markup > limits.markup) return over('markup characters:', markup, limits.markup)
    if (end >= length) return null
    at = end + 1
    line++
    if (line > limits.lines) return over('lines:', line, limits.lines)
  }
}
