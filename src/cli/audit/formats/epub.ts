// EPUB books (.epub; EPUB 3, and EPUB 2 where it costs nothing): META-INF/container.xml names the
// package document (OPF); its spine lists the content documents (XHTML, SVG) in reading order, an image
// in it standing for the content document its manifest fallback chain leads to. Each is scanned like an
// HTML page (<img> with its <figure>/<figcaption>, headings and text as context), plus SVG <image>
// elements, whose text alternative is their <svg>'s <title>. The book's dc:language is the default
// language. Images are read from inside the book only (each entry once) and sent as uploads. --fix
// writes a new .epub: the changed content documents, and the package's accessibility metadata once
// every image has a text alternative; every other entry is copied as it was (zip.ts). XML is read by
// HTMLRewriter (a tokenizer): no DTD is read and no entity of one is expanded.
import { decodeHTML, decodeHTMLAttribute } from 'entities'
import { linkTarget, resolveImage } from '../pages'
import { type FoundImage, type PageScan, scanHtml } from '../scan'
import { applyEdits, type Edit, readStartTag } from '../tag'
import { htmlAltEdit } from './html'
import { type AltChange, type ApplyResult, type DocumentFormat, locate, matchChanges, type ScannedDocument } from './types'
import { entryData, readZip, releaseContents, writeZip, type ZipArchive, ZipError } from './zip'

export const EPUB_FILE = /\.epub$/iu

const MIMETYPE = 'application/epub+zip'
const CONTAINER = 'META-INF/container.xml'
const CONTENT_TYPES = new Set(['application/xhtml+xml', 'image/svg+xml'])
const ALTERNATIVE_TEXT = 'alternativeText'
/** The sentence --fix puts in the package when every image has a text alternative. */
const SUMMARY = 'Every image in this publication has a text alternative.'

type Package = {
  path: string
  /** The package document's bytes (--fix adds the accessibility metadata to them). */
  bytes: Uint8Array
  /** "2.0", "3.0"… */
  version: string
  language: string | null
  /** Manifest items by id: href resolved to an entry name, media type, and the id of its fallback. */
  items: Map<string, { name: string; type: string; fallback: string | null }>
  /** Media types by entry name. */
  types: Map<string, string>
  spine: string[]
  hasAlternativeText: boolean
  hasSummary: boolean
}

/** An SVG <image>, by where its <svg> and that svg's <title> are. */
type SvgImage = { svgStart: number; svgEnd: number; title: { start: number; end: number } | null }

type EpubDocument = ScannedDocument & { entry: string; svg: (SvgImage | null)[]; opened: OpenBook }

const decoder = new TextDecoder('utf-8', { ignoreBOM: true })
const latin1 = new TextDecoder('latin1')
const encoder = new TextEncoder()

/** The entry a reference from `from` (an entry name) points to; null for other schemes or outside the book. */
function entryFor(from: string, href: string): string | null {
  let url: URL
  try {
    url = new URL(href.trim(), `file:///${from.split('/').map(encodeURIComponent).join('/')}`)
  } catch {
    return null
  }
  if (url.protocol !== 'file:') return null
  try {
    return decodeURIComponent(url.pathname.slice(1))
  } catch {
    return null
  }
}

const localName = (tag: string) => tag.slice(tag.indexOf(':') + 1).toLowerCase()

/** Runs `read` on one entry of the book; an error it throws names that entry. */
function inEntry<T>(name: string, read: () => T): T {
  try {
    return read()
  } catch (error) {
    if (error instanceof ZipError) throw error
    throw new ZipError(`${name}: ${(error as Error).message}`)
  }
}

