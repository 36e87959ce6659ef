// Byte-exact edits of start tags. The parser (HTMLRewriter, in scan.ts) tells where each tag starts;
// this reads that one tag by the HTML tokenizer's rules (tag name, then attributes: a name, optional
// `=`, a value in double quotes, single quotes or unquoted) to find an attribute's bytes, and
// `applyEdits` splices new attribute text in. Every other byte of the file is copied as it was.

const LT = 0x3c
const GT = 0x3e
const SLASH = 0x2f
const EQUALS = 0x3d
const DQUOTE = 0x22
const SQUOTE = 0x27

/** Tab, LF, FF, CR, space: the tokenizer's whitespace. */
const isSpace = (byte: number) => byte === 0x09 || byte === 0x0a || byte === 0x0c || byte === 0x0d || byte === 0x20

export type AttributeSpan = {
  /** Lower-cased name. */
  name: string
  /** Byte range of the whole attribute: from its name to the end of its value (or name, when it has none). */
  start: number
  end: number
}

export type TagSpan = {
  /** Byte offset of the `<`. */
  start: number
  /** Byte offset just after the tag name: where a new attribute is inserted. */
  nameEnd: number
  /** Byte offset just after the closing `>` (the file's length when the tag never closes). */
  end: number
  attributes: AttributeSpan[]
}

const latin1 = new TextDecoder('latin1')

/** Reads the start tag whose `<` is at `offset`; null when the bytes there are no start tag. */
export function readStartTag(bytes: Uint8Array, offset: number): TagSpan | null {
  if (bytes[offset] !== LT) return null
  let i = offset + 1
  const first = bytes[i]
  if (first === undefined || !((first | 0x20) >= 0x61 && (first | 0x20) <= 0x7a)) return null
  while (i < bytes.length && !isSpace(bytes[i]!) && bytes[i] !== SLASH && bytes[i] !== GT) i++
  const nameEnd = i
  const attributes: AttributeSpan[] = []
  for (;;) {
    while (i < bytes.length && (isSpace(bytes[i]!) || bytes[i] === SLASH)) i++
    if (i >= bytes.length) return { start: offset, nameEnd, end: bytes.length, attributes }
    if (bytes[i] === GT) return { start: offset, nameEnd, end: i + 1, attributes }
    const start = i
    // An attribute name may begin with "=" (a parse error the tokenizer keeps as part of the name).
    i++
    while (i < bytes.length && !isSpace(bytes[i]!) && bytes[i] !== SLASH && bytes[i] !== GT && bytes[i] !== EQUALS) i++
    const name = latin1.decode(bytes.subarray(start, i)).toLowerCase()
    let end = i
    let j = i
    while (j < bytes.length && isSpace(bytes[j]!)) j++
    if (bytes[j] === EQUALS) {
      j++
      while (j < bytes.length && isSpace(bytes[j]!)) j++
      const quote = bytes[j]
      if (quote === DQUOTE || quote === SQUOTE) {
        j++
        while (j < bytes.length && bytes[j] !== quote) j++
        j = Math.min(bytes.length, j + 1)
      } else {
        while (j < bytes.length && !isSpace(bytes[j]!) && bytes[j] !== GT) j++
      }
      end = j
      i = j
    }
    attributes.push({ name, start, end })
  }
}

/** The first attribute of that name (later duplicates are ignored by browsers, and so here). */
export function findAttribute(tag: TagSpan, name: string): AttributeSpan | undefined {
  return tag.attributes.find((attribute) => attribute.name === name)
}

/** `value` for a double-quoted attribute; outside UTF-8 documents, non-ASCII as character references. */
export function attributeValue(value: string, utf8: boolean): string {
  const escaped = value.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;').replaceAll('>', '&gt;')
  return utf8 ? escaped : escaped.replace(/[^\x00-\x7f]/gu, (char) => `&#${char.codePointAt(0)};`)
}

export type Edit = {
  /** Byte range replaced (start === end inserts). */
  start: number
  end: number
  text: string
}

/**
 * The edit that sets attribute `name` of `tag` to `value`: the existing attribute (name as written,
 * value re-quoted) is replaced, or ` name="value"` is inserted right after the tag name — never before
 * the closing `/>`, where an unquoted value would swallow it.
 */
export function setAttributeEdit(bytes: Uint8Array, tag: TagSpan, name: string, value: string, utf8: boolean): Edit {
  const quoted = `"${attributeValue(value, utf8)}"`
  const existing = findAttribute(tag, name)
  if (existing) {
    const written = latin1.decode(bytes.subarray(existing.start, existing.start + name.length))
    return { start: existing.start, end: existing.end, text: `${written}=${quoted}` }
  }
  return { start: tag.nameEnd, end: tag.nameEnd, text: ` ${name}=${quoted}` }
}

const encoder = new TextEncoder()

/** `bytes` with the edits (non-overlapping) applied; every byte outside them is copied unchanged. */
export function applyEdits(bytes: Uint8Array, edits: Edit[]): Uint8Array {
  const sorted = [...edits].sort((a, b) => a.start - b.start)
  const parts: Uint8Array[] = []
  let at = 0
  let length = 0
  for (const edit of sorted) {
    if (edit.start < at) throw new Error(`overlapping edits at byte ${edit.start}`)
    const text = encoder.encode(edit.text)
    parts.push(bytes.subarray(at, edit.start), text)
    length += edit.start - at + text.length
    at = edit.end
  }
  parts.push(bytes.subarray(at))
  length += bytes.length - at
  const out = new Uint8Array(length)
  let offset = 0
  for (const part of parts) {
    out.set(part, offset)
    offset += part.length
  }
  return out
}
