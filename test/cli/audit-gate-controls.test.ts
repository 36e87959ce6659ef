// The gate's controls a team lives with: --exclude, the ignore markers (data-alttext-ignore, the
// <!-- alttext-ignore --> comment, in HTML, Markdown and books), --write-baseline then --baseline (the
// accepted findings pass, a new one or one whose image changed fails), and "not checked" images that
// fail nothing by themselves. The real CLI in-process; the one run that sends uses the real service.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { zipSync } from 'fflate'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { audit, MODEL, pageServer, readJson, siteCopy } from './audit-support'

let env: AltTextEnv
beforeAll(async () => {
  env = await startAltTextEnv({ ollama: MODEL })
})
afterAll(() => env.stop())

const page = (body: string) => `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>T</title></head><body>\n${body}\n</body></html>\n`
const lastLine = (text: string) => text.trimEnd().split('\n').at(-1)

/** A small EPUB 3 book (mimetype first and stored) with these chapter bodies, its pictures the fixture logo. */
function book(chapters: string[]): Uint8Array {
  const encode = (text: string) => new TextEncoder().encode(text)
  const logo = new Uint8Array(readFileSync(join(import.meta.dir, '..', 'fixtures', 'site', 'img', 'logo.png')))
  const files: Record<string, Uint8Array | [Uint8Array, { level: 0 }]> = {
    mimetype: [encode('application/epub+zip'), { level: 0 }],
    'META-INF/container.xml': encode(
      '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>',
    ),
    'OEBPS/content.opf': encode(
      `<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="id">x</dc:identifier><dc:title>B</dc:title><dc:language>en</dc:language></metadata><manifest>${chapters.map((_, index) => `<item id="c${index}" href="ch${index + 1}.xhtml" media-type="application/xhtml+xml"/>`).join('')}<item id="logo" href="logo.png" media-type="image/png"/></manifest><spine>${chapters.map((_, index) => `<itemref idref="c${index}"/>`).join('')}</spine></package>`,
    ),
    'OEBPS/logo.png': logo,
  }
  for (const [index, body] of chapters.entries()) {
    files[`OEBPS/ch${index + 1}.xhtml`] = encode(
      `<?xml version="1.0" encoding="UTF-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml" lang="en"><head><title>C</title></head><body>\n${body}\n</body></html>\n`,
    )
  }
  return zipSync(files)
}

describe('--exclude', () => {
  test('files by their path from the working directory or from the folder given; book documents by book.epub!inner; not audited, counted', async () => {
    const copy = siteCopy()
    try {
      mkdirSync(join(copy.site, 'vendor'), { recursive: true })
      writeFileSync(join(copy.site, 'vendor', 'widget.html'), page('<img src="w.png">'))
      writeFileSync(join(copy.dir, 'book.epub'), book(['<img src="logo.png"/>', '<p>Legal</p><img src="logo.png"/>']))
      const all = await audit(['--check', '-q', 'site', 'book.epub', '--json', 'all.json'], {}, copy.dir)
      expect(all.code).toBe(1)
      expect(readJson(join(copy.dir, 'all.json')).totals).toMatchObject({ pages: 6, missing: 9, excluded: 0 })

      // From the working directory, from the folder given (site/), and a book's content document.
      for (const glob of ['site/vendor/**', 'vendor/*.html']) {
        const res = await audit(
          ['--check', '-q', 'site', 'book.epub', '--exclude', glob, '--exclude', 'book.epub!OEBPS/ch2.xhtml', '--json', 'r.json'],
          {},
          copy.dir,
        )
        expect(res.code).toBe(1)
        const report = readJson(join(copy.dir, 'r.json'))
        expect(report.pages.map((entry: any) => entry.page)).toEqual(['site/about.html', 'site/blog/post.html', 'site/index.html', 'book.epub!OEBPS/ch1.xhtml'])
        expect(report.totals).toMatchObject({ pages: 4, missing: 7, excluded: 2 })
        expect(res.stdout).toContain('; 2 documents excluded')
      }
      // A whole book; everything excluded is a usage error, not a pass.
      const noBook = await audit(['--check', '-q', 'site/index.html', 'book.epub', '--exclude', '*.epub', '--json', 'b.json'], {}, copy.dir)
      expect(readJson(join(copy.dir, 'b.json')).pages.map((entry: any) => entry.page)).toEqual(['site/index.html'])
      expect(noBook.code).toBe(1)
      const nothing = await audit(['--check', 'site', '--exclude', '**'], {}, copy.dir)
      expect(nothing.code).toBe(2)
      expect(nothing.stderr).toContain('--exclude left nothing to audit of site')
    } finally {
      copy.cleanup()
    }
  })

  test('page URLs by their path: an excluded start page is not fetched, an excluded link not followed', async () => {
    const server = pageServer({
      '/': page('<a href="/blog/one.html">one</a> <a href="/legacy/old.html">old</a> <img src="/a.png" alt="IMG_1.png">'),
      '/blog/one.html': page('<img src="/b.png">'),
      '/legacy/old.html': page('<img src="/c.png">'),
      '/legacy/start.html': page('<img src="/d.png">'),
    })
    const copy = siteCopy()
    try {
      const res = await audit(
        ['--check', '-q', `${server.url}/`, `${server.url}/legacy/start.html`, '--crawl', '1', '--exclude', '/legacy/**', '--json', 'r.json'],
        {},
        copy.dir,
      )
      expect(res.code).toBe(1)
      expect(readJson(join(copy.dir, 'r.json')).pages.map((entry: any) => entry.page)).toEqual([`${server.url}/`, `${server.url}/blog/one.html`])
      expect(server.hits('/legacy/old.html')).toBe(0)
      expect(server.hits('/legacy/start.html')).toBe(0)
      // Without the leading "/" too.
      await audit(['--check', '-q', `${server.url}/`, '--crawl', '1', '--exclude', 'legacy/*'], {}, copy.dir)
      expect(server.hits('/legacy/old.html')).toBe(0)
      expect(server.hits('/blog/one.html')).toBe(2)
    } finally {
      server.stop()
      copy.cleanup()
    }
  })
})

