// Markdown files (.md, .markdown): CommonMark parsed by micromark through mdast-util-from-markdown,
// which gives every node's source offsets, so images in code blocks and inline code are never seen.
// The tree gives the images (inline, reference, inside links), their alt as it renders, the headings
// and paragraphs around them; micromark's own labelText tokens give the exact source span of each
// image's label (`![` … `]`), which is all --fix rewrites. HTML inside Markdown goes to the HTML scanner.
import type { Definition, Nodes, Root } from 'mdast'
import { type Extension as MdastExtension, fromMarkdown } from 'mdast-util-from-markdown'
import { frontmatterFromMarkdown } from 'mdast-util-frontmatter'
import { frontmatter } from 'micromark-extension-frontmatter'
import { linkTarget, resolveImage } from '../pages'
import { type FoundImage, IGNORE_COMMENT, type PageScan, scanHtml } from '../scan'
import { applyEdits, type Edit } from '../tag'
import { htmlAltEdit } from './html'
import { markdownOverLimit, markdownTooLarge } from './markdown-limits'
import { type DocumentFormat, locate, matchChanges, type ScannedDocument } from './types'

/** How --fix rewrites one image: its Markdown label, or the start tag of an HTML <img>. */
export type MarkdownImageSource =
  | {
      kind: 'markdown'
      /** Byte range of the label's text, between `![` and `]`. */
      start: number
      end: number
      /** A shortcut (`![a]`) or collapsed (`![a][]`) reference: its label is also the reference, kept as `[a]`. `end`: just after the label's "]". */
      reference: { label: string; end: number; collapsed: boolean } | null
    }
  | { kind: 'html' }

type MarkdownDocument = ScannedDocument & { sources: MarkdownImageSource[] }

/**
 * What a dialect of Markdown (MDX: mdx.ts) brings to this scan, so one walk serves both: its parser,
 * and how to read the nodes Markdown has no case for. `S` is how --fix rewrites one of its own images.
 */
export type MarkdownDialect<S> = {
  /** The tree of `text`; `labels` records each image label's span and goes to fromMarkdown's mdastExtensions. */
  parse(text: string, labels: MdastExtension): Root
  /** UTF-16 offsets into `text` that `node`'s images need as bytes (the walk's `byteAt` knows only those). */
  offsets(node: Nodes): number[]
  /** Reads a node the walk has no case for; false lets the walk go on into its children. */
  read(node: Nodes, walk: MarkdownWalk<S>): boolean
}

