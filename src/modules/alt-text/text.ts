// Turning a vision model's raw answer into clean alt text, and fitting it into `max_length`.
//
// Counting: lengths are Unicode code points (what Python's len(), Go's RuneCountInString and SQL's
// char_length report), not UTF-16 code units, so an astral character counts once. `character_count`
// and `length` in the response use `characterCount`, and `fitToLength` measures with it too.
//
// Redundant openings: generic words for "an image" ("image of", "a picture of", "photo of", "this image
// shows", …) are stripped, because screen readers already announce an image (W3C WAI images tutorial,
// "tips"). Words naming the medium are kept: "Screenshot of …", "Illustration of …", "Painting of …",
// "Diagram of …" tell the reader what kind of image it is, which the W3C decision tree treats as
// information.
//
// Plain text: alt text ends up in attributes and screen readers, so nothing in it may act as markup or
// change how the text around it reads. `toPlainText` is the one place that removes markup (script and
// style contents included), control characters, bidi controls and invisible characters; what still
// looks like markup afterwards is reported by `markupResidue` (a WCAG issue, see wcag.ts).
//
// Wrappers: what chat-tuned models put around the description (greetings, "Here is the alt text:",
// "Alt text:", "As an AI…", "I hope this helps!", "(98 characters)", template tokens, one-item lists)
// is stripped per language from the phrase table in wrappers.ts; each cut keeps the description
// (a sentence goes only when something is left after it, a closing only when something precedes it).

import { type WrapperRules, wrapperRulesFor } from './wrappers'

/** Code points, not UTF-16 units: "🦊" and "𠀀" count as one character each. */
export function characterCount(text: string): number {
  let count = 0
  for (const _ of text) count++
  return count
}

/** "pt-BR" → "pt"; the rules below are per base language. */
export function baseLanguage(language: string): string {
  return language.trim().toLowerCase().split(/[-_]/)[0] ?? ''
}

/** The language whose word lists apply: the base language, with Norwegian ("no", "nn") written as Bokmål ("nb"). */
export function rulesLanguage(language: string): string {
  const base = baseLanguage(language)
  return base === 'no' || base === 'nn' ? 'nb' : base
}

// ---------------------------------------------------------------------------------------------
// Sentence ends

/** The mark a sentence ends with, per language; '' = the script does not use one (Thai, Lao). */
const SENTENCE_END: Record<string, string> = {
  ja: '。',
  zh: '。',
  hi: '।',
  bn: '।',
  ne: '।',
  sa: '।',
  pa: '।',
  as: '।',
  or: '।',
  ur: '۔',
  hy: '։',
  am: '።',
  ti: '።',
  my: '။',
  km: '។',
  th: '',
  lo: '',
}

export function sentenceEndFor(language: string): string {
  return SENTENCE_END[baseLanguage(language)] ?? '.'
}

/** Marks that end a sentence in any language we write (incl. full-width and Indic, Ethiopic, … marks). */
const TERMINAL_MARKS = '.!?…。！？．｡؟۔।॥։።။។‼⁇⁈⁉'
/** Closing quotes and brackets that may follow the mark: `A sign reading "Stop."`. */
const CLOSERS = `"'”’»›)\\]}」』）】〕`
const TERMINAL_AT_END = new RegExp(`[${TERMINAL_MARKS}][${CLOSERS}]*$`, 'u')
/** NFC turns the Greek question mark (U+037E) into ';', so for Greek ';' ends a question. */
const GREEK_TERMINAL_AT_END = new RegExp(`[${TERMINAL_MARKS};][${CLOSERS}]*$`, 'u')

export function endsWithTerminalPunctuation(text: string, language: string): boolean {
  const lang = baseLanguage(language)
  if (sentenceEndFor(lang) === '') return true // nothing to require for scripts without a full stop
  return (lang === 'el' ? GREEK_TERMINAL_AT_END : TERMINAL_AT_END).test(text.trimEnd())
}

/** Text with its trailing sentence mark (and closers after it) removed: for checks on the last word. */
export function withoutTrailingPunctuation(text: string): string {
  return text.trim().replace(new RegExp(`[${TERMINAL_MARKS}${CLOSERS}\\s]+$`, 'u'), '')
}

const TRAILING_SEPARATORS = /[\s,;:、，；：\-–—/&+·]+$/u

function ensureSentenceEnd(text: string, language: string): string {
  const mark = sentenceEndFor(language)
  if (mark === '') return text.replace(TRAILING_SEPARATORS, '')
  if (endsWithTerminalPunctuation(text, language)) return text
  const stripped = text.replace(TRAILING_SEPARATORS, '')
  return stripped ? stripped + mark : text
}

// ---------------------------------------------------------------------------------------------
// Redundant openings

type OpeningRule = {
  pattern: RegExp
  /** Repairs the grammar of what follows the opening; `null` = cannot do it safely, keep the text. */
  rewrite?: (rest: string) => string | null
}

const EN_NOUN = String.raw`(?:image|picture|photo|photograph|pic|snapshot|graphic|stock\s+(?:photo|image))`
const EN_PRESENT = `(?:shows|depicts|features|displays|illustrates|portrays|captures|contains|presents)`
const EN_PARTICIPLE = `(?:of|showing|depicting|featuring|displaying|illustrating|portraying|capturing|containing)`

const EN_SEE = String.raw`(?:(?:we|you|i)\s+(?:can\s+)?see\s+|there\s+(?:is|are)\s+|there's\s+)`

const rx = (source: string) => new RegExp(source.normalize('NFC'), 'iu')

const FR_SEE = String.raw`(?:on\s+(?:peut\s+)?voi[rt]\s+|il\s+y\s+a\s+)`
const ES_SEE = String.raw`(?:se\s+(?:ve|ven|observa|observan|aprecia|aprecian|muestra|muestran)\s+|aparecen?\s+|hay\s+|vemos\s+)`
const IT_SEE = String.raw`(?:si\s+(?:vede|vedono)\s+|c['’]è\s+|ci\s+sono\s+|vediamo\s+)`
const PT_SEE = String.raw`(?:vemos\s+|vê-se\s+|veem-se\s+|há\s+|aparecem?\s+)`