describe('ignore markers', () => {
  test('HTML: data-alttext-ignore on the image or around it, and the comment before the next image only (tags between, no words)', async () => {
    const copy = siteCopy()
    try {
      writeFileSync(
        join(copy.dir, 'p.html'),
        page(
          [
            '<img src="logo.svg" data-alttext-ignore>',
            '<div data-alttext-ignore="third-party widget"><p>Ad</p><img src="ad1.png"><span><img src="ad2.png"></span></div>',
            '<img src="after-div.png">',
            '<!-- alttext-ignore -->',
            '<a href="/"><img src="home.png"></a>',
            '<img src="next-one.png">',
            '<!-- alttext-ignore: a chart described below -->  <figure><img src="chart.png"></figure>',
            '<!-- alttext-ignore --><p>Some words</p><img src="after-words.png">',
          ].join('\n'),
        ),
      )
      const res = await audit(['--check', 'p.html', '--json', 'p.json', '--sarif', 'p.sarif'], {}, copy.dir)
      expect(res.code).toBe(1)
      const report = readJson(join(copy.dir, 'p.json'))
      expect(report.pages[0].images.map((image: any) => image.src)).toEqual(['after-div.png', 'next-one.png', 'after-words.png'])
      expect(report.pages[0].ignored).toBe(5)
      expect(report.totals).toMatchObject({ images: 3, ignored: 5, missing: 3 })
      expect(res.stdout).toContain('1 page, 3 images: 3 need alt text (3 missing, 0 empty, 0 poor), 0 good, 0 decorative, 5 ignored')
      expect(lastLine(res.stdout)).toBe('check failed: 3 images need alt text or fixing; 3 images not checked (listed); 5 ignored')
      expect(readJson(join(copy.dir, 'p.sarif')).runs[0].results.map((result: any) => result.message.text.split('.png')[0])).toEqual([
        'The image after-div',
        'The image next-one',
        'The image after-words',
      ])
      // Everything ignored: the gate passes, and says what it skipped.
      writeFileSync(join(copy.dir, 'q.html'), page('<div data-alttext-ignore><img src="a.png"><img src="b.png"></div>'))
      const pass = await audit(['--check', 'q.html'], {}, copy.dir)
      expect(pass.code).toBe(0)
      expect(lastLine(pass.stdout)).toBe('check passed: no image needs alt text (0 images on 1 page); 2 ignored')
    } finally {
      copy.cleanup()
    }
  })

  test('Markdown: the HTML comment before an image (block or inline), data-alttext-ignore on an HTML <img>; books: their content documents', async () => {
    const copy = siteCopy()
    try {
      writeFileSync(
        join(copy.dir, 'a.md'),
        [
          '# Title',
          '',
          '<!-- alttext-ignore -->',
          '![](logo.svg)',
          '',
          'Text <!-- alttext-ignore --> [![](badge.svg)](https://ci.example/) and ![](counted.png)',
          '',
          '<img src="html.png" data-alttext-ignore>',
          '',
          '<!-- alttext-ignore -->',
          '',
          'Words first, then ![](also-counted.png)',
          '',
        ].join('\n'),
      )
      writeFileSync(
        join(copy.dir, 'b.epub'),
        book(['<!-- alttext-ignore -->\n<img src="logo.png"/>\n<img src="logo.png"/>', '<div data-alttext-ignore=""><img src="logo.png"/></div>']),
      )
      const res = await audit(['--check', '-q', 'a.md', 'b.epub', '--json', 'r.json'], {}, copy.dir)
      expect(res.code).toBe(1)
      const report = readJson(join(copy.dir, 'r.json'))
      expect(report.pages.map((entry: any) => [entry.page, entry.ignored, entry.images.map((image: any) => [image.src, image.line])])).toEqual([
        [
          'a.md',
          3,
          [
            ['counted.png', 6],
            ['also-counted.png', 12],
          ],
        ],
        ['b.epub!OEBPS/ch1.xhtml', 1, [['logo.png', 5]]],
        ['b.epub!OEBPS/ch2.xhtml', 1, []],
      ])
      expect(report.totals).toMatchObject({ ignored: 5, images: 3 })
    } finally {
      copy.cleanup()
    }
  })
})

