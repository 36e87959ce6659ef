// `alttext audit` on EPUB books, run against the real service with the fake model:
// the spine's content documents, <img> and SVG <image> (named by <title>), the book's language and
// figure captions as context, the book's images uploaded; --fix writes a book that EPUBCheck accepts,
// with only the alt texts and the accessibility metadata changed and every other entry as it was, which
// the audit reads again; image pages in the spine are read through their fallback; --judge sends the
// book's own images and nothing from beside the book.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { unzipSync } from 'fflate'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { bookFiles, buildEpub, epubcheck, epubcheckInstalled, localEntries } from '../support/epub'
import { structuredJudge } from '../support/verdict-reply'
import { attr, audit, FIXTURE_SITE, MODEL, REPLIES, readJson, recordingProxy } from './audit-support'

let env: AltTextEnv
let client: Record<string, string>
let dir: string

beforeAll(async () => {
  env = await startAltTextEnv({ ollama: { ...MODEL, structured: structuredJudge } })
  client = { ALTTEXT_URL: env.service.url, ALTTEXT_API_KEY: env.key }
})
afterAll(() => env.stop())
beforeEach(() => {
  env.ollama.reset()
  dir = mkdtempSync(join(tmpdir(), 'alttext-audit-epub-'))
})

// The image requests: the fake's English answers to a French book are also sent back once, text only,
// for a translation (the language check), which these tests are not about.
const chats = () =>
  env.ollama.requests.filter(
    (request) => request.path === '/api/chat' && JSON.parse(request.rawBody).messages.some((m: { images?: unknown[] }) => (m.images?.length ?? 0) > 0),
  )
const promptOf = (request: { rawBody: string }) => JSON.parse(request.rawBody).messages.at(-1).content as string
const image = (name: string) => new Uint8Array(readFileSync(join(FIXTURE_SITE, 'img', name)))
const text = (bytes: Uint8Array | undefined) => new TextDecoder().decode(bytes)

const SVG_LOGO =
  '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="64" height="64" viewBox="0 0 64 64"><image width="64" height="64" xlink:href="images/logo.png"/></svg>'
const CHAPTER_ONE = `<section>
<h1>Chapitre un</h1>
<p>Le club se retrouve sur la plage du nord.</p>
<figure><img src="images/kite.jpg"/><figcaption>Nos plus jeunes membres lancent le cerf-volant.</figcaption></figure>
<p><img src="images/team.jpg"/></p>
<p>${SVG_LOGO}</p>
<p><img src="images/logo.png" alt="Le logo du club : un cerf-volant rouge au-dessus des vagues."/></p>
</section>`
const COVER = `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" version="1.1" width="320" height="200" viewBox="0 0 320 200"><title>kite.jpg</title><image width="320" height="200" xlink:href="images/kite.jpg"/></svg>
`
const SUMMARY = 'Every image in this publication has a text alternative.'
const IMAGES = () => ({ 'images/kite.jpg': image('kite.jpg'), 'images/team.jpg': image('team.jpg'), 'images/logo.png': image('logo.png') })

/** `original` with each [from, to] replaced once (each `from` must occur exactly once). */
function replaced(original: string, replacements: [string, string][]): string {
  let out = original
  for (const [from, to] of replacements) {
    expect(out.split(from)).toHaveLength(2)
    out = out.replace(from, to)
  }
  return out
}

