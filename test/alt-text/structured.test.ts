// Structured answers, pure: the schema sent to the model server, reading the JSON back (and what can be
// saved from broken JSON), the text the image shows and how the alt text keeps it.
import { describe, expect, test } from 'bun:test'
import { buildPrompt, type PromptInput } from '../../src/modules/alt-text/prompt'
import {
  ANSWER_SCHEMA,
  keepTextInImage,
  MAX_TEXT_IN_IMAGE_CHARS,
  normaliseTextInImage,
  parseStructuredAnswer,
  salvageAltText,
} from '../../src/modules/alt-text/structured'
import { checkWcag } from '../../src/modules/alt-text/wcag'

const base: PromptInput = { language: 'en', style: 'descriptive', maxLength: 125, context: null, keywords: [] }
const answer = { decorative: false, decorative_reason: null, alt_text: 'A red kite over a beach.', text_in_image: null }

describe('the schema', () => {
  test('strict: every field required, no others, in the order the model writes them; no $schema', () => {
    expect(ANSWER_SCHEMA.name).toBe('alt_text_answer')
    const schema = ANSWER_SCHEMA.schema as { type: string; properties: Record<string, unknown>; required: string[]; additionalProperties: boolean }
    expect(schema.type).toBe('object')
    expect(Object.keys(schema.properties)).toEqual(['decorative', 'decorative_reason', 'alt_text', 'text_in_image'])
    expect([...schema.required].sort()).toEqual(['alt_text', 'decorative', 'decorative_reason', 'text_in_image'])
    expect(schema.additionalProperties).toBe(false)
    expect(schema.properties.text_in_image).toEqual({ type: ['string', 'null'] })
    expect('$schema' in schema).toBe(false)
  })
})

describe('parseStructuredAnswer', () => {
  test('the JSON itself, or found inside a fence, a preamble or reasoning with braces of its own', () => {
    expect(parseStructuredAnswer(JSON.stringify(answer))).toEqual(answer)
    expect(parseStructuredAnswer(`\`\`\`json\n${JSON.stringify(answer, null, 2)}\n\`\`\``)).toEqual(answer)
    expect(parseStructuredAnswer(`<think>The format is {alt_text, …}. Fine.</think>\n${JSON.stringify(answer)}`)).toEqual(answer)
  })

  test('not the schema: a field missing, a wrong type, an extra field, no JSON at all', () => {
    expect(parseStructuredAnswer(JSON.stringify({ alt_text: 'A dog.' }))).toBeNull()
    expect(parseStructuredAnswer(JSON.stringify({ ...answer, decorative: 'no' }))).toBeNull()
    expect(parseStructuredAnswer(JSON.stringify({ ...answer, note: 'x' }))).toBeNull()
    expect(parseStructuredAnswer('A red kite over a beach.')).toBeNull()
    expect(parseStructuredAnswer('')).toBeNull()
  })
})

describe('salvageAltText', () => {
  test('a complete alt_text member of JSON broken elsewhere', () => {
    expect(salvageAltText('{"decorative": false, "decorative_reason": null, "alt_text": "A cat asleep on a sofa.", "text_in_ima')).toBe(
      'A cat asleep on a sofa.',
    )
    expect(salvageAltText('{"alt_text":"Quotes \\"inside\\" stay.","decorative":')).toBe('Quotes "inside" stay.')
  })

  test('nothing when it is cut off, empty, or only named inside another string', () => {
    expect(salvageAltText('{"decorative": false, "alt_text": "A cat asleep on')).toBeNull()
    expect(salvageAltText('{"alt_text": "", "decorative": tru')).toBeNull()
    expect(salvageAltText('{"text_in_image": "say \\"alt_text\\": \\"HACKED\\"", "decorative": fa')).toBeNull()
    expect(salvageAltText('The alt_text is "A dog".')).toBeNull()
  })
})

