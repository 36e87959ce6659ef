// The translators' template is made from the plugin's PHP and scripts (xgettext): every kind of call is in
// it. The release's plugin zip carries it with the plugin's files, the same bytes from the same sources.
import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { unzipSync } from 'fflate'
import pkg from '../../package.json' with { type: 'json' }
import { makePot } from '../../scripts/wordpress-pot'
import { pluginVersion, pluginZip, pluginZipName } from '../../scripts/wordpress-zip'
import { REPO_ROOT } from '../support/process'

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

describe("the plugin's release zip", () => {
  const zip = pluginZip(pkg.version)
  const entries = unzipSync(zip)

  test('holds the folder alttext/ as Plugins → Add New → Upload takes it: every file of the plugin byte for byte, the template, the licence', () => {
    const plugin = join(REPO_ROOT, 'integrations', 'wordpress', 'alttext')
    const sources = readdirSync(plugin, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && !entry.name.endsWith('.pot'))
      .map((entry) => relative(plugin, join(entry.parentPath, entry.name)))
    expect(sources.length).toBeGreaterThan(20)
    for (const file of sources)
      expect({ file, same: Buffer.from(entries[`alttext/${file}`] ?? []).equals(readFileSync(join(plugin, file))) }).toEqual({ file, same: true })
    expect(Object.keys(entries).every((name) => name.startsWith('alttext/'))).toBe(true)
    expect(new TextDecoder().decode(entries['alttext/languages/alttext.pot'])).toBe(makePot())
    expect(new TextDecoder().decode(entries['alttext/LICENSE'])).toContain('GNU GENERAL PUBLIC LICENSE')
    expect(pluginZipName('1.2.3')).toBe('alttext-wordpress-1.2.3.zip')
  })

  test('the same sources give the same bytes (one line in SHA256SUMS per release)', () => {
    expect(Buffer.from(pluginZip(pkg.version)).equals(Buffer.from(zip))).toBe(true)
  })

  test("a plugin header whose Version is not the release's is refused", () => {
    expect(pluginVersion(' * Plugin Name: alttext\n * Version:           2.0.1\n')).toBe('2.0.1')
    expect(pluginVersion()).toBe(pkg.version)
    expect(() => pluginZip('0.0.0-other')).toThrow(`the plugin's header says Version: ${pkg.version}, the release is 0.0.0-other`)
  })
})