function readPackage(archive: ZipArchive): Package {
  const bytesOf = (name: string) => {
    const entry = archive.byName.get(name)
    if (!entry) throw new ZipError(`not an EPUB: no ${name}`)
    return entryData(archive, entry)
  }
  const mimetype = archive.entries[0]
  if (mimetype?.name !== 'mimetype' || decoder.decode(bytesOf('mimetype')).trim() !== MIMETYPE) {
    throw new ZipError(`not an EPUB: the first entry is not a mimetype of ${MIMETYPE}`)
  }
  let path: string | null = null
  inEntry(CONTAINER, () =>
    new HTMLRewriter()
      .on('*', {
        element(element) {
          if (path === null && localName(element.tagName) === 'rootfile') path = decodeHTMLAttribute(element.getAttribute('full-path') ?? '') || null
        },
      })
      .transform(bytesOf(CONTAINER)),
  )
  if (path === null) throw new ZipError(`not an EPUB: ${CONTAINER} names no package document`)
  const opfPath: string = path
  const bytes = bytesOf(opfPath)
  const book: Package = {
    path: opfPath,
    bytes,
    version: '',
    language: null,
    items: new Map(),
    types: new Map(),
    spine: [],
    hasAlternativeText: false,
    hasSummary: false,
  }
  let inLanguage = false
  let language = ''
  // An EPUB 3 <meta property>'s text. The tokenizer takes <meta> for HTML's void element (it has no end
  // tag to wait for), so its text is what comes before the next tag.
  let meta: { text: string } | null = null
  const endMeta = () => {
    if (meta) book.hasAlternativeText ||= decodeHTML(meta.text).trim() === ALTERNATIVE_TEXT
    meta = null
  }
  inEntry(opfPath, () =>
    new HTMLRewriter()
      .on('*', {
        element(element) {
          endMeta()
          const attribute = (name: string) => {
            const value = element.getAttribute(name)
            return value === null ? null : decodeHTMLAttribute(value)
          }
          switch (localName(element.tagName)) {
            case 'package':
              book.version = attribute('version')?.trim() ?? ''
              break
            case 'language':
              if (book.language === null && !inLanguage && language === '' && element.canHaveContent && !element.selfClosing) {
                inLanguage = true
                element.onEndTag(() => {
                  inLanguage = false
                  book.language = language.trim() || null
                })
              }
              break
            case 'item': {
              const id = attribute('id')
              const name = entryFor(opfPath, attribute('href') ?? '')
              const type = attribute('media-type')?.trim().toLowerCase() ?? ''
              if (id && name) book.items.set(id, { name, type, fallback: attribute('fallback')?.trim() || null })
              if (name && !book.types.has(name)) book.types.set(name, type)
              break
            }
            case 'itemref': {
              const id = attribute('idref')
              if (id) book.spine.push(id)
              break
            }
            case 'meta': {
              // EPUB 2: <meta name content/>; EPUB 3: <meta property>text</meta>.
              const name = attribute('name') ?? attribute('property')
              if (name === 'schema:accessibilitySummary') book.hasSummary = true
              if (name !== 'schema:accessibilityFeature') break
              const content = attribute('content')
              if (content !== null) book.hasAlternativeText ||= content.trim() === ALTERNATIVE_TEXT
              else if (!element.selfClosing) meta = { text: '' }
              break
            }
          }
        },
        text(chunk) {
          if (inLanguage) language += chunk.text
          if (meta) meta.text += chunk.text
        },
      })
      .onDocument({ end: endMeta })
      .transform(bytes),
  )
  book.language = book.language === null ? null : decodeHTML(book.language)
  return book
}

/**
 * The SVG images of a document: each <svg> that holds an <image>, with the <title> that names it.
 * Start tags are found as scan.ts finds them: a marker comment before each, counted out again.
 */
