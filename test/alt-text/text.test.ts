import { describe, expect, test } from 'bun:test'
import altText from '@double-great/alt-text'
import { characterCount, cleanAltText, fitToLength, hasRedundantOpening, markupResidue, REDUNDANT_OPENINGS } from '../../src/modules/alt-text/text'

describe('characterCount', () => {
  test('counts code points, not UTF-16 units', () => {
    expect(characterCount('abc')).toBe(3)
    expect(characterCount('𠀀x')).toBe(2) // astral CJK ideograph: one character
    expect(characterCount('')).toBe(0)
    expect(characterCount('Élan')).toBe(4)
  })
})

describe('cleanAltText: layout and wrappers', () => {
  test('collapses whitespace and newlines into one line', () => {
    expect(cleanAltText('  Two dogs\n\n  playing   in\tthe snow  ', 'en')).toBe('Two dogs playing in the snow.')
  })

  test.each([
    ['"A dog on a beach."', 'A dog on a beach.'],
    ["'A dog on a beach'", 'A dog on a beach.'],
    ['“A dog on a beach”', 'A dog on a beach.'],
    ['„Ein Hund am Strand“', 'Ein Hund am Strand.'],
    ['« Un chien sur la plage »', 'Un chien sur la plage.'],
    ['»Ein Hund am Strand«', 'Ein Hund am Strand.'],
    ['‘A dog on a beach’', 'A dog on a beach.'],
    ['「浜辺の犬」', '浜辺の犬。'],
    ['"A dog on a beach".', 'A dog on a beach.'],
    ['"\'A dog\'"', 'A dog.'],
  ])('strips wrapping quotes: %s', (raw, expected) => {
    const language = raw.startsWith('„') || raw.startsWith('»') ? 'de' : raw.startsWith('«') ? 'fr' : raw.startsWith('「') ? 'ja' : 'en'
    expect(cleanAltText(raw, language)).toBe(expected)
  })

  test('keeps quotes that do not wrap the whole text', () => {
    expect(cleanAltText('"Stop" sign at a junction', 'en')).toBe('"Stop" sign at a junction.')
    expect(cleanAltText('A sign reading "Stop."', 'en')).toBe('A sign reading "Stop."')
    expect(cleanAltText("'A dog's bowl'", 'en')).toBe("A dog's bowl.")
  })

  test('strips markdown: bold, italic, headings, bullets, backticks, links', () => {
    expect(cleanAltText('**A dog** on a *sunny* beach', 'en')).toBe('A dog on a sunny beach.')
    expect(cleanAltText('__A dog__ on a _sunny_ beach', 'en')).toBe('A dog on a sunny beach.')
    expect(cleanAltText('# A dog on a beach', 'en')).toBe('A dog on a beach.')
    expect(cleanAltText('- A dog on a beach', 'en')).toBe('A dog on a beach.')
    expect(cleanAltText('* A dog on a beach', 'en')).toBe('A dog on a beach.')
    expect(cleanAltText('`A dog` on a beach', 'en')).toBe('A dog on a beach.')
    expect(cleanAltText('```\nA dog on a beach\n```', 'en')).toBe('A dog on a beach.')
    expect(cleanAltText('The [Brandenburg Gate](https://example.com/gate) at night', 'en')).toBe('The Brandenburg Gate at night.')
    expect(cleanAltText('~~A cat~~ A dog', 'en')).toBe('A cat A dog.')
  })

  test('a numbered list marker goes only in a list, so "1. FC Köln" survives', () => {
    expect(cleanAltText('1. FC Köln fans in a stadium', 'de')).toBe('1. FC Köln fans in a stadium.')
    // Two numbered lines are two options, never one text: the first is the answer.
    expect(cleanAltText('1. A dog\n2. On a beach', 'en')).toBe('A dog.')
  })

  test('keeps underscores inside words', () => {
    expect(cleanAltText('A terminal showing the command make_install', 'en')).toBe('A terminal showing the command make_install.')
  })

  test('strips emoji, pictographs, ZWJ sequences, flags, skin tones and variation selectors', () => {
    expect(cleanAltText('A dog 🐶 on a beach 🏖️', 'en')).toBe('A dog on a beach.')
    expect(cleanAltText('A family 👨‍👩‍👧 at the park', 'en')).toBe('A family at the park.')
    expect(cleanAltText('Fans waving 🇩🇪 flags', 'en')).toBe('Fans waving flags.')
    expect(cleanAltText('A wave 👋🏽 from the stage', 'en')).toBe('A wave from the stage.')
    expect(cleanAltText('A red heart ❤️ drawn in sand', 'en')).toBe('A red heart drawn in sand.')
    expect(cleanAltText('Keycap 1️⃣ on a sign', 'en')).toBe('Keycap 1 on a sign.')
  })

  test('what it leaves passes the emoji rule of @double-great/alt-text', () => {
    const raw = 'Party 🎉 with 👩🏻‍🚀 astronauts, 🏳️‍🌈 flags, ✈️ planes, © ACME™ and ☕ coffee ⌚'
    const cleaned = cleanAltText(raw, 'en')
    expect(altText(cleaned, { 'avoid-emoji': true, 'contains-unhelpful-word': false, 'end-with-punctuation': false })).toBeUndefined()
    expect(cleaned).toBe('Party with astronauts, flags, planes, ACME and coffee.')
  })

  test.each([
    ['Alt text: A dog on a beach', 'A dog on a beach.'],
    ['Alt-text: A dog on a beach', 'A dog on a beach.'],
    ['Alt: A dog on a beach', 'A dog on a beach.'],
    ['Description: A dog on a beach', 'A dog on a beach.'],
    ['Alternative text for this image: A dog on a beach', 'A dog on a beach.'],
    ['**Alt text:** "A dog on a beach"', 'A dog on a beach.'],
    ['Sure! Here is the alt text for the image:\n\n"A dog on a beach."', 'A dog on a beach.'],
    ["Here's a concise alt text: A dog on a beach", 'A dog on a beach.'],
  ])('strips a leading label or preamble: %s', (raw, expected) => {
    expect(cleanAltText(raw, 'en')).toBe(expected)
  })

  test.each([
    ["The alt text for this image would be: 'A yellow taxi on a rainy New York street.'", 'A yellow taxi on a rainy New York street.'],
    ['The alt text would be: A yellow taxi on a rainy New York street.', 'A yellow taxi on a rainy New York street.'],
    ['A suitable alt text could be: "A yellow taxi on a rainy New York street."', 'A yellow taxi on a rainy New York street.'],
    ["Here's what the alt text would be: A yellow taxi on a rainy New York street.", 'A yellow taxi on a rainy New York street.'],
    ["The alt text for this image would be 'A yellow taxi on a rainy New York street.'", 'A yellow taxi on a rainy New York street.'],
    ['A fitting description might be: two children flying a kite.', 'Two children flying a kite.'],
  ])('strips a lead-in that proposes the alt text: %s', (raw, expected) => {
    expect(cleanAltText(raw, 'en')).toBe(expected)
  })

  test('a proposing lead-in in other languages; a description that only looks like one is kept', () => {
    expect(cleanAltText('Der Alt-Text für dieses Bild wäre: „Ein gelbes Taxi.“', 'de')).toBe('Ein gelbes Taxi.')
    expect(cleanAltText('Ein passender Alt-Text könnte lauten: Ein gelbes Taxi.', 'de')).toBe('Ein gelbes Taxi.')
    expect(cleanAltText('Le texte alternatif pourrait être : « Un taxi jaune. »', 'fr')).toBe('Un taxi jaune.')
    expect(cleanAltText('El texto alternativo sería: Un taxi amarillo.', 'es')).toBe('Un taxi amarillo.')
    expect(cleanAltText('Il testo alternativo potrebbe essere: «Un taxi giallo.»', 'it')).toBe('Un taxi giallo.')
    expect(cleanAltText('Een passende alt-tekst zou zijn: Een gele taxi.', 'nl')).toBe('Een gele taxi.')
    expect(cleanAltText('The sign would be: closed.', 'en')).toBe('The sign would be: closed.')
    expect(cleanAltText('The caption reads: Welcome home', 'en')).toBe('The caption reads: Welcome home.')
    expect(cleanAltText("A poster saying 'You could be next' on a wall.", 'en')).toBe("A poster saying 'You could be next' on a wall.")
  })

  test('list items that refer back to the one before are one alt text, not options', () => {
    expect(cleanAltText('- A laptop on a wooden desk\n- A cup of coffee beside it', 'en')).toBe('A laptop on a wooden desk, a cup of coffee beside it.')
    expect(cleanAltText('- A laptop on a wooden desk\n- Its screen shows a bar chart', 'en')).toBe('A laptop on a wooden desk. Its screen shows a bar chart.')
    expect(cleanAltText('1. A laptop on a wooden desk.\n2. A cup of coffee next to it.', 'en')).toBe('A laptop on a wooden desk. A cup of coffee next to it.')
    expect(cleanAltText('- Ein Laptop auf einem Holztisch\n- Daneben eine Tasse Kaffee', 'de')).toBe(
      'Ein Laptop auf einem Holztisch. Daneben eine Tasse Kaffee.',
    )
    expect(cleanAltText('- Een laptop op een houten bureau\n- Een kop koffie ernaast', 'nl')).toBe('Een laptop op een houten bureau, een kop koffie ernaast.')
    // Options stay options: an item whose "its" has its own antecedent, or a list announced as options.
    expect(cleanAltText('- A dog on a beach\n- A dog with its owner on a beach', 'en')).toBe('A dog on a beach.')
    expect(cleanAltText('Here are two options:\n- A laptop on a desk\n- A laptop with a cup beside it', 'en')).toBe('A laptop on a desk.')
  })

  test('labels in other languages', () => {
    expect(cleanAltText('Bildbeschreibung: Ein Hund am Strand', 'de')).toBe('Ein Hund am Strand.')
    expect(cleanAltText('Texte alternatif : Un chien sur la plage', 'fr')).toBe('Un chien sur la plage.')
    expect(cleanAltText('Descripción: Un perro en la playa', 'es')).toBe('Un perro en la playa.')
  })

  test('returns "" when nothing but stripped parts was there', () => {
    expect(cleanAltText('', 'en')).toBe('')
    expect(cleanAltText('   \n ', 'en')).toBe('')
    expect(cleanAltText('🐶🐱', 'en')).toBe('')
    expect(cleanAltText('"" ** ``', 'en')).toBe('')
    expect(cleanAltText('Alt text:', 'en')).toBe('')
  })

  test('never returns "" when there was content: an opening with nothing after it stays', () => {
    expect(cleanAltText('Image of', 'en')).toBe('Image of.')
    expect(cleanAltText('Photo', 'en')).toBe('Photo.')
  })
})

