// `alttext audit --review` and `--apply` on Markdown and EPUB, against the real service
// with the fake model: the review names an image inside a book by its `document`; --apply finds each
// row's image through the same format code as --fix, writes exactly the rows left (a Markdown file with
// every other byte kept, a book that EPUBCheck accepts) and refuses a row whose file changed since.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { unzipSync } from 'fflate'
import { csvField, parseCsv } from '../../src/cli/shared/csv'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { bookFiles, buildEpub, epubcheck, epubcheckInstalled } from '../support/epub'
import { attr, audit, FIXTURE_SITE, MODEL, REPLIES, docsWithImages } from './audit-support'

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
  dir = docsWithImages('alttext-audit-review-formats-')
  writeFileSync(join(dir, 'docs', 'guide.md'), GUIDE)
  writeFileSync(join(dir, 'book.epub'), book(CHAPTER))
})

type Table = { header: string[]; rows: string[][] }
const readTable = (path: string): Table => {
  const [header, ...rows] = parseCsv(readFileSync(path, 'utf8'))
  return { header: header!, rows }
}
const cell = (table: Table, row: string[], name: string) => row[table.header.indexOf(name)]!
const writeTable = (path: string, table: Table) =>
  writeFileSync(path, `${[table.header, ...table.rows].map((row) => row.map((field) => csvField(field)).join(',')).join('\r\n')}\r\n`)
const image = (name: string) => new Uint8Array(readFileSync(join(FIXTURE_SITE, 'img', name)))
const chapterOf = (path: string) => new TextDecoder().decode(unzipSync(new Uint8Array(readFileSync(path)))['OEBPS/ch1.xhtml'])

/** `original` with each [from, to] replaced once (each `from` must occur exactly once). */
function replaced(original: string, replacements: [string, string][]): string {
  let out = original
  for (const [from, to] of replacements) {
    expect(out.split(from)).toHaveLength(2)
    out = out.replace(from, to)
  }
  return out
}

// Line 3: a file name for alt; line 5: another, with a title; the code block is never touched.
// (`![](…)` would be alt="": decorative, nothing to propose.)
const GUIDE = `# Kite guide

![kite.jpg](img/kite.jpg)

Our team: ![IMG_2041.JPG](img/team.jpg "On the pier")

\`\`\`
![](img/logo.png)
\`\`\`

![The Harbour Kite Club logo: a red kite over blue waves.](img/logo.png)
`
// The chapter's body starts on line 9 of the content document.
const CHAPTER = `<section>
<h1>Chapter one</h1>
<p><img src="images/kite.jpg"/></p>
<p><img src="images/team.jpg" alt="photo"/></p>
<p><img src="images/logo.png" alt="The club logo: a red kite over blue waves."/></p>
</section>`
const book = (body: string) =>
  buildEpub(
    bookFiles({
      chapters: [{ name: 'ch1.xhtml', title: 'Chapter one', body }],
      images: { 'images/kite.jpg': image('kite.jpg'), 'images/team.jpg': image('team.jpg'), 'images/logo.png': image('logo.png') },
    }),
  )