function scanSvg(bytes: Uint8Array, token: string): { image: Omit<FoundImage, 'link' | 'caption' | 'heading' | 'at'>; svg: SvgImage }[] {
  const marker = encoder.encode(`<!--${token}-->`)
  type Event = { kind: 'svg' | 'image' | 'title' | 'title-end' | 'svg-end'; href?: string | null }
  const events: Event[] = []
  const mark = { html: true } as const
  const output = new HTMLRewriter()
    .on('*', {
      element(element) {
        const name = localName(element.tagName)
        if (name !== 'svg' && name !== 'image' && name !== 'title') return
        if (name === 'image') {
          const href = element.getAttribute('href') ?? element.getAttribute('xlink:href')
          events.push({ kind: 'image', href: href === null ? null : decodeHTMLAttribute(href).trim() || null })
        } else events.push({ kind: name })
        element.before(`<!--${token}-->`, mark)
        if (name !== 'image' && !element.selfClosing) {
          element.onEndTag((end) => {
            events.push({ kind: name === 'svg' ? 'svg-end' : 'title-end' })
            end.before(`<!--${token}-->`, mark)
          })
        }
      },
    })
    .transform(bytes) as unknown as ArrayBuffer
  const out = Buffer.from(output)
  if (out.length !== bytes.length + events.length * marker.length) throw new Error('the SVG scanner lost track of a tag')
  let from = 0
  const offsets = events.map((_, index) => {
    const at = out.indexOf(marker, from)
    from = at + marker.length
    return at - index * marker.length
  })
  const found: { image: Omit<FoundImage, 'link' | 'caption' | 'heading' | 'at'>; svg: SvgImage }[] = []
  // The innermost open <svg>, its first <title>, and its first <image>.
  const open: { start: number; end: number; title: SvgImage['title']; titleStart: number | null; image: { href: string | null; offset: number } | null }[] = []
  const close = () => {
    const svg = open.pop()
    if (!svg?.image) return
    const title = svg.title
    const text = title === null ? null : decodeHTML(decoder.decode(bytes.subarray(title.start, title.end)).replace(/<[^>]*>/gu, ''))
    found.push({
      image: {
        kind: 'svg',
        offset: svg.image.offset,
        line: 0,
        column: 0,
        src: svg.image.href,
        textAttribute: 'title',
        text,
        decorativeByMarkup: false,
        labelledBy: false,
      },
      svg: { svgStart: svg.start, svgEnd: svg.end, title },
    })
  }
  for (const [index, event] of events.entries()) {
    const at = offsets[index]!
    const svg = open.at(-1)
    if (event.kind === 'svg') {
      const tag = readStartTag(bytes, at)
      open.push({ start: at, end: tag?.end ?? at, title: null, titleStart: null, image: null })
    } else if (event.kind === 'svg-end') close()
    else if (!svg) continue
    else if (event.kind === 'image') svg.image ??= { href: event.href ?? null, offset: at }
    else if (event.kind === 'title') {
      if (svg.title === null && svg.titleStart === null) svg.titleStart = readStartTag(bytes, at)?.end ?? null
    } else if (event.kind === 'title-end' && svg.title === null && svg.titleStart !== null) svg.title = { start: svg.titleStart, end: at }
  }
  while (open.length > 0) close()
  return found.sort((a, b) => a.image.offset - b.image.offset)
}

/** A book read: its archive (which keeps the entries read) and its package. */
type OpenBook = { archive: ZipArchive; book: Package }

type Book = OpenBook & { documents: EpubDocument[] }

/**
 * The content document a spine item is read as: itself, or the first one down its manifest fallback
 * chain (an image in the spine must fall back to a content document: there its text alternative is).
 */
function contentItem(book: Package, id: string): { name: string; type: string } | null {
  const visited = new Set<string>()
  for (let next: string | null = id; next !== null && !visited.has(next); ) {
    visited.add(next)
    const item = book.items.get(next)
    if (!item) return null
    if (CONTENT_TYPES.has(item.type)) return item
    next = item.fallback
  }
  return null
}

/** The book's archive, package and (unless `scan` is false) its scanned content documents. */
function readBook(
  page: { name: string; bytes: Uint8Array },
  token: string,
  options: { context: boolean; scan: boolean },
  loaded: Parameters<DocumentFormat['scan']>[0],
): Book {
  const { context } = options
  const archive = readZip(page.bytes)
  const book = readPackage(archive)
  const opened: OpenBook = { archive, book }
  const documents: EpubDocument[] = []
  const seen = new Set<string>()
  /** A document of the book: where its images are, and how its addresses resolve (from `entry`, inside the book). */
  const documentOf = (entry: string, bytes: Uint8Array, scan: PageScan, svg: (SvgImage | null)[]): EpubDocument => {
    const name = `${page.name}!${entry}`
    const locations = locate(
      bytes,
      scan.images.map((image) => image.offset),
      name,
    )
    for (const [index, image] of scan.images.entries()) {
      image.line = locations[index]!.line
      image.column = locations[index]!.column
    }
    return {
      name,
      entry,
      scan,
      locations,
      language: scan.lang,
      svg,
      opened,
      resolve(src) {
        if (src === null || src === '') return { error: 'the image has no src' }
        const target = entryFor(entry, src)
        if (target === null) {
          // Not in the book: a remote or data: image, resolved as on a web page; never a file beside the book.
          const outside = resolveImage(loaded, null, src)
          return 'file' in outside ? { error: `not an address in the book: ${src}` } : outside
        }
        const image = archive.byName.get(target)
        if (!image) return { error: `${target} is not in the book` }
        try {
          return { data: entryData(archive, image), type: book.types.get(target) ?? 'application/octet-stream' }
        } catch (error) {
          return { error: (error as Error).message }
        }
      },
      linkTarget: (href) => entryFor(entry, href) ?? linkTarget(loaded, null, href),
      release: () => releaseContents(archive),
    }
  }
  const pictures: { id: string; item: { name: string } }[] = []
  for (const id of options.scan ? book.spine : []) {
    const item = contentItem(book, id)
    if (!item) {
      const picture = book.items.get(id)
      if (picture?.type.startsWith('image/') && !seen.has(picture.name)) pictures.push({ id, item: picture })
      if (picture) seen.add(picture.name)
      continue
    }
    if (seen.has(item.name)) continue
    seen.add(item.name)
    const entry = archive.byName.get(item.name)
    if (!entry) {
      const at = itemrefOffset(book, id)
      const line = at < 0 ? '' : `:${locate(book.bytes, [at], book.path)[0]!.line}`
      throw new ZipError(`${book.path}${line}: the spine's ${item.name} is not in the book`)
    }
    const bytes = entryData(archive, entry)
    const { scan, svg } = inEntry(item.name, () => scanDocument(bytes, token, context))
    scan.lang ??= book.language
    documents.push(documentOf(item.name, bytes, scan, svg))
  }
  // Images in the spine with no content document to fall back to: there is no place in the book for
  // their text alternative. They are counted, where the spine lists them, so the report says so.
  if (pictures.length > 0) {
    const images: FoundImage[] = pictures.map(({ id, item }) => ({
      kind: 'img',
      offset: Math.max(0, itemrefOffset(book, id)),
      line: 0,
      column: 0,
      src: relativeHref(book.path, item.name),
      textAttribute: 'alt',
      text: null,
      decorativeByMarkup: false,
      labelledBy: false,
      link: null,
      caption: null,
      heading: null,
      at: 0,
    }))
    images.sort((x, y) => x.offset - y.offset)
    const scan: PageScan = { images, links: [], lang: book.language, base: null, utf8: true, title: '', text: '', bytes: book.bytes, ignored: 0 }
    documents.push(
      documentOf(
        book.path,
        book.bytes,
        scan,
        images.map(() => null),
      ),
    )
  }
  return { archive, book, documents }
}