describe('cleanAltText: plain text only', () => {
  test.each([
    ['A dog on a beach."><img src=x onerror=alert(1)>', 'A dog on a beach.'],
    ['<script>alert(document.cookie)</script>A dog on a beach', 'A dog on a beach.'],
    ['A dog on a beach<script>alert(1)', 'A dog on a beach.'],
    ['<style>p { color: red }</style>A <b>dog</b> on a<br/>beach', 'A dog on a beach.'],
    ['A dog <img src="a>b" onerror="x"> on a beach', 'A dog on a beach.'],
    ['Click <a href="javascript:alert(1)">here</a> for a dog', 'Click here for a dog.'],
    ['<!-- note --> A dog on a beach <?xml version="1.0"?>', 'A dog on a beach.'],
  ])('strips markup: %s', (raw, expected) => {
    expect(cleanAltText(raw, 'en')).toBe(expected)
  })

  test('keeps angle brackets that are not markup', () => {
    expect(cleanAltText('A chart where x < y and y > z', 'en')).toBe('A chart where x < y and y > z.')
    expect(cleanAltText('A heart <3 drawn in sand', 'en')).toBe('A heart <3 drawn in sand.')
  })

  test('removes control characters; whitespace controls become a space', () => {
    expect(cleanAltText('A\u0000 dog\u0007 on a\u001B beach\u007F\u009B', 'en')).toBe('A dog on a beach.')
    expect(cleanAltText('A dog\ton a\u0085beach\u000Bat\u000Cdusk', 'en')).toBe('A dog on a beach at dusk.')
  })

  test('removes bidi controls and invisible characters', () => {
    const hidden = ['\u061C', '\u200E', '\u200F', '\u202A', '\u202B', '\u202C', '\u202D', '\u202E', '\u2066', '\u2067', '\u2068', '\u2069']
    const invisible = ['\u200B', '\u200C', '\u200D', '\u2060', '\uFEFF', '\u00AD', '\u034F', '\u3164', '\u{E0041}']
    for (const char of [...hidden, ...invisible]) expect(cleanAltText(`A do${char}g on a beach`, 'en')).toBe('A dog on a beach.')
    expect(cleanAltText('\u202Egpj.exe', 'en')).toBe('Gpj.exe.')
    // What is left is in NFC: a letter and the accent that a removed character stood between are one.
    expect(cleanAltText('A cafe\u200B\u0301 on a corner', 'en')).toBe('A caf\u00E9 on a corner.')
  })

  test('keeps ZWNJ inside a word of a script that spells with it', () => {
    expect(cleanAltText('می\u200Cخواهم', 'fa')).toBe('می\u200Cخواهم.')
  })

  test('a reply of markup and invisible characters only is empty', () => {
    expect(cleanAltText('"><img src=x onerror=alert(1)>', 'en')).toBe('')
    expect(cleanAltText('<script>A dog on a beach</script>\u200B\u0007', 'en')).toBe('')
  })

  test('markupResidue names what cleaning could not take out', () => {
    expect(markupResidue(cleanAltText('A dog <img alt="x onerror=alert(1) on a beach', 'en'))).toBe('<img')
    expect(markupResidue(cleanAltText('A sign reading javascript:alert(1)', 'en'))).toBe('javascript:')
    expect(markupResidue('A dog with onload = run() on a beach.')).toBe('onload=')
    expect(markupResidue('A chart where x < y.')).toBeNull()
    expect(markupResidue('A dog online at once.')).toBeNull()
  })
})

