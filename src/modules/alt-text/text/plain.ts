// Plain text: alt text ends up in attributes and screen readers, so nothing in it may act as markup or
// change how the text around it reads. `toPlainText` is the one place that removes markup (script and
// style contents included), control characters, bidi controls and invisible characters; what still
// looks like markup afterwards is reported by `markupResidue` (a WCAG issue, see wcag.ts).

/** C0 and C1 controls and DEL, except tab, line feed, vertical tab, form feed, carriage return and next line (whitespace). */
const CONTROLS = /[\u0000-\u0008\u000E-\u001F\u007F-\u0084\u0086-\u009F]/gu
/** Scripts in which ZWNJ and ZWJ between two letters are spelling (Persian "می‌خواهم", Hindi conjuncts), not a trick. */
const JOINING_LETTER = String.raw`[\p{Script=Arabic}\p{Script=Syriac}\p{Script=Nko}\p{Script=Devanagari}\p{Script=Bengali}\p{Script=Gurmukhi}\p{Script=Gujarati}\p{Script=Oriya}\p{Script=Tamil}\p{Script=Telugu}\p{Script=Kannada}\p{Script=Malayalam}\p{Script=Sinhala}]`
/**
 * Format characters (bidi controls U+061C, U+200E/F, U+202A–U+202E, U+2066–U+2069; zero-width
 * U+200B–U+200D, U+2060, U+FEFF; the soft hyphen; tags) and the blank fillers that render as nothing:
 * they hide or reorder what a reader sees. ZWNJ/ZWJ stay only inside a word of a script that needs them.
 */
const INVISIBLE = new RegExp(String.raw`(?<=${JOINING_LETTER}\p{M}*)([\u200C\u200D])(?=${JOINING_LETTER})|[\p{Cf}\u034F\u115F\u1160\u3164\uFFA0]`, 'gu')
/** Elements whose content is code or data, not text: dropped whole, to the end of the text when unclosed. */
const CODE_ELEMENTS = /<(script|style|iframe|object|noscript|template|svg|math)\b[\s\S]*?(?:<\/\1\s*>|$)/giu
/** Comments, CDATA, doctype and processing instructions. */
const MARKUP_DECLARATIONS = /<!--[\s\S]*?(?:-->|$)|<!\[CDATA\[[\s\S]*?(?:\]\]>|$)|<[!?][^<>]*>/gu
/** An opening or closing tag with its attributes (quoted ones may hold ">"), also one cut off at the end. */
const TAG = /<\/?[a-z](?:"[^"]*"|'[^']*'|[^'"<>])*(?:>|$)/giu
/** What an attribute break-out leaves in front of an injected tag: `">`, `'/>`. */
const TAG_DEBRIS = /["'`]\s*\/?>/gu

/**
 * NFC, without control characters (the whitespace ones stay, NEL as a line feed), bidi controls or
 * invisible characters: for the model's answer and for caller text on its way into a prompt alike.
 */
export function withoutHiddenCharacters(text: string): string {
  // NFC last: a removed character may have stood between a letter and its combining mark.
  return text
    .replace(/\u0085/gu, '\n')
    .replace(CONTROLS, '')
    .replace(INVISIBLE, (_char, joiner: string | undefined) => joiner ?? '')
    .normalize('NFC')
}

/**
 * The model's answer as plain text: hidden characters removed first (so none can split a tag name),
 * then markup (tags become a space; script and style contents go). Line breaks stay for the markdown pass.
 */
export function toPlainText(raw: string): string {
  return withoutHiddenCharacters(raw).replace(CODE_ELEMENTS, ' ').replace(MARKUP_DECLARATIONS, ' ').replace(TAG, ' ').replace(TAG_DEBRIS, ' ')
}

/** Signs of markup or script that cleaning could not take out (an unclosed tag, an event handler, a script URL). */
const MARKUP_RESIDUE = /<\/?[a-z!?][\w:-]*|\bon[a-z]{3,}\s*=|\b(?:java|vb)script\s*:|\bdata\s*:\s*text\/html/iu

/** The first piece of markup-like residue in `text` ("onerror=", "javascript:"), or null. */
export function markupResidue(text: string): string | null {
  return MARKUP_RESIDUE.exec(text)?.[0].replace(/\s+/gu, '') ?? null
}

/** Whether any letter or digit is there: what makes text worth keeping. */
export function hasContent(text: string): boolean {
  return /[\p{L}\p{N}]/u.test(text)
}