const OPENING_RULES: Record<string, OpeningRule[]> = {
  en: [
    // "Image of", "A photo showing", "This image shows", "Here is a picture of", "An image that shows"
    {
      pattern: rx(
        String.raw`^(?:(?:here\s+is|here's|this\s+is|it\s+is|it's)\s+)?(?:(?:an?|the|this|that)\s+)?${EN_NOUN}\s+(?:(?:that|which)\s+${EN_PRESENT}|${EN_PARTICIPLE}|${EN_PRESENT}|is\s+(?:of|showing|depicting))[:,]?\s+`,
      ),
    },
    // "In this image, we see", "In the picture there are"
    { pattern: rx(String.raw`^in\s+(?:this|the)\s+${EN_NOUN}(?:\s*,\s*${EN_SEE}?|\s+${EN_SEE})`) },
    // "Image: a dog", "Photo – a dog"
    { pattern: rx(String.raw`^${EN_NOUN}\s*(?::|\s[-–—])\s*`) },
    // The model talking about its own seeing: "I can see a dog", "From what I can see, I see …"
    {
      pattern: rx(
        String.raw`^(?:(?:from\s+what\s+i\s+can\s+see|looking\s+at\s+(?:this|the)\s+${EN_NOUN}|based\s+on\s+(?:this|the)\s+${EN_NOUN}(?:\s+provided)?)\s*,\s*)?(?:i\s+(?:can\s+)?see|i\s+(?:am|['’]m)\s+(?:seeing|looking\s+at)|i\s+can\s+make\s+out|what\s+i\s+see\s+is)\s+`,
      ),
    },
    { pattern: rx(String.raw`^(?:from\s+what\s+i\s+can\s+see|based\s+on\s+(?:this|the)\s+${EN_NOUN}(?:\s+provided)?)\s*,\s*`) },
  ],
  de: [
    // "Bild von einer Katze" (dative after "von")
    {
      pattern: rx(String.raw`^(?:(?:ein|eine|das|dieses|diese)\s+)?(?:bild|foto|photo|fotografie|aufnahme|abbildung|grafik)\s+von\s+`),
      rewrite: germanDativeToNominative,
    },
    // "Das Bild zeigt einen Hund", "Ein Foto, das … zeigt" is too free-form; only the direct forms.
    {
      pattern: rx(
        String.raw`^(?:(?:das|dieses|ein|eine|die|diese)\s+)?(?:bild|foto|photo|fotografie|aufnahme|abbildung|grafik)\s+(?:zeigt|stellt\s+dar|bildet\s+ab)[:,]?\s+`,
      ),
      rewrite: germanAccusativeToNominative,
    },
    {
      pattern: rx(String.raw`^auf\s+(?:dem|diesem)\s+(?:bild|foto|photo)\s*,?\s+(?:sieht\s+man|erkennt\s+man|sehen\s+wir|sieht\s+mann)\s+`),
      rewrite: germanAccusativeToNominative,
    },
    // "Auf dem Bild ist ein Hund zu sehen" → "Ein Hund"
    {
      pattern: rx(String.raw`^auf\s+(?:dem|diesem)\s+(?:bild|foto|photo)\s+(?:ist|sind)\s+(?=.+\s+zu\s+sehen\s*[.!]?$)`),
      rewrite: (rest) => rest.replace(/\s+zu\s+sehen(\s*[.!]?)$/iu, '$1'),
    },
    { pattern: rx(String.raw`^(?:bild|foto|photo|aufnahme|abbildung|grafik)\s*(?::|\s[-–—])\s*`) },
    // "Ich sehe einen Hund", "Auf dem Bild erkenne ich …"
    {
      pattern: rx(String.raw`^(?:(?:auf|in)\s+(?:dem|diesem)\s+(?:bild|foto|photo)\s*,?\s+(?:sehe|erkenne)\s+ich|ich\s+(?:sehe|erkenne))\s+`),
      rewrite: germanAccusativeToNominative,
    },
  ],
  fr: [
    // "Image de", "Une photo d'un chat", "Photo du port" (du → le)
    {
      pattern: rx(
        String.raw`^(?:(?:une|l['’]|cette)\s*)?(?:image|photo|photographie)\s+(?:de\s+|d['’]|(?=du\s|des\s)|montrant\s+|représentant\s+|qui\s+montre\s+)`,
      ),
      rewrite: (rest) => rest.replace(/^du\s/iu, 'le ').replace(/^des\s/iu, 'les '),
    },
    // "L'image montre", "Cette photo représente"
    { pattern: rx(String.raw`^(?:l['’]|cette\s+)(?:image|photo|photographie)\s+(?:montre|représente|présente|illustre)[:,]?\s+`) },
    // "Sur l'image, on voit", "Sur cette photo, il y a"
    { pattern: rx(String.raw`^sur\s+(?:l['’]|cette\s+)(?:image|photo|photographie)(?:\s*,\s*${FR_SEE}?|\s+${FR_SEE})`) },
    { pattern: rx(String.raw`^(?:image|photo)\s*(?::|\s[-–—])\s*`) },
    // "Je vois un chat", "Sur l'image, je distingue …"
    {
      pattern: rx(
        String.raw`^(?:(?:sur|dans)\s+(?:l['’]|cette\s+)(?:image|photo|photographie)\s*,?\s+)?(?:je\s+vois|je\s+peux\s+voir|j['’]aperçois|je\s+distingue)\s+`,
      ),
    },
  ],
  es: [
    // "Imagen de", "Una foto de", "Foto del puerto" (del → el), "Una imagen que muestra"
    {
      pattern: rx(String.raw`^(?:(?:una|la|esta)\s+)?(?:imagen|foto|fotografía|fotografia)\s+(?:de\s+|(?=del\s)|que\s+muestra\s+|mostrando\s+)`),
      rewrite: spanishAfterOpening,
    },
    // "La imagen muestra (a) una mujer"
    {
      pattern: rx(String.raw`^(?:la|esta)\s+(?:imagen|foto|fotografía|fotografia)\s+(?:muestra|representa|presenta|retrata)[:,]?\s+`),
      rewrite: spanishAfterOpening,
    },
    // "En la imagen se ve", "En esta foto aparece", "En la imagen hay"
    { pattern: rx(String.raw`^en\s+(?:la|esta)\s+(?:imagen|foto|fotografía|fotografia)(?:\s*,\s*${ES_SEE}?|\s+${ES_SEE})`), rewrite: spanishAfterOpening },
    { pattern: rx(String.raw`^(?:imagen|foto)\s*(?::|\s[-–—])\s*`) },
    // "Veo a una mujer", "En la imagen puedo ver …"
    {
      pattern: rx(String.raw`^(?:en\s+(?:la|esta)\s+(?:imagen|foto|fotografía)\s*,?\s+)?(?:(?:yo\s+)?veo|puedo\s+ver|observo)\s+`),
      rewrite: spanishAfterOpening,
    },
  ],
  it: [
    // "Immagine di", "Foto del porto" (del → il), "Un'immagine che mostra"
    {
      pattern: rx(
        String.raw`^(?:(?:un['’]|l['’]|una\s+|questa\s+)\s*)?(?:immagine|foto|fotografia)\s+(?:di\s+|(?=(?:del|dello|della|dell['’]|dei|degli|delle)\b)|che\s+mostra\s+|raffigurante\s+)`,
      ),
      rewrite: italianAfterOpening,
    },
    { pattern: rx(String.raw`^(?:l['’]|questa\s+|la\s+)(?:immagine|foto|fotografia)\s+(?:mostra|raffigura|rappresenta|ritrae)[:,]?\s+`) },
    { pattern: rx(String.raw`^(?:nell['’]|in\s+questa\s+|nella\s+)(?:immagine|foto|fotografia)(?:\s*,\s*${IT_SEE}?|\s+${IT_SEE})`) },
    { pattern: rx(String.raw`^(?:immagine|foto)\s*(?::|\s[-–—])\s*`) },
    { pattern: rx(String.raw`^(?:(?:nell['’]|nella\s+|in\s+questa\s+)(?:immagine|foto|fotografia)\s*,?\s+)?(?:(?:io\s+)?vedo|posso\s+vedere|noto)\s+`) },
  ],
  nl: [
    { pattern: rx(String.raw`^(?:(?:een|de|het|deze|dit)\s+)?(?:afbeelding|foto|plaatje|fotografie)\s+(?:van|met)\s+`) },
    {
      pattern: rx(String.raw`^(?:de|deze|het|dit)\s+(?:afbeelding|foto|plaatje)\s+(?:toont|laat\s+(?=.+\s+zien\s*[.!]?$)|geeft\s+(?=.+\s+weer\s*[.!]?$))`),
      rewrite: (rest) => rest.replace(/\s+(?:zien|weer)(\s*[.!]?)$/iu, '$1'),
    },
    { pattern: rx(String.raw`^op\s+(?:de|deze|het|dit)\s+(?:afbeelding|foto|plaatje)\s*,?\s+(?:zie\s+je\s+|zien\s+we\s+|staat\s+|staan\s+)`) },
    {
      pattern: rx(String.raw`^op\s+(?:de|deze|het|dit)\s+(?:afbeelding|foto|plaatje)\s+(?:is|zijn)\s+(?=.+\s+te\s+zien\s*[.!]?$)`),
      rewrite: (rest) => rest.replace(/\s+te\s+zien(\s*[.!]?)$/iu, '$1'),
    },
    { pattern: rx(String.raw`^(?:afbeelding|foto)\s*(?::|\s[-–—])\s*`) },
    { pattern: rx(String.raw`^(?:op\s+(?:de|deze|het|dit)\s+(?:afbeelding|foto|plaatje)\s*,?\s+zie\s+ik|ik\s+zie)\s+`) },
  ],
  pt: [
    // "Imagem de", "Foto da praia" (da → a), "Uma imagem que mostra"
    {
      pattern: rx(String.raw`^(?:(?:uma|a|esta)\s+)?(?:imagem|foto|fotografia)\s+(?:de\s+|(?=(?:do|da|dos|das)\s)|que\s+mostra\s+|mostrando\s+)`),
      rewrite: (rest) => rest.replace(/^d(o|a|os|as)\s/iu, '$1 '),
    },
    { pattern: rx(String.raw`^(?:a|esta)\s+(?:imagem|foto|fotografia)\s+(?:mostra|retrata|apresenta|representa)[:,]?\s+`) },
    { pattern: rx(String.raw`^(?:na|nesta)\s+(?:imagem|foto|fotografia)(?:\s*,\s*${PT_SEE}?|\s+${PT_SEE})`) },
    { pattern: rx(String.raw`^(?:imagem|foto)\s*(?::|\s[-–—])\s*`) },
    { pattern: rx(String.raw`^(?:(?:na|nesta)\s+(?:imagem|foto|fotografia)\s*,?\s+)?(?:(?:eu\s+)?vejo|posso\s+ver|consigo\s+ver|observo)\s+`) },
  ],
  sv: [
    { pattern: rx(String.raw`^(?:(?:en|ett|den\s+här|det\s+här)\s+)?(?:bild|foto|fotografi)\s+(?:av|på)\s+`) },
    { pattern: rx(String.raw`^(?:bilden|fotot|fotografiet)\s+(?:visar|föreställer)[:,]?\s+`) },
    { pattern: rx(String.raw`^på\s+(?:bilden|fotot)\s*,?\s+(?:syns\s+|ser\s+(?:man|vi)\s+|finns\s+)`) },
    { pattern: rx(String.raw`^(?:på\s+(?:bilden|fotot)\s*,?\s+ser\s+jag|jag\s+ser)\s+`) },
  ],
  da: [
    { pattern: rx(String.raw`^(?:(?:et|en)\s+)?(?:billede|foto|fotografi)\s+af\s+`) },
    { pattern: rx(String.raw`^(?:billedet|fotoet|fotografiet)\s+(?:viser|forestiller)[:,]?\s+`) },
    { pattern: rx(String.raw`^på\s+(?:billedet|fotoet)\s*,?\s+(?:ses\s+|ser\s+(?:man|vi)\s+|er\s+der\s+)`) },
    { pattern: rx(String.raw`^(?:på\s+(?:billedet|fotoet)\s*,?\s+ser\s+jeg|jeg\s+ser)\s+`) },
  ],
  nb: [
    { pattern: rx(String.raw`^(?:(?:et|en)\s+)?(?:bilde|foto|fotografi)\s+av\s+`) },
    { pattern: rx(String.raw`^(?:bildet|fotoet|fotografiet)\s+(?:viser|forestiller)[:,]?\s+`) },
    { pattern: rx(String.raw`^på\s+(?:bildet|fotoet)\s*,?\s+(?:ser\s+(?:man|vi)\s+|er\s+det\s+|vises\s+)`) },
    { pattern: rx(String.raw`^(?:på\s+(?:bildet|fotoet)\s*,?\s+ser\s+jeg|jeg\s+ser)\s+`) },
  ],
  // Languages with grammatical case: only openings after which the noun stands in the nominative
  // ("На фото изображена собака"); "I see" takes the accusative there, so it stays.
  pl: [
    {
      pattern: rx(
        String.raw`^na\s+(?:tym\s+)?(?:zdjęciu|obrazie|obrazku|fotografii|ilustracji)\s*,?\s+(?:jest|są|znajduje\s+się|znajdują\s+się|widnieje|widoczn[yae]\s+(?:jest|są))\s+`,
      ),
    },
  ],
  cs: [{ pattern: rx(String.raw`^na\s+(?:tomto\s+|této\s+)?(?:obrázku|fotografii|snímku|fotce)\s*,?\s+(?:je|jsou|se\s+nachází|se\s+nacházejí)\s+`) }],
  ru: [
    {
      pattern: rx(
        String.raw`^на\s+(?:этом\s+|этой\s+|данном\s+|данной\s+)?(?:изображении|фото|фотографии|снимке|картинке)\s*,?\s*(?:(?:изображен[аоы]?|изображён|видн[аоы]|виден|показан[аоы]?|есть)\s+|[-—–]\s*)`,
      ),
    },
  ],
  uk: [
    {
      pattern: rx(
        String.raw`^на\s+(?:цьому\s+|цій\s+|даному\s+)?(?:зображенні|фото|фотографії|знімку|світлині|картинці)\s*,?\s*(?:(?:зображен[аийі]|є)\s+|[-—–]\s*)`,
      ),
    },
  ],
  fi: [{ pattern: rx(String.raw`^(?:tässä\s+)?kuvassa\s+(?:on|näkyy|näkyvät|ovat)\s+`) }],
  zh: [
    { pattern: rx(String.raw`^在?(?:这张|这幅|该|此)?(?:图片|图像|照片|画面|图)(?:中|里|上)[，,]?\s*我?(?:可以|能)?(?:看到|看见)了?`) },
    { pattern: rx(String.raw`^(?:这张|这幅|该|此)?(?:图片|图像|照片)(?:显示|展示|呈现|描绘)(?:了|的是|出)?[：:，,]?\s*`) },
    { pattern: rx(String.raw`^在?(?:这张|这幅|该|此)(?:图片|图像|照片)中[，,]\s*`) },
    { pattern: rx('^我(?:可以|能)?(?:看到|看见)了?') },
  ],
  ar: [{ pattern: rx(String.raw`^في\s+(?:هذه\s+)?الصورة\s*[،,]\s*`) }],
  hi: [
    { pattern: rx(String.raw`^(?:इस|यह)\s+(?:छवि|तस्वीर|चित्र|फ़ोटो|फोटो)\s+में\s*,?\s*`) },
    { pattern: rx(String.raw`^मैं\s+देख\s+(?:सकता|सकती)\s+(?:हूँ|हूं)\s+कि\s+`) },
  ],
}