describe('cleanAltText: redundant openings', () => {
  test.each([
    ['Image of a dog on a beach', 'A dog on a beach.'],
    ['An image of a dog on a beach', 'A dog on a beach.'],
    ['A picture of a dog on a beach', 'A dog on a beach.'],
    ['Photo of a dog on a beach', 'A dog on a beach.'],
    ['A photograph of a dog on a beach', 'A dog on a beach.'],
    ['An image showing a dog on a beach', 'A dog on a beach.'],
    ['This image shows a dog on a beach', 'A dog on a beach.'],
    ['The image depicts a dog on a beach', 'A dog on a beach.'],
    ['The picture is of a dog on a beach', 'A dog on a beach.'],
    ['This is a photo of a dog on a beach', 'A dog on a beach.'],
    ['Here is an image of a dog on a beach', 'A dog on a beach.'],
    ['An image that shows a dog on a beach', 'A dog on a beach.'],
    ['In this image, we see a dog on a beach', 'A dog on a beach.'],
    ['In the picture there are two dogs on a beach', 'Two dogs on a beach.'],
    ['Image: a dog on a beach', 'A dog on a beach.'],
    ['Graphic of a dog on a beach', 'A dog on a beach.'],
    ['A stock photo of a dog on a beach', 'A dog on a beach.'],
  ])('en: %s', (raw, expected) => {
    expect(cleanAltText(raw, 'en')).toBe(expected)
  })

  test('en: keeps openings that name the medium (screenshot, illustration, painting, diagram)', () => {
    expect(cleanAltText('Screenshot of the settings page with dark mode on', 'en')).toBe('Screenshot of the settings page with dark mode on.')
    expect(cleanAltText('Illustration of a fox in a forest', 'en')).toBe('Illustration of a fox in a forest.')
    expect(cleanAltText('Oil painting of a harbour at dusk', 'en')).toBe('Oil painting of a harbour at dusk.')
    expect(cleanAltText('An image of a screenshot of the login form', 'en')).toBe('A screenshot of the login form.')
  })

  test('en: does not touch texts that merely start with those words', () => {
    expect(cleanAltText('Photographers at a press conference', 'en')).toBe('Photographers at a press conference.')
    expect(cleanAltText('Picture frames on a brick wall', 'en')).toBe('Picture frames on a brick wall.')
    expect(cleanAltText('In the picture frame, a wedding photo', 'en')).toBe('In the picture frame, a wedding photo.')
    expect(cleanAltText('A child holding a photo of her grandmother', 'en')).toBe('A child holding a photo of her grandmother.')
  })

  test.each([
    ['Bild von einer großen Katze', 'Eine große Katze.'],
    ['Ein Foto von einem Hund am Strand', 'Ein Hund am Strand.'],
    ['Foto von Berlin bei Nacht', 'Berlin bei Nacht.'],
    ['Das Bild zeigt einen alten Mann mit Hut', 'Ein alter Mann mit Hut.'],
    ['Das Bild zeigt den großen, roten Bus', 'Der große, rote Bus.'],
    ['Das Foto zeigt eine Frau auf einem Fahrrad', 'Eine Frau auf einem Fahrrad.'],
    ['Das Bild zeigt zwei Kinder', 'Zwei Kinder.'],
    ['Auf dem Bild sieht man einen Hund', 'Ein Hund.'],
    ['Auf dem Bild ist ein Hund zu sehen', 'Ein Hund.'],
    ['Auf dem Bild sind zwei Hunde zu sehen.', 'Zwei Hunde.'],
  ])('de: %s', (raw, expected) => {
    expect(cleanAltText(raw, 'de')).toBe(expected)
  })

  test('de: keeps the opening where stripping would break the grammar', () => {
    // Dative plural and an adjective after "einem" (gender unknown) cannot be turned into a nominative.
    expect(cleanAltText('Foto von zwei Hunden', 'de')).toBe('Foto von zwei Hunden.')
    expect(cleanAltText('Bild von einem großen Hund', 'de')).toBe('Bild von einem großen Hund.')
  })

  test.each([
    ['fr', "Image d'un chat sur un toit", 'Un chat sur un toit.'],
    ['fr', 'Photo de la tour Eiffel', 'La tour Eiffel.'],
    ['fr', 'Photo du port de Marseille', 'Le port de Marseille.'],
    ['fr', "L'image montre un chat sur un toit", 'Un chat sur un toit.'],
    ['fr', 'Sur cette photo, on voit un chat', 'Un chat.'],
    ['es', 'Imagen de un perro en la playa', 'Un perro en la playa.'],
    ['es', 'Foto del puerto de Valencia', 'El puerto de Valencia.'],
    ['es', 'La imagen muestra a una mujer con un paraguas', 'Una mujer con un paraguas.'],
    ['es', 'En la imagen se ve un perro', 'Un perro.'],
    ['it', 'Immagine di un cane sulla spiaggia', 'Un cane sulla spiaggia.'],
    ['it', 'Foto della spiaggia di Rimini', 'La spiaggia di Rimini.'],
    ['it', "L'immagine mostra un cane", 'Un cane.'],
    ['nl', 'Afbeelding van een hond op het strand', 'Een hond op het strand.'],
    ['nl', 'Foto van de haven', 'De haven.'],
    ['nl', 'De afbeelding laat een hond zien', 'Een hond.'],
    ['nl', 'Op de foto is een hond te zien', 'Een hond.'],
    ['pt', 'Imagem de um cachorro na praia', 'Um cachorro na praia.'],
    ['pt', 'Foto da praia de Copacabana', 'A praia de Copacabana.'],
    ['pt', 'A imagem mostra um cachorro', 'Um cachorro.'],
    ['sv', 'Bilden visar en hund på stranden', 'En hund på stranden.'],
  ])('%s: %s', (language, raw, expected) => {
    expect(cleanAltText(raw, language)).toBe(expected)
  })

  test('English openings are also removed from texts in other languages', () => {
    expect(cleanAltText('Image of ein Hund am Strand', 'de')).toBe('Ein Hund am Strand.')
  })
})