/** Where the spine's <itemref> of `id` starts in the package document (a search of its text); -1 when not found. */
const itemrefOffset = (book: Package, id: string) =>
  latin1.decode(book.bytes).search(new RegExp(`<(?:[\\w.-]+:)?itemref\\b[^>]*\\bidref\\s*=\\s*["']${RegExp.escape(id)}["']`, 'u'))

/** The address of entry `name` from entry `from` (both inside the book), as an href. */
function relativeHref(from: string, name: string): string {
  const base = from.split('/').slice(0, -1)
  const target = name.split('/')
  let common = 0
  while (common < base.length && common < target.length - 1 && base[common] === target[common]) common++
  return [...base.slice(common).map(() => '..'), ...target.slice(common)].map(encodeURIComponent).join('/')
}

/** One content document scanned: its <img> and SVG images, in document order. */
function scanDocument(bytes: Uint8Array, token: string, context: boolean): { scan: PageScan; svg: (SvgImage | null)[] } {
  const scan = scanHtml(bytes, token, { context })
  const svg: (SvgImage | null)[] = scan.images.map(() => null)
  // SVG images join the <img> ones in document order, with the context of where they are.
  for (const { image, svg: where } of scanSvg(bytes, token)) {
    const before = scan.images.findIndex((other) => other.offset > image.offset)
    const at = before < 0 ? scan.images.length : before
    const neighbour = scan.images[at - 1]
    scan.images.splice(at, 0, { ...image, link: null, caption: neighbour?.caption ?? null, heading: neighbour?.heading ?? null, at: neighbour?.at ?? 0 })
    svg.splice(at, 0, where)
  }
  return { scan, svg }
}

/** XML text content: & and < escaped (> too, for "]]>"). */
const xmlText = (text: string) => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;')

/**
 * The package document with the accessibility metadata added before </metadata>, written in the
 * package's own namespace form (<opf:meta> in a package of <opf:metadata>); null when it cannot be
 * placed. A marker comment before the end tag finds where it is: the tokenizer gives names lowercased.
 */