/**
 * The opening patterns per language, anchored at the start, case-insensitive. English patterns also
 * apply to every other language (models often slip into English phrasing); see `openingRulesFor`.
 */
export const REDUNDANT_OPENINGS: Record<string, RegExp[]> = Object.fromEntries(
  Object.entries(OPENING_RULES).map(([language, rules]) => [language, rules.map((rule) => rule.pattern)]),
)

function openingRulesFor(language: string): OpeningRule[] {
  const lang = rulesLanguage(language)
  const own = lang === 'en' ? [] : (OPENING_RULES[lang] ?? [])
  return [...own, ...(OPENING_RULES.en ?? [])]
}

/** The redundant opening the text starts with ("Image of"), or null. */
export function findRedundantOpening(text: string, language: string): string | null {
  const trimmed = text.trimStart()
  for (const rule of openingRulesFor(language)) {
    const match = rule.pattern.exec(trimmed)
    if (match && /[\p{L}\p{N}]/u.test(trimmed.slice(match[0].length))) return match[0].replace(/[\s:,\-–—]+$/u, '')
  }
  return null
}

export function hasRedundantOpening(text: string, language: string): boolean {
  return findRedundantOpening(text, language) !== null
}

function stripRedundantOpening(text: string, language: string): string {
  for (const rule of openingRulesFor(language)) {
    const match = rule.pattern.exec(text)
    if (!match) continue
    const rest = text.slice(match[0].length)
    const rewritten = rule.rewrite ? rule.rewrite(rest) : rest
    // Keep the original rather than return nothing or broken grammar.
    if (rewritten === null || !/[\p{L}\p{N}]/u.test(rewritten)) return text
    return rewritten
  }
  return text
}