describe('hasRedundantOpening and REDUNDANT_OPENINGS', () => {
  test('has patterns for en, de, fr, es, it, nl, pt', () => {
    for (const language of ['en', 'de', 'fr', 'es', 'it', 'nl', 'pt']) {
      expect(REDUNDANT_OPENINGS[language]?.length ?? 0).toBeGreaterThan(0)
    }
  })

  test.each([
    ['Image of a dog.', 'en', true],
    ['This image shows a dog.', 'en', true],
    ['A dog on a beach.', 'en', false],
    ['Screenshot of the settings page.', 'en', false],
    ['Photographers at work.', 'en', false],
    ['Das Bild zeigt einen Hund.', 'de', true],
    ['Bild von einem großen Hund.', 'de', true],
    ['Ein Hund am Strand.', 'de', false],
    ["L'image montre un chat.", 'fr', true],
    ['La imagen muestra un perro.', 'es', true],
    ["L'immagine mostra un cane.", 'it', true],
    ['Foto van een hond.', 'nl', true],
    ['A imagem mostra um cachorro.', 'pt', true],
    ['Image of', 'en', false], // nothing follows: not an opening of anything
  ])('%s (%s) → %s', (text, language, expected) => {
    expect(hasRedundantOpening(text, language)).toBe(expected)
  })
})