/** What a dialect's `read` may do at its place in the walk. */
export type MarkdownWalk<S> = {
  byteAt(offset: number | undefined): number
  /** Adds an image found at this place (the heading, link and text position are the walk's). */
  image(image: Omit<FoundImage, 'link' | 'linkWords' | 'caption' | 'heading' | 'at'>, source: S): void
  /** The next image found is skipped (an ignore marker), and counted in the scan's `ignored`. */
  ignoreNext(): void
  /** Walks `node`'s children as the content of a link to `href` (JSX `<a href>`), as a Markdown link's. */
  link(href: string, node: Nodes): void
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/** Byte offsets of UTF-16 offsets into `text` (whose UTF-8 starts at byte `shift`). */
export function byteOffsets(text: string, offsets: number[], shift: number): Map<number, number> {
  const sorted = [...new Set(offsets)].sort((a, b) => a - b)
  const out = new Map<number, number>()
  let unit = 0
  let bytes = shift
  for (const offset of sorted) {
    for (; unit < offset; unit++) {
      const code = text.charCodeAt(unit)
      if (code < 0x80) bytes += 1
      else if (code < 0x800) bytes += 2
      else if (code >= 0xd800 && code <= 0xdbff) {
        bytes += 4
        unit++
      } else bytes += 3
    }
    out.set(offset, bytes)
  }
  return out
}

/** A template tag in a link or image destination (`{{ … }}`, `{% … %}`): where, and its text. */
type TemplateTag = { start: number; end: number; text: string }

/** Stands for each UTF-16 unit of a masked tag: a private-use character, which a destination may hold. */
const TAG_MASK = '\ue000'
const TAG_MAX = 1_000
const MASK_RUN = /\ue000+/gu

/**
 * Jekyll and Hugo write `![a]({{ "/x.png" | relative_url }})`; CommonMark ends a destination at its
 * first space, so that is no image at all. Each template tag in a destination (after "](", or after a
 * definition's "]:") is masked for the parse by as many private-use characters: every offset stays, and
 * `unmask` puts the tags back into what the tree gives. One pass: the scan never goes back.
 */
function maskTemplateTags(text: string): { masked: string; tags: TemplateTag[] } {
  const tags: TemplateTag[] = []
  if (!text.includes('{{') && !text.includes('{%')) return { masked: text, tags }
  let from = 0
  for (;;) {
    const at = text.indexOf(']', from)
    if (at < 0) break
    from = at + 1
    const next = text[at + 1]
    if (next !== '(' && next !== ':') continue
    let i = at + 2
    while (text[i] === ' ' || text[i] === '\t') i++
    if (text[i] === '<') i++
    while (i < text.length) {
      const close = text.startsWith('{{', i) ? '}}' : text.startsWith('{%', i) ? '%}' : null
      if (close !== null) {
        const window = text.slice(i, i + TAG_MAX)
        const end = window.indexOf(close, 2)
        if (end < 0 || window.lastIndexOf('\n', end) >= 0) break
        tags.push({ start: i, end: i + end + 2, text: window.slice(0, end + 2) })
        i += end + 2
        continue
      }
      const code = text.charCodeAt(i)
      if (code <= 0x20 || code === 0x29 || code === 0x3e) break
      i++
    }
    from = Math.max(from, i)
  }
  if (tags.length === 0) return { masked: text, tags }
  const parts: string[] = []
  let at = 0
  for (const tag of tags) {
    parts.push(text.slice(at, tag.start), TAG_MASK.repeat(tag.end - tag.start))
    at = tag.end
  }
  parts.push(text.slice(at))
  return { masked: parts.join(''), tags }
}

/** The tree's strings (addresses, text) with the masked template tags within each node put back. */
function unmask(tree: Root, tags: TemplateTag[]) {
  if (tags.length === 0) return
  const firstFrom = (offset: number) => {
    let low = 0
    let high = tags.length
    while (low < high) {
      const middle = (low + high) >> 1
      if (tags[middle]!.start < offset) low = middle + 1
      else high = middle
    }
    return low
  }
  const restore = (value: string, start: number, end: number) => {
    if (!value.includes(TAG_MASK)) return value
    const inside: TemplateTag[] = []
    for (let index = firstFrom(start); index < tags.length && tags[index]!.end <= end; index++) inside.push(tags[index]!)
    let next = 0
    // Each run of masks is the next tags of the node that fill it exactly (tags side by side make one run).
    return value.replace(MASK_RUN, (run) => {
      for (; next < inside.length; next++) {
        let length = 0
        let last = next
        while (last < inside.length && length < run.length && (last === next || inside[last]!.start === inside[last - 1]!.end)) {
          length += inside[last]!.end - inside[last]!.start
          last++
        }
        if (length === run.length) {
          const text = inside
            .slice(next, last)
            .map((tag) => tag.text)
            .join('')
          next = last
          return text
        }
      }
      return run
    })
  }
  const visit = (node: Nodes) => {
    const start = node.position?.start.offset
    const end = node.position?.end.offset
    if (start !== undefined && end !== undefined) {
      if ('url' in node) node.url = restore(node.url, start, end)
      if ('value' in node) node.value = restore(node.value, start, end)
    }
    if ('children' in node) for (const child of node.children) visit(child)
  }
  visit(tree)
}

const frontMatter = (value: string): { lang: string | null; title: string | null } => {
  try {
    const data = Bun.YAML.parse(value) as Record<string, unknown> | null
    const pick = (key: string) => (data && typeof data === 'object' && typeof data[key] === 'string' ? (data[key] as string).trim() || null : null)
    return { lang: pick('lang') ?? pick('language'), title: pick('title') }
  } catch {
    return { lang: null, title: null }
  }
}

/**
 * Escapes an alt text for a Markdown label so that it renders as that text: every character that could
 * start markup there (brackets, emphasis, code, HTML, entities, table pipes) gets a backslash, which
 * CommonMark reads as the character itself; line breaks become spaces.
 */
export function escapeMarkdownAlt(alt: string): string {
  return alt.replace(/\s+/gu, ' ').replace(/[\\[\]*_`<>&!~|]/gu, (char) => `\\${char}`)
}

/** One Markdown (or, with `dialect`, MDX) file: its images, the text around them, and how --fix rewrites each. */
export function scanMarkdown<S = never>(
  page: { name: string; bytes: Uint8Array },
  token: string,
  dialect?: MarkdownDialect<S>,
): Omit<ScannedDocument, 'resolve' | 'linkTarget'> & { sources: (MarkdownImageSource | S)[] } {
  const { bytes } = page
  const tooLarge = markdownTooLarge(bytes.length)
  if (tooLarge !== null) throw new Error(tooLarge)
  const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0
  let text: string
  try {
    text = utf8.decode(bytes.subarray(bom))
  } catch {
    throw new Error('not valid UTF-8')
  }
  const tooComplex = markdownOverLimit(text)
  if (tooComplex !== null) throw new Error(tooComplex)
  // Where each label's text ends, by where it starts, from micromark's own labelText tokens (the tree
  // keeps only the alt it renders). An image's label text starts just after its "![".
  const labels = new Map<number, number>()
  const labelSpans: MdastExtension = {
    enter: {
      labelText(token) {
        labels.set(token.start.offset, token.end.offset)
      },
    },
  }
  let tree: Root
  if (dialect) tree = dialect.parse(text, labelSpans)
  else {
    const { masked, tags } = maskTemplateTags(text)
    tree = fromMarkdown(masked, { extensions: [frontmatter()], mdastExtensions: [frontmatterFromMarkdown(), labelSpans] })
    unmask(tree, tags)
  }
  const spanOf = (imageStart: number | undefined) => {
    const end = imageStart === undefined ? undefined : labels.get(imageStart + 2)
    return end === undefined || imageStart === undefined ? undefined : { start: imageStart + 2, end }
  }

  const definitions = new Map<string, Definition>()
  const collect = (node: Nodes) => {
    if (node.type === 'definition' && !definitions.has(node.identifier)) definitions.set(node.identifier, node)
    if ('children' in node) for (const child of node.children) collect(child)
  }
  collect(tree)

  // Every source offset the images need, turned into bytes in one pass.
  const wanted: number[] = []
  const visit = (node: Nodes) => {
    const at = node.position?.start.offset
    if (at !== undefined) wanted.push(at)
    if (node.position?.end.offset !== undefined) wanted.push(node.position.end.offset)
    const span = node.type === 'image' || node.type === 'imageReference' ? spanOf(at) : undefined
    if (span) wanted.push(span.start, span.end)
    if (dialect) wanted.push(...dialect.offsets(node))
    if ('children' in node) for (const child of node.children) visit(child)
  }
  visit(tree)
  const toByte = byteOffsets(text, wanted, bom)
  const byteAt = (offset: number | undefined) => toByte.get(offset ?? 0) ?? bom

  const images: FoundImage[] = []
  const sources: (MarkdownImageSource | S)[] = []
  // An ignore marker (`<!-- alttext-ignore -->`, MDX's `{/* alttext-ignore */}`) skips the next image, when no words come between them.
  let ignoreNext = false
  let ignored = 0
  const ignoring = () => {
    if (!ignoreNext) return false
    ignoreNext = false
    ignored++
    return true
  }
  const textParts: string[] = []
  let textLength = 0
  let heading: FoundImage['heading'] = null
  let link: { href: string; words: string } | null = null
  let lang: string | null = null
  let title: string | null = null
  const push = (piece: string) => {
    if (ignoreNext && piece.trim() !== '') ignoreNext = false
    // The scan's text is HTML-encoded (context.ts decodes it): keep a literal "&" literal.
    const encoded = piece.replaceAll('&', '&amp;')
    textParts.push(encoded)
    textLength += encoded.length
  }
  const wordsOf = (node: Nodes): string =>
    node.type === 'text' || node.type === 'inlineCode' ? node.value : 'children' in node ? node.children.map(wordsOf).join('') : ''

  const walk = (node: Nodes) => {
    switch (node.type) {
      case 'yaml': {
        const matter = frontMatter(node.value)
        lang ??= matter.lang
        title ??= matter.title
        return
      }
      case 'code':
      case 'definition':
        return
      case 'text':
      case 'inlineCode':
        push(node.value)
        return
      case 'break':
        push(' ')
        return
      case 'heading': {
        const range = { start: textLength, end: null as number | null }
        heading = range
        if (node.depth === 1) title ??= wordsOf(node).trim() || null
        for (const child of node.children) walk(child)
        range.end = textLength
        push(' ')
        return
      }
      case 'link':
      case 'linkReference': {
        const href = node.type === 'link' ? node.url : (definitions.get(node.identifier)?.url ?? '')
        const outer = link
        link = { href, words: wordsOf(node).replace(/\s+/gu, ' ').trim() }
        for (const child of node.children) walk(child)
        link = outer
        return
      }
      case 'image':
      case 'imageReference': {
        const start = node.position?.start.offset
        const span = spanOf(start)
        if (start === undefined || !span) return
        if (ignoring()) return
        const src = node.type === 'image' ? node.url : (definitions.get(node.identifier)?.url ?? null)
        // After the label's "]": a collapsed reference's "[]" (nothing between them in CommonMark).
        const reference =
          node.type === 'imageReference' && node.referenceType !== 'full'
            ? { label: text.slice(span.start, span.end), end: byteAt(span.end) + 1, collapsed: node.referenceType === 'collapsed' }
            : null
        images.push({
          kind: 'img',
          offset: byteAt(start),
          line: node.position?.start.line ?? 0,
          column: node.position?.start.column ?? 0,
          src: src === null ? null : src.trim() || null,
          textAttribute: 'alt',
          text: node.alt ?? '',
          decorativeByMarkup: false,
          labelledBy: false,
          link: link ? { href: link.href } : null,
          linkWords: link?.words,
          caption: null,
          heading,
          at: textLength,
        })
        sources.push({ kind: 'markdown', start: byteAt(span.start), end: byteAt(span.end), reference })
        return
      }
      case 'html': {
        // An HTML block or inline tag: its images as the HTML scanner finds them, at their place in the file.
        const from = byteAt(node.position?.start.offset)
        const to = byteAt(node.position?.end.offset)
        const comment = /^<!--([\s\S]*)-->$/u.exec(node.value.trim())
        if (comment && IGNORE_COMMENT.test(comment[1]!)) {
          ignoreNext = true
          return
        }
        const found = scanHtml(bytes.subarray(from, to), token, { context: false })
        ignored += found.ignored
        const inNode = found.images
        // An ignore comment in an earlier node skips this node's first image.
        if (ignoreNext && inNode.length > 0) {
          inNode.shift()
          ignored++
        }
        ignoreNext = false
        for (const image of inNode) {
          images.push({
            ...image,
            offset: image.offset + from,
            link: image.link ?? (link ? { href: link.href } : null),
            heading,
            caption: null,
            at: textLength,
          })
          sources.push({ kind: 'html' })
        }
        return
      }
    }
    if (dialect?.read(node, dialectWalk)) return
    if ('children' in node) {
      for (const child of node.children) walk(child)
      if (node.type === 'paragraph' || node.type === 'tableCell') push(' ')
    }
  }
  const dialectWalk: MarkdownWalk<S> = {
    byteAt,
    image(image, source) {
      if (ignoring()) return
      images.push({ ...image, link: link ? { href: link.href } : null, linkWords: link?.words, caption: null, heading, at: textLength })
      sources.push(source)
    },
    ignoreNext() {
      ignoreNext = true
    },
    link(href, node) {
      const outer = link
      link = { href, words: wordsOf(node).replace(/\s+/gu, ' ').trim() }
      if ('children' in node) for (const child of node.children) walk(child)
      link = outer
    },
  }
  walk(tree)

  const scan: PageScan = { images, links: [], lang, base: null, utf8: true, title: title ?? '', text: textParts.join(''), bytes, ignored }
  const locations = locate(
    bytes,
    images.map((image) => image.offset),
    page.name,
  )
  // An HTML tag's line was counted within its own node: the file's line replaces it.
  for (const [index, image] of images.entries()) image.line = locations[index]!.line
  return { name: page.name, scan, locations, language: lang, sources }
}

export const markdown: DocumentFormat = {
  name: 'markdown',
  scan(page, options) {
    if (page.bytes === null) return []
    const document = scanMarkdown({ name: page.name, bytes: page.bytes }, options.token)
    return [{ ...document, resolve: (src) => resolveImage(page, null, src), linkTarget: (href) => linkTarget(page, null, href) } satisfies MarkdownDocument]
  },
  apply(page, changes, options) {
    const bytes = page.bytes ?? new Uint8Array()
    const documents = options.documents ?? this.scan(page, options)
    const { matched, refused } = matchChanges(documents, changes)
    const edits: Edit[] = []
    const applied = []
    for (const { change, document, index } of matched) {
      const edit = markdownAltEdits(bytes, document, (document as MarkdownDocument).sources[index]!, index, change.alt)
      if (edit === null) {
        refused.push({ change, reason: 'the tag could not be read' })
        continue
      }
      edits.push(...edit)
      applied.push(change)
    }
    return { bytes: applied.length > 0 ? applyEdits(bytes, edits) : bytes, applied, refused }
  },
}

/**
 * The edits that give image `index` of a Markdown scan the alt text `alt`: its label rewritten
 * (by `escapeAlt`: MDX escapes more), or its HTML tag's attribute; null when the tag cannot be read.
 */
export function markdownAltEdits(
  bytes: Uint8Array,
  document: Pick<ScannedDocument, 'scan'>,
  source: MarkdownImageSource,
  index: number,
  alt: string,
  escapeAlt: (alt: string) => string = escapeMarkdownAlt,
): Edit[] | null {
  if (source.kind === 'html') {
    const edit = htmlAltEdit(bytes, document, index, alt)
    return edit === null ? null : [edit]
  }
  const edits: Edit[] = [{ start: source.start, end: source.end, text: escapeAlt(alt) }]
  // The old label named the definition too: it stays as the reference, `![new alt][old label]`.
  if (source.reference) {
    const at = source.reference.end
    edits.push({ start: at, end: source.reference.collapsed ? at + 2 : at, text: `[${source.reference.label}]` })
  }
  return edits
}

export const MARKDOWN_FILE = /\.(?:md|markdown)$/iu
