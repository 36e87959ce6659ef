// `alttext audit` on MDX, run against the real service with the fake model: Markdown images and JSX
// <img>/<Image> found (never in code), an alt that is code listed as not checked and never rewritten,
// {/* alttext-ignore */} skipping the next image, --fix writing only alt values (quoted as JSX reads
// them back), --review/--apply round trips, a broken file reported on its own, and src kept in the root.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseCsv } from '../../src/cli/shared/csv'
import { jsxAttributeValue, mdx } from '../../src/cli/audit/formats/mdx'
import type { LoadedPage } from '../../src/cli/audit/pages'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import type { Behaviour } from '../support/fake-ollama'
import { audit, FIXTURE_SITE, readJson } from './audit-support'

/** Replies by image width (logo 64, kite 320, team 360): both quotes, one quote, and MDX's own markup. */
const REPLIES: Record<number, string> = {
  64: 'The "Kite" club\'s logo: a red kite over blue waves.',
  320: 'Two children launch a "red" kite on a windy {beach}.',
  360: 'Twelve club members line up with their kites; fish & chips wait on the pier.',
}
const MODEL: Partial<Behaviour> = {
  reply: (context) => REPLIES[context.images[0]?.width ?? 0] ?? 'A picture the tests did not plan for.',
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
  dir = mkdtempSync(join(tmpdir(), 'alttext-audit-mdx-'))
  mkdirSync(join(dir, 'docs'))
  cpSync(join(FIXTURE_SITE, 'img'), join(dir, 'docs', 'img'), { recursive: true })
})

const PAGE = `---
title: Kite day
lang: en-GB
---
import Image from 'next/image'
import logo from './img/logo.png'

# Kites on the beach

The club meets on the north beach. ![kite.jpg](img/kite.jpg) after the picture.

<Image src="img/logo.png" alt="logo.png" width={64} height={64} />

<img src="img/team.jpg" />

<Figure>
  <img src="img/kite.jpg" alt='IMG_1.JPG' />
</Figure>

<Image src={logo} alt={t('logo')} />
<img {...props} src="img/team.jpg" width="2" />

{/* alttext-ignore */}
<img src="img/team.jpg" width="3" />

<Image src="img/kite.jpg" alt="Two children fly a red kite on a windy beach by the sea." />

\`\`\`jsx
<img src="img/logo.png" />
\`\`\`
`

/** `original` with each [from, to] replaced once (each `from` must occur exactly once). */
function replaced(original: string, replacements: [string, string][]): string {
  let out = original
  for (const [from, to] of replacements) {
    expect(out.split(from)).toHaveLength(2)
    out = out.replace(from, to)
  }
  return out
}

