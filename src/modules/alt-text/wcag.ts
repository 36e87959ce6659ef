// WCAG 2.1 (1.1.1) checks of a finished alt text: computed rules, each failure one readable issue.
//
// Own rules (all languages): not empty, has words, within max_length (code points, as
// `character_count`), no redundant opening (per language), not a file name, not a URL, no markup or
// script left over after cleaning (text/plain.ts `markupResidue`), ends with the language's sentence mark,
// and contains the text the image shows when a structured answer named it (an image of text).
//
// Rules of @double-great/alt-text, run one at a time so that each message maps to its rule id (its own
// messages carry documentation URLs, which we do not pass on):
// - every language: avoid-emoji, empty-alt-text, image-is-decorative, should-not-end-with (file
//   extensions), is-unhelpful (with the language's own generic words where we have them);
// - English also: should-not-end-with "image"/"graphic", and contains-unhelpful-word limited to credit
//   lines ("photo:", "photographer:").
// Not used, and why:
// - character-length: counts UTF-16 units and requires "< length"; ours counts code points, "≤ max".
// - end-with-punctuation: accepts only [.!?] at the very end; ours also accepts "…", a closing quote
//   after the mark (`reading "Stop."`) and the marks of other scripts (。 । ։ …), as cleanAltText writes.
// - should-not-start-with and the rest of contains-unhelpful-word: plain prefix/substring matches give
//   false positives ("Photographers at a press conference.", "A child holding a photo of her
//   grandmother."); `hasRedundantOpening` covers their purpose with word-bounded patterns per language.
import altText, { type Config } from '@double-great/alt-text'
import {
  baseLanguage,
  characterCount,
  endsWithTerminalPunctuation,
  findRedundantOpening,
  markupResidue,
  rulesLanguage,
  withoutTrailingPunctuation,
} from './text'

export type WcagCheck = { compliant: boolean; issues: string[] }

type RuleId = keyof Config

const ALL_LIBRARY_RULES_OFF: Required<Config> = {
  'image-is-decorative': false,
  'avoid-emoji': false,
  'contains-unhelpful-word': false,
  'character-length': false,
  'end-with-punctuation': false,
  'should-not-end-with': false,
  'is-unhelpful': false,
  'should-not-start-with': false,
  'empty-alt-text': false,
  'image-is-link': false,
}

const FILE_EXTENSIONS = ['.jpg', '.jpeg', '.gif', '.png', '.svg', '.webp', '.avif', '.bmp', '.tif', '.tiff', '.heic']

/** The library's default "is-unhelpful" words (English), plus a few it lacks. */
const GENERIC_WORDS_EN = [
  '*',
  'alt',
  'arrow',
  'artwork',
  'blank',
  'bullet',
  'button',
  'chart',
  'diagram',
  'drawing',
  'empty',
  'graph',
  'graphic',
  'icon',
  'image',
  'logo',
  'more',
  'painting',
  'photo',
  'photograph',
  'placeholder',
  'screen shot',
  'screenshot',
  'spacer',
  'table',
  'temp',
  'picture',
  'pic',
  'img',
  'untitled',
]
const GENERIC_WORDS: Record<string, string[]> = {
  de: ['bild', 'foto', 'grafik', 'abbildung', 'symbol', 'icon', 'logo', 'platzhalter', 'diagramm', 'screenshot'],
  fr: ['image', 'photo', 'illustration', 'icône', 'logo', 'graphique', 'diagramme', 'capture d’écran', "capture d'écran"],
  es: ['imagen', 'foto', 'fotografía', 'icono', 'logo', 'logotipo', 'gráfico', 'diagrama', 'captura de pantalla'],
  it: ['immagine', 'foto', 'fotografia', 'icona', 'logo', 'grafico', 'diagramma', 'screenshot'],
  nl: ['afbeelding', 'foto', 'plaatje', 'beeld', 'icoon', 'logo', 'grafiek', 'diagram', 'schermafbeelding'],
  pt: ['imagem', 'foto', 'fotografia', 'ícone', 'logo', 'logotipo', 'gráfico', 'diagrama', 'captura de tela'],
  sv: ['bild', 'foto', 'ikon', 'logotyp', 'logo', 'diagram', 'skärmbild'],
  da: ['billede', 'foto', 'ikon', 'logo', 'diagram', 'skærmbillede'],
  nb: ['bilde', 'foto', 'ikon', 'logo', 'diagram', 'skjermbilde'],
}
/** Meaningless as alt text in any language. */
const GENERIC_WORDS_ANY = ['*', '-', '_', 'img', 'logo', 'icon', 'placeholder']

