import { describe, expect, test } from 'bun:test'
import altText from '@double-great/alt-text'
import { cleanAltText, fitToLength } from '../../src/modules/alt-text/text'
import { checkWcag } from '../../src/modules/alt-text/wcag'

describe('checkWcag: good texts pass', () => {
  test.each([
    ['Two children flying a red kite on a windy beach.', 'en'],
    ['Screenshot of the settings page with dark mode switched on.', 'en'],
    ['A child holding a photo of her grandmother.', 'en'],
    ['Photographers at a press conference.', 'en'],
    ['A sign reading "Stop."', 'en'],
    ['Example.com.', 'en'], // a bare domain can be the right alt text of a logo
    ['Ein Hund läuft über den Strand.', 'de'],
    ['Un chien court sur la plage.', 'fr'],
    ['Un perro corre por la playa.', 'es'],
    ['犬が浜辺を走っている。', 'ja'],
    ['समुद्र तट पर दौड़ता कुत्ता।', 'hi'],
    ['สุนัขวิ่งบนชายหาด', 'th'],
  ])('%s (%s)', (text, language) => {
    expect(checkWcag(text, 125, language)).toEqual({ compliant: true, issues: [] })
  })

  test('a text of exactly max_length characters passes', () => {
    const text = `${'a'.repeat(124)}.`
    expect(checkWcag(text, 125, 'en').compliant).toBe(true)
  })
})