/** As the MDX fix escapes a Markdown label: CommonMark's markup, and MDX's braces. */
const label = (alt: string) => alt.replace(/[\\[\]*_`<>&!~|]/gu, (char) => `\\${char}`).replace(/[{}]/gu, (char) => `\\${char}`)

/** The page with the suggested alts as --fix writes them. */
const fixedPage = () =>
  replaced(PAGE, [
    ['![kite.jpg]', `![${label(REPLIES[320]!)}]`],
    ['alt="logo.png"', `alt={${JSON.stringify(REPLIES[64])}}`],
    ['<img src="img/team.jpg" />', `<img alt="${REPLIES[360]}" src="img/team.jpg" />`],
    ["alt='IMG_1.JPG'", `alt='${REPLIES[320]}'`],
  ])

const pageOf = (text: string): LoadedPage => ({
  source: { kind: 'file', path: join(dir, 'docs', 'a.mdx'), root: join(dir, 'docs') },
  name: 'a.mdx',
  base: new URL('file:///a.mdx'),
  bytes: new TextEncoder().encode(text),
  error: null,
})

describe('MDX', () => {
  test('finds Markdown and JSX images, never in code; code alts not checked; the ignore marker skips one; --fix writes only alt values', async () => {
    writeFileSync(join(dir, 'docs', 'page.mdx'), PAGE)
    const res = await audit(['docs', '--fix', 'fixed', '--json', 'report.json', '-q'], client, dir)
    // The kite twice (two contexts), the logo, the team.
    expect(res.stderr).toContain('4 done, 0 failed')
    expect(res.code).toBe(0)
    const page = readJson(join(dir, 'report.json')).pages[0]
    expect(page.page).toBe('docs/page.mdx')
    expect(page.language).toBe('en-GB')
    expect(page.images.map((image: any) => [image.line, image.column, image.src, image.alt, image.status])).toEqual([
      [10, 36, 'img/kite.jpg', 'kite.jpg', 'poor'],
      [12, 1, 'img/logo.png', 'logo.png', 'poor'],
      [14, 1, 'img/team.jpg', null, 'missing'],
      [17, 3, 'img/kite.jpg', 'IMG_1.JPG', 'poor'],
      [20, 1, '{logo}', null, 'ok'],
      [21, 1, 'img/team.jpg', null, 'ok'],
      [26, 1, 'img/kite.jpg', 'Two children fly a red kite on a windy beach by the sea.', 'ok'],
    ])
    // Code is listed with why it is not checked: never a finding, never sent.
    expect(page.images[4].issues).toEqual([expect.stringMatching(/^not checked: the alt is code, \{t\('logo'\)\}/u)])
    expect(page.images[5].issues).toEqual([expect.stringMatching(/^not checked: the alt may come from \{\.\.\.props\}/u)])
    // The model was asked with the page's context: the heading and the text before.
    const prompts = env.ollama.requests.filter((request) => request.path === '/api/chat').map((request) => request.rawBody)
    expect(prompts.some((body) => body.includes('Section: Kites on the beach.') && body.includes('Text before: The club meets on the north beach.'))).toBe(true)

    // Byte for byte: only the alt values changed, each quoted as JSX reads it back.
    expect(readFileSync(join(dir, 'fixed', 'page.mdx'), 'utf8')).toBe(fixedPage())
    const again = await audit(['fixed', '--dry-run', '--json', 'again.json', '-q'], {}, dir)
    expect(again.code).toBe(0)
    const alts = readJson(join(dir, 'again.json')).pages[0].images.map((image: any) => image.alt)
    expect(alts.slice(0, 4)).toEqual([REPLIES[320], REPLIES[64], REPLIES[360], REPLIES[320]])
  })

  test('--review lists the JSX and Markdown images; --apply --in-place writes them as --fix does', async () => {
    writeFileSync(join(dir, 'docs', 'page.mdx'), PAGE)
    const res = await audit(['docs', '--review', 'review.csv', '-q'], client, dir)
    expect(res.code).toBe(0)
    const [header, ...rows] = parseCsv(readFileSync(join(dir, 'review.csv'), 'utf8'))
    const at = (row: string[], name: string) => row[header!.indexOf(name)]
    expect(rows.map((row) => [at(row, 'file'), at(row, 'line'), at(row, 'column'), at(row, 'proposed_alt')])).toEqual([
      ['docs/page.mdx', '10', '36', REPLIES[320]],
      ['docs/page.mdx', '12', '1', REPLIES[64]],
      ['docs/page.mdx', '14', '1', REPLIES[360]],
      ['docs/page.mdx', '17', '3', REPLIES[320]],
    ])
    const applied = await audit(['--apply', 'review.csv', '--in-place'], {}, dir)
    expect(applied.stdout).toContain('4 rows written to 1 file in place, 0 refused')
    expect(applied.code).toBe(0)
    expect(readFileSync(join(dir, 'docs', 'page.mdx'), 'utf8')).toBe(fixedPage())
    // The same review again: every image has changed since, so every row is refused.
    const stale = await audit(['--apply', 'review.csv', '--in-place'], {}, dir)
    expect(stale.code).toBe(1)
    expect(stale.stdout).toContain('0 rows written to 0 files in place, 4 refused')
  })

  test('an unclosed JSX tag is an error of that file only; --overwrite never rewrites an alt that is code', async () => {
    writeFileSync(join(dir, 'docs', 'broken.mdx'), '# Broken\n\nSome text.\n\n<div>\n\n![kite.jpg](img/kite.jpg)\n')
    writeFileSync(join(dir, 'docs', 'cut.mdx'), '# Cut\n\n<img src="img/kite.jpg"\n\nmore')
    writeFileSync(join(dir, 'docs', 'bad-expression.mdx'), 'a {1 +} b\n')
    // A template literal that computes something is code too.
    const template = ['`Template $', '{x}`'].join('')
    const code = `<Image src={logo} alt={t('logo')} />\n<img src="img/kite.jpg" alt={${template}} />\n`
    writeFileSync(join(dir, 'docs', 'code.mdx'), code)
    writeFileSync(join(dir, 'docs', 'good.md'), '![kite.jpg](img/kite.jpg)\n')
    const check = await audit(['docs', '--check', '--json', 'check.json'], {}, dir)
    expect(check.code).toBe(1)
    const pages = readJson(join(dir, 'check.json')).pages
    const byName = Object.fromEntries(pages.map((page: any) => [page.page, page]))
    expect(byName['docs/broken.mdx'].error).toMatch(/^cannot parse: line 5, column 1: Expected a closing tag for `<div>`/u)
    expect(byName['docs/cut.mdx'].error).toMatch(/^cannot parse: line 5, column 5: Unexpected end of file/u)
    expect(byName['docs/bad-expression.mdx'].error).toMatch(/^cannot parse: line 1, column \d+: Could not parse expression with acorn/u)
    expect(byName['docs/good.md'].images[0].status).toBe('poor')
    expect(byName['docs/code.mdx'].images.map((image: any) => image.status)).toEqual(['ok', 'ok'])
    expect(check.stdout).toContain('docs/broken.mdx: cannot be checked: cannot parse: line 5, column 1')
    // Alts that are code are listed as not checked, never as findings.
    expect(check.stdout).toContain("docs/code.mdx:1:1: not checked: the alt is code, {t('logo')}")
    expect(check.stdout).not.toMatch(/docs\/code\.mdx:\d+:\d+: (?:missing|empty|poor)/u)

    // Even --overwrite neither asks for nor writes an alt that is code: the copy is the file.
    const res = await audit(['docs/code.mdx', '--overwrite', '--fix', 'fixed', '--json', 'fix.json', '-q'], client, dir)
    const images = readJson(join(dir, 'fix.json')).pages[0].images
    expect(images.map((image: any) => [image.status, image.suggestion, image.written])).toEqual([
      ['ok', null, null],
      ['ok', null, null],
    ])
    expect(env.ollama.requests.filter((request) => request.path === '/api/chat')).toHaveLength(0)
    expect(res.code).toBe(0)
    expect(readFileSync(join(dir, 'fixed', 'code.mdx'), 'utf8')).toBe(code)
    // And a change that names one (a hand-made review row) is refused by the format itself.
    const [document] = mdx.scan(pageOf(code), { token: 'alttext-test', context: false })
    const refused = mdx.apply(pageOf(code), [{ ...document!.locations[0]!, alt: 'Logo' }], { token: 'alttext-test', context: false })
    expect(refused.applied).toEqual([])
    expect(refused.refused[0]!.reason).toMatch(/^the alt is code, \{t\('logo'\)\}/u)
  })

  test('a JSX src that leaves the site root is refused, never read', async () => {
    writeFileSync(
      join(dir, 'docs', 'escape.mdx'),
      '<img src="../../../../../../etc/passwd" />\n\n<Image src="/%2e%2e/%2e%2e/etc/passwd" />\n\n![photo](../../etc/passwd)\n',
    )
    const res = await audit(['docs/escape.mdx', '--root', 'docs', '--json', 'report.json', '-q'], client, dir)
    // Each names a file inside the root that is not there: not checked, which fails nothing by itself.
    expect(res.code).toBe(0)
    const images = readJson(join(dir, 'report.json')).pages[0].images
    expect(images).toHaveLength(3)
    // A path that climbs (encoded or not) stops at the root, as a URL's does, and names a file inside it.
    for (const image of images) {
      expect(image.error).toBeNull()
      expect(image.not_checked).toBe('docs/etc/passwd does not exist')
    }
    expect(env.ollama.requests.filter((request) => request.path === '/api/chat')).toHaveLength(0)
  })
})

describe('MDX alt values', () => {
  const ALTS = [
    'plain words',
    'a "quoted" word',
    "the club's kite",
    'both "double" and \'single\'',
    'Tom & Jerry, &copy; and &#169; written out',
    'markup {braces} <b>tags</b> [brackets] *stars* _under_ \\back\\slash | pipe ~tilde~ `code`',
    'café ☕ 😀',
  ]

  test('jsxAttributeValue picks a quote JSX reads back, or a JavaScript string', () => {
    expect(jsxAttributeValue('a "b"')).toBe('\'a "b"\'')
    expect(jsxAttributeValue("it's")).toBe('"it\'s"')
    expect(jsxAttributeValue('"a" \'b\'')).toBe('{"\\"a\\" \'b\'"}')
    expect(jsxAttributeValue('&copy; & x')).toBe('"&amp;copy; & x"')
  })

  test('every alt written reads back as itself: a Markdown label, an existing JSX alt, a missing one', () => {
    const source = '![old](a.png)\n\n<img src="b.png" alt="old" />\n\n<Image src="c.png" />\n\n<img alt={"old"} src="d.png" />\n'
    const page = pageOf(source)
    const options = { token: 'alttext-test', context: false }
    const [document] = mdx.scan(page, options)
    expect(document!.scan.images.map((image) => image.text)).toEqual(['old', 'old', null, 'old'])
    for (const alt of ALTS) {
      const out = mdx.apply(
        page,
        document!.locations.map((at) => ({ ...at, alt })),
        options,
      )
      expect(out.refused).toEqual([])
      const written = new TextDecoder().decode(out.bytes)
      const [again] = mdx.scan(pageOf(written), options)
      expect(again!.scan.images.map((image) => image.text)).toEqual([alt, alt, alt, alt])
      // Outside the alt values nothing moved: the tags and their other props are where they were.
      expect(written).toContain('](a.png)')
      expect(written).toContain('<img src="b.png" alt=')
      expect(written).toContain('<Image alt=')
      expect(written.endsWith(' src="d.png" />\n')).toBe(true)
    }
  })

  test('a JSX link around an image is its link: alone in it, alt="" leaves the link without a name', async () => {
    writeFileSync(
      join(dir, 'docs', 'links.mdx'),
      '<a href="/"><img src="img/logo.png" alt="" /></a>\n\n<Link href="/about">About us <img src="img/kite.jpg" alt="" /></Link>\n\n[<img src="img/team.jpg" />](/team)\n',
    )
    const res = await audit(['docs/links.mdx', '--check', '--json', 'report.json'], {}, dir)
    expect(res.code).toBe(1)
    const images = readJson(join(dir, 'report.json')).pages[0].images
    expect(images.map((image: any) => [image.src, image.status])).toEqual([
      ['img/logo.png', 'empty'],
      ['img/kite.jpg', 'decorative'],
      ['img/team.jpg', 'missing'],
    ])
    expect(images[0].issues).toEqual(['empty alt on the only content of a link: the link has no name'])
  })

  test('{/* alttext-ignore */} skips only the next image and counts it; another comment does not', () => {
    const source =
      '{/* alttext-ignore */}\n![a](a.png) ![b](b.png)\n\n{/* a note */}\n<img src="c.png" />\n\nText {/*alttext-ignore*/} <img src="d.png" /> and <img src="e.png" />\n'
    const [document] = mdx.scan(pageOf(source), { token: 'alttext-test', context: false })
    expect(document!.scan.images.map((image) => image.src)).toEqual(['b.png', 'c.png', 'e.png'])
    expect(document!.scan.ignored).toBe(2)
  })
})