describe('EPUB 3', () => {
  test('finds <img> and SVG images in the spine, asks in the book language with captions, and --fix writes a valid book', async () => {
    if (!epubcheckInstalled()) throw new Error('EPUBCheck is not installed (apt-get install epubcheck)')
    try {
      const files = bookFiles({
        language: 'fr',
        chapters: [
          { name: 'cover.svg', title: 'Couverture', type: 'svg', body: COVER },
          { name: 'ch1.xhtml', title: 'Chapitre un', properties: 'svg', lang: null, body: CHAPTER_ONE },
        ],
        images: IMAGES(),
      })
      const original = buildEpub(files)
      writeFileSync(join(dir, 'book.epub'), original)
      const before = epubcheck(join(dir, 'book.epub'))
      expect(before.output).toBe('')
      expect(before.ok).toBe(true)

      const res = await audit(['book.epub', '--fix', 'fixed', '--json', 'report.json'], client, dir)
      expect(res.stderr).toContain('4 done, 0 failed')
      expect(res.code).toBe(0)
      expect(res.stdout).toContain('fixed copies: fixed (4 attributes written)')

      const report = readJson(join(dir, 'report.json'))
      expect(report.pages.map((page: any) => [page.page, page.language, page.fixed_copy])).toEqual([
        ['book.epub!OEBPS/cover.svg', 'fr', join(dir, 'fixed', 'book.epub')],
        ['book.epub!OEBPS/ch1.xhtml', 'fr', join(dir, 'fixed', 'book.epub')],
      ])
      const rows = report.pages.flatMap((page: any) =>
        page.images.map((row: any) => [row.line, row.kind, row.src, row.attribute, row.alt, row.status, row.written]),
      )
      expect(rows).toEqual([
        [2, 'svg', 'images/kite.jpg', 'title', 'kite.jpg', 'poor', true],
        [12, 'img', 'images/kite.jpg', 'alt', null, 'missing', true],
        [13, 'img', 'images/team.jpg', 'alt', null, 'missing', true],
        [14, 'svg', 'images/logo.png', 'title', null, 'missing', true],
        [15, 'img', 'images/logo.png', 'alt', 'Le logo du club : un cerf-volant rouge au-dessus des vagues.', 'ok', null],
      ])
      // The book's images were uploaded (the model saw their sizes), in French, with the caption.
      expect(chats()).toHaveLength(4)
      expect(chats().every((request) => request.rawBody.includes('French'))).toBe(true)
      expect(
        chats()
          .map(promptOf)
          .some((p) => p.includes('Caption: Nos plus jeunes membres lancent le cerf-volant.')),
      ).toBe(true)

      const fixedPath = join(dir, 'fixed', 'book.epub')
      const fixed = new Uint8Array(readFileSync(fixedPath))
      const after = epubcheck(fixedPath)
      expect(after.output).toBe('')
      expect(after.ok).toBe(true)

      // mimetype first, stored, no extra field; the entries in the same order.
      const beforeEntries = localEntries(original)
      const afterEntries = localEntries(fixed)
      expect(afterEntries.map((entry) => entry.name)).toEqual(beforeEntries.map((entry) => entry.name))
      expect(afterEntries[0]).toMatchObject({ name: 'mimetype', method: 0, extra: 0 })
      expect(text(fixed.subarray(30, 58))).toBe('mimetypeapplication/epub+zip')
      // Every entry not changed: the same local header and compressed bytes.
      const changed = new Set(['OEBPS/cover.svg', 'OEBPS/ch1.xhtml', 'OEBPS/content.opf'])
      for (const [index, entry] of afterEntries.entries()) {
        if (!changed.has(entry.name)) expect(Buffer.from(entry.raw).equals(Buffer.from(beforeEntries[index]!.raw))).toBe(true)
      }

      // The changed documents: the original, with exactly the alt texts written.
      const unpacked = unzipSync(fixed)
      expect(text(unpacked['OEBPS/cover.svg'])).toBe(replaced(COVER, [['<title>kite.jpg</title>', `<title>${REPLIES[320]}</title>`]]))
      expect(text(unpacked['OEBPS/ch1.xhtml'])).toBe(
        replaced(text(files['OEBPS/ch1.xhtml']), [
          ['<img src="images/kite.jpg"/>', `<img alt=${attr(REPLIES[320]!)} src="images/kite.jpg"/>`],
          ['<img src="images/team.jpg"/>', `<img alt=${attr(REPLIES[360]!)} src="images/team.jpg"/>`],
          ['viewBox="0 0 64 64">', `viewBox="0 0 64 64"><title>${REPLIES[64]}</title>`],
        ]),
      )
      // Every image has a text alternative now: the package says so, and nothing else changed in it.
      const opf = text(unpacked['OEBPS/content.opf'])
      const metadata =
        '  <meta property="schema:accessibilityFeature">alternativeText</meta>\n' +
        '  <meta property="schema:accessibilitySummary">Every image in this publication has a text alternative.</meta>\n  '
      expect(opf).toBe(replaced(text(files['OEBPS/content.opf']), [['</metadata>', `${metadata}</metadata>`]]))
      // The original is untouched.
      expect(Buffer.from(readFileSync(join(dir, 'book.epub'))).equals(Buffer.from(original))).toBe(true)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})

describe('EPUB 2', () => {
  test('an EPUB 2 book gets the alt texts and EPUB 2 metadata (<meta name content>), and stays valid', async () => {
    if (!epubcheckInstalled()) throw new Error('EPUBCheck is not installed (apt-get install epubcheck)')
    try {
      const files = bookFiles({
        version: 2,
        // EPUB 2 content documents give their language as xml:lang only.
        chapters: [{ name: 'ch1.xhtml', title: 'Eins', lang: 'de', body: '<h1>Eins</h1>\n<p><img src="images/team.jpg" alt="IMG_2041.JPG"/></p>' }],
        images: { 'images/team.jpg': image('team.jpg') },
      })
      writeFileSync(join(dir, 'book.epub'), buildEpub(files))
      expect(epubcheck(join(dir, 'book.epub'))).toEqual({ ok: true, output: '' })

      const res = await audit(['book.epub', '--fix', 'fixed', '--json', 'report.json', '-q'], client, dir)
      expect(res.code).toBe(0)
      expect(readJson(join(dir, 'report.json')).pages[0].language).toBe('de')
      const after = epubcheck(join(dir, 'fixed', 'book.epub'))
      expect(after.output).toBe('')
      expect(after.ok).toBe(true)
      const unpacked = unzipSync(new Uint8Array(readFileSync(join(dir, 'fixed', 'book.epub'))))
      expect(text(unpacked['OEBPS/ch1.xhtml'])).toContain(`<img src="images/team.jpg" alt=${attr(REPLIES[360]!)}/>`)
      expect(text(unpacked['OEBPS/content.opf'])).toContain('<meta name="schema:accessibilityFeature" content="alternativeText"/>')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})

describe('EPUB accessibility metadata', () => {
  test('is not claimed while an image is left without a text alternative', async () => {
    try {
      const files = bookFiles({
        chapters: [{ name: 'ch1.xhtml', title: 'One', body: '<h1>One</h1>\n<p><img src="images/team.jpg"/></p>\n<p><img src="images/gone.png"/></p>' }],
        images: { 'images/team.jpg': image('team.jpg') },
      })
      writeFileSync(join(dir, 'book.epub'), buildEpub(files))
      const res = await audit(['book.epub', '--fix', 'fixed', '--json', 'report.json', '-q'], client, dir)
      expect(res.code).toBe(1) // the missing image is a failure
      const rows = readJson(join(dir, 'report.json')).pages[0].images
      expect(rows.map((row: any) => [row.src, row.written, row.error])).toEqual([
        ['images/team.jpg', true, null],
        ['images/gone.png', null, 'OEBPS/images/gone.png is not in the book'],
      ])
      const unpacked = unzipSync(new Uint8Array(readFileSync(join(dir, 'fixed', 'book.epub'))))
      expect(text(unpacked['OEBPS/ch1.xhtml'])).toContain(`<img alt=${attr(REPLIES[360]!)} src="images/team.jpg"/>`)
      expect(text(unpacked['OEBPS/content.opf'])).toBe(text(files['OEBPS/content.opf']))
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})

describe('books fixed by alttext', () => {
  const chapter = { name: 'ch1.xhtml', title: 'One', body: '<h1>One</h1>\n<p><img src="images/team.jpg"/></p>' }

  /** Writes the books into books/, valid; runs --fix; checks the fixed copies with EPUBCheck; gives each one's package document. */
  async function fixBooks(books: Record<string, Record<string, Uint8Array>>): Promise<Record<string, string>> {
    if (!epubcheckInstalled()) throw new Error('EPUBCheck is not installed (apt-get install epubcheck)')
    mkdirSync(join(dir, 'books'))
    for (const [name, files] of Object.entries(books)) {
      writeFileSync(join(dir, 'books', name), buildEpub(files))
      expect(epubcheck(join(dir, 'books', name))).toEqual({ ok: true, output: '' })
    }
    const fix = await audit(['books', '--fix', 'fixed', '-q'], client, dir)
    expect(fix.code).toBe(0)
    const count = Object.keys(books).length
    expect(fix.stdout).toContain(`fixed copies: fixed (${count} ${count === 1 ? 'attribute' : 'attributes'} written)`)
    const packages: Record<string, string> = {}
    for (const name of Object.keys(books)) {
      const after = epubcheck(join(dir, 'fixed', name))
      expect(after.output).toBe('')
      expect(after.ok).toBe(true)
      packages[name] = text(unzipSync(new Uint8Array(readFileSync(join(dir, 'fixed', name))))['OEBPS/content.opf'])
    }
    return packages
  }

  /** The gate on the fixed books: each document's error and image statuses, and the exit code. */
  async function checkFixed() {
    const check = await audit(['fixed', '--check', '--json', 'check.json'], {}, dir)
    const pages = readJson(join(dir, 'check.json')).pages
    return { code: check.code, pages: pages.map((page: any) => [page.page, page.error, page.images.map((row: any) => row.status)]) }
  }

  test('audit, --fix, audit again: the fixed books (with their accessibility metadata) are read and pass --check', async () => {
    try {
      const packages = await fixBooks({
        'three.epub': bookFiles({ chapters: [chapter], images: { 'images/team.jpg': image('team.jpg') } }),
        // EPUB 2's XHTML needs an alt attribute: a poor one, to be replaced.
        // Declared already (as a fixed book does): read, and not declared twice.
        'declared.epub': bookFiles({
          chapters: [chapter],
          images: { 'images/team.jpg': image('team.jpg') },
          metadata: `<meta property="schema:accessibilityFeature">alternativeText</meta>\n    <meta property="schema:accessibilitySummary">${SUMMARY}</meta>`,
        }),
        'two.epub': bookFiles({
          version: 2,
          chapters: [{ ...chapter, body: '<h1>One</h1>\n<p><img src="images/team.jpg" alt="IMG_2041.JPG"/></p>' }],
          images: { 'images/team.jpg': image('team.jpg') },
        }),
      })
      expect(packages['three.epub']).toContain('<meta property="schema:accessibilityFeature">alternativeText</meta>')
      expect(packages['two.epub']).toContain('<meta name="schema:accessibilityFeature" content="alternativeText"/>')
      expect(packages['declared.epub']!.split('schema:accessibilityFeature')).toHaveLength(2)
      expect(packages['declared.epub']!.split('schema:accessibilitySummary')).toHaveLength(2)
      expect(await checkFixed()).toEqual({
        code: 0,
        pages: [
          ['fixed/declared.epub!OEBPS/ch1.xhtml', null, ['ok']],
          ['fixed/three.epub!OEBPS/ch1.xhtml', null, ['ok']],
          ['fixed/two.epub!OEBPS/ch1.xhtml', null, ['ok']],
        ],
      })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)

  test('a package in the opf: prefix (no default namespace) gets its metadata as <opf:meta>, and stays valid', async () => {
    try {
      const packages = await fixBooks({
        'prefixed.epub': bookFiles({ chapters: [chapter], images: { 'images/team.jpg': image('team.jpg') }, prefixed: true }),
      })
      expect(packages['prefixed.epub']).toContain(
        '  <opf:meta property="schema:accessibilityFeature">alternativeText</opf:meta>\n' +
          '  <opf:meta property="schema:accessibilitySummary">Every image in this publication has a text alternative.</opf:meta>\n  </opf:metadata>',
      )
      expect(await checkFixed()).toEqual({ code: 0, pages: [['fixed/prefixed.epub!OEBPS/ch1.xhtml', null, ['ok']]] })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})

describe('image pages', () => {
  test('an image in the spine is audited through its fallback XHTML page, and --fix writes a valid fixed copy', async () => {
    if (!epubcheckInstalled()) throw new Error('EPUBCheck is not installed (apt-get install epubcheck)')
    try {
      // A picture book: the pages in the spine are JPEGs, each falling back to an XHTML page wrapping it.
      const pages = ['kite.jpg', 'team.jpg'].map((name, index) => ({
        name: `page-${index + 1}.xhtml`,
        title: `Page ${index + 1}`,
        body: `<p><img src="images/${name}"/></p>`,
        fallbackFor: `images/${name}`,
      }))
      const files = bookFiles({ chapters: pages, images: { 'images/kite.jpg': image('kite.jpg'), 'images/team.jpg': image('team.jpg') } })
      expect(text(files['OEBPS/content.opf'])).toContain('<itemref idref="i0"/>')
      writeFileSync(join(dir, 'book.epub'), buildEpub(files))
      expect(epubcheck(join(dir, 'book.epub'))).toEqual({ ok: true, output: '' })

      const res = await audit(['book.epub', '--fix', 'fixed', '--json', 'report.json', '-q'], client, dir)
      expect(res.code).toBe(0)
      const report = readJson(join(dir, 'report.json'))
      expect(report.totals).toMatchObject({ images: 2, missing: 2, written: 2 })
      expect(report.pages.map((page: any) => [page.page, page.fixed_copy])).toEqual([
        ['book.epub!OEBPS/page-1.xhtml', join(dir, 'fixed', 'book.epub')],
        ['book.epub!OEBPS/page-2.xhtml', join(dir, 'fixed', 'book.epub')],
      ])
      const after = epubcheck(join(dir, 'fixed', 'book.epub'))
      expect(after.output).toBe('')
      expect(after.ok).toBe(true)
      const unpacked = unzipSync(new Uint8Array(readFileSync(join(dir, 'fixed', 'book.epub'))))
      expect(text(unpacked['OEBPS/page-1.xhtml'])).toContain(`<img alt=${attr(REPLIES[320]!)} src="images/kite.jpg"/>`)
      expect(text(unpacked['OEBPS/page-2.xhtml'])).toContain(`<img alt=${attr(REPLIES[360]!)} src="images/team.jpg"/>`)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})

describe('image pages without a fallback', () => {
  test('an image in the spine with no content document to fall back to is counted where the spine lists it; --fix writes the rest', async () => {
    try {
      const files = bookFiles({
        chapters: [{ name: 'ch1.xhtml', title: 'One', body: '<p><img src="images/team.jpg"/></p>' }],
        images: { 'images/team.jpg': image('team.jpg'), 'images/kite.jpg': image('kite.jpg') },
      })
      // Not a valid book (EPUBCheck: OPF-043), but one that is made: the JPEG is a page of its own.
      const opf = replaced(text(files['OEBPS/content.opf']), [['<itemref idref="c0"/>', '<itemref idref="c0"/>\n    <itemref idref="i1"/>']])
      files['OEBPS/content.opf'] = new TextEncoder().encode(opf)
      writeFileSync(join(dir, 'book.epub'), buildEpub(files))
      const res = await audit(['book.epub', '--fix', 'fixed', '--json', 'report.json', '-q'], client, dir)
      expect(res.code).toBe(0)
      const report = readJson(join(dir, 'report.json'))
      const line = opf.split('\n').findIndex((row) => row.includes('<itemref idref="i1"/>')) + 1
      expect(
        report.pages.map((page: any) => [page.page, page.images.map((row: any) => [row.line, row.src, row.status, row.suggestion?.alt ?? null, row.written])]),
      ).toEqual([
        ['book.epub!OEBPS/ch1.xhtml', [[9, 'images/team.jpg', 'missing', REPLIES[360], true]]],
        // Its alt text is suggested (the image was sent from the book), but the book has no place for it.
        ['book.epub!OEBPS/content.opf', [[line, 'images/kite.jpg', 'missing', REPLIES[320], false]]],
      ])
      const unpacked = unzipSync(new Uint8Array(readFileSync(join(dir, 'fixed', 'book.epub'))))
      expect(text(unpacked['OEBPS/ch1.xhtml'])).toContain(`<img alt=${attr(REPLIES[360]!)} src="images/team.jpg"/>`)
      // An image is left without a text alternative: the package claims nothing.
      expect(text(unpacked['OEBPS/content.opf'])).toBe(opf)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})

describe('--judge on a book', () => {
  test('sends the book’s own images, and never a file beside the book', async () => {
    const proxy = recordingProxy(env.service.url)
    try {
      const secret = new TextEncoder().encode('TOP SECRET: the club’s bank details')
      writeFileSync(join(dir, 'secret.txt'), secret)
      const files = bookFiles({
        chapters: [
          {
            name: 'ch1.xhtml',
            title: 'One',
            body: '<p><img src="images/team.jpg" alt="The club members line up with their kites."/></p>\n<p><img src="/secret.txt" alt="A red kite above the waves."/></p>',
          },
        ],
        images: { 'images/team.jpg': image('team.jpg') },
      })
      writeFileSync(join(dir, 'book.epub'), buildEpub(files))
      const res = await audit(['book.epub', '--judge', '--json', 'report.json', '-q'], { ...client, ALTTEXT_URL: proxy.url }, dir)
      const rows = readJson(join(dir, 'report.json')).pages[0].images
      // The book's image was judged (uploaded from the book); /secret.txt is no entry of the book: not sent.
      expect(rows.map((row: any) => [row.src, row.verdict?.verdict ?? null, row.error])).toEqual([
        ['images/team.jpg', 'ok', null],
        ['/secret.txt', null, null],
      ])
      expect(proxy.sent(image('team.jpg'))).toBe(true)
      expect(proxy.sent(secret)).toBe(false)
      expect(res.code).toBe(0)
    } finally {
      proxy.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})
