// `alttext audit` on Jupyter notebooks, run against the real service with the fake model: images of
// Markdown cells (attachments read from their own cell) and of HTML outputs, located at their line and
// column in the .ipynb file; --fix and --apply rewriting only the alt inside the cell source's JSON
// string; notebooks that are not JSON, not nbformat 4, oddly shaped or huge reported on their own; and
// an `attachment:` name that can never read a file.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ipynb } from '../../src/cli/audit/formats/ipynb'
import type { LoadedPage } from '../../src/cli/audit/pages'
import { parseCsv } from '../../src/cli/shared/csv'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { attr, audit, FIXTURE_SITE, MODEL, REPLIES, readJson } from './audit-support'

let env: AltTextEnv
let client: Record<string, string>
let dir: string

beforeAll(async () => {
  env = await startAltTextEnv({ ollama: MODEL })
  client = { ALTTEXT_URL: env.service.url, ALTTEXT_API_KEY: env.key }
})
afterAll(() => env.stop())
beforeEach(() => {
  env.ollama.reset()
  dir = mkdtempSync(join(tmpdir(), 'alttext-audit-ipynb-'))
  mkdirSync(join(dir, 'docs'))
  cpSync(join(FIXTURE_SITE, 'img'), join(dir, 'docs', 'img'), { recursive: true })
})

const base64 = (name: string) => readFileSync(join(FIXTURE_SITE, 'img', name)).toString('base64')
const chats = () => env.ollama.requests.filter((request) => request.path === '/api/chat')

/**
 * A notebook as Jupyter writes it (indent 1), with escapes a writer may use: `\u00e9`, `\"`, `\/`.
 * Both Markdown cells attach an "image.png": the logo in the first, the team photo in the last.
 */
const NOTEBOOK = `{
 "cells": [
  {
   "attachments": {
    "image.png": {
     "image/png": "${base64('logo.png')}"
    }
   },
   "cell_type": "markdown",
   "metadata": {},
   "source": [
    "# Kites on the beach\\n",
    "\\n",
    "Caf\\u00e9 \\"club\\" ![image.png](attachment:image.png) and <img src=\\"img\\/kite.jpg\\">\\n"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 1,
   "metadata": {},
   "outputs": [
    {
     "data": {
      "image/png": "${base64('divider.png')}",
      "text/html": [
       "<p>The result</p>\\n",
       "<img src=\\"img/team.jpg\\">"
      ],
      "text/plain": [
       "<Figure size 640x480>"
      ]
     },
     "metadata": {},
     "output_type": "display_data"
    }
   ],
   "source": [
    "plot()"
   ]
  },
  {
   "attachments": {
    "image.png": {
     "image/jpeg": "${base64('team.jpg')}"
    }
   },
   "cell_type": "markdown",
   "metadata": {},
   "source": "## Team\\n\\n![IMG_2041.JPG](attachment:image.png)"
  }
 ],
 "metadata": {
  "kernelspec": {
   "display_name": "Python 3",
   "language": "python",
   "name": "python3"
  }
 },
 "nbformat": 4,
 "nbformat_minor": 5
}
`