const CREDIT_LINES_EN = ['photo:', 'photographer:', 'photo credit:', 'image credit:', 'image courtesy of', 'photo courtesy of']

type LibraryCheck = {
  rule: RuleId
  setting: Config[RuleId]
  /** What the rule looks at; rules about the last word ignore the sentence mark. */
  input: (text: string) => string
  issue: (message: string) => string
}

const quoted = (message: string) => /"([^"]*)"/u.exec(message)?.[1] ?? ''

function libraryChecksFor(language: string): LibraryCheck[] {
  const english = language === 'en'
  const generic = english ? GENERIC_WORDS_EN : [...(GENERIC_WORDS[rulesLanguage(language)] ?? []), ...GENERIC_WORDS_ANY]
  const endings = english ? [...FILE_EXTENSIONS, 'image', 'graphic'] : FILE_EXTENSIONS
  const checks: LibraryCheck[] = [
    { rule: 'image-is-decorative', setting: true, input: (t) => t, issue: () => 'is empty' },
    { rule: 'empty-alt-text', setting: true, input: (t) => t, issue: () => 'is empty' },
    {
      rule: 'avoid-emoji',
      setting: true,
      input: (t) => t,
      issue: (message) => {
        const emoji = /^Replace (.+?) in alt text/u.exec(message)?.[1]
        return emoji ? `contains an emoji ("${emoji}")` : 'contains an emoji'
      },
    },
    // Always pass the lists: the library keeps a rule's last configuration in module state.
    { rule: 'is-unhelpful', setting: { exclude: [...generic] }, input: withoutTrailingPunctuation, issue: (m) => `is only a generic word ("${quoted(m)}")` },
    {
      rule: 'should-not-end-with',
      setting: { exclude: [...endings] },
      input: withoutTrailingPunctuation,
      issue: (m) => (quoted(m).startsWith('.') ? `ends with a file extension ("${quoted(m)}")` : `ends with a generic word ("${quoted(m)}")`),
    },
  ]
  if (english) {
    checks.push({
      rule: 'contains-unhelpful-word',
      setting: { exclude: [...CREDIT_LINES_EN] },
      input: (t) => t,
      issue: (m) => `contains a credit line ("${quoted(m)}")`,
    })
  }
  return checks
}

function runLibraryRule(text: string, check: LibraryCheck): string | undefined {
  return altText(check.input(text), { ...ALL_LIBRARY_RULES_OFF, [check.rule]: check.setting })
}

