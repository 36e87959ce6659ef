// --fix with --long-description: a complex image's long description goes into the page as an element
// right after the image's tag, which the image points to with aria-describedby. The element is `hidden`:
// the fix adds what a screen reader announces without changing the page's layout, and a referenced
// hidden element still gives the image its accessible description. A <span> is allowed wherever an
// image is (in a paragraph, a link, a figure). The text is escaped as the alt attribute is: plain text.
import { decodeHTMLAttribute } from 'entities'
import { attributeValue, type Edit, findAttribute, type TagSpan, setAttributeEdit } from './tag'

const ID_PREFIX = 'alttext-long-description-'

const latin1 = new TextDecoder('latin1')

/** An attribute's value as written (quotes removed, entities decoded); '' when it has none. */
function attributeText(bytes: Uint8Array, tag: TagSpan, name: string): string | null {
  const span = findAttribute(tag, name)
  if (!span) return null
  const raw = latin1.decode(bytes.subarray(span.start, span.end))
  const equals = raw.indexOf('=')
  if (equals === -1) return ''
  const value = raw.slice(equals + 1).trim()
  return decodeHTMLAttribute(/^(["']).*\1$/su.test(value) ? value.slice(1, -1) : value)
}

/**
 * The edits that add `text` after the image tag `tag` and point the image at it. `taken` holds the ids
 * given on this page so far; an id the page already uses is skipped. None when the image already points
 * at a long description of ours (a page fixed before).
 */
export function longDescriptionEdits(bytes: Uint8Array, tag: TagSpan, text: string, utf8: boolean, taken: Set<string>): Edit[] {
  const existing = attributeText(bytes, tag, 'aria-describedby')
  const tokens = (existing ?? '').split(/\s+/u).filter(Boolean)
  if (tokens.some((token) => token.startsWith(ID_PREFIX))) return []
  const page = latin1.decode(bytes)
  let n = taken.size + 1
  while (taken.has(`${ID_PREFIX}${n}`) || page.includes(`${ID_PREFIX}${n}`)) n++
  const id = `${ID_PREFIX}${n}`
  taken.add(id)
  return [
    setAttributeEdit(bytes, tag, 'aria-describedby', [...tokens, id].join(' '), utf8),
    { start: tag.end, end: tag.end, text: `<span id="${id}" hidden>${attributeValue(text, utf8)}</span>` },
  ]
}