describe('--baseline', () => {
  test('--write-baseline then --baseline passes; a new finding fails; moved lines change nothing; an edited image counts as new', async () => {
    const copy = siteCopy()
    try {
      const write = await audit(['--check', 'site', '--write-baseline', '.alttext-baseline.json'], {}, copy.dir)
      // Writing the baseline accepts what it found: that run passes.
      expect(write.code).toBe(0)
      expect(write.stdout).toContain('baseline: .alttext-baseline.json (10 findings accepted; commit it)')
      const file = readFileSync(join(copy.dir, '.alttext-baseline.json'), 'utf8')
      const baseline = JSON.parse(file)
      expect(baseline).toMatchObject({ version: 1, tool: 'alttext' })
      expect(baseline.findings).toHaveLength(10)
      expect(baseline.findings[0]).toEqual({
        fingerprint: expect.stringMatching(/^[0-9a-f]{32}$/),
        document: 'site/about.html',
        rule: 'alt-missing',
        src: 'img/logo.png',
        alt: null,
      })
      // No line in it: lines moving does not churn it.
      expect(file).not.toContain('"line"')

      const again = await audit(['--check', 'site', '--baseline', '.alttext-baseline.json', '--sarif', 'a.sarif', '--json', 'a.json'], {}, copy.dir)
      expect(again.code).toBe(0)
      expect(lastLine(again.stdout)).toBe('check passed: no new image needs alt text (14 images on 3 pages); 10 accepted by the baseline')
      expect(again.stdout).not.toContain('missing: no alt attribute')
      expect(readJson(join(copy.dir, 'a.json')).baseline).toEqual({ file: '.alttext-baseline.json', accepted: 10, new: 0, stale: 0 })
      const results = readJson(join(copy.dir, 'a.sarif')).runs[0].results
      expect(results.map((result: any) => result.baselineState)).toEqual(Array(10).fill('unchanged'))
      expect(results.map((result: any) => result.partialFingerprints['alttextFinding/v1']).sort()).toEqual(
        baseline.findings.map((entry: any) => entry.fingerprint).sort(),
      )

      // Lines added above: the baseline written again is the same file, byte for byte.
      const index = join(copy.site, 'index.html')
      writeFileSync(index, `<!-- a -->\n<!-- b -->\n${readFileSync(index, 'utf8')}`)
      await audit(['--check', '-q', 'site', '--write-baseline', 'moved.json'], {}, copy.dir)
      expect(readFileSync(join(copy.dir, 'moved.json'), 'utf8')).toBe(file)

      // A new image without alt fails, and only it is listed.
      writeFileSync(join(copy.site, 'new.html'), page('<img src="img/kite.jpg">'))
      const fresh = await audit(['--check', 'site', '--baseline', '.alttext-baseline.json', '--sarif', 'n.sarif'], {}, copy.dir)
      expect(fresh.code).toBe(1)
      expect(fresh.stdout).toContain('site/new.html:3:1: missing: no alt attribute (img/kite.jpg)')
      expect(fresh.stdout).not.toContain('site/index.html:')
      expect(lastLine(fresh.stdout)).toBe('check failed: 1 new image needs alt text or fixing; 10 accepted by the baseline')
      const newResults = readJson(join(copy.dir, 'n.sarif')).runs[0].results
      expect(newResults.filter((result: any) => result.baselineState === 'new')).toHaveLength(1)

      // The logo's file changed (other bytes, same name): its findings are new; the old entries are stale.
      writeFileSync(join(copy.site, 'new.html'), page('<img src="img/kite.jpg" alt="Two children launch a red kite on a windy beach.">'))
      copyFileSync(join(copy.site, 'img', 'team.jpg'), join(copy.site, 'img', 'logo.png'))
      const edited = await audit(['--check', 'site', '--baseline', '.alttext-baseline.json'], {}, copy.dir)
      expect(edited.code).toBe(1)
      expect(edited.stdout).toContain('site/index.html:11:15: missing: no alt attribute (img/logo.png)')
      const logoFindings = baseline.findings.filter((entry: any) => entry.src === 'img/logo.png').length
      expect(lastLine(edited.stdout)).toBe(
        `check failed: ${logoFindings} new images need alt text or fixing; ${10 - logoFindings} accepted by the baseline; ${logoFindings} baseline entries no longer found (fixed or changed)`,
      )
    } finally {
      copy.cleanup()
    }
  })
})

