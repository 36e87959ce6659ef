// The parts of the Action's suggest mode that need no process: which lines a pull request adds, the
// comment a suggestion becomes (a fence its text cannot close), and the lines an audit's fixed copy changes.
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

type Suggestion = { path: string; line: number; text: string; images: { src: string; status: string }[] }
type Page = { page: string; fixed_copy: string | null; images: { line: number; src: string; status: string; written?: boolean }[] }
// Plain JavaScript for the runner's node, without types: imported by path.
const githubModule = '../../action/github.mjs'
const suggestModule = '../../action/suggest.mjs'
const { addedLines, commentBody, fenceFor, inlineCode, markerOf } = (await import(githubModule)) as {
  addedLines: (patch: string) => Set<number>
  commentBody: (suggestion: Suggestion) => string
  fenceFor: (text: string) => string
  inlineCode: (text: string) => string
  markerOf: (path: string, line: number, text: string) => string
}
const { suggestionsFrom, sortSuggestions, summaryOf } = (await import(suggestModule)) as {
  suggestionsFrom: (report: { pages: Page[] }, cwd: string) => { suggestions: Suggestion[]; notSuggested: { page: string; images: number; reason: string }[] }
  sortSuggestions: (
    suggestions: Suggestion[],
    changed: Map<string, Set<number>>,
    posted: Set<string>,
    marker: typeof markerOf,
  ) => { post: Suggestion[]; outside: Suggestion[]; already: Suggestion[] }
  summaryOf: (input: {
    rows: (Suggestion & { outcome: string })[]
    notSuggested: { page: string; images: number; reason: string }[]
    notes: string[]
  }) => string
}

const dir = mkdtempSync(join(tmpdir(), 'alttext-suggest-parts-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('suggest mode parts: happy', () => {
  test('the lines a patch adds are counted on the new side, across hunks, removed and context lines', () => {
    const patch = [
      '@@ -1,4 +1,5 @@',
      ' <p>a</p>',
      '-<img src=old.png>',
      '+<img src=new.png>',
      '+<img src=two.png>',
      ' <p>b</p>',
      '@@ -40,2 +41,3 @@ section',
      ' x',
      '+y',
      '\\ No newline at end of file',
    ].join('\n')
    expect([...addedLines(patch)]).toEqual([2, 3, 42])
    expect([...addedLines('@@ -0,0 +1 @@\n+only')]).toEqual([1])
  })

  test('a suggestion comment: the changed line in a suggestion block, and a marker of path, line and text', () => {
    const body = commentBody({ path: 'site/a.html', line: 3, text: '<img alt="A red kite" src="k.jpg">', images: [{ src: 'k.jpg', status: 'missing' }] })
    expect(body).toContain('\n```suggestion\n<img alt="A red kite" src="k.jpg">\n```\n')
    expect(body).toContain('`k.jpg` (missing)')
    expect(body).toContain(`<!-- alttext-suggestion:${markerOf('site/a.html', 3, '<img alt="A red kite" src="k.jpg">')} -->`)
    expect(markerOf('site/a.html', 3, 'x')).not.toBe(markerOf('site/a.html', 4, 'x'))
  })

  test('each line a fixed copy changes is one suggestion, with the images whose tags start at or before it', () => {
    mkdirSync(join(dir, 'site'), { recursive: true })
    writeFileSync(join(dir, 'site', 'a.html'), '<p>\n<img src="k.jpg">\n<img\n  alt="IMG_1.JPG" src="t.jpg">\n<img src=x.png alt="ok">\r\n')
    writeFileSync(join(dir, 'fixed-a.html'), '<p>\n<img alt="A kite" src="k.jpg">\n<img\n  alt="A team" src="t.jpg">\n<img src=x.png alt="ok">\r\n')
    const { suggestions, notSuggested } = suggestionsFrom(
      {
        pages: [
          {
            page: 'site/a.html',
            fixed_copy: join(dir, 'fixed-a.html'),
            images: [
              { line: 2, src: 'k.jpg', status: 'missing', written: true },
              { line: 3, src: 't.jpg', status: 'poor', written: true },
              { line: 5, src: 'x.png', status: 'ok', written: false },
            ],
          },
          { page: 'site/none.html', fixed_copy: null, images: [{ line: 1, src: 'n.png', status: 'missing', written: false }] },
        ],
      },
      dir,
    )
    expect(suggestions).toEqual([
      { path: 'site/a.html', line: 2, text: '<img alt="A kite" src="k.jpg">', images: [{ src: 'k.jpg', status: 'missing' }] },
      { path: 'site/a.html', line: 4, text: '  alt="A team" src="t.jpg">', images: [{ src: 't.jpg', status: 'poor' }] },
    ])
    expect(notSuggested).toEqual([])
  })

  test('only new suggestions on added lines are posted; the rest say why not', () => {
    const one = { path: 'a.html', line: 2, text: 'x', images: [] }
    const two = { path: 'a.html', line: 9, text: 'y', images: [] }
    const three = { path: 'b.md', line: 1, text: 'z', images: [] }
    const sorted = sortSuggestions(
      [one, two, three],
      new Map([
        ['a.html', new Set([2, 3])],
        ['b.md', new Set([1])],
      ]),
      new Set([markerOf('b.md', 1, 'z')]),
      markerOf,
    )
    expect(sorted).toEqual({ post: [one], outside: [two], already: [three] })
  })
})

