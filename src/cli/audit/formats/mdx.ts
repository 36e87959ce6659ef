// MDX files (.mdx): Markdown with JSX and JavaScript expressions, parsed by micromark's MDX extensions
// through mdast-util-from-markdown. The Markdown scan (markdown.ts) walks the tree and finds the
// Markdown images; this dialect adds JSX `<img>` and `<Image>` (Next.js, Astro) with their `src` and
// `alt` props and the ignore marker `{/* alttext-ignore */}`. An alt that is code (`alt={t('x')}`,
// `{...props}`) is listed as not checked and never rewritten. The MDX parser is loaded on the first
// .mdx file only, so a run over Markdown never pays for it.
import type { Nodes, Root } from 'mdast'
import type { Extension as MdastExtension } from 'mdast-util-from-markdown'
import type { MdxJsxAttribute, MdxJsxExpressionAttribute, MdxJsxFlowElement, MdxJsxTextElement } from 'mdast-util-mdx'
import { linkTarget, resolveImage } from '../pages'
import { applyEdits, type Edit } from '../tag'
import { escapeMarkdownAlt, type MarkdownDialect, type MarkdownImageSource, markdownAltEdits, scanMarkdown } from './markdown'
import { type DocumentFormat, matchChanges, type ScannedDocument } from './types'

export const MDX_FILE = /\.mdx$/iu

/** The JSX elements read as images: HTML's <img>, and the image components of Next.js and Astro. */
const IMAGE_ELEMENTS = new Set(['img', 'Image'])
/** The JSX elements read as links (HTML's <a>, Next.js and Gatsby's <Link>): an image that is their only content names them. */
const LINK_ELEMENTS = new Set(['a', 'Link'])
const IGNORE_MARKER = /^\s*\/\*\s*alttext-ignore\s*\*\/\s*$/u

/** How --fix rewrites a JSX image: its alt's value (from `=` to the end of the attribute), or a new ` alt="…"` after the tag name. */
type JsxImageSource = {
  kind: 'jsx'
  /** Byte range of the alt value (`"…"`, `'…'`, `{…}`); null when there is no alt. */
  value: { start: number; end: number } | null
  /** Byte offset just after the tag name. */
  nameEnd: number
  /** Why the alt cannot be written (it is code): the image is not rewritten. */
  unchecked: string | null
}

type MdxSource = MarkdownImageSource | JsxImageSource
type MdxDocument = ScannedDocument & { sources: MdxSource[] }

type JsxElement = MdxJsxFlowElement | MdxJsxTextElement
const isJsxElement = (node: Nodes): node is JsxElement => node.type === 'mdxJsxFlowElement' || node.type === 'mdxJsxTextElement'

type MdxParser = {
  fromMarkdown: typeof import('mdast-util-from-markdown').fromMarkdown
  mdxjs: typeof import('micromark-extension-mdxjs').mdxjs
  mdxFromMarkdown: typeof import('mdast-util-mdx').mdxFromMarkdown
  frontmatter: typeof import('micromark-extension-frontmatter').frontmatter
  frontmatterFromMarkdown: typeof import('mdast-util-frontmatter').frontmatterFromMarkdown
}

/** The MDX parser, loaded when the first .mdx file is read (the module cache keeps it). */
function mdxParser(): MdxParser {
  return {
    fromMarkdown: require('mdast-util-from-markdown').fromMarkdown,
    mdxjs: require('micromark-extension-mdxjs').mdxjs,
    mdxFromMarkdown: require('mdast-util-mdx').mdxFromMarkdown,
    frontmatter: require('micromark-extension-frontmatter').frontmatter,
    frontmatterFromMarkdown: require('mdast-util-frontmatter').frontmatterFromMarkdown,
  }
}

/** "line 5, column 2: Unexpected end of file in attribute name…": where micromark or acorn stopped, and why. */
function parseError(error: unknown): Error {
  const message = error as { place?: unknown; reason?: string; message?: string }
  const place = message.place as { line?: number; column?: number; start?: { line: number; column: number } } | undefined
  const at = place?.start ?? place
  let reason = message.reason ?? message.message ?? String(error)
  // A closing tag that never comes is reported with its place in the text: "… `<div>` (5:1-5:6)".
  const inText = at?.line ? null : /\s*\((\d+):(\d+)(?:-\d+:\d+)?\)$/u.exec(reason)
  if (inText) reason = reason.slice(0, inText.index)
  const line = at?.line ?? inText?.[1]
  const column = at?.line ? at.column : inText?.[2]
  return new Error(`${line ? `line ${line}, column ${column ?? 1}: ` : ''}${reason}`)
}