describe('cleanAltText: capitalisation and punctuation', () => {
  test('capitalises the first letter, locale-aware', () => {
    expect(cleanAltText('a dog on a beach', 'en')).toBe('A dog on a beach.')
    expect(cleanAltText('élan vers le ciel', 'fr')).toBe('Élan vers le ciel.')
    expect(cleanAltText('istanbul at night', 'tr')).toBe('İstanbul at night.')
    expect(cleanAltText('ijsje op een stokje', 'nl')).toBe('IJsje op een stokje.')
    expect(cleanAltText('¿dónde está el perro?', 'es')).toBe('¿Dónde está el perro?')
  })

  test('German ß: only the first letter changes, and a leading ß is not turned into "SS"', () => {
    expect(cleanAltText('straße am Fluss', 'de')).toBe('Straße am Fluss.')
    expect(cleanAltText('ßeta', 'de')).toBe('ßeta.')
  })

  test('leaves deliberate lower case and caseless scripts alone', () => {
    expect(cleanAltText('iPhone on a wooden desk', 'en')).toBe('iPhone on a wooden desk.')
    expect(cleanAltText('eBay listing of a camera', 'en')).toBe('eBay listing of a camera.')
    expect(cleanAltText('3d render of a chair', 'en')).toBe('3d render of a chair.')
    expect(cleanAltText('ძაღლი სანაპიროზე', 'ka')).toBe('ძაღლი სანაპიროზე.')
  })

  test('does not throw on an unknown language tag', () => {
    expect(cleanAltText('a dog', 'x!')).toBe('A dog.')
  })

  test('adds a period unless the text already ends a sentence', () => {
    expect(cleanAltText('A dog', 'en')).toBe('A dog.')
    expect(cleanAltText('A dog!', 'en')).toBe('A dog!')
    expect(cleanAltText('Is it a dog?', 'en')).toBe('Is it a dog?')
    expect(cleanAltText('A dog running…', 'en')).toBe('A dog running…')
    expect(cleanAltText('A dog,', 'en')).toBe('A dog.')
    expect(cleanAltText('A sign reading:', 'en')).toBe('A sign reading.')
    expect(cleanAltText('A dog (on a beach)', 'en')).toBe('A dog (on a beach).')
  })

  test('uses the sentence mark of the language', () => {
    expect(cleanAltText('浜辺を走る犬', 'ja')).toBe('浜辺を走る犬。')
    expect(cleanAltText('海滩上奔跑的狗', 'zh')).toBe('海滩上奔跑的狗。')
    expect(cleanAltText('海滩上奔跑的狗？', 'zh')).toBe('海滩上奔跑的狗？')
    expect(cleanAltText('समुद्र तट पर दौड़ता कुत्ता', 'hi')).toBe('समुद्र तट पर दौड़ता कुत्ता।')
    expect(cleanAltText('Ένας σκύλος', 'el')).toBe('Ένας σκύλος.')
    expect(cleanAltText('สุนัขวิ่งบนชายหาด', 'th')).toBe('สุนัขวิ่งบนชายหาด') // Thai uses no full stop
  })

  test('removes spaces before punctuation, but keeps French spacing before ! ? : ;', () => {
    expect(cleanAltText('A dog , a cat .', 'en')).toBe('A dog, a cat.')
    expect(cleanAltText('Attention au chien !', 'fr')).toBe('Attention au chien !')
  })
})