describe('not checked', () => {
  test('--check: an image to describe whose file is missing, or whose address is a template tag, is listed as not checked; the lint of its alt still counts', async () => {
    const copy = siteCopy()
    try {
      writeFileSync(
        join(copy.dir, 'p.html'),
        page('<img src="gone.png" alt="IMG_0001.JPG">\n<img src="{{ site.logo }}">\n<img src="also-gone.png" alt="A good alt text.">'),
      )
      const res = await audit(['--check', 'p.html', '--json', 'p.json', '--csv', 'p.csv', '--sarif', 'p.sarif'], {}, copy.dir)
      expect(res.code).toBe(1)
      expect(res.stdout).toContain('p.html:3:1: poor: looks like a file name (gone.png)')
      expect(res.stdout).toContain('p.html:3:1: not checked: gone.png does not exist (gone.png)')
      expect(res.stdout).toMatch(/p\.html:4:1: not checked: not checkable by the model: the address is a template tag \(\{\{ site\.logo \}\}\)/)
      // A good alt needs no picture: its file is not looked for.
      expect(res.stdout).not.toContain('also-gone.png')
      expect(lastLine(res.stdout)).toBe('check failed: 2 images need alt text or fixing; 2 images not checked (listed)')
      expect(readJson(join(copy.dir, 'p.json')).totals).toMatchObject({ not_checked: 2, failed: 0, needing_alt: 2 })
      expect(readFileSync(join(copy.dir, 'p.csv'), 'utf8').split('\r\n')[0]).toEndWith(',not_checked')
      const run = readJson(join(copy.dir, 'p.sarif')).runs[0]
      expect(run.results.map((result: any) => result.message.text)).toEqual([
        'The image gone.png has a poor alt "IMG_0001.JPG": looks like a file name. The image itself was not checked: gone.png does not exist.',
        expect.stringMatching(/^The image \{\{ site\.logo \}\} has no alt\. The image itself was not checked: not checkable by the model/),
      ])
      expect(run.invocations[0].executionSuccessful).toBe(true)
    } finally {
      copy.cleanup()
    }
  })

  test('a run with the service: an image it cannot read is not checked, and the run does not fail on it', async () => {
    const copy = siteCopy()
    try {
      // Bytes that are no image: the service answers invalid_image.
      writeFileSync(join(copy.dir, 'broken.png'), 'not an image at all')
      writeFileSync(join(copy.dir, 'p.html'), page('<img src="broken.png">\n<img src="site/img/kite.jpg">'))
      const res = await audit(['p.html', '-q', '--json', 'p.json', '-o', 'p-report.html'], { ALTTEXT_URL: env.service.url, ALTTEXT_API_KEY: env.key }, copy.dir)
      const report = readJson(join(copy.dir, 'p.json'))
      const [broken, kite] = report.pages[0].images
      expect(broken.not_checked).toMatch(/^the service could not read it \(invalid_image: /)
      expect(kite.not_checked).toBeNull()
      expect(kite.suggestion.alt).toBe('Two children launch a red kite on a windy beach.')
      expect(report.totals).toMatchObject({ not_checked: 1, failed: 0, suggested: 1 })
      expect(res.code).toBe(0)
      expect(res.stdout).toContain('; 1 not checked')
    } finally {
      copy.cleanup()
    }
  })
})