/** Text as it is inside a JSON string. */
const json = (text: string) => JSON.stringify(text).slice(1, -1)
const label = (alt: string) => alt.replace(/[\\[\]*_`<>&!~|]/gu, (char) => `\\${char}`)

/** `original` with each [from, to] replaced once (each `from` must occur exactly once). */
function replaced(original: string, replacements: [string, string][]): string {
  let out = original
  for (const [from, to] of replacements) {
    expect(out.split(from)).toHaveLength(2)
    out = out.replace(from, to)
  }
  return out
}

/** The notebook as --fix writes it: two labels and one attribute, inside their JSON strings. */
const fixedNotebook = () =>
  replaced(NOTEBOOK, [
    [
      '![image.png](attachment:image.png) and <img src',
      `![${json(label(REPLIES[64]!))}](attachment:image.png) and <img${json(` alt=${attr(REPLIES[320]!)}`)} src`,
    ],
    ['![IMG_2041.JPG]', `![${json(label(REPLIES[360]!))}]`],
  ])

/** Where `needle` starts in `text`: 1-based line and column. */
function placeOf(text: string, needle: string): [number, number] {
  const at = text.indexOf(needle)
  const before = text.slice(0, at)
  return [before.split('\n').length, at - before.lastIndexOf('\n')]
}

describe('Jupyter notebooks', () => {
  test('finds the images of Markdown cells and HTML outputs at their place in the file; --fix writes only alt text, JSON-escaped', async () => {
    writeFileSync(join(dir, 'docs', 'kites.ipynb'), NOTEBOOK)
    const res = await audit(['docs', '--fix', 'fixed', '--json', 'report.json', '--sarif', 'report.sarif', '-q'], client, dir)
    expect(res.stderr).toContain('4 done, 0 failed')
    expect(res.code).toBe(0)
    const page = readJson(join(dir, 'report.json')).pages[0]
    expect(page.page).toBe('docs/kites.ipynb')
    expect(page.images.map((image: any) => [image.line, image.column, image.src, image.alt, image.status])).toEqual([
      [...placeOf(NOTEBOOK, '![image.png]'), 'attachment:image.png', 'image.png', 'poor'],
      [...placeOf(NOTEBOOK, '<img src=\\"img\\/kite'), 'img/kite.jpg', null, 'missing'],
      [...placeOf(NOTEBOOK, '<img src=\\"img/team'), 'img/team.jpg', null, 'missing'],
      [...placeOf(NOTEBOOK, '![IMG_2041'), 'attachment:image.png', 'IMG_2041.JPG', 'poor'],
    ])
    // Each cell's "image.png" is its own: the logo from the first, the team photo from the last.
    expect(page.images.map((image: any) => image.suggestion.alt)).toEqual([REPLIES[64], REPLIES[320], REPLIES[360], REPLIES[360]])
    expect(page.images.map((image: any) => image.resolved)).toEqual([
      'data: URL',
      join(dir, 'docs', 'img', 'kite.jpg'),
      join(dir, 'docs', 'img', 'team.jpg'),
      'data: URL',
    ])
    // The cell's heading and text go with the request; the image/png output is not an image to check.
    expect(chats().some((request) => request.rawBody.includes('Section: Kites on the beach.'))).toBe(true)
    expect(chats()).toHaveLength(4)

    // Byte for byte, only the alt texts of the Markdown cells; the output is reported, not rewritten.
    const fixed = readFileSync(join(dir, 'fixed', 'kites.ipynb'), 'utf8')
    expect(fixed).toBe(fixedNotebook())
    expect(page.images.map((image: any) => image.written)).toEqual([true, true, false, true])
    const original = JSON.parse(NOTEBOOK)
    const parsed = JSON.parse(fixed)
    original.cells[0].source[2] = `Café "club" ![${label(REPLIES[64]!)}](attachment:image.png) and <img alt=${attr(REPLIES[320]!)} src="img/kite.jpg">\n`
    original.cells[2].source = `## Team\n\n![${label(REPLIES[360]!)}](attachment:image.png)`
    expect(parsed).toEqual(original)

    // SARIF names the notebook itself, at the line and column of each image in it.
    const sarif = readJson(join(dir, 'report.sarif'))
    const locations = sarif.runs[0].results.map((result: any) => result.locations[0].physicalLocation)
    expect(locations.map((at: any) => [at.artifactLocation.uri, at.region.startLine, at.region.startColumn])).toEqual(
      page.images.map((image: any) => ['docs/kites.ipynb', image.line, image.column]),
    )
  })

  test('--review lists the images; --apply --in-place writes the cells and refuses the output', async () => {
    writeFileSync(join(dir, 'docs', 'kites.ipynb'), NOTEBOOK)
    const res = await audit(['docs', '--review', 'review.csv', '-q'], client, dir)
    expect(res.code).toBe(0)
    const [header, ...rows] = parseCsv(readFileSync(join(dir, 'review.csv'), 'utf8'))
    expect(rows.map((row) => [row[header!.indexOf('file')], row[header!.indexOf('proposed_alt')]])).toEqual([
      ['docs/kites.ipynb', REPLIES[64]],
      ['docs/kites.ipynb', REPLIES[320]],
      ['docs/kites.ipynb', REPLIES[360]],
      ['docs/kites.ipynb', REPLIES[360]],
    ])
    const applied = await audit(['--apply', 'review.csv', '--in-place'], {}, dir)
    expect(applied.stdout).toMatch(/row 4: docs\/kites\.ipynb:\d+:\d+: refused: in an output of cell 2: running the cell writes it again/u)
    expect(applied.stdout).toContain('3 rows written to 1 file in place, 1 refused')
    expect(applied.code).toBe(1)
    expect(readFileSync(join(dir, 'docs', 'kites.ipynb'), 'utf8')).toBe(fixedNotebook())
  })
})

/** A notebook of these cells, as JSON.stringify writes it. */
const notebook = (cells: unknown[], extra: Record<string, unknown> = {}) =>
  JSON.stringify({ cells, metadata: {}, nbformat: 4, nbformat_minor: 5, ...extra }, null, 1)