describe('fitToLength', () => {
  const story = 'Two children fly a red kite on a windy beach. Behind them, waves roll in under a grey sky, and a dog runs along the shore.'

  test('returns text that fits unchanged, including a length exactly equal to max', () => {
    expect(fitToLength('A dog on a beach.', 17)).toBe('A dog on a beach.')
    expect(fitToLength('A dog on a beach.', 100)).toBe('A dog on a beach.')
    expect(fitToLength(story, characterCount(story))).toBe(story)
  })

  test('prefers the last sentence boundary that fits, keeping its punctuation', () => {
    expect(fitToLength(story, 60)).toBe('Two children fly a red kite on a windy beach.')
    expect(fitToLength(story, 45)).toBe('Two children fly a red kite on a windy beach.')
    const three = 'A dog runs. A cat sleeps on a mat! A bird sings in a tree. A fish swims.'
    expect(fitToLength(three, 60)).toBe('A dog runs. A cat sleeps on a mat! A bird sings in a tree.')
    expect(fitToLength(three, 40)).toBe('A dog runs. A cat sleeps on a mat!')
  })

  test('does not treat abbreviations, initials or decimals as sentence ends', () => {
    const text = 'Dr. Smith shakes hands with Mr. Jones at the U.S. Embassy in Berlin during a ceremony.'
    expect(fitToLength(text, 40)).toBe('Dr. Smith shakes hands with Mr. Jones.')
    expect(fitToLength('A 3.5 metre tall statue of J. S. Bach stands in front of a church in Leipzig.', 40)).toBe('A 3.5 metre tall statue.')
  })

  test('a sentence that ends in an ellipsis is not a cut point: it would read as truncated', () => {
    expect(fitToLength('A dog… Then a cat walks past the fence slowly.', 20)).toBe('A dog… Then.')
  })

  test('otherwise cuts before a preposition or function word, never after an adjective, and ends with a period', () => {
    expect(fitToLength(story, 44)).toBe('Two children fly a red kite.')
    expect(fitToLength(story, 23)).toBe('Two children fly.')
    expect(fitToLength('A long wooden pier stretching far into a calm turquoise sea', 30)).toBe('A long wooden pier stretching.')
  })

  test('strips trailing commas, dashes and dangling words before the period', () => {
    expect(fitToLength('A man with a hat and the dog of the neighbour, who is', 30)).toBe('A man with a hat and the dog.')
    expect(fitToLength('Market stalls, fruit – apples and pears – and flowers', 22)).toBe('Market stalls, fruit.')
    expect(fitToLength('Ein Mann mit einem Hut und dem Hund des Nachbarn', 23, 'de')).toBe('Ein Mann mit einem Hut.')
    expect(fitToLength('Ein Mann mit einem Hut und dem Hund des Nachbarn', 22, 'de')).toBe('Ein Mann.')
  })

  test('closes a quote the cut left open', () => {
    const banner = 'A banner reading “Welcome to the annual summer festival of lights”'
    expect(fitToLength(banner, 42)).toBe('A banner reading “Welcome”.')
    expect(fitToLength(banner, 40)).toBe('A banner reading “Welcome”.')
    expect(fitToLength('Ein Schild mit der Aufschrift „Willkommen in der Altstadt von Bamberg“', 45, 'de')).toBe('Ein Schild mit der Aufschrift „Willkommen“.')
  })

  test('never cuts mid-word, never adds an ellipsis, always fits', () => {
    const words = story.split(/\s+/).map((word) => word.replace(/[.,]/g, ''))
    for (let max = 5; max <= characterCount(story); max++) {
      const fitted = fitToLength(story, max)
      expect(characterCount(fitted)).toBeLessThanOrEqual(max)
      expect(fitted).not.toContain('…')
      expect(fitted).not.toContain('...')
      expect(fitted).toMatch(/[.!?]$/)
      for (const word of fitted.split(/\s+/)) expect(words).toContain(word.replace(/[.,]/g, ''))
    }
  })

  test('a single word longer than max is cut hard: max - 1 characters and a period', () => {
    const word = 'Donaudampfschifffahrtsgesellschaftskapitän'
    expect(fitToLength(word, 20)).toBe('Donaudampfschifffah.')
    expect(characterCount(fitToLength(word, 20))).toBe(20)
    // A leading short word that is only an article does not count as content.
    expect(fitToLength(`The ${word}`, 20)).toBe('The Donaudampfschif.')
  })

  test('counts code points: astral characters count once', () => {
    const text = '𠀀𠀀𠀀𠀀𠀀𠀀𠀀𠀀𠀀𠀀𠀀𠀀'
    const fitted = fitToLength(text, 5, 'zh')
    expect(characterCount(fitted)).toBeLessThanOrEqual(5)
    expect(fitted).toBe('𠀀𠀀𠀀𠀀。')
  })

  test('languages without spaces: sentence, then clause mark, then word boundary', () => {
    const ja = '犬が浜辺を走っている。背景には青い海と白い雲が広がっていて、遠くに船が見える。'
    expect(fitToLength(ja, 25, 'ja')).toBe('犬が浜辺を走っている。')
    const clause = '犬が浜辺を走っている、背景には青い海と白い雲が広がる'
    expect(fitToLength(clause, 15, 'ja')).toBe('犬が浜辺を走っている。')
    const noMarks = '犬が浜辺を走っている背景には青い海と白い雲'
    const fitted = fitToLength(noMarks, 10, 'ja')
    expect(characterCount(fitted)).toBeLessThanOrEqual(10)
    expect(fitted.endsWith('。')).toBe(true)
    expect(noMarks.startsWith(fitted.slice(0, -1))).toBe(true)
    const th = 'สุนัขวิ่งบนชายหาดในวันที่มีลมแรงและท้องฟ้าสีเทา'
    const thai = fitToLength(th, 20, 'th')
    expect(characterCount(thai)).toBeLessThanOrEqual(20)
    expect(['สุนัขวิ่งบนชายหาดใน', 'สุนัขวิ่งบนชายหาด']).toContain(thai) // a word boundary, no mark
  })

  test('infers a script without spaces when no language is given', () => {
    expect(fitToLength('犬が浜辺を走っている。背景には青い海と白い雲が広がる。', 12)).toBe('犬が浜辺を走っている。')
  })

  test('degenerate limits', () => {
    expect(fitToLength('A dog.', 0)).toBe('')
    expect(characterCount(fitToLength('Abcdef', 1))).toBe(1)
  })
})

