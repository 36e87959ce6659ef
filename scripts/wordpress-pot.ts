// Writes integrations/wordpress/alttext/languages/alttext.pot, the WordPress plugin's template for
// translators: every string of its PHP (__(), esc_html__(), _n(), …) and of its scripts (wp.i18n), read by
// xgettext (Debian's gettext). Locations name files without line numbers, so the template changes only when
// a string does. Not checked in (it is made from the sources): the plugin's zip carries it.
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

const PLUGIN = resolve(import.meta.dir, '..', 'integrations', 'wordpress', 'alttext')
const OUT = join(PLUGIN, 'languages', 'alttext.pot')

/** WordPress's translation functions, as xgettext keywords (argument numbers; `c` marks a context). */
const PHP_KEYWORDS = [
  '__',
  '_e',
  '_x:1,2c',
  '_ex:1,2c',
  '_n:1,2',
  '_nx:1,2,4c',
  '_n_noop:1,2',
  '_nx_noop:1,2,3c',
  'esc_html__',
  'esc_html_e',
  'esc_html_x:1,2c',
  'esc_attr__',
  'esc_attr_e',
  'esc_attr_x:1,2c',
]
const JS_KEYWORDS = ['__', '_x:1,2c', '_n:1,2', '_nx:1,2,4c']

// A fixed header: no creation date, so that the same strings give the same file.
const HEADER = `# Translation template for the alttext WordPress plugin.
# This file is distributed under the same licence as the plugin: GPL-2.0-or-later.
# Made by scripts/wordpress-pot.ts; do not edit by hand.
msgid ""
msgstr ""
"Project-Id-Version: alttext\\n"
"Report-Msgid-Bugs-To: \\n"
"MIME-Version: 1.0\\n"
"Content-Type: text/plain; charset=UTF-8\\n"
"Content-Transfer-Encoding: 8bit\\n"
"X-Domain: alttext\\n"
`

function filesUnder(dir: string, extension: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(extension))
    .map((entry) => relative(PLUGIN, join(entry.parentPath, entry.name)))
    .sort()
}

function xgettext(language: string, keywords: string[], files: string[]): string {
  if (files.length === 0) return ''
  const run = Bun.spawnSync(
    [
      'xgettext',
      `--language=${language}`,
      '--from-code=UTF-8',
      '--omit-header',
      '--add-comments=translators:',
      '--add-location=file',
      '--no-wrap',
      '--output=-',
      ...keywords.map((k) => `--keyword=${k}`),
      ...files,
    ],
    { cwd: PLUGIN, stderr: 'pipe' },
  )
  if (run.exitCode !== 0) throw new Error(`xgettext failed: ${run.stderr.toString()}`)
  return run.stdout.toString()
}

/** The template from the plugin's files as they are now. */
export function makePot(): string {
  if (Bun.which('xgettext') === null) throw new Error("xgettext is missing: install Debian's gettext package")
  const php = filesUnder(PLUGIN, '.php')
  const js = filesUnder(join(PLUGIN, 'assets'), '.js')
  // One run per language, then msguniq: a string used in PHP and in a script is one entry with both files.
  const entries = `${xgettext('PHP', PHP_KEYWORDS, php)}\n${xgettext('JavaScript', JS_KEYWORDS, js)}`
  const merged = Bun.spawnSync(['msguniq', '--no-wrap', '--add-location=file', '--use-first', '--output=-', '-'], {
    stdin: new TextEncoder().encode(`msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"\n\n${entries}`),
    stderr: 'pipe',
  })
  if (merged.exitCode !== 0) throw new Error(`msguniq failed: ${merged.stderr.toString()}`)
  // msguniq keeps the stand-in header given above: the fixed one replaces it.
  const body = merged.stdout.toString().replace(/^msgid ""\nmsgstr .*\n(?:".*"\n)*\n/, '')
  return `${HEADER}\n${body.trimEnd()}\n`
}

if (import.meta.main) {
  const out = process.argv[2] ? resolve(process.argv[2]) : OUT
  mkdirSync(dirname(out), { recursive: true })
  writeFileSync(out, makePot())
  console.log(`wrote ${relative(process.cwd(), out)}`)
}
