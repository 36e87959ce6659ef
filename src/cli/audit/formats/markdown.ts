// Markdown files (.md, .markdown): CommonMark parsed by micromark through mdast-util-from-markdown,
// which gives every node's source offsets, so images in code blocks and inline code are never seen.
// The tree gives the images (inline, reference, inside links), their alt as it renders, the headings
// and paragraphs around them; micromark's own labelText tokens give the exact source span of each
// image's label (`![` … `]`), which is all --fix rewrites. HTML inside Markdown goes to the HTML scanner.
import type { Definition, Nodes, Root } from 'mdast'
import { fromMarkdown } from 'mdast-util-from-markdown'
import { frontmatterFromMarkdown } from 'mdast-util-frontmatter'
import { frontmatter } from 'micromark-extension-frontmatter'
import { linkTarget, resolveImage } from '../pages'
import { type FoundImage, type PageScan, scanHtml } from '../scan'
import { applyEdits, type Edit } from '../tag'
import { htmlAltEdit } from './html'
import { markdownOverLimit, markdownTooLarge } from './markdown-limits'
import { type DocumentFormat, locate, matchChanges, type ScannedDocument } from './types'

/** How --fix rewrites one image: its Markdown label, or the start tag of an HTML <img>. */
type MarkdownImageSource =
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

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/** Byte offsets of UTF-16 offsets into `text` (whose UTF-8 starts at byte `shift`). */
function byteOffsets(text: string, offsets: number[], shift: number): Map<number, number> {
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

function scanMarkdown(page: { name: string; bytes: Uint8Array }, token: string): Omit<MarkdownDocument, 'resolve' | 'linkTarget'> {
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
  const tree: Root = fromMarkdown(text, {
    extensions: [frontmatter()],
    mdastExtensions: [
      frontmatterFromMarkdown(),
      {
        enter: {
          labelText(token) {
            labels.set(token.start.offset, token.end.offset)
          },
        },
      },
    ],
  })
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
    if ('children' in node) for (const child of node.children) visit(child)
  }
  visit(tree)
  const toByte = byteOffsets(text, wanted, bom)
  const byteAt = (offset: number | undefined) => toByte.get(offset ?? 0) ?? bom

  const images: FoundImage[] = []
  const sources: MarkdownImageSource[] = []
  const textParts: string[] = []
  let textLength = 0
  let heading: FoundImage['heading'] = null
  let link: { href: string; words: string } | null = null
  let lang: string | null = null
  let title: string | null = null
  const push = (piece: string) => {
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
        const found = scanHtml(bytes.subarray(from, to), token, { context: false })
        for (const image of found.images) {
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
    if ('children' in node) {
      for (const child of node.children) walk(child)
      if (node.type === 'paragraph' || node.type === 'tableCell') push(' ')
    }
  }
  walk(tree)

  const scan: PageScan = { images, links: [], lang, base: null, utf8: true, title: title ?? '', text: textParts.join(''), bytes }
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
      const source = (document as MarkdownDocument).sources[index]!
      if (source.kind === 'html') {
        const edit = htmlAltEdit(bytes, document, index, change.alt)
        if (edit === null) {
          refused.push({ change, reason: 'the tag could not be read' })
          continue
        }
        edits.push(edit)
      } else {
        edits.push({ start: source.start, end: source.end, text: escapeMarkdownAlt(change.alt) })
        // The old label named the definition too: it stays as the reference, `![new alt][old label]`.
        if (source.reference) {
          const at = source.reference.end
          edits.push({ start: at, end: source.reference.collapsed ? at + 2 : at, text: `[${source.reference.label}]` })
        }
      }
      applied.push(change)
    }
    return { bytes: applied.length > 0 ? applyEdits(bytes, edits) : bytes, applied, refused }
  },
}

export const MARKDOWN_FILE = /\.(?:md|markdown)$/iu