describe('Jupyter notebooks: bad input', () => {
  test('not JSON, not nbformat 4, cells of the wrong shape: an error of that notebook only', async () => {
    const write = (name: string, text: string | Uint8Array) => writeFileSync(join(dir, 'docs', name), text)
    write('not-json.ipynb', '{\n "cells": [\n  {"cell_type": "markdown",}\n ]\n}\n')
    write('text.ipynb', '# Just Markdown, named .ipynb\n')
    write('v3.ipynb', JSON.stringify({ nbformat: 3, worksheets: [] }))
    write('list.ipynb', '[1, 2]')
    write('no-cells.ipynb', JSON.stringify({ nbformat: 4, nbformat_minor: 0, cells: {} }))
    write('cell-string.ipynb', notebook(['![photo](img/kite.jpg)']))
    write('source-number.ipynb', notebook([{ cell_type: 'markdown', metadata: {}, source: 42 }]))
    write('source-mixed.ipynb', notebook([{ cell_type: 'markdown', metadata: {}, source: ['a', 1] }]))
    write('html-object.ipynb', notebook([{ cell_type: 'code', source: '', outputs: [{ output_type: 'display_data', data: { 'text/html': { a: 1 } } }] }]))
    write('latin1.ipynb', new Uint8Array([0x7b, 0x22, 0xe9, 0x22, 0x3a, 0x31, 0x7d]))
    // Odd but valid: no source, no outputs, an output without data, a raw cell, an unknown cell type,
    // text/plain only, an attachment that is not an image. The one image is found.
    write(
      'odd.ipynb',
      notebook([
        { cell_type: 'markdown', metadata: {} },
        { cell_type: 'code', metadata: {}, source: 'x' },
        {
          cell_type: 'code',
          metadata: {},
          source: [],
          outputs: [{ output_type: 'stream', name: 'stdout', text: ['<img src="x.png">'] }, { output_type: 'error' }],
        },
        { cell_type: 'raw', metadata: {}, source: '<img src="raw.png">' },
        { cell_type: 'heading', level: 1, source: '![old](old.png)' },
        { cell_type: 'markdown', metadata: {}, source: ['![photo](attachment:notes.txt)'], attachments: { 'notes.txt': { 'text/plain': 'aGk=' } } },
      ]),
    )
    const check = await audit(['docs', '--check', '--json', 'check.json'], {}, dir)
    expect(check.code).toBe(1)
    const byName = Object.fromEntries(readJson(join(dir, 'check.json')).pages.map((page: any) => [page.page.replace('docs/', ''), page]))
    expect(byName['not-json.ipynb'].error).toBe('cannot parse: not JSON: line 3, column 28: PropertyNameExpected')
    expect(byName['text.ipynb'].error).toMatch(/^cannot parse: not JSON: line 1, column 1: /u)
    expect(byName['v3.ipynb'].error).toBe('cannot parse: not a Jupyter notebook in nbformat 4 ("nbformat": 3)')
    expect(byName['list.ipynb'].error).toBe('cannot parse: not a Jupyter notebook in nbformat 4 (no "nbformat")')
    expect(byName['no-cells.ipynb'].error).toBe('cannot parse: not a Jupyter notebook in nbformat 4: "cells" is not a list')
    expect(byName['cell-string.ipynb'].error).toBe('cannot parse: cell 1: not an object')
    expect(byName['source-number.ipynb'].error).toBe('cannot parse: cell 1: "source" is neither a string nor a list of strings')
    expect(byName['source-mixed.ipynb'].error).toBe('cannot parse: cell 1: "source" is neither a string nor a list of strings')
    expect(byName['html-object.ipynb'].error).toBe('cannot parse: cell 1: an output\'s "text/html" is neither a string nor a list of strings')
    expect(byName['latin1.ipynb'].error).toBe('cannot parse: not valid UTF-8')
    expect(byName['odd.ipynb'].error).toBeNull()
    expect(byName['odd.ipynb'].images.map((image: any) => [image.src, image.status])).toEqual([['attachment:notes.txt', 'poor']])
    expect(check.stdout).toContain('check failed: 1 image needs alt text or fixing; 10 pages could not be read')
  })

  test('a 50 MB notebook is refused unread; a large attachment is read from its cell', async () => {
    // 50 MB of one output's text: refused by its size before it is parsed.
    const big = notebook([{ cell_type: 'code', source: '', outputs: [{ output_type: 'stream', name: 'stdout', text: 'x'.repeat(50 * 1024 * 1024) }] }])
    writeFileSync(join(dir, 'docs', 'big.ipynb'), big)
    // A 6 MB attachment: the logo with padding after its end, which image readers skip.
    const padded = Buffer.concat([readFileSync(join(FIXTURE_SITE, 'img', 'logo.png')), Buffer.alloc(6 * 1024 * 1024)])
    writeFileSync(
      join(dir, 'docs', 'attached.ipynb'),
      notebook([
        {
          cell_type: 'markdown',
          metadata: {},
          source: '![image.png](attachment:image.png)',
          attachments: { 'image.png': { 'image/png': padded.toString('base64') } },
        },
      ]),
    )
    const res = await audit(['docs', '--dry-run', '--json', 'report.json', '-q'], {}, dir)
    expect(res.code).toBe(1)
    const byName = Object.fromEntries(readJson(join(dir, 'report.json')).pages.map((page: any) => [page.page, page]))
    expect(byName['docs/big.ipynb'].error).toBe('larger than 10 MB')
    expect(byName['docs/attached.ipynb'].error).toBeNull()
    expect(byName['docs/attached.ipynb'].images.map((image: any) => [image.status, image.resolved])).toEqual([['poor', 'data: URL']])
  })
})

