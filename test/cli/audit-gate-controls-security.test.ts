// The gate's controls cannot be turned against the run: a baseline names documents, but nothing is
// read because of it; an exclude glob only takes documents out; an ignore marker in one document (an
// unclosed container, a comment at its end) hides nothing in the next page, chapter or Markdown block,
// and text that only looks like the comment (in a script, in an attribute) skips nothing;
// --write-baseline does not write through a symbolic link.
import { describe, expect, test } from 'bun:test'
import { lstatSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { zipSync } from 'fflate'
import { scanHtml } from '../../src/cli/audit/scan'
import { audit, readJson, siteCopy } from './audit-support'

const page = (body: string) => `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>T</title></head><body>\n${body}\n</body></html>\n`
const srcs = (html: string) => scanHtml(new TextEncoder().encode(html), 'alttext-test-token', { context: false }).images.map((image) => image.src)

describe('ignore markers stay in their document', () => {
  test('an unclosed data-alttext-ignore container and a trailing comment in one page hide nothing in the next', async () => {
    const copy = siteCopy()
    try {
      writeFileSync(join(copy.dir, 'a.html'), '<div data-alttext-ignore><img src="a1.png">\n<!-- alttext-ignore -->')
      writeFileSync(join(copy.dir, 'b.html'), page('<img src="b1.png">\n<img src="b2.png">'))
      const res = await audit(['--check', '-q', 'a.html', 'b.html', '--json', 'r.json'], {}, copy.dir)
      expect(res.code).toBe(1)
      const report = readJson(join(copy.dir, 'r.json'))
      expect(report.pages.map((entry: any) => [entry.page, entry.ignored, entry.images.map((image: any) => image.src)])).toEqual([
        ['a.html', 1, []],
        ['b.html', 0, ['b1.png', 'b2.png']],
      ])
    } finally {
      copy.cleanup()
    }
  })

  test("a book's chapter and a Markdown HTML block: the container ends with them", async () => {
    const copy = siteCopy()
    try {
      const encode = (text: string) => new TextEncoder().encode(text)
      const chapter = (body: string) =>
        encode(
          `<?xml version="1.0" encoding="UTF-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml" lang="en"><head><title>C</title></head><body>\n${body}\n</body></html>\n`,
        )
      writeFileSync(
        join(copy.dir, 'b.epub'),
        zipSync({
          mimetype: [encode('application/epub+zip'), { level: 0 }],
          'META-INF/container.xml': encode(
            '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>',
          ),
          'content.opf': encode(
            '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="id">x</dc:identifier><dc:title>B</dc:title><dc:language>en</dc:language></metadata><manifest><item id="a" href="a.xhtml" media-type="application/xhtml+xml"/><item id="b" href="b.xhtml" media-type="application/xhtml+xml"/></manifest><spine><itemref idref="a"/><itemref idref="b"/></spine></package>',
          ),
          // Not well-formed on purpose: the container never closes, and a comment ends the chapter.
          'a.xhtml': encode('<html><body><div data-alttext-ignore=""><img src="a.png"/><!-- alttext-ignore -->'),
          'b.xhtml': chapter('<img src="b.png"/>'),
        }),
      )
      writeFileSync(join(copy.dir, 'a.md'), '<div data-alttext-ignore>\n<img src="in-block.png">\n\n![](after-block.png)\n')
      const res = await audit(['--check', '-q', 'b.epub', 'a.md', '--json', 'r.json'], {}, copy.dir)
      expect(res.code).toBe(1)
      const report = readJson(join(copy.dir, 'r.json'))
      expect(report.pages.map((entry: any) => [entry.page, entry.images.map((image: any) => image.src)])).toEqual([
        ['b.epub!a.xhtml', []],
        ['b.epub!b.xhtml', ['b.png']],
        ['a.md', ['after-block.png']],
      ])
    } finally {
      copy.cleanup()
    }
  })

  test('text that only looks like the comment skips nothing: in a script, a style, an attribute, a textarea, or with words between', () => {
    expect(srcs('<script>document.write("<!-- alttext-ignore -->")</script><img src="a.png">')).toEqual(['a.png'])
    expect(srcs('<style>/* <!-- alttext-ignore --> */</style><img src="a.png">')).toEqual(['a.png'])
    expect(srcs('<p title="<!-- alttext-ignore -->"></p><img src="a.png">')).toEqual(['a.png'])
    expect(srcs('<textarea><!-- alttext-ignore --></textarea><img src="a.png">')).toEqual(['a.png'])
    expect(srcs('<!-- alttext-ignore --> Our logo: <img src="a.png">')).toEqual(['a.png'])
    expect(srcs('<!-- alttext-ignore-everything --><img src="a.png">')).toEqual(['a.png'])
    // The comment is used once: the image after the skipped one is audited.
    expect(srcs('<!-- alttext-ignore --><img src="a.png"><img src="b.png">')).toEqual(['b.png'])
    // The attribute's own data-* neighbours do not count.
    expect(srcs('<img src="a.png" data-alttext-ignored><img src="b.png" data-alttext>')).toEqual(['a.png', 'b.png'])
  })
})

describe('the baseline and exclude globs read nothing', () => {
  test("a baseline's document names are never opened or shown; an exclude glob aimed outside changes nothing", async () => {
    const copy = siteCopy()
    const outside = mkdtempSync(join(tmpdir(), 'alttext-outside-'))
    try {
      const secret = join(outside, 'secret.html')
      writeFileSync(secret, page('<img src="secret-kite.png">'))
      writeFileSync(
        join(copy.dir, 'b.json'),
        JSON.stringify({
          version: 1,
          tool: 'alttext',
          findings: [
            { fingerprint: 'a'.repeat(32), document: secret, rule: 'alt-missing', src: '../../etc/passwd', alt: null },
            { fingerprint: 'b'.repeat(32), document: '../../../../etc/passwd', rule: 'alt-missing', src: null, alt: null },
          ],
        }),
      )
      const res = await audit(
        ['--check', 'site', '--baseline', 'b.json', '--json', 'r.json', '--sarif', 'r.sarif', '--exclude', '../**', '--exclude', `${outside}/**`],
        {},
        copy.dir,
      )
      expect(res.code).toBe(1)
      const outputs = [res.stdout, res.stderr, readFileSync(join(copy.dir, 'r.json'), 'utf8'), readFileSync(join(copy.dir, 'r.sarif'), 'utf8')].join('\n')
      expect(outputs).not.toContain('secret')
      expect(outputs).not.toContain('passwd')
      const report = readJson(join(copy.dir, 'r.json'))
      // Entries of documents this run did not read are not "fixed".
      expect(report.baseline).toEqual({ file: 'b.json', accepted: 0, new: 10, stale: 0 })
      expect(report.totals).toMatchObject({ pages: 3, excluded: 0 })
    } finally {
      copy.cleanup()
      rmSync(outside, { recursive: true, force: true })
    }
  })

  test('--write-baseline does not write through a symbolic link', async () => {
    const copy = siteCopy()
    const outside = mkdtempSync(join(tmpdir(), 'alttext-outside-'))
    try {
      const target = join(outside, 'victim.txt')
      writeFileSync(target, 'keep me')
      symlinkSync(target, join(copy.dir, 'baseline.json'))
      const res = await audit(['--check', '-q', 'site', '--write-baseline', 'baseline.json'], {}, copy.dir)
      expect(res.code).toBe(1)
      expect(res.stderr).toContain('--write-baseline baseline.json: baseline.json is a symbolic link: not followed')
      expect(readFileSync(target, 'utf8')).toBe('keep me')
      expect(lstatSync(join(copy.dir, 'baseline.json')).isSymbolicLink()).toBe(true)
    } finally {
      copy.cleanup()
      rmSync(outside, { recursive: true, force: true })
    }
  })
})
