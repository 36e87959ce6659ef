// The translators' template is made from the plugin's PHP and scripts (xgettext): every kind of call is in it.
import { describe, expect, test } from 'bun:test'
import { makePot } from '../../scripts/wordpress-pot'

describe('the translation template', () => {
  const pot = makePot()

  test('carries strings of the PHP, of the scripts, plurals and translator comments', () => {
    expect(pot).toContain('msgid "Test the connection"')
    expect(pot).toContain('#: assets/bulk.js')
    expect(pot).toMatch(/msgid_plural "There are %d credits left/)
    expect(pot).toContain('#. translators:')
  })

  test('is the same each time: no dates, no line numbers', () => {
    expect(makePot()).toBe(pot)
    expect(pot).not.toMatch(/#: [^\n]*:\d+/)
    expect(pot).not.toContain('POT-Creation-Date')
  })
})
