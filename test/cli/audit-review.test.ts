// `alttext audit --review` and `--apply` against the real service with the fake model:
// the review asks like --fix but writes only the CSV; a person edits a row and deletes another; --apply
// writes exactly the rows left (copies under --fix, or --in-place), sends nothing, refuses a row whose
// file changed since, and reads back what a spreadsheet saves (BOM, ";", quoted line breaks, formula guards).
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Nodes } from 'mdast'
import { fromMarkdown } from 'mdast-util-from-markdown'
import { imageFingerprint } from '../../src/cli/audit/review'
import { csvField, parseCsv, unguardField } from '../../src/cli/shared/csv'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { attr, audit, MODEL, REPLIES, siteCopy } from './audit-support'

let env: AltTextEnv
let client: Record<string, string>

beforeAll(async () => {
  env = await startAltTextEnv({ ollama: MODEL })
  client = { ALTTEXT_URL: env.service.url, ALTTEXT_API_KEY: env.key }
})
afterAll(() => env.stop())
beforeEach(() => env.ollama.reset())

const chats = () => env.ollama.requests.filter((request) => request.path === '/api/chat')

type Table = { header: string[]; rows: string[][] }
const readTable = (path: string): Table => {
  const [header, ...rows] = parseCsv(readFileSync(path, 'utf8'))
  return { header: header!, rows }
}
const cell = (table: Table, row: string[], name: string) => row[table.header.indexOf(name)]!
const writeTable = (path: string, table: Table) =>
  writeFileSync(path, `${[table.header, ...table.rows].map((row) => row.map((field) => csvField(field)).join(',')).join('\r\n')}\r\n`)