const IMAGE_EXTENSION = `(?:jpe?g|jfif|png|gif|webp|avif|svg|bmp|tiff?|heic|heif|ico|raw|dng|cr2|nef|psd)`
const FILE_NAME_PATTERNS: RegExp[] = [
  // "photo.png", "IMG_1234.JPG", "my photo (1).jpeg"
  new RegExp(String.raw`^[\p{L}\p{N} _.()\[\]-]{1,120}\.${IMAGE_EXTENSION}$`, 'iu'),
  // Camera and phone names: "DSC0001", "IMG_1234", "PXL_20230101_123456789", "P1010001", "GOPR0042"
  /^(?:img|dsc[nf]?|pxl|mvimg|gopr|dji|sam|wp|pict?|vid|p)[_-]?\d{3,}(?:[_-]\w+)*$/iu,
  // "Screenshot 2024-01-01 at 10.00.00", "Bildschirmfoto 2024-01-01 um 10.00.00"
  /^(?:screenshot|screen shot|bildschirmfoto|capture d['’]écran|captura de pantalla)[\s_-]+\d{4}-\d{2}-\d{2}\b/iu,
  // One token with an underscore: "hero_banner_2x", "header_bg"
  /^[\p{L}\p{N}.-]*_[\p{L}\p{N}_.-]*$/u,
  // A generic name and a number: "image001", "photo-2", "untitled 3"
  /^(?:img|image|photo|pic|picture|banner|hero|thumb|thumbnail|untitled|file|asset|foto|bild|imagen|immagine|afbeelding|imagem)[\s_-]?\d+$/iu,
]

const URL_PATTERNS: RegExp[] = [
  /^[a-z][a-z\d+.-]*:\/\/\S+$/iu, // https://…, ftp://…
  /^data:\S+$/iu,
  /^www\.\S+$/iu,
  // "example.com/images/a.png" — a bare domain ("Example.com") can be the right alt for a logo.
  /^(?:[\p{L}\p{N}-]+\.)+\p{L}{2,}\/\S*$/iu,
]

/** Whether `text` (its sentence mark aside) is a URL and nothing else. */
export function looksLikeUrl(text: string): boolean {
  const bare = withoutTrailingPunctuation(text)
  return URL_PATTERNS.some((pattern) => pattern.test(bare))
}

/** Whether `altText` contains `text`, case, spacing and character width aside: "SALE 50%" is in "A banner reading sale 50 %.". */
export function includesText(altText: string, text: string): boolean {
  const comparable = (value: string) => value.normalize('NFKC').toLocaleLowerCase().replace(/\s+/gu, '')
  return comparable(altText).includes(comparable(text))
}

/** The issue of an alt text without the text its image of text shows. */
export const LEAVES_OUT_TEXT_ISSUE = 'leaves out text the image shows (see text_in_image)'

/**
 * Computes whether `text` is acceptable WCAG 2.1 alt text; every failed rule adds one issue.
 * `textInImage`, when the model said what the image shows in writing, must be in the alt text.
 */
export function checkWcag(text: string, maxLength: number, language: string, textInImage: string | null = null): WcagCheck {
  const lang = baseLanguage(language)
  const issues: string[] = []
  const add = (issue: string) => {
    if (!issues.includes(issue)) issues.push(issue)
  }

  if (text.trim() === '') add('is empty')
  for (const check of libraryChecksFor(lang)) {
    const message = runLibraryRule(text, check)
    if (message !== undefined) add(check.issue(message))
  }
  if (text.trim() === '') return { compliant: false, issues }
  // "Image" alone also ends with "image": one issue is enough.
  if (issues.some((issue) => issue.startsWith('is only a generic word'))) {
    const endingIssue = issues.findIndex((issue) => issue.startsWith('ends with a generic word'))
    if (endingIssue >= 0) issues.splice(endingIssue, 1)
  }

  const bare = withoutTrailingPunctuation(text)
  if (!/[\p{L}\p{N}]/u.test(text)) add('contains no words')

  const count = characterCount(text)
  if (count > maxLength) add(`longer than max_length (${count} > ${maxLength})`)

  const opening = findRedundantOpening(text, lang)
  if (opening) add(`starts with a redundant phrase ("${opening}")`)

  const fileName = FILE_NAME_PATTERNS.some((pattern) => pattern.test(bare))
  const url = looksLikeUrl(text)
  if (fileName && !url) add('looks like a file name')
  if (url) add('looks like a URL')
  if (fileName || url) {
    // Its extension is the same problem; one issue is enough.
    const extensionIssue = issues.findIndex((issue) => issue.startsWith('ends with a file extension'))
    if (extensionIssue >= 0) issues.splice(extensionIssue, 1)
  }

  // Residue is flagged, not refused: the text is plain and harmless where it is escaped, but a caller
  // should not publish it unread.
  const residue = markupResidue(text)
  if (residue) add(`contains markup or script ("${residue}")`)

  if (!endsWithTerminalPunctuation(text, lang)) add('does not end with punctuation')

  if (textInImage !== null && !includesText(text, textInImage)) add(LEAVES_OUT_TEXT_ISSUE)

  return { compliant: issues.length === 0, issues }
}