describe('suggest mode parts: errors', () => {
  test('pages that cannot be suggested on a line say why: a page URL, an EPUB, a copy of another length, outside the folder', () => {
    writeFileSync(join(dir, 'b.html'), '<img src=a.png>\n')
    writeFileSync(join(dir, 'fixed-b.html'), '<img alt="A" src=a.png>\n<div id=desc>long</div>\n')
    const written = [{ line: 1, src: 'a.png', status: 'missing', written: true }]
    const { suggestions, notSuggested } = suggestionsFrom(
      {
        pages: [
          { page: 'http://127.0.0.1:1/p.html', fixed_copy: join(dir, 'fixed-b.html'), images: written },
          { page: 'book.epub!OEBPS/ch1.xhtml', fixed_copy: join(dir, 'fixed-b.html'), images: written },
          { page: 'b.html', fixed_copy: join(dir, 'fixed-b.html'), images: written },
          { page: '../elsewhere.html', fixed_copy: join(dir, 'fixed-b.html'), images: written },
        ],
      },
      dir,
    )
    expect(suggestions).toEqual([])
    expect(notSuggested.map((each) => each.reason)).toEqual([
      'a page URL, not a file of the repository',
      'an EPUB book is a zip file: run alttext audit --fix on it for a fixed copy',
      'its fixed copy has a different number of lines',
      'outside the working directory',
    ])
  })
})

describe('suggest mode parts: security', () => {
  test('text with backticks cannot close the suggestion fence or the inline code', () => {
    const text = '<img alt="Run ``` then `x`" src="a.png">'
    expect(fenceFor(text)).toBe('````')
    const body = commentBody({ path: 'a.html', line: 1, text, images: [{ src: 'a`b.png', status: 'missing' }] })
    expect(body).toContain(`\n\`\`\`\`suggestion\n${text}\n\`\`\`\`\n`)
    expect(inlineCode('a`b.png')).toBe('`` a`b.png ``')
  })

  test('the summary escapes what came from files and the model: no markup, no table break, no mention', () => {
    const summary = summaryOf({
      rows: [{ path: 'a|b.html', line: 1, text: '<img alt="@team <script>" src=x>', images: [{ src: 'x|y', status: 'missing' }], outcome: 'posted' }],
      notSuggested: [],
      notes: [],
    })
    expect(summary).toContain('| a\\|b.html | 1 | x\\|y (missing) | <code>&lt;img alt=&quot;&#64;team &lt;script&gt;&quot; src=x&gt;</code> | posted |')
    expect(summary).not.toContain('<script>')
  })
})
