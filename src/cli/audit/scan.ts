// Finds the images of one HTML page with Bun's HTMLRewriter (lol-html, a real HTML5 tokenizer): every
// <img>, <input type=image>, and element with role=img whose inline style sets a background image.
// For each it keeps what the audit needs: the attributes (entities decoded), whether the markup makes
// it decorative, the enclosing link and figure, the heading above it and the text around it.
//
// Where each tag starts: HTMLRewriter gives no source positions, but it copies every byte it is not
// asked to change. So a marker comment is put before each found tag, and the marker's offset in the
// output, less the markers before it, is the tag's byte offset in the input. tag.ts reads the tag there.
import { decodeHTML, decodeHTMLAttribute } from 'entities'

export type ImageKind = 'img' | 'input' | 'role-img' | 'svg'

/** A range of the page's visible text (see `PageScan.text`); `end` is null until the element closes. */
type TextRange = { start: number; end: number | null }

export type FoundImage = {
  kind: ImageKind
  /** Byte offset of the tag's `<` in the page. */
  offset: number
  /** 1-based line of the tag. */
  line: number
  /** 1-based column of the tag's `<`, in UTF-16 code units (one per byte in a page not in UTF-8). */
  column: number
  /** The image's address as written (src, else data-src, else the first srcset candidate); null when none. */
  src: string | null
  /** The attribute that names the image: alt, or aria-label (role=img, or an <img> named only by it); an SVG's <title>. */
  textAttribute: 'alt' | 'aria-label' | 'title'
  /** That attribute's value, entities decoded; null when absent. */
  text: string | null
  /**
   * role=presentation|none or aria-hidden=true: the markup says the image is decorative; or the image is
   * inside a role=img element that has a name (its children are presentational, WAI-ARIA).
   */
  decorativeByMarkup: boolean
  /** Named by aria-labelledby: the name is elsewhere on the page, not checked here. */
  labelledBy: boolean
  /**
   * Why the image's text cannot be read from the file (an MDX `alt={t('x')}` or `{...props}`): the
   * image is listed as not checked, with this reason, and never rewritten. Absent for every other image.
   */
  unchecked?: string
  /**
   * The enclosing <a href>; its words are read from the bytes when needed (`linkText`). `named`: it has
   * an aria-label, aria-labelledby or title of its own. One object per link: images in it share it.
   */
  link: { href: string; named?: boolean } | null
  /** The enclosing <button>, and whether it has a name of its own (as `link`); absent outside HTML. */
  button?: { named: boolean } | null
  /** The link's own words when a format other than HTML already knows them (Markdown). */
  linkWords?: string
  caption: TextRange | null
  heading: TextRange | null
  /** Position in the page's visible text. */
  at: number
}

export type PageScan = {
  images: FoundImage[]
  /** href of every <a>, entities decoded, in document order (for --crawl). */
  links: string[]
  /** <html lang>, when given. */
  lang: string | null
  /** <base href>, when given. */
  base: string | null
  /** The declared encoding is UTF-8 (or none is declared: UTF-8 is assumed). */
  utf8: boolean
  title: string
  /**
   * Images skipped by an ignore marker (`data-alttext-ignore` on the image or an element around it, the
   * comment `<!-- alttext-ignore -->` before it, or its MDX form): not in `images`, only counted.
   */
  ignored: number
  /** The page's visible text (no script, style, template but a shadow root's, textarea), entities not yet decoded; '' without `context`. */
  text: string
  bytes: Uint8Array
}

const SKIPPED_TEXT = 'script, style, template:not([shadowrootmode]), textarea, title'
/** The ignore marker's attribute: on an image, or on an element whose images inside are all skipped. */
export const IGNORE_ATTRIBUTE = 'data-alttext-ignore'
/** The text of an ignore comment: `alttext-ignore`, optionally followed by a reason after a space or colon. */
export const IGNORE_COMMENT = /^\s*alttext-ignore(?:[\s:][\s\S]*)?$/u
/** The last ignore comment in some bytes before an image (see `ignoredByComment`). */
const LAST_IGNORE_COMMENT = /<!--\s*alttext-ignore(?:[\s:][\s\S]*?)?-->/gu
/** How far before an image its ignore comment may stand (bytes): a comment, tags and whitespace. */
const IGNORE_COMMENT_WINDOW = 4096

