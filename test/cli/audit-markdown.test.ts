// `alttext audit` on Markdown, run against the real service with the fake model: the
// images a CommonMark parser finds (inline, reference, in links, HTML in Markdown; never code), and
// --fix writing only the alt text of the images it fixes, escaped so that it reads back the same.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Nodes } from 'mdast'
import { fromMarkdown } from 'mdast-util-from-markdown'
import { frontmatterFromMarkdown } from 'mdast-util-frontmatter'
import { frontmatter } from 'micromark-extension-frontmatter'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import type { Behaviour } from '../support/fake-ollama'
import { attr, audit, pageServer, readJson, docsWithImages } from './audit-support'

/** Replies by image width (logo 64, kite 320, team 360): markup characters Markdown must escape. */
const REPLIES = {
  64: 'The [Kite] club logo: *red* kite_over `waves` \\ & <b>bold</b> ![x](y) | pipe ~tilde~ 5 < 6.',
  320: 'Two children launch a red kite on a windy beach.',
  360: 'Twelve club members line up with their kites; fish & chips wait on the pier.',
} as const
const MODEL: Partial<Behaviour> = {
  reply: (context) => (REPLIES as Record<number, string>)[context.images[0]?.width ?? 0] ?? 'A picture the tests did not plan for.',
  decorative: () => false,
}

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
  dir = docsWithImages('alttext-audit-md-', ['guide'])
})

const chats = () => env.ollama.requests.filter((request) => request.path === '/api/chat')
const promptOf = (request: { rawBody: string }) => JSON.parse(request.rawBody).messages.at(-1).content as string

/** Alt, url and title of every image, as a CommonMark parser reads the file (references resolved). */
function imagesOf(markdown: string) {
  const tree = fromMarkdown(markdown, { extensions: [frontmatter()], mdastExtensions: [frontmatterFromMarkdown()] })
  const definitions = new Map<string, { url: string; title?: string | null }>()
  const found: { alt: string; url: string; title: string | null }[] = []
  const collect = (node: Nodes) => {
    if (node.type === 'definition') definitions.set(node.identifier, node)
    if ('children' in node) for (const child of node.children) collect(child)
  }
  const walk = (node: Nodes) => {
    if (node.type === 'image') found.push({ alt: node.alt ?? '', url: node.url, title: node.title ?? null })
    if (node.type === 'imageReference') {
      const definition = definitions.get(node.identifier)
      found.push({ alt: node.alt ?? '', url: definition?.url ?? '(no definition)', title: definition?.title ?? null })
    }
    if ('children' in node) for (const child of node.children) walk(child)
  }
  collect(tree)
  walk(tree)
  return found
}

/** Stands for the logo's alt text as the service returns it (it takes some markup out of the model's reply). */
const LOGO = '@LOGO@'

/**
 * The page in pieces: text kept as is, or a span the fix changes from `md[0]` to `md[1]` (an alt text,
 * escaped when written) or from `raw[0]` to `raw[1]` (written as it is).
 */
type Piece = string | { md: [string, string] } | { raw: [string, string] }
const PAGE: Piece[] = [
  '---\ntitle: Kite day\nlang: fr\n---\n# Kites on the beach\n\nThe club meets on the north beach. ![',
  // A file name (poor): `![](…)` would be alt="", decorative, and kept.
  { md: ['kite.jpg', REPLIES[320]] },
  '](../img/kite.jpg "A *title* [kept]") after the picture.\n\n[![',
  { md: ['', LOGO] },
  '](../img/logo.png)](https://example.org/club)\n\n## Team\n\n![',
  { md: ['IMG_2041.JPG', REPLIES[360]] },
  '][team] then ![',
  { md: ['photo', REPLIES[360]] },
  // A collapsed and a shortcut reference: the old label stays as the reference.
  { raw: ['][]', '][photo]'] },
  ' then ![',
  { md: ['image of kite', REPLIES[320]] },
  { raw: [']', '][image of kite]'] },
  ' done.\n\n```md\n![](../img/kite.jpg)\n<img src="../img/logo.png">\n```\n\n    ![](../img/team.jpg)\n\nInline `![](../img/kite.jpg)` and `<img src="../img/team.jpg">` code.\n\n<div class="hero">\n<img',
  { raw: ['', ` alt=${attr(LOGO)}`] },
  ' src="../img/logo.png" width="64">\n</div>\n\nText <img',
  { raw: ['', ` alt=${attr(REPLIES[360])}`] },
  ' src="../img/team.jpg"> inline, café ☕ and ![Good alt text that describes the kite well.](../img/kite.jpg).\n\n[team]: ../img/team.jpg "Team"\n[photo]: ../img/team.jpg\n[image of kite]: ../img/kite.jpg\n',
]