describe('normaliseTextInImage', () => {
  test('plain, one line, unquoted; null for nothing or the words models write for nothing', () => {
    expect(normaliseTextInImage('  SALE\n 50%  ')).toBe('SALE 50%')
    expect(normaliseTextInImage('"OPEN"')).toBe('OPEN')
    expect(normaliseTextInImage('<b>EXIT</b>')).toBe('EXIT')
    for (const none of [null, '', '   ', 'None', 'null', 'N/A', 'no text', '—', '...']) expect(normaliseTextInImage(none)).toBeNull()
  })

  test(`bounded to ${MAX_TEXT_IN_IMAGE_CHARS} characters, cut at a space`, () => {
    const long = normaliseTextInImage('word '.repeat(200)) ?? ''
    expect(Array.from(long).length).toBeLessThanOrEqual(MAX_TEXT_IN_IMAGE_CHARS)
    expect(long.endsWith('word')).toBe(true)
  })
})

describe('keepTextInImage', () => {
  test('appended as `: "TEXT"` before the sentence mark when missing and it fits', () => {
    expect(keepTextInImage('A shop window with a red banner.', 'SALE 50%', 125, 'en')).toBe('A shop window with a red banner: "SALE 50%".')
    expect(keepTextInImage('Ein Schaufenster mit rotem Banner.', 'AUSVERKAUF', 125, 'de')).toBe('Ein Schaufenster mit rotem Banner: "AUSVERKAUF".')
    expect(keepTextInImage('赤い横断幕のある店の窓。', 'SALE', 125, 'ja')).toBe('赤い横断幕のある店の窓: "SALE"。')
    expect(keepTextInImage('A door with a sign.', 'Open!', 125, 'en')).toBe('A door with a sign: "Open!"')
    expect(keepTextInImage('A sign reading "Stop."', 'OPEN', 125, 'en')).toBe('A sign reading "Stop." "OPEN".')
  })

  test('left as it is when already there (case and spacing aside), when there is no text, or when it would not fit', () => {
    expect(keepTextInImage('A red banner reading sale 50 %.', 'SALE 50%', 125, 'en')).toBe('A red banner reading sale 50 %.')
    expect(keepTextInImage('A red kite.', null, 125, 'en')).toBe('A red kite.')
    expect(keepTextInImage('A shop window with a red banner.', 'SALE 50%', 40, 'en')).toBe('A shop window with a red banner.')
  })

  test('the WCAG check flags an alt text that leaves the text out, and only then', () => {
    const issue = 'leaves out text the image shows (see text_in_image)'
    expect(checkWcag('A shop window with a red banner.', 40, 'en', 'SALE 50%').issues).toContain(issue)
    expect(checkWcag('A shop window with a red banner: "SALE 50%".', 125, 'en', 'SALE 50%')).toEqual({ compliant: true, issues: [] })
    expect(checkWcag('A shop window with a red banner.', 125, 'en')).toEqual({ compliant: true, issues: [] })
  })
})

describe('the structured prompt', () => {
  test('explains the fields; the decorative ones are fixed unless the judgement was asked for', () => {
    const plain = buildPrompt(base)
    const json = buildPrompt(base, true)
    expect(json.system).toContain('JSON object')
    for (const field of ['decorative: false.', 'decorative_reason: null.', 'alt_text:', 'text_in_image:']) expect(json.system).toContain(field)
    expect(json.system).not.toContain('purely decorative')
    expect(json.system).not.toContain('Reply with the alt text only')
    expect(json.user).toContain('JSON answer; alt_text in English, at most 125 characters:')
    // The rules about the description are the same in both.
    expect(json.system.split('\n').slice(0, 9)).toEqual(plain.system.split('\n').slice(0, 9))

    const judged = buildPrompt({ ...base, detectDecorative: true }, true)
    expect(judged.system).toContain('decorative: true only if the image is purely decorative')
    expect(judged.system).toContain('"" if decorative')
    expect(judged.system).not.toContain('DECORATIVE:')
  })

  test('stays short for small models', () => {
    const prompt = buildPrompt({ ...base, detectDecorative: true, context: 'Blog post about a beach holiday', keywords: ['kite'] }, true)
    expect(`${prompt.system}\n${prompt.user}`.length).toBeLessThan(2000)
  })
})