describe('Jupyter notebooks: the format', () => {
  const pageOf = (text: string): LoadedPage => ({
    source: { kind: 'file', path: join(dir, 'docs', 'a.ipynb'), root: join(dir, 'docs') },
    name: 'a.ipynb',
    base: new URL('file:///a.ipynb'),
    bytes: new TextEncoder().encode(text),
    error: null,
  })
  const options = { token: 'alttext-test', context: false }

  test('every alt written reads back as itself, and the rest of the notebook stays', () => {
    const text = notebook([{ cell_type: 'markdown', metadata: {}, source: ['Intro ', '![old](a.png) <img src="b.png" alt="old">\n', 'end'] }])
    const page = pageOf(text)
    const [document] = ipynb.scan(page, options)
    for (const alt of ['a "quoted" \\ back\\slash', 'a control\u0001character', 'café ☕ 😀 [brackets] <b> & |']) {
      const out = ipynb.apply(
        page,
        document!.locations.map((at) => ({ ...at, alt })),
        options,
      )
      expect(out.refused).toEqual([])
      const written = new TextDecoder().decode(out.bytes)
      const [again] = ipynb.scan(pageOf(written), options)
      expect(again!.scan.images.map((image) => image.text)).toEqual([alt, alt])
      const cells = JSON.parse(written).cells
      expect(cells[0].source[0]).toBe('Intro ')
      expect(cells[0].source[2]).toBe('end')
      expect(JSON.stringify({ ...JSON.parse(written), cells: [] })).toBe(JSON.stringify({ ...JSON.parse(text), cells: [] }))
    }
  })

  test('an alt whose label runs over a line break of the source list is refused, the notebook kept', () => {
    const text = notebook([{ cell_type: 'markdown', metadata: {}, source: ['![two\n', 'lines](a.png)'] }])
    const page = pageOf(text)
    const [document] = ipynb.scan(page, options)
    expect(document!.scan.images.map((image) => image.text)).toEqual(['two\nlines'])
    const out = ipynb.apply(page, [{ ...document!.locations[0]!, alt: 'A kite' }], options)
    expect(out.refused.map((refusal) => refusal.reason)).toEqual(['the alt text runs over a line break of the cell’s source; edit it in Jupyter'])
    expect(new TextDecoder().decode(out.bytes)).toBe(text)
  })
})

describe('Jupyter notebooks: security', () => {
  test('an attachment: name is looked up in its cell only, never read as a file; a path stays in the root', async () => {
    writeFileSync(join(dir, 'docs', 'secret.txt'), 'not an image')
    writeFileSync(
      join(dir, 'docs', 'escape.ipynb'),
      notebook([
        {
          cell_type: 'markdown',
          metadata: {},
          source: [
            '![photo](attachment:../../../../etc/passwd)\n',
            '![photo](attachment:/etc/passwd)\n',
            '![photo](attachment:secret.txt)\n',
            '<img src="../../../etc/passwd">\n',
          ],
          attachments: { 'other.png': { 'image/png': base64('logo.png') } },
        },
        { cell_type: 'markdown', metadata: {}, source: '![photo](attachment:other.png)' },
      ]),
    )
    const res = await audit(['docs/escape.ipynb', '--root', 'docs', '--json', 'report.json', '-q'], client, dir)
    expect(res.code).toBe(1)
    const images = readJson(join(dir, 'report.json')).pages[0].images
    expect(images.map((image: any) => image.error)).toEqual([
      'cell 1 has no attachment named "../../../../etc/passwd"',
      'cell 1 has no attachment named "/etc/passwd"',
      'cell 1 has no attachment named "secret.txt"',
      // Not a failure: a file that is not there is an image not checked (it climbs no higher than the root).
      null,
      // Another cell's attachment is not this cell's.
      'cell 2 has no attachment named "other.png"',
    ])
    expect(images[3].not_checked).toBe('docs/etc/passwd does not exist')
    expect(chats()).toHaveLength(0)
  })
})
