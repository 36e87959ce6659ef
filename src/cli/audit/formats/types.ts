// The shared shape of the formats `alttext audit` reads (HTML, Markdown, MDX, Jupyter notebooks, EPUB): each finds the images
// of a document with where they are and what surrounds them, and writes alt changes back into the
// document's bytes, every other byte kept.
import type { ImageTarget, LoadedPage, Unresolved } from '../pages'
import type { FoundImage, PageScan } from '../scan'

/** Where an image is: `file` names the document ("docs/a.md", or "book.epub!OEBPS/ch1.xhtml" inside a book). */
export type ImageLocation = { file: string; line: number; column: number }

/**
 * One document read: an HTML page, a Markdown file, or one content document of an EPUB. `scan` has the
 * shape the HTML scanner gives (images, visible text, headings, captions, links), so the lint and the
 * request context work the same for every format.
 */
export type ScannedDocument = {
  /** How the report names it: the page's name, or "book.epub!OEBPS/ch1.xhtml". */
  name: string
  scan: PageScan
  /** Per image of `scan.images`, in the same order: file, 1-based line and column (UTF-16 units). */
  locations: ImageLocation[]
  /** The language the document declares (<html lang>, front matter `lang:`, the book's dc:language). */
  language: string | null
  /**
   * What an image address in this document points to (a book's own images come back as bytes, uploaded).
   * `image`, one of `scan.images`, says which image asks: a notebook's `attachment:image.png` is its cell's own.
   */
  resolve(src: string | null, image?: FoundImage): ImageTarget | Unresolved
  /** A link's target as the request context names it. */
  linkTarget(href: string): string | null
  /** Lets go of what reading the document's images kept (a book's inflated entries), once no image is read any more. */
  release?(): void
}

export type ScanOptions = {
  /** The HTML scanner's per-run marker (see scan.ts). */
  token: string
  /** Gather the text around images (headings, captions, paragraphs) for the request context. */
  context: boolean
}

/**
 * One alt text to write. `expected` is the image's current text when the change was proposed (null:
 * none): a change whose image now reads otherwise is refused, so a stale review row cannot land.
 */
export type AltChange = ImageLocation & {
  alt: string
  expected?: string | null
  /** A complex image's long description (--long-description), written beside it where the format has a place. */
  longDescription?: string | null
}

export type ApplyResult = {
  /** The new document (a new .epub for a book); the input bytes when nothing was applied. */
  bytes: Uint8Array
  applied: AltChange[]
  refused: { change: AltChange; reason: string }[]
}

export type DocumentFormat = {
  name: 'html' | 'markdown' | 'mdx' | 'ipynb' | 'epub'
  /** The documents of a loaded file: one, or a book's content documents in spine order. Throws when unreadable. */
  scan(page: LoadedPage, options: ScanOptions): ScannedDocument[]
  /** Writes `changes`; `documents` is what `scan` returned for these bytes (scanned again when absent). */
  apply(page: LoadedPage, changes: AltChange[], options: ScanOptions & { documents?: ScannedDocument[] }): ApplyResult
}

/**
 * The locations of byte `offsets` in UTF-8 `bytes`: 1-based line, and column in UTF-16 units. Each
 * byte is decoded once: a column is counted on from the previous offset on the same line, so a
 * minified one-line page with many images costs its length, not its length per image.
 */
export function locate(bytes: Uint8Array, offsets: number[], file: string): ImageLocation[] {
  const order = offsets.map((offset, index) => ({ offset, index })).sort((a, b) => a.offset - b.offset)
  const out: ImageLocation[] = new Array(offsets.length)
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let line = 1
  let nextNewline = buffer.indexOf(0x0a)
  // Offsets fall on the first byte of a character ("<", "!"), so the pieces between them decode as the whole line would.
  let counted = 0
  let column = 1
  for (const { offset, index } of order) {
    while (nextNewline >= 0 && nextNewline < offset) {
      line++
      counted = nextNewline + 1
      column = 1
      nextNewline = buffer.indexOf(0x0a, nextNewline + 1)
    }
    if (offset > counted) {
      column += decoder.decode(bytes.subarray(counted, offset)).length
      counted = offset
    }
    out[index] = { file, line, column }
  }
  return out
}

const decoder = new TextDecoder('utf-8', { ignoreBOM: true })

/** Finds each change's image among `documents` by location and checks it still reads `expected`. */
export function matchChanges(
  documents: ScannedDocument[],
  changes: AltChange[],
): { matched: { change: AltChange; document: ScannedDocument; index: number }[]; refused: ApplyResult['refused'] } {
  const byLocation = new Map<string, { document: ScannedDocument; index: number }>()
  for (const document of documents) {
    for (const [index, at] of document.locations.entries()) byLocation.set(`${at.file}\u0000${at.line}\u0000${at.column}`, { document, index })
  }
  const matched: { change: AltChange; document: ScannedDocument; index: number }[] = []
  const refused: ApplyResult['refused'] = []
  const seen = new Set<string>()
  for (const change of changes) {
    const key = `${change.file}\u0000${change.line}\u0000${change.column}`
    const found = byLocation.get(key)
    if (!found) refused.push({ change, reason: `no image at ${change.file}:${change.line}:${change.column}` })
    else if (seen.has(key)) refused.push({ change, reason: 'a second change for the same image' })
    else if (change.expected !== undefined && (found.document.scan.images[found.index]!.text ?? null) !== change.expected) {
      refused.push({ change, reason: 'the image’s alt text changed since' })
    } else {
      seen.add(key)
      matched.push({ change, ...found })
    }
  }
  return { matched, refused }
}