describe('--review then --apply on Markdown and EPUB', () => {
  test('rows name the Markdown file and the book’s document; --apply writes exactly the rows left, the book stays valid', async () => {
    if (!epubcheckInstalled()) throw new Error('EPUBCheck is not installed (apt-get install epubcheck)')
    try {
      const review = await audit(['docs/guide.md', 'book.epub', '--root', '.', '--review', 'review.csv', '-q'], client, dir)
      expect(review.code).toBe(0)
      expect(review.stdout).toContain('review: review.csv (4 proposed changes)')
      const table = readTable(join(dir, 'review.csv'))
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
      const rows = table.rows.map((row) => ['file', 'document', 'line', 'column', 'current_alt', 'proposed_alt'].map((name) => cell(table, row, name)))
      expect(rows).toEqual([
        ['docs/guide.md', '', '3', '1', 'kite.jpg', REPLIES[320]!],
        ['docs/guide.md', '', '5', '11', 'IMG_2041.JPG', REPLIES[360]!],
        ['book.epub', 'OEBPS/ch1.xhtml', '11', '4', '', REPLIES[320]!],
        ['book.epub', 'OEBPS/ch1.xhtml', '12', '4', 'photo', REPLIES[360]!],
      ])

      // A person edits the book's team row and the guide's team row, and deletes the guide's kite row.
      const edited = table.rows.filter((_, index) => index !== 0)
      edited[0]![table.header.indexOf('proposed_alt')] = 'The team [all twelve] on the pier.'
      edited[2]![table.header.indexOf('proposed_alt')] = 'The whole team, kites in hand, on the pier.'
      writeTable(join(dir, 'review.csv'), { header: table.header, rows: edited })
      env.ollama.reset()

      const apply = await audit(['--apply', 'review.csv', '--fix', 'out'], {}, dir)
      expect(apply.stdout).toContain('row 2: docs/guide.md:5:11: written')
      expect(apply.stdout).toContain('row 3: book.epub!OEBPS/ch1.xhtml:11:4: written')
      expect(apply.stdout).toContain('row 4: book.epub!OEBPS/ch1.xhtml:12:4: written')
      expect(apply.stdout).toContain('3 rows written to 2 files under out, 0 refused')
      expect(apply.code).toBe(0)
      expect(env.ollama.requests).toHaveLength(0)
      expect(readdirSync(join(dir, 'out')).sort()).toEqual(['book.epub', 'docs'])

      // Markdown: only the edited label changed, escaped so it renders the text as given; the title kept.
      expect(readFileSync(join(dir, 'out', 'docs', 'guide.md'), 'utf8')).toBe(
        replaced(GUIDE, [['![IMG_2041.JPG](img/team.jpg "On the pier")', '![The team \\[all twelve\\] on the pier.](img/team.jpg "On the pier")']]),
      )
      // The book: valid, the two alt texts written; the sources untouched.
      const fixed = join(dir, 'out', 'book.epub')
      const check = epubcheck(fixed)
      expect(check.output).toBe('')
      expect(check.ok).toBe(true)
      expect(chapterOf(fixed)).toContain(
        replaced(CHAPTER, [
          ['<img src="images/kite.jpg"/>', `<img alt=${attr(REPLIES[320]!)} src="images/kite.jpg"/>`],
          ['<img src="images/team.jpg" alt="photo"/>', '<img src="images/team.jpg" alt="The whole team, kites in hand, on the pier."/>'],
        ]),
      )
      expect(readFileSync(join(dir, 'docs', 'guide.md'), 'utf8')).toBe(GUIDE)
      expect(readFileSync(join(dir, 'book.epub')).equals(book(CHAPTER))).toBe(true)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)

  test('a row whose image changed since (in the Markdown file, in the book) is refused; the others are written in place', async () => {
    try {
      const review = await audit(['docs/guide.md', 'book.epub', '--root', '.', '--review', 'review.csv', '-q'], client, dir)
      expect(review.code).toBe(0)
      // After the review, someone fixes the guide's team alt and the book's team alt by hand.
      const guide = GUIDE.replace('![IMG_2041.JPG]', '![The team on the pier.]')
      writeFileSync(join(dir, 'docs', 'guide.md'), guide)
      const chapter = CHAPTER.replace('alt="photo"', 'alt="The team, by hand."')
      writeFileSync(join(dir, 'book.epub'), book(chapter))

      const apply = await audit(['--apply', 'review.csv', '--in-place'], {}, dir)
      expect(apply.code).toBe(1)
      expect(apply.stdout).toContain('row 2: docs/guide.md:3:1: written')
      expect(apply.stdout).toContain(
        'row 3: docs/guide.md:5:11: refused: the image there changed since the review (now alt "The team on the pier.", img/team.jpg)',
      )
      expect(apply.stdout).toContain('row 4: book.epub!OEBPS/ch1.xhtml:11:4: written')
      expect(apply.stdout).toContain(
        'row 5: book.epub!OEBPS/ch1.xhtml:12:4: refused: the image there changed since the review (now alt "The team, by hand.", images/team.jpg)',
      )
      expect(apply.stdout).toContain('2 rows written to 2 files in place, 2 refused')
      expect(readFileSync(join(dir, 'docs', 'guide.md'), 'utf8')).toBe(replaced(guide, [['![kite.jpg](img/kite.jpg)', `![${REPLIES[320]!}](img/kite.jpg)`]]))
      expect(chapterOf(join(dir, 'book.epub'))).toContain(
        replaced(chapter, [['<img src="images/kite.jpg"/>', `<img alt=${attr(REPLIES[320]!)} src="images/kite.jpg"/>`]]),
      )
      expect(readdirSync(dir).sort()).toEqual(['alttext-audit.html', 'book.epub', 'docs', 'review.csv'])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})