/** Every cell a spreadsheet that splits on ";" (or ignores quotes) would see: none may start a formula. */
const formulaCells = (text: string) =>
  text
    .split(/[\r\n]+/u)
    .flatMap((line) => line.split(/[;,]/u))
    .map((cell) => cell.replace(/^"+/u, ''))
    .filter((cell) => /^[=+\-@\t\r]/u.test(cell))

/** The fixture page with `replacements` made: what a fixed copy must equal byte for byte. */
const expected = (original: string, replacements: [string, string][]) => {
  let text = original
  for (const [from, to] of replacements) {
    expect(text.split(from)).toHaveLength(2)
    text = text.replace(from, to)
  }
  return text
}

describe('--review then --apply', () => {
  test('the review writes only the CSV; an edited row and the rows left are written, a deleted row is not; nothing sent', async () => {
    const copy = siteCopy()
    try {
      const review = await audit(['site/index.html', 'site/blog/post.html', '--root', 'site', '--review', 'review.csv', '-q', '-o', 'r.html'], client, copy.dir)
      expect(review.stderr).toContain('6 done, 0 failed')
      expect(review.code).toBe(0)
      expect(review.stdout).toContain('review: review.csv (6 proposed changes); edit or delete rows, then --apply it')
      expect(chats().length).toBeGreaterThan(0)
      expect(readdirSync(copy.dir).sort()).toEqual(['r.html', 'review.csv', 'site'])

      const table = readTable(join(copy.dir, 'review.csv'))
      expect(table.header).toEqual([
        'file',
        'document',
        'line',
        'column',
        'image',
        'finding',
        'details',
        'current_alt',
        'proposed_alt',
        'attribute',
        'root',
        'fingerprint',
      ])
      const places = table.rows.map((row) => `${cell(table, row, 'file')}:${cell(table, row, 'line')}:${cell(table, row, 'column')}`)
      // post.html line 7 (alt="", decorative) needs no change: not listed. The divider on index.html
      // line 20 has no alt: judged decorative, it is proposed alt="".
      expect(places).toEqual([
        'site/index.html:9:15',
        'site/index.html:16:5',
        'site/index.html:19:3',
        'site/index.html:20:3',
        'site/blog/post.html:8:1',
        'site/blog/post.html:9:1',
      ])
      const kite = table.rows[1]!
      expect([cell(table, kite, 'finding'), cell(table, kite, 'details'), cell(table, kite, 'current_alt'), cell(table, kite, 'proposed_alt')]).toEqual([
        'poor',
        'looks like a file name',
        'IMG_2041.JPG',
        REPLIES[320]!,
      ])
      expect(cell(table, kite, 'root')).toBe('site')

      // A person edits the kite's alt and deletes the logo row and the data: icon row.
      kite[table.header.indexOf('proposed_alt')] = 'Two children launch a red kite, "Big Red", at the harbour.'
      const edited = { header: table.header, rows: table.rows.filter((_, index) => index !== 0 && index !== 5) }
      writeTable(join(copy.dir, 'review.csv'), edited)
      env.ollama.reset()
      const usageBefore = (await env.service.api.get('/api/usage', env.key)).body.credits.used

      const apply = await audit(['--apply', 'review.csv', '--fix', 'fixed'], {}, copy.dir)
      expect(apply.stderr).toBe('')
      expect(apply.code).toBe(0)
      expect(apply.stdout.split('\n').filter(Boolean)).toEqual([
        'row 2: site/index.html:16:5: written',
        'row 3: site/index.html:19:3: written',
        'row 4: site/index.html:20:3: written',
        'row 5: site/blog/post.html:8:1: written',
        '4 rows written to 2 files under fixed, 0 refused',
      ])
      expect(env.ollama.requests).toHaveLength(0)
      expect((await env.service.api.get('/api/usage', env.key)).body.credits.used).toBe(usageBefore)

      const index = readFileSync(join(copy.site, 'index.html'), 'utf8')
      expect(readFileSync(join(copy.dir, 'fixed', 'index.html'), 'utf8')).toBe(
        expected(index, [
          ['alt="IMG_2041.JPG"', `alt=${attr('Two children launch a red kite, "Big Red", at the harbour.')}`],
          ['<img src="img/team.jpg" loading=lazy>', `<img alt=${attr(REPLIES[360]!)} src="img/team.jpg" loading=lazy>`],
          ['<img class=rule src=img/divider.png>', '<img alt="" class=rule src=img/divider.png>'],
        ]),
      )
      const post = readFileSync(join(copy.site, 'blog', 'post.html'), 'utf8')
      expect(readFileSync(join(copy.dir, 'fixed', 'blog', 'post.html'), 'utf8')).toBe(expected(post, [['alt="photo"', `alt=${attr(REPLIES[360]!)}`]]))
      // The sources are untouched, and only files with a row are copied.
      expect(readFileSync(join(copy.site, 'index.html'), 'utf8')).toBe(index)
      expect(existsSync(join(copy.dir, 'fixed', 'about.html'))).toBe(false)
    } finally {
      copy.cleanup()
    }
  }, 30_000)

  test('a row whose file changed since is refused with a clear message and exit 1; the others are written in place', async () => {
    const copy = siteCopy()
    try {
      const path = join(copy.site, 'blog', 'post.html')
      // The kite's alt="" (decorative) taken out: it needs alt text again.
      writeFileSync(path, readFileSync(path, 'utf8').replace('<img src="/img/kite.jpg" alt="">', '<img src="/img/kite.jpg">'))
      const review = await audit(['site/blog/post.html', '--root', 'site', '--review', 'review.csv', '-q', '-o', 'r.html'], client, copy.dir)
      expect(review.code).toBe(0)
      // Someone fixes the "photo" alt by hand after the review, and adds a line above the data: icon.
      const changed = readFileSync(path, 'utf8')
        .replace('alt="photo"', 'alt="The team on the pier."')
        .replace('<img src="data:', '<p>New paragraph.</p>\n<img src="data:')
      writeFileSync(path, changed)

      const apply = await audit(['--apply', 'review.csv', '--in-place'], {}, copy.dir)
      expect(apply.code).toBe(1)
      expect(apply.stdout).toContain('row 2: site/blog/post.html:7:1: written')
      expect(apply.stdout).toContain(
        'row 3: site/blog/post.html:8:1: refused: the image there changed since the review (now alt "The team on the pier.", ../img/team.jpg)',
      )
      expect(apply.stdout).toContain('row 4: site/blog/post.html:9:1: refused: no image starts at line 9, column 1 any more: the file changed since the review')
      expect(apply.stdout).toContain('1 row written to 1 file in place, 2 refused')
      expect(readFileSync(path, 'utf8')).toBe(expected(changed, [['<img src="/img/kite.jpg">', `<img alt=${attr(REPLIES[320]!)} src="/img/kite.jpg">`]]))
      expect(readdirSync(join(copy.site, 'blog'))).toEqual(['post.html'])

      // Applied once, the same CSV is stale for that row too: nothing is written twice.
      const again = await audit(['--apply', 'review.csv', '--in-place'], {}, copy.dir)
      expect(again.code).toBe(1)
      expect(again.stdout).toContain('0 rows written to 0 files in place, 3 refused')
    } finally {
      copy.cleanup()
    }
  }, 30_000)

  test('a CSV saved by a spreadsheet (BOM, ";", CRLF, quoted line breaks, guarded formulas) applies; a formula in a page is guarded in the review', async () => {
    const copy = siteCopy()
    try {
      writeFileSync(
        join(copy.site, 'sheet.html'),
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sheet</title></head><body>\n<img src="img/kite.jpg" alt="=HYPERLINK(&quot;https://evil.example/&quot;,&quot;x&quot;)">\n<img src="img/team.jpg">\n<img src="img/logo.png" alt="Company logo;=cmd|\' /C calc\'!A0">\n</body></html>\n',
      )
      const review = await audit(['site/sheet.html', '--review', 'review.csv', '--overwrite', '-q', '-o', 'r.html'], client, copy.dir)
      expect(review.code).toBe(0)
      const raw = readFileSync(join(copy.dir, 'review.csv'), 'utf8')
      // --overwrite lists the good alt too. The page's formula reaches the CSV only behind a ': a
      // spreadsheet shows it as text.
      expect(raw).toContain(`"'=HYPERLINK(""https://evil.example/"",""x"")"`)
      expect(raw).not.toMatch(/(^|,)=HYPERLINK/m)
      // Read by a spreadsheet that splits on ";", no cell starts a formula either.
      expect(raw).toContain("Company logo;'=cmd|' /C calc'!A0")
      expect(formulaCells(raw)).toEqual([])

      // Saved back by a spreadsheet in a ";" locale: BOM, CRLF, a proposed alt with a line break and
      // one that starts with "=" (guarded as the CLI writes it).
      const table = readTable(join(copy.dir, 'review.csv'))
      const proposed = table.header.indexOf('proposed_alt')
      table.rows[0]![proposed] = '=2+2 kites over the harbour'
      table.rows[1]![proposed] = 'Twelve members;\nfish & chips on the pier.'
      const saved = `\uFEFF${[table.header, ...table.rows].map((row) => row.map((field) => csvField(field).replace(/^(?!").*;.*$/su, (text) => `"${text}"`)).join(';')).join('\r\n')}\r\n`
      writeFileSync(join(copy.dir, 'saved.csv'), saved)

      const apply = await audit(['--apply', 'saved.csv', '--fix', 'fixed'], {}, copy.dir)
      expect(apply.stdout).toContain('3 rows written to 1 file under fixed, 0 refused')
      expect(apply.code).toBe(0)
      const fixed = readFileSync(join(copy.dir, 'fixed', 'sheet.html'), 'utf8')
      expect(fixed).toContain(`<img src="img/kite.jpg" alt=${attr('=2+2 kites over the harbour')}>`)
      // The line break in the edited alt is one space: every written alt is one line.
      expect(fixed).toContain(`<img alt=${attr('Twelve members; fish & chips on the pier.')} src="img/team.jpg">`)
    } finally {
      copy.cleanup()
    }
  }, 30_000)
})

describe('--apply writes every alt text on one line', () => {
  test('a blank line in a proposed alt cannot end a Markdown HTML block and let a link render; white space is collapsed in pages too', async () => {
    const copy = siteCopy()
    try {
      const markdown = '# Doc\n\n<div class="hero">\n<img src="a.png">\n</div>\n\nAfter.\n'
      writeFileSync(join(copy.site, 'doc.md'), markdown)
      writeFileSync(join(copy.site, 'page.html'), '<html><body>\n<img src="a.png">\n</body></html>\n')
      const fingerprint = imageFingerprint({ textAttribute: 'alt', text: null, src: 'a.png' })
      const row = (file: string, line: number, alt: string) =>
        [file, '', line, 1, 'a.png', 'missing', '', null, alt, 'alt', 'site', fingerprint].map((field) => csvField(field)).join(',')
      const header = 'file,document,line,column,image,finding,details,current_alt,proposed_alt,attribute,root,fingerprint'
      writeFileSync(
        join(copy.dir, 'review.csv'),
        `${[header, row('site/doc.md', 4, 'A kite.\n\n[click me](https://evil.example/)'), row('site/page.html', 2, '  Two\r\n\r\n\tkites. ')].join('\r\n')}\r\n`,
      )
      const apply = await audit(['--apply', 'review.csv', '--fix', 'fixed'], {}, copy.dir)
      expect(apply.code).toBe(0)
      const fixed = readFileSync(join(copy.dir, 'fixed', 'doc.md'), 'utf8')
      expect(fixed).toBe(markdown.replace('<img src="a.png">', `<img alt=${attr('A kite. [click me](https://evil.example/)')} src="a.png">`))
      // Read as a renderer reads it: one HTML block, and no link.
      const types: string[] = []
      const walk = (node: Nodes) => {
        types.push(node.type)
        if ('children' in node) for (const child of node.children) walk(child)
      }
      walk(fromMarkdown(fixed))
      expect(types).not.toContain('link')
      expect(types.filter((type) => type === 'html')).toHaveLength(1)
      expect(readFileSync(join(copy.dir, 'fixed', 'page.html'), 'utf8')).toBe('<html><body>\n<img alt="Two kites." src="a.png">\n</body></html>\n')
    } finally {
      copy.cleanup()
    }
  })
})

describe('the CSV formula guard', () => {
  test('a formula after a ";" or "," inside a cell is guarded too, and read back as written', () => {
    const hostile = ["Company logo;=cmd|' /C calc'!A0", 'a,+1', 'x;"@SUM(A1)', 'two\n-lines', '=start;=inner', 'plain; text, - fine']
    for (const text of hostile) {
      const cell = csvField(text)
      expect(formulaCells(cell)).toEqual([])
      expect(unguardField(parseCsv(`text,n\r\n${cell},1\r\n`)[1]![0]!)).toBe(text)
    }
    expect(csvField("Company logo;=cmd|' /C calc'!A0")).toBe("Company logo;'=cmd|' /C calc'!A0")
    expect(csvField('plain; text, - fine')).toBe('"plain; text, - fine"')
  })
})

describe('--review and --apply refuse what they cannot do', () => {
  const cases: [string, string[], RegExp][] = [
    [
      '--review with --fix',
      ['site', '--review', 'r.csv', '--fix', 'out'],
      /--review writes the proposed changes instead of fixed copies: it cannot go with --fix/,
    ],
    ['--review with --dry-run', ['site', '--review', 'r.csv', '--dry-run'], /cannot go with --dry-run/],
    ['--apply with pages', ['site', '--apply', 'r.csv', '--fix', 'out'], /--apply reads the files named in the CSV: give no pages or folders with it/],
    ['--apply without --fix or --in-place', ['--apply', 'r.csv'], /--apply needs either --fix OUTDIR \(copies\) or --in-place/],
    ['--apply with both', ['--apply', 'r.csv', '--fix', 'out', '--in-place'], /--apply needs either --fix OUTDIR/],
    ['--in-place without --apply', ['site', '--in-place'], /--in-place only matters with --apply/],
    [
      '--apply with a report',
      ['--apply', 'r.csv', '--fix', 'out', '--sarif', 'a.sarif'],
      /--apply sends nothing and writes only the files: it cannot go with --sarif/,
    ],
  ]
  for (const [name, args, message] of cases) {
    test(`${name}: exit 2`, async () => {
      const copy = siteCopy()
      try {
        const res = await audit(args, client, copy.dir)
        expect(res.stderr).toMatch(message)
        expect(res.code).toBe(2)
        expect(chats()).toHaveLength(0)
      } finally {
        copy.cleanup()
      }
    })
  }

  test('a CSV that is not a review, or has a quote left open, is refused whole (exit 2); a row with its position edited is refused', async () => {
    const copy = siteCopy()
    try {
      writeFileSync(join(copy.dir, 'other.csv'), 'page,line\r\nsite/index.html,9\r\n')
      const other = await audit(['--apply', 'other.csv', '--fix', 'out'], {}, copy.dir)
      expect(other.code).toBe(2)
      expect(other.stderr).toContain('--apply other.csv: not a review CSV of alttext audit: no column file, column, proposed_alt, root, fingerprint')

      const header = 'file,line,column,image,finding,details,current_alt,proposed_alt,attribute,root,fingerprint'
      writeFileSync(join(copy.dir, 'open.csv'), `${header}\r\nsite/index.html,9,15,,,,,"A logo,,site,${'a'.repeat(32)}\r\n`)
      const open = await audit(['--apply', 'open.csv', '--fix', 'out'], {}, copy.dir)
      expect(open.code).toBe(2)
      expect(open.stderr).toContain('a quoted field opened on line 2 is never closed')

      writeFileSync(join(copy.dir, 'moved.csv'), `${header}\r\nsite/index.html,nine,15,,,,,A logo,alt,site,${'a'.repeat(32)}\r\n`)
      const moved = await audit(['--apply', 'moved.csv', '--fix', 'out'], {}, copy.dir)
      expect(moved.code).toBe(1)
      expect(moved.stdout).toContain('row 2: refused: file, line, column or fingerprint is missing or changed; only proposed_alt may be edited')
      expect(existsSync(join(copy.dir, 'out'))).toBe(false)
    } finally {
      copy.cleanup()
    }
  })

  test('a copy that cannot be written refuses its rows, with the reason, instead of crashing', async () => {
    const copy = siteCopy()
    try {
      const review = await audit(['site/about.html', '--review', 'review.csv', '-q', '-o', 'r.html'], client, copy.dir)
      expect(review.code).toBe(0)
      writeFileSync(join(copy.dir, 'out'), 'a file where the folder would go')
      const apply = await audit(['--apply', 'review.csv', '--fix', 'out'], {}, copy.dir)
      expect(apply.code).toBe(1)
      expect(apply.stderr).toBe('')
      expect(apply.stdout).toMatch(/^row 2: site\/about\.html:7:1: refused: cannot write out\/about\.html: /m)
      expect(apply.stdout).toContain('0 rows written to 0 files under out, 4 refused')
    } finally {
      copy.cleanup()
    }
  }, 30_000)
})
