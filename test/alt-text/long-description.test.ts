// The pure parts of long descriptions: splitting a plain answer at its marker, in the shapes models
// write it, and cleaning a long description into one bounded paragraph of plain text (or null).
import { describe, expect, test } from 'bun:test'
import { cleanLongDescription, splitPlainAnswer } from '../../src/modules/alt-text/long-description'
import { cleanAltText } from '../../src/modules/alt-text/text'
import { MAX_LONG_DESCRIPTION_CHARS } from '../../src/shared/limits'

const LONG = 'A line chart of rainfall in 2024. It rose from 40 mm in January to 90 mm in June, then fell.'

describe('splitPlainAnswer', () => {
  const cases: [string, string, string | null][] = [
    ['the marker on its own line', `Line chart of rainfall in 2024.\nLONG DESCRIPTION: ${LONG}`, LONG],
    ['in markdown bold', `Line chart of rainfall in 2024.\n\n**Long description:** ${LONG}`, LONG],
    ['as a heading', `Line chart of rainfall in 2024.\n\n## Long Description\n${LONG}`, LONG],
    ['inline after the alt text', `Line chart of rainfall in 2024. Long description: ${LONG}`, LONG],
    ['with a dash', `Line chart of rainfall in 2024.\nLONG_DESCRIPTION — ${LONG}`, LONG],
    ['no marker', 'A red kite over a beach.', null],
  ]
  for (const [name, raw, long] of cases) {
    test(name, () => {
      const parts = splitPlainAnswer(raw)
      expect(cleanAltText(parts.alt, 'en')).toBe(long === null ? 'A red kite over a beach.' : 'Line chart of rainfall in 2024.')
      expect(cleanLongDescription(parts.long, 'en')).toBe(long)
    })
  }

  test('the long description first and the alt text labelled after it', () => {
    const parts = splitPlainAnswer(`LONG DESCRIPTION: ${LONG}\nALT TEXT: Line chart of rainfall in 2024.`)
    expect(cleanAltText(parts.alt, 'en')).toBe('Line chart of rainfall in 2024.')
    expect(cleanLongDescription(parts.long, 'en')).toBe(LONG)
  })
})

describe('cleanLongDescription', () => {
  test("lines become sentences with the language's mark", () => {
    expect(cleanLongDescription('Ein Balkendiagramm der Umsätze\n- Januar 12\n- Februar 15', 'de')).toBe(
      'Ein Balkendiagramm der Umsätze. Januar 12. Februar 15.',
    )
    expect(cleanLongDescription('月ごとの売上の棒グラフです\n1月は12、2月は15', 'ja')).toBe('月ごとの売上の棒グラフです。 1月は12、2月は15。')
  })

  test('a leading "Description:" label is dropped; snake_case words keep their underscores', () => {
    expect(cleanLongDescription('Description: a table of max_value and min_value per site.', 'en')).toBe('a table of max_value and min_value per site.')
  })

  test('null for nothing, "none", too little, or the alt text again', () => {
    expect(cleanLongDescription(null, 'en')).toBeNull()
    expect(cleanLongDescription('None.', 'en')).toBeNull()
    expect(cleanLongDescription('Not applicable', 'en')).toBeNull()
    expect(cleanLongDescription('A chart.', 'en')).toBeNull()
    expect(cleanLongDescription('A line chart of rainfall in 2024.', 'en', 'A line chart of rainfall in 2024.')).toBeNull()
  })

  test('over the limit: cut at the last sentence end that fits', () => {
    const sentence = 'Each month the figure rose by about a tenth over the month before it.'
    const text = cleanLongDescription(Array.from({ length: 50 }, () => sentence).join(' '), 'en')!
    expect(text.length).toBeLessThanOrEqual(MAX_LONG_DESCRIPTION_CHARS)
    expect(text.length).toBeGreaterThan(MAX_LONG_DESCRIPTION_CHARS - sentence.length - 1)
    expect(text).toEndWith('before it.')
  })
})