function withAccessibilityMetadata(bytes: Uint8Array, book: Package, token: string): Uint8Array | null {
  if (book.hasAlternativeText && book.hasSummary) return bytes
  const epub3 = !book.version.startsWith('2')
  const marker = encoder.encode(`<!--${token}-->`)
  const input = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (input.includes(marker)) return null
  let placed = 0
  const out = new HTMLRewriter()
    .on('*', {
      element(element) {
        if (localName(element.tagName) !== 'metadata' || placed > 0 || element.selfClosing || !element.canHaveContent) return
        element.onEndTag((end) => {
          placed++
          end.before(`<!--${token}-->`, { html: true })
        })
      },
    })
    .transform(bytes) as unknown as ArrayBuffer
  const output = Buffer.from(out)
  const at = output.indexOf(marker)
  if (placed !== 1 || at < 0 || output.length !== bytes.length + marker.length) return null
  const endTag = /^<\/([^\s>]+)/u.exec(output.toString('latin1', at + marker.length, at + marker.length + 200))?.[1]
  if (endTag === undefined) return null
  const meta = `${endTag.slice(0, endTag.indexOf(':') + 1)}meta`
  const lines: string[] = []
  if (!book.hasAlternativeText) {
    lines.push(
      epub3
        ? `<${meta} property="schema:accessibilityFeature">${ALTERNATIVE_TEXT}</${meta}>`
        : `<${meta} name="schema:accessibilityFeature" content="${ALTERNATIVE_TEXT}"/>`,
    )
  }
  if (!book.hasSummary) {
    lines.push(
      epub3
        ? `<${meta} property="schema:accessibilitySummary">${xmlText(SUMMARY)}</${meta}>`
        : `<${meta} name="schema:accessibilitySummary" content="${xmlText(SUMMARY)}"/>`,
    )
  }
  return Buffer.concat([output.subarray(0, at), encoder.encode(`  ${lines.join('\n  ')}\n  `), output.subarray(at + marker.length)])
}

/** Every image of the book has a text alternative once `changes` are written (markup-decorative ones need none). */
function everyImageNamed(documents: EpubDocument[], changed: Set<string>): boolean {
  return documents.every((document) =>
    document.scan.images.every((image, index) => {
      if (image.decorativeByMarkup || image.labelledBy) return true
      const at = document.locations[index]!
      return changed.has(`${at.file}\u0000${at.line}\u0000${at.column}`) || image.text !== null
    }),
  )
}

export const epub: DocumentFormat = {
  name: 'epub',
  scan(page, options) {
    if (page.bytes === null) return []
    return readBook({ name: page.name, bytes: page.bytes }, options.token, { context: options.context, scan: true }, page).documents
  },
  apply(page, changes, options) {
    if (page.bytes === null)
      return { bytes: new Uint8Array(), applied: [], refused: changes.map((change) => ({ change, reason: 'the book could not be read' })) }
    // The documents scanned before, with their archive and package, are reused when given.
    const given = options.documents as EpubDocument[] | undefined
    const { archive, book, documents } =
      given?.[0] !== undefined
        ? { ...given[0].opened, documents: given }
        : readBook({ name: page.name, bytes: page.bytes }, options.token, { context: false, scan: true }, page)
    const { matched, refused } = matchChanges(documents, changes)
    const edits = new Map<EpubDocument, Edit[]>()
    const applied: AltChange[] = []
    for (const { change, document, index } of matched) {
      const doc = document as EpubDocument
      if (doc.entry === book.path) {
        refused.push({ change, reason: 'an image in the spine with no fallback content document: the book has no place for its text alternative' })
        continue
      }
      const svg = doc.svg[index]
      let edit: Edit | null
      if (svg) {
        // The <svg>'s <title> is its text alternative: its text replaced, or a first child added.
        edit = svg.title
          ? { start: svg.title.start, end: svg.title.end, text: xmlText(change.alt) }
          : { start: svg.svgEnd, end: svg.svgEnd, text: `<title>${xmlText(change.alt)}</title>` }
      } else edit = htmlAltEdit(doc.scan.bytes, doc, index, change.alt)
      // Long descriptions (when the service gives them) belong in an extended description the image
      // points to with aria-details, in the same content document (EPUB Accessibility 1.1, 4.2).
      if (edit === null) {
        refused.push({ change, reason: 'the tag could not be read' })
        continue
      }
      edits.set(doc, [...(edits.get(doc) ?? []), edit])
      applied.push(change)
    }
    if (applied.length === 0) return { bytes: page.bytes, applied, refused }
    const replaced = new Map<string, Uint8Array>()
    for (const [doc, docEdits] of edits) replaced.set(doc.entry, applyEdits(doc.scan.bytes, docEdits))
    const changed = new Set(applied.map((change) => `${change.file}\u0000${change.line}\u0000${change.column}`))
    if (everyImageNamed(documents, changed)) {
      const updated = withAccessibilityMetadata(book.bytes, book, options.token)
      if (updated && updated !== book.bytes) replaced.set(book.path, updated)
    }
    const result: ApplyResult = { bytes: writeZip(archive, replaced, 'mimetype'), applied, refused }
    return result
  },
}
