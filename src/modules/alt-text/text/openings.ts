// Redundant openings: generic words for "an image" ("image of", "this image shows", …) are stripped,
// because screen readers already announce an image. Words naming the medium ("Screenshot of") stay.
import { rulesLanguage } from './count'

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

export function stripRedundantOpening(text: string, language: string): string {
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