describe('cleanAltText: thinking models', () => {
  test('a <think> block before the answer is dropped', () => {
    expect(cleanAltText('<think>\nThe user wants alt text. I see a dog.\n</think>\n\nA brown dog on a beach.', 'en')).toBe('A brown dog on a beach.')
  })

  test('<thinking> and <reasoning> blocks, in any case, are dropped', () => {
    expect(cleanAltText('<Thinking>Let me look.</Thinking>A red kite in the sky.', 'en')).toBe('A red kite in the sky.')
    expect(cleanAltText('<reasoning>hmm</reasoning> Ein Hund am Strand.', 'de')).toBe('Ein Hund am Strand.')
  })

  test('a lone </think> ends reasoning that began in the prompt template', () => {
    expect(cleanAltText('Okay, the image shows a cat. I should be concise.\n</think>\nA grey cat asleep on a sofa.', 'en')).toBe('A grey cat asleep on a sofa.')
  })

  test('an unclosed <think> means no answer came', () => {
    expect(cleanAltText('<think>The image shows a bridge and I need to', 'en')).toBe('')
    expect(cleanAltText('A bridge at dusk. <think>should I add', 'en')).toBe('A bridge at dusk.')
  })

  test("Kimi-VL's ◁think▷ markers and gpt-oss channels", () => {
    expect(cleanAltText('◁think▷Looking at it.◁/think▷A lighthouse on a cliff.', 'en')).toBe('A lighthouse on a cliff.')
    expect(
      cleanAltText(
        '<|channel|>analysis<|message|>Need short alt.<|end|><|start|>assistant<|channel|>final<|message|>A train crossing a viaduct.<|return|>',
        'en',
      ),
    ).toBe('A train crossing a viaduct.')
  })

  test('the word "think" in a description is kept', () => {
    expect(cleanAltText('A poster reading "Think big" on a wall.', 'en')).toBe('A poster reading "Think big" on a wall.')
  })
})
