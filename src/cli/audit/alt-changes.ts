// "Apply these alt changes to this file's bytes", per document format: what --apply writes with. Each
// format finds its images again (line, column, and a fingerprint of what the image was when reviewed)
// and writes only their alt texts; every other byte stays. HTML is here; another format plugs in as
// one more entry of FORMATS.
import { createHash, randomUUID } from 'node:crypto'
import { scanHtml } from './scan'
import { applyEdits, type Edit, readStartTag, setAttributeEdit } from './tag'

/** What identifies an image's state at review time: a change is refused when it differs at apply time. */
export type ImageState = { textAttribute: string; text: string | null; src: string | null }

/** 16 bytes of SHA-256 over the attribute, its text (absent and empty differ) and the image address. */
export const imageFingerprint = (image: ImageState): string =>
  createHash('sha256')
    .update(JSON.stringify([image.textAttribute, image.text, image.src]))
    .digest('hex')
    .slice(0, 32)

/** One reviewed change: set the alt text of the image at `line`:`column`, if it is still `fingerprint`. */
export type AltChange = { line: number; column: number; fingerprint: string; alt: string }

/** Per change, in the order given: null when written, else why not. */
export type AppliedChanges = { bytes: Uint8Array; refused: (string | null)[] }

export type AltDocumentFormat = {
  name: string
  matches(path: string): boolean
  apply(bytes: Uint8Array, changes: AltChange[]): AppliedChanges
}

const describe = (image: ImageState) => (image.text === null ? `no ${image.textAttribute}` : `${image.textAttribute} "${image.text}"`)

const html: AltDocumentFormat = {
  name: 'HTML',
  matches: (path) => /\.(?:html?|xhtml)$/iu.test(path),
  apply(bytes, changes) {
    const scan = scanHtml(bytes, `alttext-apply-${randomUUID()}`, { context: false })
    const at = new Map(scan.images.map((image) => [`${image.line}:${image.column}`, image]))
    const used = new Set<string>()
    const edits: Edit[] = []
    const refused = changes.map((change) => {
      const place = `${change.line}:${change.column}`
      const image = at.get(place)
      if (image === undefined) return `no image starts at line ${change.line}, column ${change.column} any more: the file changed since the review`
      if (used.has(place)) return 'the same image is listed in an earlier row'
      if (imageFingerprint(image) !== change.fingerprint) {
        return `the image there changed since the review (now ${describe(image)}${image.src ? `, ${image.src}` : ''})`
      }
      if (change.alt === '' && image.textAttribute !== 'alt') return 'an empty aria-label names nothing: give a text'
      used.add(place)
      if (change.alt === image.text) return null
      const tag = readStartTag(bytes, image.offset)
      if (tag === null) return 'the tag there cannot be read'
      edits.push(setAttributeEdit(bytes, tag, image.textAttribute, change.alt, scan.utf8))
      return null
    })
    return { bytes: edits.length > 0 ? applyEdits(bytes, edits) : bytes, refused }
  },
}

const FORMATS: AltDocumentFormat[] = [html]

export const formatOf = (path: string): AltDocumentFormat | null => FORMATS.find((format) => format.matches(path)) ?? null

/** `bytes` of the file at `path` with the changes written; a format --apply cannot write refuses them all. */
export function applyAltChanges(path: string, bytes: Uint8Array, changes: AltChange[]): AppliedChanges {
  const format = formatOf(path)
  if (format === null) return { bytes, refused: changes.map(() => 'not a kind of file --apply can write') }
  try {
    return format.apply(bytes, changes)
  } catch (error) {
    return { bytes, refused: changes.map(() => `cannot parse: ${(error as Error).message}`) }
  }
}
