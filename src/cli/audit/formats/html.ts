// HTML pages: the scanner of scan.ts finds the images, tag.ts rewrites one attribute of a start tag.
import { longDescriptionEdits } from '../long-description'
import { linkTarget, resolveImage } from '../pages'
import { scanHtml } from '../scan'
import { applyEdits, type Edit, readStartTag, setAttributeEdit } from '../tag'
import { type DocumentFormat, locate, matchChanges, type ScannedDocument } from './types'

export const html: DocumentFormat = {
  name: 'html',
  scan(page, options) {
    if (page.bytes === null) return []
    const scan = scanHtml(page.bytes, options.token, { context: options.context })
    const document: ScannedDocument = {
      name: page.name,
      scan,
      locations: locate(
        page.bytes,
        scan.images.map((image) => image.offset),
        page.name,
      ),
      language: scan.lang,
      resolve: (src) => resolveImage(page, scan.base, src),
      linkTarget: (href) => linkTarget(page, scan.base, href),
    }
    return [document]
  },
  apply(page, changes, options) {
    const bytes = page.bytes ?? new Uint8Array()
    const documents = options.documents ?? this.scan(page, options)
    const { matched, refused } = matchChanges(documents, changes)
    const edits: Edit[] = []
    const applied = []
    const ids = new Set<string>()
    for (const { change, document, index } of matched) {
      const image = document.scan.images[index]!
      const tag = readStartTag(bytes, image.offset)
      if (tag === null) refused.push({ change, reason: 'the tag could not be read' })
      else {
        edits.push(setAttributeEdit(bytes, tag, image.textAttribute, change.alt, document.scan.utf8))
        if (change.longDescription) edits.push(...longDescriptionEdits(bytes, tag, change.longDescription, document.scan.utf8, ids))
        applied.push(change)
      }
    }
    return { bytes: applied.length > 0 ? applyEdits(bytes, edits) : bytes, applied, refused }
  },
}

/** The edit that sets the text attribute (alt, or aria-label) of image `index` of an HTML scan. */
export function htmlAltEdit(bytes: Uint8Array, document: Pick<ScannedDocument, 'scan'>, index: number, alt: string): Edit | null {
  const image = document.scan.images[index]!
  const tag = readStartTag(bytes, image.offset)
  return tag === null ? null : setAttributeEdit(bytes, tag, image.textAttribute, alt, document.scan.utf8)
}