const escaped = (alt: string) => alt.replace(/[\\[\]*_`<>&!~|]/gu, (char) => `\\${char}`)

/** The original, or the expected fixed copy with `logo` as the logo's alt text. */
const pageText = (fixed: boolean, logo = '') =>
  PAGE.map((piece) => (typeof piece === 'string' ? piece : 'md' in piece ? (fixed ? escaped(piece.md[1]) : piece.md[0]) : piece.raw[fixed ? 1 : 0]))
    .join('')
    .replaceAll(attr(LOGO), attr(logo))
    .replaceAll(LOGO, escaped(logo))

describe('Markdown', () => {
  test('finds inline, reference, linked and HTML images but none in code; --fix changes only their alt text, escaped', async () => {
    try {
      const source = pageText(false)
      writeFileSync(join(dir, 'docs', 'guide', 'kites.md'), source)
      const res = await audit(['docs', '--fix', 'fixed', '--json', 'report.json', '-q'], client, dir)
      expect(res.stderr).toContain('7 done, 0 failed')
      expect(res.code).toBe(0)

      const report = readJson(join(dir, 'report.json'))
      const page = report.pages[0]
      expect(page.page).toBe('docs/guide/kites.md')
      expect(page.language).toBe('fr')
      expect(page.images.map((image: any) => [image.line, image.src, image.alt, image.status])).toEqual([
        [7, '../img/kite.jpg', 'kite.jpg', 'poor'],
        [9, '../img/logo.png', '', 'empty'], // the only content of a link: the link has no name
        [13, '../img/team.jpg', 'IMG_2041.JPG', 'poor'],
        [13, '../img/team.jpg', 'photo', 'poor'],
        [13, '../img/kite.jpg', 'image of kite', 'poor'],
        [25, '../img/logo.png', null, 'missing'],
        [28, '../img/team.jpg', null, 'missing'],
        [28, '../img/kite.jpg', 'Good alt text that describes the kite well.', 'ok'],
      ])
      // The model was asked in the front matter's language, with the heading and the link as context.
      const prompts = chats().map(promptOf)
      expect(chats().every((request) => /French|fr\b/u.test(request.rawBody))).toBe(true)
      expect(prompts.some((p) => p.includes('Section: Kites on the beach.') && p.includes('Text before: The club meets on the north beach.'))).toBe(true)
      expect(prompts.some((p) => p.includes('only content of a link to https://example.org/club'))).toBe(true)

      // Byte for byte: the original with exactly the alt spans replaced (escaped), the references kept.
      const fixed = readFileSync(join(dir, 'fixed', 'guide', 'kites.md'), 'utf8')
      const logo = page.images[1].suggestion.alt as string
      // What the escaping is for is still in it.
      for (const char of ['[', ']', '\\', '_', '&', '|', '~', '<']) expect(logo).toContain(char)
      expect(fixed).toBe(pageText(true, logo))
      expect(page.images.filter((image: any) => image.written).length).toBe(7)

      // Read back by a CommonMark parser: the new alt texts exactly, titles and targets kept.
      const before = imagesOf(source)
      const after = imagesOf(fixed)
      expect(after.map((image) => image.alt)).toEqual([
        REPLIES[320],
        logo,
        REPLIES[360],
        REPLIES[360],
        REPLIES[320],
        'Good alt text that describes the kite well.',
      ])
      expect(after.map(({ url, title }) => ({ url, title }))).toEqual(before.map(({ url, title }) => ({ url, title })))
      expect(after[0]!.title).toBe('A *title* [kept]')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 30_000)
})

describe('Markdown escaping', () => {
  // The service takes markup out of model replies; a person's edit (a review file) need not. Each of
  // these alt texts, written by the Markdown format, must read back exactly from the fixed file.
  const TRICKY = [
    'a ] b',
    'ends with a backslash \\',
    '\\] escaped bracket',
    '![nested](x.png) image',
    '[link](https://example.org) text',
    '*emphasis* and _emphasis_ and **strong**',
    '`code` and ``double``',
    '<img src=x> <b>tag</b> <!-- comment -->',
    '&amp; &#65; &copy; entities',
    '~~strike~~ | table | pipes',
    'https://example.org/autolink and <https://example.org>',
    'line\nbreak',
    'café ☕ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢',
    '',
  ]
  test('every alt text reads back the same; shortcut and collapsed references keep their target', async () => {
    const { markdown } = await import('../../src/cli/audit/formats/markdown')
    for (const [form, original] of [
      ['inline', 'Text ![old](a.png "T") end.\n'],
      ['full', 'Text ![old][r] end.\n\n[r]: a.png "T"\n'],
      ['collapsed', 'Text ![old][] end.\n\n[old]: a.png "T"\n'],
      ['shortcut', 'Text ![old] end.\n\n[old]: a.png "T"\n'],
      ['in a link', 'Text [![old](a.png "T")](https://example.org) end.\n'],
    ] as const) {
      const page = {
        source: { kind: 'file', path: '/x/a.md', root: '/x' },
        name: 'a.md',
        base: new URL('file:///a.md'),
        bytes: new TextEncoder().encode(original),
        error: null,
      } as const
      const options = { token: 'alttext-test-token', context: false }
      const [document] = markdown.scan(page, options)
      const at = document!.locations[0]!
      for (const alt of TRICKY) {
        const { bytes, applied } = markdown.apply(page, [{ ...at, alt, expected: 'old' }], options)
        expect(applied).toHaveLength(1)
        const fixed = new TextDecoder().decode(bytes)
        const [read] = imagesOf(fixed)
        expect({ form, alt: read?.alt, url: read?.url, title: read?.title }).toEqual({ form, alt: alt.replace(/\s+/gu, ' '), url: 'a.png', title: 'T' })
        // Only the label changed: the text before and after it is the original's.
        expect(fixed.startsWith(original.slice(0, original.indexOf('![old') + 2))).toBe(true)
        expect(fixed.endsWith(original.slice(original.indexOf('end.')))).toBe(true)
      }
      // A stale change (the alt is no longer what it was) is refused.
      const stale = markdown.apply(page, [{ ...at, alt: 'new', expected: 'older' }], options)
      expect(stale.refused.map((refusal) => refusal.reason)).toEqual(['the image’s alt text changed since'])
    }
  })
})

describe('template addresses', () => {
  // Jekyll and Hugo sites write image addresses as template tags, which CommonMark alone reads as no image.
  const SITE = [
    '---\ntitle: Tutorials\n---\n# Images tutorial\n\n',
    'Text ![A chart of the results]({{ "/content-images/chart.png" | relative_url }}) and ![DSC_0001.jpg]({{ site.baseurl }}/img/kite.jpg "T") end.\n\n',
    '[![logo]({% link img/logo.png %})]({{ "/" | relative_url }}) café ![IMG_2041.JPG]({{< ref "team.jpg" >}}).\n\n',
    '![photo][r] and ![DSC_0002.jpg](img/kite.jpg)\n\n[r]: {{ "/r.png" | absolute_url }}\n',
  ].join('')
  const lines = SITE.split('\n')
  /** Line and column (UTF-16) of the first `needle` on a line, as the report gives them. */
  const at = (needle: string) => {
    const line = lines.findIndex((text) => text.includes(needle))
    return [line + 1, lines[line]!.indexOf(needle) + 1]
  }

  test('their images are linted at their place, not sent; --fix and --apply write alt texts and keep every tag byte for byte', async () => {
    try {
      writeFileSync(join(dir, 'docs', 'wai.md'), SITE)
      const res = await audit(['docs', '--fix', 'fixed', '--json', 'report.json', '-q'], client, dir)
      expect(res.code).toBe(0)
      const page = readJson(join(dir, 'report.json')).pages[0]
      expect(page.images.map((image: any) => [image.line, image.column, image.src, image.alt, image.status])).toEqual([
        [...at('![A chart'), '{{ "/content-images/chart.png" | relative_url }}', 'A chart of the results', 'ok'],
        [...at('![DSC_0001'), '{{ site.baseurl }}/img/kite.jpg', 'DSC_0001.jpg', 'poor'],
        [...at('![logo]'), '{% link img/logo.png %}', 'logo', 'poor'],
        [...at('![IMG'), '{{< ref "team.jpg" >}}', 'IMG_2041.JPG', 'poor'],
        [...at('![photo]'), '{{ "/r.png" | absolute_url }}', 'photo', 'poor'],
        [...at('![DSC_0002'), 'img/kite.jpg', 'DSC_0002.jpg', 'poor'],
      ])
      // Only the plain address was asked for; the others say why, and nothing failed.
      expect(chats()).toHaveLength(1)
      expect(page.images[5].suggestion.alt).toBe(REPLIES[320])
      for (const image of page.images.slice(1, 5)) {
        expect(image.suggestion).toBeNull()
        expect(image.error).toBeNull()
        expect(image.issues.at(-1)).toStartWith('not checkable by the model: the address is a template tag ({')
      }
      // --fix wrote the one suggestion; every template tag is where it was.
      const kite = SITE.lastIndexOf('![DSC_0002.jpg](img/kite.jpg)') + 2
      expect(readFileSync(join(dir, 'fixed', 'wai.md'), 'utf8')).toBe(
        `${SITE.slice(0, kite)}${escaped(REPLIES[320])}${SITE.slice(kite + 'DSC_0002.jpg'.length)}`,
      )

      // A person writes the alt texts the model could not: --apply writes them into the labels only.
      const { imageFingerprint } = await import('../../src/cli/audit/review')
      const written = ['A red kite over the beach.', 'Harbour Kite Club home', 'The club members with their kites.']
      const rows = [1, 2, 3].map((index, row) => {
        const image = page.images[index]
        const fingerprint = imageFingerprint({ textAttribute: 'alt', text: image.alt, src: image.src })
        return `docs/wai.md,${image.line},${image.column},"${written[row]}",docs,${fingerprint}`
      })
      writeFileSync(join(dir, 'people.csv'), `file,line,column,proposed_alt,root,fingerprint\r\n${rows.join('\r\n')}\r\n`)
      const applied = await audit(['--apply', 'people.csv', '--fix', 'applied'], {}, dir)
      expect(applied.code).toBe(0)
      const expected = SITE.replace('![DSC_0001.jpg](', `![${written[0]}](`)
        .replace('![logo]', `![${written[1]}]`)
        .replace('![IMG_2041.JPG]', `![${written[2]}]`)
      const fixed = readFileSync(join(dir, 'applied', 'wai.md'), 'utf8')
      expect(fixed).toBe(expected)
      // Read again: the new alt texts, at the same addresses.
      const { markdown } = await import('../../src/cli/audit/formats/markdown')
      const bytes = new TextEncoder().encode(fixed)
      const loaded = { source: { kind: 'file', path: '/x/wai.md', root: '/x' }, name: 'wai.md', base: new URL('file:///x/wai.md'), bytes, error: null } as const
      const [document] = markdown.scan(loaded, { token: 'alttext-test-token', context: false })
      expect(document!.scan.images.map((image) => [image.text, image.src])).toEqual(
        page.images.map((image: any, index: number) => [index >= 1 && index <= 3 ? written[index - 1] : image.alt, image.src]),
      )
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 30_000)

  test('--check names each at its line and column', async () => {
    try {
      writeFileSync(join(dir, 'docs', 'wai.md'), SITE)
      const res = await audit(['docs', '--check'], {}, dir)
      expect(res.code).toBe(1)
      expect(res.stdout).toContain(`docs/wai.md:${at('![DSC_0001').join(':')}: poor: `)
      expect(res.stdout).toContain(`docs/wai.md:${at('![IMG').join(':')}: poor: `)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('hostile Markdown', () => {
  // Shapes that cost micromark seconds and GBs at a few MB (64 KB of ">" took 15.9 s; 2 MB of "[" 2.9 GB),
  // each just over one limit: the file is reported as unreadable, naming the limit, and never parsed.
  const HOSTILE: Record<string, [string, string]> = {
    'a-quotes.md': ['>'.repeat(4096), 'block quotes and list items opened on line 1: 4,096 (at most 16)'],
    'b-lists.md': [`${'- '.repeat(17)}a\n`, 'block quotes and list items opened on line 1: 17 (at most 16)'],
    'c-links.md': ['[a]('.repeat(20_001), '“[” (link and image labels): 20,001 (at most 20,000)'],
    'd-brackets.md': ['['.repeat(20_001), '“[” (link and image labels): 20,001 (at most 20,000)'],
    'e-images.md': ['![a](../img/kite.jpg) '.repeat(20_001), '“[” (link and image labels): 20,001 (at most 20,000)'],
    'f-emphasis.md': ['*a'.repeat(1_001), 'emphasis delimiters in one paragraph, by line 1: 1,001 (at most 1,000)'],
    'g-items.md': ['- a\n'.repeat(10_001), 'list items: 10,001 (at most 10,000)'],
    'h-lines.md': ['a\n'.repeat(40_000), 'lines: 40,001 (at most 40,000)'],
    'i-markup.md': ['`a'.repeat(150_001), 'markup characters: 150,001 (at most 150,000)'],
    'j-size.md': [`${'The kite flies over the beach. '.repeat(70_000)}\n`, 'bytes: 2,170,001 (at most 2,097,152)'],
  }
  test('each limit: a file at it is parsed, one over it is not', async () => {
    const { MARKDOWN_LIMITS: limits, markdownOverLimit, markdownTooLarge } = await import('../../src/cli/audit/formats/markdown-limits')
    const shapes: [string, (n: number) => string, number][] = [
      ['depth', (n) => `${'> '.repeat(n - 1)}- a\n`, limits.depth],
      ['list items', (n) => '1. a\n'.repeat(n), limits.listItems],
      ['brackets', (n) => '['.repeat(n), limits.brackets],
      ['emphasis', (n) => `${'*a'.repeat(n)}\n\n${'*a'.repeat(n)}`, limits.emphasis],
      ['markup', (n) => '<'.repeat(n), limits.markup],
      ['lines', (n) => 'a\n'.repeat(n - 1), limits.lines],
    ]
    for (const [name, shape, limit] of shapes) {
      expect({ name, over: markdownOverLimit(shape(limit)) }).toEqual({ name, over: null })
      expect({ name, over: markdownOverLimit(shape(limit + 1)) }).toEqual({ name, over: expect.stringContaining(`(at most ${limit.toLocaleString('en-US')})`) })
    }
    // Emphasis counts per paragraph (a list item starts one) and not inside words; a ruler of dashes is no list.
    expect(markdownOverLimit(`- ${'*a'.repeat(600)}\n- ${'*a'.repeat(600)}\n`)).toBeNull()
    expect(markdownOverLimit(`${'snake_case_name '.repeat(2000)}\n`)).toBeNull()
    expect(markdownOverLimit(`${'- '.repeat(40)}\n`)).toBeNull()
    expect(markdownTooLarge(limits.bytes)).toBeNull()
    expect(markdownTooLarge(limits.bytes + 1)).toContain('bytes: 2,097,153')
  })

  test('each file over a limit is reported unreadable, naming the limit; the next file is still audited', async () => {
    try {
      for (const [name, [text]] of Object.entries(HOSTILE)) writeFileSync(join(dir, 'docs', name), text)
      // Big, but as real release notes are: within every limit.
      const notes = '## v1.0.0\n\n- - - - - - - - - - - - - - - - - - - - - - - -\n\n'.concat(
        '* [[`0a1b2c3`](https://example.org/c)] - **(SEMVER-MAJOR)** **src**: make do_this and __that__ *faster*\n'.repeat(1000),
      )
      writeFileSync(join(dir, 'docs', 'x-notes.md'), notes)
      writeFileSync(join(dir, 'docs', 'z-good.md'), '# Kites\n\nText ![DSC_0002.jpg](img/kite.jpg) and more.\n')
      const res = await audit(['docs', '--check'], {}, dir)
      expect(res.code).toBe(1)
      for (const [name, [, limit]] of Object.entries(HOSTILE)) {
        expect(res.stdout).toContain(`docs/${name}: cannot be checked: cannot parse: too complex to parse safely: ${limit}\n`)
      }
      expect(res.stdout).not.toContain('docs/x-notes.md: cannot be checked')
      expect(res.stdout).toContain('docs/z-good.md:3:6: poor: ')
      expect(res.stdout).toContain(`${Object.keys(HOSTILE).length} pages could not be read`)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 30_000)
})

describe('page URLs', () => {
  test('a page URL ending in .md is the HTML page the server answers, not Markdown', async () => {
    const server = pageServer({ '/readme.md': '<p>Read as HTML</p>\n\n![not an image](a.png)\n\n<img src="b.png">\n' })
    try {
      const res = await audit([`${server.url}/readme.md`, '--dry-run', '--json', 'report.json', '-q'], {}, dir)
      expect(res.code).toBe(0)
      expect(readJson(join(dir, 'report.json')).pages[0].images.map((image: any) => image.src)).toEqual(['b.png'])
    } finally {
      server.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