/**
 * Whether `text` (what stands between an ignore comment and the image after it) holds only tags,
 * comments and whitespace: the comment applies to the next image only when no words come between.
 */
export const onlyMarkupBetween = (text: string) =>
  text
    .replace(/<!--[\s\S]*?-->/gu, '')
    .replace(/<[^>]*>/gu, '')
    .trim() === ''

/** The image at `offset` follows an ignore comment with only markup and whitespace between them. */
function ignoredByComment(bytes: Uint8Array, offset: number): boolean {
  const start = Math.max(0, offset - IGNORE_COMMENT_WINDOW)
  const before = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8', start, offset)
  let end = -1
  for (const match of before.matchAll(LAST_IGNORE_COMMENT)) end = match.index + match[0].length
  return end >= 0 && onlyMarkupBetween(before.slice(end))
}
const BACKGROUND_URL = /background(?:-image)?\s*:[^;]*?url\(\s*(['"]?)(.*?)\1\s*\)/iu

const attribute = (element: HTMLRewriterTypes.Element, name: string): string | null => {
  const raw = element.getAttribute(name)
  return raw === null ? null : decodeHTMLAttribute(raw)
}

const tokens = (value: string | null) => (value ?? '').toLowerCase().split(/\s+/u).filter(Boolean)

/** The image address of an <img>: src, unless it is missing or a data: placeholder of a lazy loader. */
function imageSource(element: HTMLRewriterTypes.Element): string | null {
  const src = attribute(element, 'src')?.trim() || null
  const lazy = attribute(element, 'data-src')?.trim() || null
  if (lazy && (src === null || src.startsWith('data:'))) return lazy
  if (src) return src
  const srcset = attribute(element, 'srcset')?.trim()
  return srcset ? (srcset.split(',')[0]?.trim().split(/\s+/u)[0] ?? null) : null
}

const isImageInput = (element: HTMLRewriterTypes.Element) => attribute(element, 'type')?.trim().toLowerCase() === 'image'

/** The background image of an element with role=img (not an <img> or <input>); null when it has none. */
function roleImageBackground(element: HTMLRewriterTypes.Element): string | null {
  const tag = element.tagName.toLowerCase()
  if (tag === 'img' || tag === 'input' || tokens(attribute(element, 'role'))[0] !== 'img') return null
  return BACKGROUND_URL.exec(attribute(element, 'style') ?? '')?.[2]?.trim() || null
}

/**
 * Scans one page. `markerToken` is random per run; a page that contains it cannot be scanned. With
 * `context` the page's visible text, headings and captions are gathered too (for the requests' context:
 * a text handler sees every text chunk, which costs about a third more); without, only what the
 * findings need.
 */
export function scanHtml(bytes: Uint8Array, markerToken: string, options: { context: boolean } = { context: true }): PageScan {
  const marker = `<!--${markerToken}-->`
  const markerBytes = new TextEncoder().encode(marker)
  if (Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).includes(markerBytes)) {
    throw new Error('the page contains the scanner marker; run again')
  }

  const images: FoundImage[] = []
  const links: string[] = []
  const textParts: string[] = []
  let textLength = 0
  let skipDepth = 0
  let title = ''
  let lang: string | null = null
  let base: string | null = null
  let utf8 = true
  let charsetSeen = false
  let link: FoundImage['link'] = null
  let button: FoundImage['button'] = null
  // Named role=img elements open around the current position: their children are presentational.
  let namedRoleImgs = 0
  let heading: TextRange | null = null
  const figures: { caption: TextRange }[] = []
  // Ignore markers: elements with data-alttext-ignore open around the current position, and an ignore
  // comment seen since the last image (checked against the bytes between them once offsets are known).
  let ignoreDepth = 0
  let commentPending = false
  /** Per found tag (before the ignored ones are taken out): skipped by the attribute, or to check for a comment. */
  const ignoreOf: ('attribute' | 'comment' | null)[] = []

  const range = (element: HTMLRewriterTypes.Element, done?: () => void): TextRange => {
    const textRange: TextRange = { start: textLength, end: null }
    if (!element.selfClosing && element.canHaveContent) {
      element.onEndTag(() => {
        textRange.end = textLength
        done?.()
      })
    } else textRange.end = textLength
    return textRange
  }

  const found = (element: HTMLRewriterTypes.Element, image: Omit<FoundImage, 'offset' | 'line' | 'column' | 'link' | 'caption' | 'heading' | 'at'>) => {
    element.before(marker, { html: true })
    ignoreOf.push(ignoreDepth > 0 || element.hasAttribute(IGNORE_ATTRIBUTE) ? 'attribute' : commentPending ? 'comment' : null)
    commentPending = false
    const figure = figures.at(-1)
    images.push({
      ...image,
      decorativeByMarkup: image.decorativeByMarkup || namedRoleImgs > 0,
      offset: -1,
      line: 0,
      column: 0,
      link,
      button,
      caption: figure?.caption ?? null,
      heading,
      at: textLength,
    })
  }

  /** The element has a name of its own: aria-label, aria-labelledby or title, not blank. */
  const hasOwnName = (element: HTMLRewriterTypes.Element) =>
    ['aria-label', 'aria-labelledby', 'title'].some((name) => (attribute(element, name)?.trim() ?? '') !== '')

  const common = (element: HTMLRewriterTypes.Element) => {
    const role = tokens(attribute(element, 'role'))[0]
    return {
      decorativeByMarkup: role === 'presentation' || role === 'none' || attribute(element, 'aria-hidden')?.trim().toLowerCase() === 'true',
      labelledBy: (attribute(element, 'aria-labelledby')?.trim() ?? '') !== '',
    }
  }

  const imgLike = (element: HTMLRewriterTypes.Element, kind: 'img' | 'input') => {
    const alt = attribute(element, 'alt')
    const label = attribute(element, 'aria-label')
    const byLabel = alt === null && label !== null
    found(element, {
      kind,
      src: kind === 'img' ? imageSource(element) : attribute(element, 'src')?.trim() || null,
      textAttribute: byLabel ? 'aria-label' : 'alt',
      text: byLabel ? label : alt,
      ...common(element),
    })
  }

  const rewriter = new HTMLRewriter()
    // First: the handlers of an element run in the order they were added, and its own image handler must see the depth.
    .on(`[${IGNORE_ATTRIBUTE}]`, {
      element(element) {
        if (element.selfClosing || !element.canHaveContent) return
        ignoreDepth++
        element.onEndTag(() => {
          ignoreDepth--
        })
      },
    })
    .onDocument({
      comments(comment) {
        if (IGNORE_COMMENT.test(comment.text)) commentPending = true
      },
    })
    .on('html', {
      element(element) {
        // XHTML (EPUB 2 books) may give only xml:lang.
        lang ??= attribute(element, 'lang')?.trim() || attribute(element, 'xml:lang')?.trim() || null
      },
    })
    .on('base[href]', {
      element(element) {
        base ??= attribute(element, 'href')
      },
    })
    .on('meta', {
      element(element) {
        if (charsetSeen) return
        const charset =
          attribute(element, 'charset') ??
          (attribute(element, 'http-equiv')?.toLowerCase() === 'content-type'
            ? /charset\s*=\s*([^\s;]+)/iu.exec(attribute(element, 'content') ?? '')?.[1]
            : null)
        if (charset) {
          charsetSeen = true
          utf8 = /^utf-?8$/iu.test(charset.trim())
        }
      },
    })
    .on('title', {
      text(chunk) {
        if (title.length < 500) title += chunk.text
      },
    })
    .on('a[href]', {
      element(element) {
        const href = attribute(element, 'href') ?? ''
        links.push(href)
        const current = { href, named: hasOwnName(element) }
        link = current
        if (!element.selfClosing && element.canHaveContent) {
          element.onEndTag(() => {
            if (link === current) link = null
          })
        }
      },
    })
    .on('button', {
      element(element) {
        const current = { named: hasOwnName(element) }
        button = current
        if (!element.selfClosing && element.canHaveContent) {
          element.onEndTag(() => {
            if (button === current) button = null
          })
        }
      },
    })
    .on('img', { element: (element) => imgLike(element, 'img') })
    .on('input', {
      element(element) {
        if (isImageInput(element)) imgLike(element, 'input')
      },
    })
    .on('[role]', {
      element(element) {
        const background = roleImageBackground(element)
        if (background !== null) {
          found(element, { kind: 'role-img', src: background, textAttribute: 'aria-label', text: attribute(element, 'aria-label'), ...common(element) })
        }
        const tag = element.tagName.toLowerCase()
        const namedImage =
          tag !== 'img' &&
          tag !== 'input' &&
          tokens(attribute(element, 'role'))[0] === 'img' &&
          ((attribute(element, 'aria-label')?.trim() ?? '') !== '' || (attribute(element, 'aria-labelledby')?.trim() ?? '') !== '')
        if (namedImage && !element.selfClosing && element.canHaveContent) {
          namedRoleImgs++
          element.onEndTag(() => {
            namedRoleImgs--
          })
        }
      },
    })

  if (options.context) {
    rewriter
      .on(SKIPPED_TEXT, {
        element(element) {
          if (element.selfClosing || !element.canHaveContent) return
          skipDepth++
          element.onEndTag(() => {
            skipDepth--
          })
        },
      })
      .on('h1, h2, h3, h4, h5, h6', {
        element(element) {
          heading = range(element)
        },
      })
      .on('figure', {
        element(element) {
          // Images before the caption hold the same range object: it is filled in when the caption comes.
          figures.push({ caption: { start: -1, end: null } })
          range(element, () => figures.pop())
        },
      })
      .on('figcaption', {
        element(element) {
          const figure = figures.at(-1)
          if (!figure || figure.caption.start >= 0) return
          figure.caption.start = textLength
          range(element, () => {
            figure.caption.end = textLength
          })
        },
      })
      .onDocument({
        text(chunk) {
          if (skipDepth > 0) return
          // A space at the end of each text node, so that "<p>one</p><p>two</p>" does not read "onetwo".
          const piece = chunk.lastInTextNode ? `${chunk.text} ` : chunk.text
          if (piece === '') return
          textParts.push(piece)
          textLength += piece.length
        },
      })
  }

  let output = new Uint8Array(rewriter.transform(bytes) as unknown as ArrayBuffer)
  // Text a handler has seen comes out re-encoded as UTF-8: the same bytes in a valid UTF-8 page, more
  // bytes where the page is in another encoding or has invalid bytes (never fewer). Then the markers are
  // placed again by a pass without text handlers, which copies every byte.
  if (output.length !== bytes.length + images.length * markerBytes.length) {
    let count = 0
    const mark = {
      element(element: HTMLRewriterTypes.Element) {
        if (count < images.length) element.before(marker, { html: true })
        count++
      },
    }
    const placed = new HTMLRewriter()
      .on('img', mark)
      .on('input', {
        element(element) {
          if (isImageInput(element)) mark.element(element)
        },
      })
      .on('[role]', {
        element(element) {
          if (roleImageBackground(element) !== null) mark.element(element)
        },
      })
    output = new Uint8Array(placed.transform(bytes) as unknown as ArrayBuffer)
    if (count !== images.length || output.length !== bytes.length + images.length * markerBytes.length) throw new Error('the scanner lost track of a tag')
  }

  // Each marker's offset in the output, less the markers before it, is its tag's offset in the input.
  const outputBuffer = Buffer.from(output.buffer, output.byteOffset, output.byteLength)
  let from = 0
  const input = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let line = 1
  let nextNewline = input.indexOf(0x0a)
  // Columns are counted from the last tag on the same line, so a long minified line is decoded once.
  const lineDecoder = new TextDecoder(utf8 ? 'utf-8' : 'latin1')
  let counted = 0
  let column = 1
  for (const [index, image] of images.entries()) {
    const at = outputBuffer.indexOf(markerBytes, from)
    if (at < 0) throw new Error('the scanner lost track of a tag')
    image.offset = at - index * markerBytes.length
    from = at + markerBytes.length
    while (nextNewline >= 0 && nextNewline < image.offset) {
      line++
      counted = nextNewline + 1
      column = 1
      nextNewline = input.indexOf(0x0a, nextNewline + 1)
    }
    column += lineDecoder.decode(input.subarray(counted, image.offset)).length
    counted = image.offset
    image.line = line
    image.column = column
  }
  for (const image of images) if (image.caption && image.caption.start < 0) image.caption = null
  const kept = images.filter((image, index) => {
    const ignore = ignoreOf[index]
    return ignore === null || (ignore === 'comment' && !ignoredByComment(bytes, image.offset))
  })

  return {
    images: kept,
    ignored: images.length - kept.length,
    links,
    lang,
    base,
    utf8,
    title: decodeHTML(title).replace(/\s+/gu, ' ').trim(),
    text: textParts.join(''),
    bytes,
  }
}

/** Decoded, whitespace-collapsed text of a range of the page's visible text. */
export function textOf(scan: PageScan, range: { start: number; end: number | null } | null, max = 300): string {
  if (!range || range.start < 0) return ''
  const end = range.end ?? Math.min(scan.text.length, range.start + max * 2)
  return clean(scan.text.slice(range.start, Math.min(end, range.start + max * 2))).slice(0, max)
}

/** Up to `max` characters of visible text before (from `floor` on) and after the image, cut at word boundaries. */
export function textAround(scan: PageScan, at: number, max = 200, floor = 0): { before: string; after: string } {
  const before = clean(scan.text.slice(Math.max(floor, at - max * 3), at))
  const after = clean(scan.text.slice(at, at + max * 3))
  const cutBefore = before.length > max ? before.slice(before.length - max).replace(/^\S*\s/u, '') : before
  const cutAfter = after.length > max ? after.slice(0, max).replace(/\s\S*$/u, '') : after
  return { before: cutBefore, after: cutAfter }
}

const clean = (raw: string) => decodeHTML(raw).replace(/\s+/gu, ' ').trim()

const LINK_START = /<a[\s>]/giu
const BUTTON_START = /<button[\s>]/giu

/**
 * The words of the link around an image, read from the page's bytes: from the last "<a" before the
 * image to the first "</a" after it, tags and script-free (a link holds no script), entities decoded.
 */
export function linkText(scan: PageScan, image: FoundImage): string {
  if (image.link === null) return ''
  if (image.linkWords !== undefined) return image.linkWords
  return wordsAround(scan, image, LINK_START, '</a')
}

/** The words of the <button> around an image, read as `linkText` reads a link's. */
export const buttonText = (scan: PageScan, image: FoundImage): string => (image.button ? wordsAround(scan, image, BUTTON_START, '</button') : '')

function wordsAround(scan: PageScan, image: FoundImage, open: RegExp, close: string): string {
  const buffer = Buffer.from(scan.bytes.buffer, scan.bytes.byteOffset, scan.bytes.byteLength)
  const windowStart = Math.max(0, image.offset - 4096)
  const before = buffer.toString('utf8', windowStart, image.offset)
  let start = -1
  for (const match of before.matchAll(open)) start = match.index
  const endAt = buffer.indexOf(close, image.offset, 'latin1')
  const after = buffer.toString('utf8', image.offset, endAt < 0 ? Math.min(buffer.length, image.offset + 4096) : Math.min(endAt, image.offset + 4096))
  const inside = `${start < 0 ? '' : before.slice(before.indexOf('>', start) + 1)}${after}`
  return clean(inside.replace(/<[^>]*>?/gu, ' '))
}