describe('checkWcag: each rule adds a readable issue', () => {
  test('markup or script left after cleaning', () => {
    expect(checkWcag('A sign reading javascript:alert(1).', 125, 'en')).toEqual({ compliant: false, issues: ['contains markup or script ("javascript:")'] })
    expect(checkWcag('A dog <img alt="x onerror=alert(1) on a beach.', 125, 'en').issues).toContain('contains markup or script ("<img")')
  })

  test('empty and whitespace-only', () => {
    expect(checkWcag('', 125, 'en')).toEqual({ compliant: false, issues: ['is empty'] })
    expect(checkWcag(' ', 125, 'en')).toEqual({ compliant: false, issues: ['is empty'] })
    expect(checkWcag('\n\t', 125, 'de')).toEqual({ compliant: false, issues: ['is empty'] })
  })

  test('longer than max_length, counted in code points', () => {
    const text = `${'a'.repeat(129)}.`
    expect(checkWcag(text, 125, 'en').issues).toEqual(['longer than max_length (130 > 125)'])
    expect(checkWcag('𠀀𠀀𠀀𠀀。', 5, 'zh').compliant).toBe(true) // 5 code points, 9 UTF-16 units
  })

  test.each([
    ['Image of a dog on a beach.', 'en', 'Image of'],
    ['This image shows a dog on a beach.', 'en', 'This image shows'],
    ['A picture of a dog.', 'en', 'A picture of'],
    ['Das Bild zeigt einen Hund.', 'de', 'Das Bild zeigt'],
    ["L'image montre un chien.", 'fr', "L'image montre"],
    ['La imagen muestra un perro.', 'es', 'La imagen muestra'],
    ["L'immagine mostra un cane.", 'it', "L'immagine mostra"],
    ['Afbeelding van een hond.', 'nl', 'Afbeelding van'],
    ['A imagem mostra um cachorro.', 'pt', 'A imagem mostra'],
  ])('redundant opening: %s', (text, language, phrase) => {
    expect(checkWcag(text, 125, language)).toEqual({ compliant: false, issues: [`starts with a redundant phrase ("${phrase}")`] })
  })

  test.each([
    'IMG_1234.jpg',
    'photo.png',
    'DSC0001',
    'PXL_20230101_123456789',
    'hero_banner_2x',
    'image001',
    'my photo (1).jpeg',
    'Screenshot 2024-01-01 at 10.00.00',
  ])('file name: %s', (text) => {
    const check = checkWcag(text, 125, 'en')
    expect(check.compliant).toBe(false)
    expect(check.issues).toContain('looks like a file name')
    expect(check.issues.some((issue) => issue.startsWith('ends with a file extension'))).toBe(false)
  })

  test('a file name in another language still counts', () => {
    expect(checkWcag('IMG_1234.JPG.', 125, 'de').issues).toEqual(['looks like a file name'])
  })

  test.each(['https://example.com/images/dog.png', 'http://example.com', 'www.example.com/dog', 'example.com/dog.jpg', 'data:image/png;base64,AAAA'])(
    'URL: %s',
    (text) => {
      const check = checkWcag(text, 125, 'en')
      expect(check.issues).toContain('looks like a URL')
      expect(check.issues).not.toContain('looks like a file name')
    },
  )

  test('emoji, in any language', () => {
    expect(checkWcag('A 🐈 on a mat.', 125, 'en').issues).toEqual(['contains an emoji ("🐈")'])
    expect(checkWcag('Eine 🐈 auf der Matte.', 125, 'de').issues).toEqual(['contains an emoji ("🐈")'])
  })

  test('missing end punctuation', () => {
    expect(checkWcag('A dog on a beach', 125, 'en').issues).toEqual(['does not end with punctuation'])
    expect(checkWcag('浜辺の犬', 125, 'ja').issues).toEqual(['does not end with punctuation'])
    expect(checkWcag('Is it a dog?', 125, 'en').compliant).toBe(true)
    expect(checkWcag('A dog running…', 125, 'en').compliant).toBe(true)
  })

  test('only a generic word (library rule "is-unhelpful"), with per-language words', () => {
    expect(checkWcag('Photo.', 125, 'en').issues).toEqual(['is only a generic word ("photo")'])
    expect(checkWcag('Image', 125, 'en').issues).toEqual(['is only a generic word ("image")', 'does not end with punctuation'])
    expect(checkWcag('Bild.', 125, 'de').issues).toEqual(['is only a generic word ("bild")'])
    expect(checkWcag('Logo.', 125, 'ko').issues).toEqual(['is only a generic word ("logo")'])
  })

  test('English generic last word and credit lines', () => {
    expect(checkWcag('A dog in the image.', 125, 'en').issues).toEqual(['ends with a generic word ("image")'])
    expect(checkWcag('A harbour at dusk. Photo: Jane Doe.', 125, 'en').issues).toEqual(['contains a credit line ("photo:")'])
  })

  test('English word lists do not apply to other languages', () => {
    // "image" is the French word for it, but "photo:" and a final "image" are English-only rules.
    expect(checkWcag('Un reflet dans une image.', 125, 'fr').compliant).toBe(true)
    expect(checkWcag('Port au crépuscule. Photo: Jean Dupont.', 125, 'fr').compliant).toBe(true)
  })

  test('no words at all', () => {
    expect(checkWcag('...', 125, 'en').issues).toEqual(['contains no words'])
  })

  test('collects several issues, without URLs from the library', () => {
    const check = checkWcag('Image of a 🐶 on a beach', 20, 'en')
    expect(check.compliant).toBe(false)
    expect(check.issues).toEqual([
      'contains an emoji ("🐶")',
      'longer than max_length (23 > 20)', // the emoji is one code point
      'starts with a redundant phrase ("Image of")',
      'does not end with punctuation',
    ])
    for (const issue of check.issues) expect(issue).not.toContain('http')
  })

  test('does not change what the library reports for later default calls of its own rules', () => {
    checkWcag('Bild.', 125, 'de')
    checkWcag('A dog.', 125, 'en')
    // Our calls pass complete lists every time, so the result does not depend on call order.
    expect(checkWcag('Photo.', 125, 'en').issues).toEqual(['is only a generic word ("photo")'])
    expect(checkWcag('Photo.', 125, 'de').compliant).toBe(true)
    expect(altText('A dog.', { 'is-unhelpful': false })).toBeUndefined()
  })
})

describe('cleaned and fitted model output is compliant', () => {
  test.each([
    ['**Alt text:** "An image of two children 🪁 flying a red kite on a windy beach"', 'en'],
    ['Sure! Here is the alt text:\n\nThis image shows a dog running along the shore', 'en'],
    ['„Das Bild zeigt einen alten Mann mit Hut“', 'de'],
    ["« L'image montre un chat sur un toit »", 'fr'],
    ['La imagen muestra a una mujer con un paraguas rojo', 'es'],
    ['浜辺を走る犬', 'ja'],
  ])('%s', (raw, language) => {
    const text = fitToLength(cleanAltText(raw, language), 60, language)
    expect(checkWcag(text, 60, language)).toEqual({ compliant: true, issues: [] })
  })

  test('a long answer cut by fitToLength fits and passes', () => {
    const raw =
      'Two children fly a red kite on a windy beach, while waves roll in under a heavy grey sky and a small brown dog runs along the shore with a stick'
    const text = fitToLength(cleanAltText(raw, 'en'), 80, 'en')
    expect(checkWcag(text, 80, 'en')).toEqual({ compliant: true, issues: [] })
  })
})