// After "zeigt" / "sieht man" the object is accusative; standing alone it must be nominative. Only
// the masculine forms differ, and for them the gender is known: "einen alten Hund" → "ein alter Hund",
// "den alten Hund" → "der alte Hund".
function germanAccusativeToNominative(rest: string): string | null {
  const match = /^(einen|den)((?:,?\s+[a-zäöüß]+)*)(?=\s+[A-ZÄÖÜ])/u.exec(rest)
  if (!match) return /^(?:einen|den)\s/u.test(rest) ? null : rest
  const [whole, article = '', adjectives = ''] = match
  const indefinite = article === 'einen'
  const fixed = adjectives.replace(/([a-zäöüß]+)en\b/gu, (_all, stem: string) => stem + (indefinite ? 'er' : 'e'))
  return (indefinite ? 'ein' : 'der') + fixed + rest.slice(whole.length)
}

// After "von" the object is dative. "einer (…-en) Katze" is feminine → "eine (…-e) Katze", and a bare
// "einem Hund" → "ein Hund" (masculine or neuter alike). With adjectives after "einem", after
// "dem"/"den", or a plural ("zwei Hunden"), the form is unknown, so the opening stays.
function germanDativeToNominative(rest: string): string | null {
  const feminine = /^einer((?:,?\s+[a-zäöüß]+)*)(?=\s+[A-ZÄÖÜ])/u.exec(rest)
  if (feminine) {
    const adjectives = (feminine[1] ?? '').replace(/([a-zäöüß]+)en\b/gu, '$1e')
    return `eine${adjectives}${rest.slice(feminine[0].length)}`
  }
  if (/^einem\s+[A-ZÄÖÜ]/u.test(rest)) return rest.replace(/^einem/u, 'ein')
  // A name ("Foto von Berlin") reads the same; anything else ("zwei Hunden") would be dative.
  return /^[A-ZÄÖÜ]/u.test(rest) ? rest : null
}

// "del puerto" → "el puerto"; the personal "a" before a person: "muestra a una mujer" → "una mujer".
function spanishAfterOpening(rest: string): string {
  return rest
    .replace(/^del\s/iu, 'el ')
    .replace(/^al\s/iu, 'el ')
    .replace(/^a\s+(?=(?:un|una|unos|unas|el|la|los|las|dos|tres|varios|varias)\s|\p{Lu})/u, '')
}