/** A JSX string attribute's value as the reader takes it: JSX strings have no backslash escapes, but character references are decoded. */
const AMPERSAND_REFERENCE = /&(?=#[0-9]+;|#[xX][0-9a-fA-F]+;|[A-Za-z][A-Za-z0-9]*;)/gu

/**
 * An alt text as a JSX attribute value that reads back as exactly that text: in double quotes, else in
 * single quotes, else (both appear) as a JavaScript string in an expression, `{"…"}`. An "&" that would
 * start a character reference is written as one.
 */
export function jsxAttributeValue(alt: string): string {
  if (!alt.includes('"')) return `"${alt.replace(AMPERSAND_REFERENCE, '&amp;')}"`
  if (!alt.includes("'")) return `'${alt.replace(AMPERSAND_REFERENCE, '&amp;')}'`
  return `{${JSON.stringify(alt)}}`
}

/** MDX labels also read `{` as an expression: escaped with the rest. */
const escapeMdxAlt = (alt: string) => escapeMarkdownAlt(alt).replace(/[{}]/gu, (char) => `\\${char}`)

type Attributes = (MdxJsxAttribute | MdxJsxExpressionAttribute)[]

/** The string an attribute's value is, when it is one: a JSX string, or an expression that is only a string literal (`{"…"}`, `` {`…`} ``). */
function literalValue(attribute: MdxJsxAttribute): { text: string } | { code: string } {
  const value = attribute.value
  if (typeof value === 'string') return { text: value }
  if (value === null || value === undefined) return { code: `${attribute.name} without a value` }
  const statement = value.data?.estree?.body[0]
  const expression = value.data?.estree?.body.length === 1 && statement?.type === 'ExpressionStatement' ? statement.expression : null
  if (expression?.type === 'Literal' && typeof expression.value === 'string') return { text: expression.value }
  if (expression?.type === 'TemplateLiteral' && expression.expressions.length === 0) {
    const cooked = expression.quasis[0]?.value.cooked
    if (typeof cooked === 'string') return { text: cooked }
  }
  return { code: `{${value.value}}` }
}

/**
 * The image's alt as the last prop that sets it: a literal (checked), code (not checked), or none. A
 * spread after the last alt (or with none) may set it: not checked either.
 */
function altOf(attributes: Attributes): { attribute: MdxJsxAttribute | null; text: string | null; unchecked: string | null } {
  let found: MdxJsxAttribute | null = null
  let spreadAfter: string | null = null
  for (const attribute of attributes) {
    if (attribute.type === 'mdxJsxExpressionAttribute') spreadAfter = `{${attribute.value}}`
    else if (attribute.name === 'alt') {
      found = attribute
      spreadAfter = null
    }
  }
  if (spreadAfter !== null) {
    return { attribute: found, text: null, unchecked: `the alt may come from ${spreadAfter}, which only the site's build evaluates; not rewritten` }
  }
  if (found === null) return { attribute: null, text: null, unchecked: null }
  const value = literalValue(found)
  if ('text' in value) return { attribute: found, text: value.text, unchecked: null }
  return { attribute: found, text: null, unchecked: `the alt is code, ${value.code}, which only the site's build evaluates; not rewritten` }
}

/** A literal string prop (`src`, `role`…), or its code in braces when it is an expression; null when absent. */
function prop(attributes: Attributes, name: string): string | null {
  let found: string | null = null
  for (const attribute of attributes) {
    if (attribute.type !== 'mdxJsxAttribute' || attribute.name !== name) continue
    const value = literalValue(attribute)
    found = 'text' in value ? value.text : value.code
  }
  return found
}

/** Where an element's tag name ends in `text` (`<` and any space before the name skipped). */
function nameEndOf(text: string, element: JsxElement): number | null {
  const start = element.position?.start.offset
  if (start === undefined || element.name === null) return null
  let at = start + 1
  while (/\s/u.test(text[at] ?? '')) at++
  return text.startsWith(element.name, at) ? at + element.name.length : null
}

/** Where an attribute's value starts: after its name, `=` and any space. */
function valueStartOf(text: string, attribute: MdxJsxAttribute): number | null {
  const start = attribute.position?.start.offset
  const end = attribute.position?.end.offset
  if (start === undefined || end === undefined) return null
  const equals = text.indexOf('=', start + attribute.name.length)
  if (equals < 0 || equals >= end) return null
  let at = equals + 1
  while (at < end && /\s/u.test(text[at]!)) at++
  return at
}

/** An expression prop's value as the document's `resolve` sees it: `{logo}`. */
const CODE_ADDRESS = /^\{[\s\S]*\}$/u

function mdxDialect(): MarkdownDialect<JsxImageSource> {
  const parser = mdxParser()
  // The text parsed: attribute spans are read from it.
  let text = ''
  const imageElement = (node: Nodes): node is JsxElement => isJsxElement(node) && node.name !== null && IMAGE_ELEMENTS.has(node.name)
  return {
    parse(source: string, labels: MdastExtension): Root {
      text = source
      try {
        return parser.fromMarkdown(source, {
          extensions: [parser.mdxjs(), parser.frontmatter()],
          mdastExtensions: [parser.mdxFromMarkdown(), parser.frontmatterFromMarkdown(), labels],
        })
      } catch (error) {
        throw parseError(error)
      }
    },
    offsets(node) {
      if (!imageElement(node)) return []
      const wanted: number[] = []
      const nameEnd = nameEndOf(text, node)
      if (nameEnd !== null) wanted.push(nameEnd)
      const { attribute } = altOf(node.attributes)
      const valueStart = attribute && valueStartOf(text, attribute)
      if (valueStart !== null && valueStart !== undefined) wanted.push(valueStart)
      if (attribute?.position?.end.offset !== undefined) wanted.push(attribute.position.end.offset)
      return wanted
    },
    read(node, walk) {
      if (node.type === 'mdxFlowExpression' || node.type === 'mdxTextExpression') {
        if (IGNORE_MARKER.test(node.value)) walk.ignoreNext()
        return true
      }
      if (node.type === 'mdxjsEsm') return true
      if (isJsxElement(node) && node.name !== null && LINK_ELEMENTS.has(node.name)) {
        const href = prop(node.attributes, 'href') ?? prop(node.attributes, 'to')
        if (href === null) return false
        walk.link(href, node)
        return true
      }
      if (!imageElement(node)) return false
      const start = node.position?.start
      const nameEnd = nameEndOf(text, node)
      if (start?.offset === undefined || nameEnd === null) return false
      const alt = altOf(node.attributes)
      const valueStart = alt.attribute && valueStartOf(text, alt.attribute)
      const valueEnd = alt.attribute?.position?.end.offset
      const role = (prop(node.attributes, 'role') ?? '').trim().toLowerCase()
      const image: Parameters<typeof walk.image>[0] = {
        kind: 'img',
        offset: walk.byteAt(start.offset),
        line: start.line,
        column: start.column,
        src: prop(node.attributes, 'src')?.trim() || null,
        textAttribute: 'alt',
        text: alt.text,
        decorativeByMarkup: role === 'presentation' || role === 'none' || (prop(node.attributes, 'aria-hidden') ?? '').trim().toLowerCase() === 'true',
        labelledBy: (prop(node.attributes, 'aria-labelledby')?.trim() ?? '') !== '',
        ...(alt.unchecked !== null && { unchecked: alt.unchecked }),
      }
      walk.image(image, {
        kind: 'jsx',
        value:
          valueStart !== null && valueStart !== undefined && valueEnd !== undefined ? { start: walk.byteAt(valueStart), end: walk.byteAt(valueEnd) } : null,
        nameEnd: walk.byteAt(nameEnd),
        unchecked: alt.unchecked,
      })
      return false
    },
  }
}

export const mdx: DocumentFormat = {
  name: 'mdx',
  scan(page, options) {
    if (page.bytes === null) return []
    const document = scanMarkdown({ name: page.name, bytes: page.bytes }, options.token, mdxDialect())
    const resolve = (src: string | null) =>
      src !== null && CODE_ADDRESS.test(src)
        ? { error: `not checkable by the model: the address is code, ${src}, which only the site's build evaluates`, unseen: true }
        : resolveImage(page, null, src)
    return [{ ...document, resolve, linkTarget: (href) => linkTarget(page, null, href) } satisfies MdxDocument]
  },
  apply(page, changes, options) {
    const bytes = page.bytes ?? new Uint8Array()
    const documents = options.documents ?? this.scan(page, options)
    const { matched, refused } = matchChanges(documents, changes)
    const edits: Edit[] = []
    const applied = []
    for (const { change, document, index } of matched) {
      const source = (document as MdxDocument).sources[index]!
      if (source.kind !== 'jsx') {
        const found = markdownAltEdits(bytes, document, source, index, change.alt, escapeMdxAlt)
        if (found === null) {
          refused.push({ change, reason: 'the tag could not be read' })
          continue
        }
        edits.push(...found)
      } else if (source.unchecked !== null) {
        refused.push({ change, reason: source.unchecked })
        continue
      } else if (source.value) edits.push({ ...source.value, text: jsxAttributeValue(change.alt) })
      else edits.push({ start: source.nameEnd, end: source.nameEnd, text: ` alt=${jsxAttributeValue(change.alt)}` })
      applied.push(change)
    }
    return { bytes: applied.length > 0 ? applyEdits(bytes, edits) : bytes, applied, refused }
  },
}