function italianAfterOpening(rest: string): string {
  const contractions: Array<[RegExp, string]> = [
    [/^dell['’]/iu, "l'"],
    [/^dello\s/iu, 'lo '],
    [/^della\s/iu, 'la '],
    [/^degli\s/iu, 'gli '],
    [/^delle\s/iu, 'le '],
    [/^dei\s/iu, 'i '],
    [/^del\s/iu, 'il '],
  ]
  for (const [pattern, article] of contractions) if (pattern.test(rest)) return rest.replace(pattern, article)
  return rest
}

// ---------------------------------------------------------------------------------------------
// Plain text

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

// ---------------------------------------------------------------------------------------------
// Cleaning

/** Emoji and pictographs with their modifiers, variation selectors, tags and ZWJ joins. */
const PICTOGRAPH_SEQUENCE =
  /(?:\p{Extended_Pictographic}|\p{Regional_Indicator}|[\u{1F3FB}-\u{1F3FF}])(?:[\u{FE0E}\u{FE0F}\u{20E3}\u{1F3FB}-\u{1F3FF}\u{E0020}-\u{E007F}]|\u{200D}(?:\p{Extended_Pictographic}|\p{Regional_Indicator})?)*/gu
/** "1️⃣" reads as "1": keep the digit, drop the keycap. */
const KEYCAP = /([#*0-9])\u{FE0F}?\u{20E3}/gu
const STRAY_EMOJI_PARTS = /[\u{FE0E}\u{FE0F}\u{20E3}\u{E0020}-\u{E007F}]/gu

function stripEmoji(text: string): string {
  return text.replace(KEYCAP, '$1').replace(PICTOGRAPH_SEQUENCE, ' ').replace(STRAY_EMOJI_PARTS, '')
}

/** Bold, italics, strike-through, links and code spans on one line or across lines: their text stays. */
function stripInlineMarkdown(text: string): string {
  return text
    .replace(/!?\[([^\]]*)\]\((?:[^()\s]|\([^()]*\))*(?:\s+"[^"]*")?\)/g, '$1') // [x](y) → x
    .replace(/(\*\*|__)(?=\S)([\s\S]*?\S)\1/g, '$2')
    .replace(/(?<![\p{L}\p{N}])([*_])(?=\S)([^*_]*?\S)\1(?![\p{L}\p{N}])/gu, '$2')
    .replace(/~~(?=\S)([\s\S]*?\S)~~/g, '$1')
    .replace(/[*`]+/g, '')
}

type AnswerLine = { text: string; bullet: boolean; numbered: boolean }

const BULLET = /^\s*[-*+•‣◦▪]\s+/u
const NUMBER = /^\s*\d{1,2}[.)]\s+/u
/** "---", "***", "===": a rule or underline, nothing to read. */
const RULE_LINE = /^\s*[-*_=~]{3,}\s*$/u

/** The answer's lines without code fences, rules, headings, quote and bullet markers; numbers are only flagged here. */
function answerLines(text: string): AnswerLine[] {
  const lines: AnswerLine[] = []
  for (const raw of text.split(/\r\n|\r|\n/)) {
    if (/^\s*(?:```|~~~)/.test(raw) || RULE_LINE.test(raw) || !raw.trim()) continue
    const line = raw.replace(/^\s{0,3}#{1,6}\s+/, '').replace(/^\s*>\s?/, '')
    const bullet = BULLET.test(line)
    lines.push({ text: bullet ? line.replace(BULLET, '') : line, bullet, numbered: !bullet && NUMBER.test(line) })
  }
  return lines
}

/** A line as it reads, for matching wrapper phrases: no markdown or emoji, one line of single spaces. */
function readable(line: string): string {
  return collapseWhitespace(stripEmoji(stripInlineMarkdown(line)))
}

/** A line that only wraps the answer: a preamble ("Sure! Here are three options:"), a label or heading ("**Alt text**"). */
function isWrapperLine(line: string, rules: WrapperRules): boolean {
  const text = readable(line)
  return rules.labelLine.test(text) || !hasContent(stripLeadingWrappers(text, rules, true))
}

/**
 * Drops whole lines that wrap the answer: preamble and label lines before it, closing lines after it
 * ("I hope this helps!", "**Explanation:** …" and all that follows). A list announced as alternatives
 * ("Here are three options:") keeps only its first item. Numbers ("1. ") are list markers only in a
 * list or after a preamble, so a lone "1. FC Köln fans" keeps its number.
 */
function unwrapLines(text: string, rules: WrapperRules): string {
  let lines = answerLines(text)
  let preamble = false
  let alternatives = false
  while (lines.length > 1 && isWrapperLine(lines[0]?.text ?? '', rules)) {
    alternatives ||= rules.alternatives.test(readable(lines[0]?.text ?? ''))
    preamble = true
    lines = lines.slice(1)
  }
  const closing = lines.findIndex((line, index) => index > 0 && rules.closing.test(readable(line.text)))
  if (closing > 0) lines = lines.slice(0, closing)
  const items = lines.filter((line) => line.bullet || line.numbered)
  if (alternatives && items.length > 1 && items[0]) return withoutItemLabel(items[0].text.replace(NUMBER, ''))
  const list = preamble || lines.length > 1
  return lines.map((line) => (list && line.numbered ? line.text.replace(NUMBER, '') : line.text)).join('\n')
}

/** An alternative without its own short label: "**Short:** A black cat." → "A black cat." */
function withoutItemLabel(item: string): string {
  const text = readable(item)
  const label = /^(?:[^\s:：]+\s+){0,3}[^\s:：]+[:：]\s+/u.exec(text)
  return label && hasContent(text.slice(label[0].length)) ? text.slice(label[0].length) : item
}

function hasContent(text: string): boolean {
  return /[\p{L}\p{N}]/u.test(text)
}

/** Where the first sentence or colon lead-in ends: "Sure! ", "Here is the alt text: ", "以下是替代文本：". */
const LEAD_END = /[:：](?=\s|$|["'“„«「])|[.!?…。！？؟।]+["'”’»」)]*(?=\s|$)|[。！？：]/u
/** Where a new sentence starts (for closings): after a sentence mark, after a note in parentheses, or at a parenthesis that opens one. */
const SENTENCE_START = /[.!?…。！？؟।]+["'”’»」)]*\s+|[。！？]|[)）]\s+(?=\p{Lu})|\s+(?=[(（])/gu
/** A list marker left in front of the answer after its preamble: "Here is the alt text: 1. A dog". */
const LEADING_LIST_MARKER = /^(?:\d{1,2}[.)]|[-*+•‣◦▪])\s+/u

/**
 * Strips what wraps the start of the answer, repeatedly: an acknowledgement ("Sure!"), a label
 * ("Alt text:"), a preamble lead-in ("Here is the alt text for the image:") or a sentence in which the
 * model talks about itself ("As an AI, I cannot identify people."). Inside an answer, each goes only
 * when something is left after it; `wholeLine` is for judging a line that may be all wrapper.
 */
function stripLeadingWrappers(text: string, rules: WrapperRules, wholeLine: boolean): string {
  let out = text
  let stripped = false
  for (;;) {
    const next = stripLeadingWrapper(out, rules, wholeLine).trimStart()
    if (next === out) break
    out = next
    stripped = true
  }
  return stripped ? out.replace(LEADING_LIST_MARKER, '') : out
}

function stripLeadingWrapper(text: string, rules: WrapperRules, wholeLine: boolean): string {
  const acknowledgement = rules.acknowledgement.exec(text)
  if (acknowledgement && (wholeLine || hasContent(text.slice(acknowledgement[0].length)))) return text.slice(acknowledgement[0].length)
  const label = rules.label.exec(text)
  if (label) return text.slice(label[0].length)
  const end = LEAD_END.exec(text.length > 400 ? text.slice(0, 400) : text)
  const cut = end ? end.index + end[0].length : wholeLine ? text.length : -1
  if (cut <= 0) return text
  const lead = text.slice(0, cut)
  const rest = text.slice(cut)
  if (!wholeLine && !hasContent(rest)) return text
  const preamble = rules.presenting.test(lead) && rules.about.test(lead)
  return preamble || rules.selfReference.test(lead) ? rest : text
}

/** Cuts a closing ("I hope this helps!") and all after it, then a trailing "(98 characters)". */
function stripTrailingWrappers(text: string, rules: WrapperRules): string {
  let out = text
  for (const match of out.matchAll(SENTENCE_START)) {
    const start = match.index + match[0].length
    if (rules.closing.test(out.slice(start)) && hasContent(out.slice(0, start))) {
      out = out.slice(0, start)
      break
    }
  }
  const count = rules.characterCount.exec(out)
  if (count && hasContent(out.slice(0, count.index))) out = out.slice(0, count.index)
  return out.trimEnd()
}

const QUOTE_PAIRS: ReadonlyArray<readonly [string, string]> = [
  ['"', '"'],
  ["'", "'"],
  ['“', '”'],
  ['„', '“'],
  ['„', '”'],
  ['«', '»'],
  ['»', '«'],
  ['‘', '’'],
  ['‚', '‘'],
  ['‚', '’'],
  ['”', '”'],
  ['‹', '›'],
  ['›', '‹'],
  ['「', '」'],
  ['『', '』'],
  ['`', '`'],
]

/** Removes quotes around the whole text, keeping a mark that sat outside them (`"A dog".`). */
function unwrapQuotes(text: string): string {
  for (const [open, close] of QUOTE_PAIRS) {
    if (!text.startsWith(open)) continue
    const tail = new RegExp(`${escapeRegExp(close)}([${TERMINAL_MARKS}]?)$`, 'u').exec(text)
    if (!tail || tail.index < open.length) continue
    const inner = text.slice(open.length, tail.index)
    // Apostrophes inside words ("dog's") are not quotes.
    const quotesInside = inner.replace(/(?<=\p{L})['’](?=\p{L})/gu, '')
    if (quotesInside.includes(open) || quotesInside.includes(close)) continue
    return (inner.trim() + (tail[1] ?? '')).trim()
  }
  return text
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/** One line: whitespace runs become one space (a lone no-break space, as French uses, stays). */
function collapseWhitespace(text: string): string {
  return text.replace(/\s+/gu, (run) => (run === '\u00A0' || run === '\u202F' ? run : ' ')).trim()
}

function tidySpacing(text: string, language: string): string {
  const lang = baseLanguage(language)
  let out = text.replace(/\s+([,.…])/gu, '$1')
  // French puts a (narrow) space before ; : ! ?; everyone else does not.
  if (lang !== 'fr') out = out.replace(/\s+([;:!?])/gu, '$1')
  // Leftovers of a stripped label or bullet; a leading "-5 °C" keeps its minus.
  return out.replace(/^(?:[\s,;:·|]|[.\-–—](?=\s))+/u, '').trim()
}

/** Uppercases the first letter, locale-aware. Leaves alone what must not change (see comments). */
function capitaliseFirstLetter(text: string, language: string): string {
  const lang = baseLanguage(language)
  if (lang === 'ka') return text // Georgian has no sentence case; its "capitals" are an all-caps style
  const first = /[\p{L}\p{N}]/u.exec(text)
  if (!first || !/\p{Ll}/u.test(first[0])) return text
  const start = first.index
  const word = /^[\p{L}\p{M}]+/u.exec(text.slice(start))?.[0] ?? ''
  // "iPhone", "eBay", "macOS": a capital inside the first word means the case is deliberate.
  if (/\p{Lu}/u.test(word.slice(1))) return text
  if (lang === 'nl' && /^ij/u.test(word)) return `${text.slice(0, start)}IJ${text.slice(start + 2)}`
  const char = String.fromCodePoint(text.codePointAt(start) ?? 0)
  let upper: string
  try {
    upper = char.toLocaleUpperCase(lang || undefined)
  } catch {
    upper = char.toUpperCase()
  }
  // "ß" would become "SS": only a one-to-one mapping capitalises a single letter.
  if (characterCount(upper) !== 1) return text
  return text.slice(0, start) + upper + text.slice(start + char.length)
}

/** Reasoning blocks of thinking models: <think>, <thinking>, <reasoning> (qwen3, deepseek-r1) and Kimi-VL's ◁think▷. */
const REASONING_BLOCK = /<(think|thinking|reasoning)\b[^>]*>[\s\S]*?<\/\1\s*>|◁think▷[\s\S]*?◁\/think▷/giu
/** A close tag without its opening: the chat template put `<think>` in the prompt, so the answer starts inside it. */
const REASONING_TAIL = /^[\s\S]*?(?:<\/(?:think|thinking|reasoning)\s*>|◁\/think▷)/iu
/** An opening never closed: the model was cut off while still reasoning, so nothing after it is an answer. */
const REASONING_UNCLOSED = /(?:<(?:think|thinking|reasoning)\b[^>]*>|◁think▷)[\s\S]*$/iu
/** gpt-oss harmony channels: only the `final` channel is the answer. */
const FINAL_CHANNEL = /<\|channel\|>\s*final\s*<\|message\|>([\s\S]*?)(?:<\|(?:end|return)\|>|$)/iu
/** Ollama's command-line rendering of a thinking model, when a proxy passes it on as text. */
const THINKING_TRANSCRIPT = /^\s*Thinking\.\.\.[\s\S]*?\.\.\.done thinking\.?/u
/** Reasoning written out without tags, ending in a line such as "**Final answer:** …": only what follows counts. */
const FINAL_ANSWER_LINE = /(?:^|\n)[\s#*_>]*final\s+(?:answer|alt[\s-]*text|output|description)[\s*_]*[:：][\s*_]*/iu

/**
 * Takes out what a thinking model reasoned before answering, when the server did not separate it:
 * whole <think>…</think> blocks, a reasoning prefix ending in a lone </think>, an unclosed <think> (no
 * answer came), everything but the final channel of a harmony answer, and untagged reasoning that ends
 * in a "Final answer:" line.
 */
function stripReasoning(raw: string): string {
  const final = FINAL_CHANNEL.exec(raw)
  if (final) return final[1] ?? ''
  const text = raw.replace(THINKING_TRANSCRIPT, ' ').replace(REASONING_BLOCK, ' ').replace(REASONING_TAIL, ' ').replace(REASONING_UNCLOSED, ' ')
  const answer = FINAL_ANSWER_LINE.exec(text)
  return answer && hasContent(text.slice(answer.index + answer[0].length)) ? text.slice(answer.index + answer[0].length) : text
}

// Chat-template tokens of common vision models, which a server with a wrong template or missing stop
// tokens passes on as text: ChatML (qwen2.5-vl, qwen3-vl, minicpm-v), Llama 3 (llama3.2-vision),
// Gemma (gemma3), Mistral [INST] (llava 1.6, pixtral), llava 1.5's "USER:/ASSISTANT:", DeepSeek.

/** Where the model's own turn starts: text before it is an echoed prompt. */
const ASSISTANT_TURN =
  /<\|im_start\|>\s*assistant\b|<\|start_header_id\|>\s*assistant\s*<\|end_header_id\|>|<start_of_turn>\s*model\b|<\|assistant\|>|<｜Assistant｜>|\[\/INST\]|<\|start\|>\s*assistant|(?:^|\n)\s*(?:###\s*)?assistant\s*:/iu
/** Where it ends: an end-of-turn token, or the start of another turn when the model ran on. */
const TURN_END =
  /<\|im_end\|>|<\|eot_id\|>|<\|eom_id\|>|<\|end\|>|<\|endoftext\|>|<\|end_of_text\|>|<end_of_turn>|<\/s>|<eos>|<\|return\|>|<｜end▁of▁sentence｜>|<\|END_OF_TURN_TOKEN\|>|<\|im_start\|>|<start_of_turn>|<\|start_header_id\|>|<\|user\|>|<\|system\|>|\[INST\]|\n\s*(?:###\s*)?(?:user|human|instruction)\s*:/giu
/** Any other special token, wherever it is: <s>, <|begin_of_text|>, <image>, <|vision_start|>, [IMG]. */
const SPECIAL_TOKEN =
  /<\|[a-z_]{1,40}\|>|<｜[^｜<>]{1,40}｜>|\[\/?(?:INST|IMG|SYS)\]|<<\/?SYS>>|<\/?s>|<(?:bos|eos|pad|unk|image|start_of_image|end_of_image)>/giu

/** The model's own turn, without template tokens: after the first assistant marker, up to the end of that turn. */
function stripTemplateTokens(raw: string): string {
  let text = raw
  const start = ASSISTANT_TURN.exec(text)
  if (start) text = text.slice(start.index + start[0].length)
  // The first end of turn after some answer ends it; one before any answer (a stray "</s>" up front) does not.
  let checked = 0
  for (const end of text.matchAll(TURN_END)) {
    if (hasContent(text.slice(checked, end.index).replace(SPECIAL_TOKEN, ''))) {
      text = text.slice(0, end.index)
      break
    }
    checked = end.index + end[0].length
  }
  return text.replace(TURN_END, ' ').replace(SPECIAL_TOKEN, ' ')
}

/**
 * Cleans a model answer into one line of plain alt text: no reasoning, template tokens, markup,
 * control or invisible characters, wrapping quotes, markdown, emoji; none of what chat models wrap
 * around the answer (see wrappers.ts: acknowledgements, preambles, labels, talk about themselves,
 * closings, character counts, lists of alternatives) and no redundant opening; first letter
 * capitalised; ends with the language's sentence mark. Returns "" when nothing but those stripped
 * parts was there.
 */
export function cleanAltText(raw: string, language: string): string {
  const rules = wrapperRulesFor(rulesLanguage(language))
  const lines = unwrapLines(toPlainText(stripTemplateTokens(stripReasoning(raw))), rules)
  let text = collapseWhitespace(stripEmoji(stripInlineMarkdown(lines)))
  for (let round = 0; round < 16; round++) {
    const before = text
    text = stripLeadingWrappers(text, rules, false)
    text = stripTrailingWrappers(text, rules)
    text = unwrapQuotes(text)
    text = stripRedundantOpening(text, language)
    text = tidySpacing(text, language)
    if (text === before) break
  }
  if (!hasContent(text)) return ''
  return ensureSentenceEnd(capitaliseFirstLetter(text, language), language)
}

// ---------------------------------------------------------------------------------------------
// Fitting into max_length

/** Words that cannot end a cut-off sentence: articles, conjunctions, prepositions, auxiliaries. */
const DANGLING_WORDS: Record<string, ReadonlySet<string>> = {
  en: new Set([
    'a',
    'an',
    'the',
    'and',
    'or',
    'but',
    'nor',
    'with',
    'without',
    'of',
    'in',
    'on',
    'at',
    'to',
    'for',
    'from',
    'by',
    'as',
    'into',
    'onto',
    'over',
    'under',
    'near',
    'behind',
    'beside',
    'between',
    'while',
    'whose',
    'which',
    'that',
    'who',
    'its',
    'their',
    'his',
    'my',
    'our',
    'your',
    'some',
    'is',
    'are',
    'was',
    'were',
    'very',
    'than',
    'like',
  ]),
  de: new Set([
    'und',
    'oder',
    'aber',
    'mit',
    'ohne',
    'von',
    'vom',
    'im',
    'in',
    'am',
    'an',
    'auf',
    'aus',
    'bei',
    'zu',
    'zum',
    'zur',
    'für',
    'der',
    'die',
    'das',
    'den',
    'dem',
    'des',
    'ein',
    'eine',
    'einen',
    'einem',
    'einer',
    'eines',
    'seine',
    'ihre',
    'sowie',
    'neben',
    'vor',
    'hinter',
    'über',
    'unter',
    'zwischen',
    'während',
    'dessen',
    'deren',
    'ist',
    'sind',
    'sehr',
  ]),
  fr: new Set([
    'et',
    'ou',
    'mais',
    'avec',
    'sans',
    'de',
    'du',
    'des',
    'le',
    'la',
    'les',
    'un',
    'une',
    'à',
    'au',
    'aux',
    'en',
    'dans',
    'sur',
    'sous',
    'pour',
    'par',
    'son',
    'sa',
    'ses',
    'leur',
    'leurs',
    'qui',
    'que',
    'dont',
    'est',
    'sont',
    'très',
  ]),
  es: new Set([
    'y',
    'e',
    'o',
    'u',
    'pero',
    'con',
    'sin',
    'de',
    'del',
    'el',
    'la',
    'los',
    'las',
    'un',
    'una',
    'unos',
    'unas',
    'a',
    'al',
    'en',
    'sobre',
    'para',
    'por',
    'su',
    'sus',
    'que',
    'es',
    'son',
    'entre',
    'muy',
  ]),
  it: new Set([
    'e',
    'ed',
    'o',
    'ma',
    'con',
    'senza',
    'di',
    'del',
    'della',
    'dei',
    'degli',
    'delle',
    'il',
    'lo',
    'la',
    'i',
    'gli',
    'le',
    'un',
    'uno',
    'una',
    'a',
    'al',
    'alla',
    'in',
    'nel',
    'nella',
    'su',
    'sul',
    'sulla',
    'per',
    'tra',
    'fra',
    'da',
    'dal',
    'dalla',
    'che',
    'è',
    'sono',
    'suo',
    'sua',
    'molto',
  ]),
  nl: new Set([
    'en',
    'of',
    'maar',
    'met',
    'zonder',
    'van',
    'de',
    'het',
    'een',
    'in',
    'op',
    'aan',
    'bij',
    'naar',
    'voor',
    'door',
    'uit',
    'over',
    'onder',
    'tussen',
    'die',
    'dat',
    'is',
    'zeer',
  ]),
  pt: new Set([
    'e',
    'ou',
    'mas',
    'com',
    'sem',
    'de',
    'do',
    'da',
    'dos',
    'das',
    'o',
    'a',
    'os',
    'as',
    'um',
    'uma',
    'uns',
    'umas',
    'em',
    'no',
    'na',
    'nos',
    'nas',
    'por',
    'para',
    'pelo',
    'pela',
    'sobre',
    'entre',
    'que',
    'seu',
    'sua',
    'é',
    'são',
    'muito',
  ]),
  sv: new Set([
    'och',
    'eller',
    'men',
    'med',
    'utan',
    'av',
    'en',
    'ett',
    'den',
    'det',
    'de',
    'i',
    'på',
    'till',
    'för',
    'från',
    'vid',
    'under',
    'över',
    'som',
    'är',
  ]),
  da: new Set(['og', 'eller', 'men', 'med', 'uden', 'af', 'en', 'et', 'den', 'det', 'de', 'i', 'på', 'til', 'for', 'fra', 'ved', 'under', 'over', 'som', 'er']),
  nb: new Set([
    'og',
    'eller',
    'men',
    'med',
    'uten',
    'av',
    'en',
    'et',
    'ei',
    'den',
    'det',
    'de',
    'i',
    'på',
    'til',
    'for',
    'fra',
    'ved',
    'under',
    'over',
    'som',
    'er',
  ]),
}

function danglingWordsFor(language: string): ReadonlySet<string> {
  return DANGLING_WORDS[rulesLanguage(language)] ?? new Set()
}

/** Scripts written without spaces between words: cut them by ICU word segmentation instead. */
const NO_SPACE_LANGUAGES = new Set(['ja', 'zh', 'th', 'lo', 'km', 'my', 'bo', 'dz'])

/** The language to cut by when the caller did not say: only the script matters here. */
function inferLanguage(text: string): string {
  if (/[\p{Script=Hiragana}\p{Script=Katakana}]/u.test(text)) return 'ja'
  const scripts: Array<[RegExp, string]> = [
    [/\p{Script=Han}/gu, 'zh'],
    [/\p{Script=Thai}/gu, 'th'],
    [/\p{Script=Lao}/gu, 'lo'],
    [/\p{Script=Khmer}/gu, 'km'],
    [/\p{Script=Myanmar}/gu, 'my'],
    [/\p{Script=Tibetan}/gu, 'bo'],
    [/\p{Script=Devanagari}/gu, 'hi'],
    [/\p{Script=Bengali}/gu, 'bn'],
    [/\p{Script=Armenian}/gu, 'hy'],
    [/\p{Script=Ethiopic}/gu, 'am'],
  ]
  const letters = (text.match(/\p{L}/gu) ?? []).length
  for (const [pattern, language] of scripts) {
    if ((text.match(pattern) ?? []).length * 2 > letters) return language
  }
  return 'en'
}

/** Closes quotes and brackets that a cut left open: „Willkommen → „Willkommen“. */
function closeOpenPairs(text: string): string {
  const stack: string[] = []
  for (const char of text) {
    const top = stack[stack.length - 1]
    if (char === '“' && top === '„') stack.pop()
    else if ('„“«‹([{「『（'.includes(char)) stack.push(char)
    else if (
      (char === '”' && (top === '“' || top === '„')) ||
      (char === '»' && top === '«') ||
      (char === '›' && top === '‹') ||
      (char === ')' && top === '(') ||
      (char === ']' && top === '[') ||
      (char === '}' && top === '{') ||
      (char === '」' && top === '「') ||
      (char === '』' && top === '『') ||
      (char === '）' && top === '（')
    )
      stack.pop()
  }
  const closers: Record<string, string> = { '„': '“', '“': '”', '«': '»', '‹': '›', '(': ')', '[': ']', '{': '}', '「': '」', '『': '』', '（': '）' }
  let out = text
  for (let i = stack.length - 1; i >= 0; i--) {
    const open = stack[i] ?? ''
    out += open === '«' && /«\s/u.test(text) ? ' »' : (closers[open] ?? '')
  }
  if ((out.match(/"/g) ?? []).length % 2 === 1) out += '"'
  return out
}

/** Ends a cut-off prefix cleanly: no trailing separators or dangling words, pairs closed, a sentence mark. */
function finishCut(prefix: string, language: string, stripDangling: boolean): string {
  const dangling = stripDangling ? danglingWordsFor(language) : new Set<string>()
  let text = prefix
  for (;;) {
    const before = text
    text = text.replace(/[\s,;:、，；：\-–—/&+·„“"«‹‚‘([{「『（]+$/u, '')
    if (stripDangling) {
      const last = /(?:^|\s)([\p{L}\p{M}'’]+)$/u.exec(text)
      if (last && dangling.has((last[1] ?? '').toLocaleLowerCase())) text = text.slice(0, text.length - (last[1] ?? '').length)
    }
    if (text === before) break
  }
  if (!/[\p{L}\p{N}]/u.test(text)) return ''
  text = closeOpenPairs(text)
  return ensureSentenceEnd(text, language)
}

/** Prefix ends (UTF-16 indices) after a sentence mark that really ends a sentence, longest first. */
function sentenceEnds(text: string, language: string): number[] {
  const lang = baseLanguage(language)
  const ends: number[] = []
  const marks = lang === 'el' ? `${TERMINAL_MARKS};` : TERMINAL_MARKS
  const pattern = new RegExp(`[${marks}]+[${CLOSERS}]*`, 'gu')
  for (const match of text.matchAll(pattern)) {
    const end = match.index + match[0].length
    const after = text.slice(end)
    const fullWidth = /[。！？｡．]/u.test(match[0])
    if (!fullWidth && after !== '' && !/^\s/u.test(after)) continue // "3.5", "example.com"
    const next = after.trimStart()
    if (/^\p{Ll}/u.test(next)) continue // "e.g. a dog": no new sentence starts
    if (/…|\.\.|⋯/u.test(match[0])) continue // a kept "…" would read as our own truncation
    if (match[0].startsWith('.') && isAbbreviation(text.slice(0, match.index))) continue
    ends.push(end)
  }
  return ends.reverse()
}

const ABBREVIATIONS = new Set([
  'mr',
  'mrs',
  'ms',
  'dr',
  'prof',
  'st',
  'mt',
  'jr',
  'sr',
  'vs',
  'no',
  'nr',
  'fig',
  'approx',
  'ca',
  'etc',
  'inc',
  'ltd',
  'co',
  'corp',
  'hr',
  'fr',
  'sra',
  'dra',
  'sig',
  'mme',
  'mlle',
  'bzw',
  'usw',
  'z',
  'u',
  'e',
  'i',
])

/** "Dr", "Mr", a single initial ("J") or a dotted abbreviation ("U.S", "e.g") before the period. */
function isAbbreviation(before: string): boolean {
  const token = /(\S+)$/u.exec(before)?.[1] ?? ''
  const word = token.replace(/^[^\p{L}\p{N}]+/u, '')
  if (word.includes('.')) return true
  if (/^\p{L}$/u.test(word)) return true
  return ABBREVIATIONS.has(word.toLowerCase())
}

function graphemes(text: string, language: string): string[] {
  try {
    return Array.from(new Intl.Segmenter(language || undefined, { granularity: 'grapheme' }).segment(text), (s) => s.segment)
  } catch {
    return Array.from(text)
  }
}

/**
 * Shortens text to at most `maxLength` characters (code points, see `characterCount`).
 *
 * 1. The longest prefix ending at a sentence boundary, with its punctuation.
 * 2. Else the longest prefix ending at a word boundary (whitespace), without trailing commas,
 *    dashes or dangling articles/conjunctions/prepositions, closed with the sentence mark.
 *    Languages written without spaces (ja, zh, th, lo, km, my, …) cut at the last clause mark
 *    (、，；：) and, failing that, at an ICU word boundary (Intl.Segmenter).
 * 3. Else — one word longer than the limit — a hard cut: `maxLength - 1` characters (on a grapheme
 *    boundary) plus the sentence mark. Cutting the word is unavoidable there.
 * Never adds an ellipsis. `language` is optional; without it the script of the text decides.
 */
export function fitToLength(text: string, maxLength: number, language?: string): string {
  if (characterCount(text) <= maxLength) return text
  if (maxLength <= 0) return ''
  const lang = baseLanguage(language ?? inferLanguage(text))
  const fits = (candidate: string) => candidate !== '' && characterCount(candidate) <= maxLength
  // No cut can end beyond maxLength + 1 characters; a little more shows what follows a boundary.
  text = Array.from(text)
    .slice(0, maxLength + 64)
    .join('')

  for (const end of sentenceEnds(text, lang)) {
    const candidate = text.slice(0, end).trimEnd()
    if (fits(candidate) && /[\p{L}\p{N}]/u.test(candidate)) return candidate
  }

  if (NO_SPACE_LANGUAGES.has(lang)) {
    const clauseEnds = [...text.matchAll(/[、，,；;：:]/gu)].map((m) => m.index).reverse()
    for (const end of clauseEnds) {
      const candidate = finishCut(text.slice(0, end), lang, false)
      if (fits(candidate)) return candidate
    }
    let segments: string[]
    try {
      segments = Array.from(new Intl.Segmenter(lang, { granularity: 'word' }).segment(text), (s) => s.segment)
    } catch {
      segments = Array.from(text)
    }
    let prefixEnd = 0
    const wordEnds: number[] = []
    for (const segment of segments) {
      prefixEnd += segment.length
      wordEnds.push(prefixEnd)
    }
    for (const end of wordEnds.reverse()) {
      if (characterCount(text.slice(0, end)) >= maxLength + 1) continue
      const candidate = finishCut(text.slice(0, end), lang, false)
      if (fits(candidate)) return candidate
    }
  } else {
    const spaces = [...text.matchAll(/\s+/gu)].map((m) => m.index).reverse()
    for (const end of spaces) {
      if (characterCount(text.slice(0, end)) > maxLength + 1) continue // cannot fit even before tidying
      const candidate = finishCut(text.slice(0, end), lang, true)
      if (fits(candidate)) return candidate
    }
  }

  // One word longer than the limit: cut inside it, on a grapheme boundary.
  const mark = sentenceEndFor(lang)
  const budget = maxLength - characterCount(mark)
  let cut = ''
  for (const grapheme of graphemes(text.trimStart(), lang)) {
    if (characterCount(cut + grapheme) > budget) break
    cut += grapheme
  }
  cut = cut.replace(/[\s,;:、，；：\-–—/&+·]+$/u, '')
  if (!cut) return Array.from(text.trimStart()).slice(0, maxLength).join('')
  return cut + mark
}
