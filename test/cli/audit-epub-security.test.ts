// `alttext audit` and hostile books: a broken ZIP, zip bombs (huge declared sizes, sizes that lie,
// too many entries, overlapping entries, too much inflated in all), entry names that leave the book, and
// XML entities are each refused or left unexpanded with a clear message in the report, never a crash or
// unbounded memory; an entry many images use is inflated once.
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { deflateSync, zipSync } from 'fflate'
import { epub } from '../../src/cli/audit/formats/epub'
import { loadFile } from '../../src/cli/audit/pages'
import { bookEntries, bookFiles, buildEpub, deflatedEntry, localEntries, zipOf } from '../support/epub'
import { audit, readJson } from './audit-support'

let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'alttext-audit-epub-sec-'))
  mkdirSync(join(dir, 'books'))
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

const CHAPTER = { name: 'ch1.xhtml', title: 'One', body: '<h1>One</h1>\n<p><img src="images/a.png"/></p>' }
const text = (bytes: Uint8Array | undefined) => new TextDecoder().decode(bytes)
const book = (extra: Record<string, Uint8Array> = {}) => ({ ...bookFiles({ chapters: [CHAPTER] }), ...extra })

/** Sets a 32-bit field of the central directory record of `name` (20: compressed size, 24: size). */
function patchCentral(zip: Uint8Array, name: string, field: number, value: number): Uint8Array {
  const out = zip.slice()
  const view = new DataView(out.buffer)
  const encoded = new TextEncoder().encode(name)
  for (let at = 0; at + 46 < out.length; at++) {
    if (view.getUint32(at, true) !== 0x02014b50 || view.getUint16(at + 28, true) !== encoded.length) continue
    if (Buffer.from(out.subarray(at + 46, at + 46 + encoded.length)).equals(Buffer.from(encoded))) {
      view.setUint32(at + field, value, true)
      return out
    }
  }
  throw new Error(`no central record for ${name}`)
}

/** Runs a dry audit of books/ and gives each book's error (by file name) and the command's output. */
async function errorsOf(books: Record<string, Uint8Array>) {
  for (const [name, bytes] of Object.entries(books)) writeFileSync(join(dir, 'books', name), bytes)
  const res = await audit(['books', '--dry-run', '--json', 'report.json', '-q'], {}, dir)
  const report = readJson(join(dir, 'report.json'))
  const errors = Object.fromEntries(report.pages.map((page: any) => [page.page.replace(/^books\//u, ''), page.error]))
  return { res, errors }
}

describe('broken and hostile books', () => {
  test('a broken ZIP, a damaged entry and a file that is no EPUB are reported, not crashed on', async () => {
    const good = buildEpub(book())
    const files = book()
    const damaged = buildEpub(files)
    // Flip bytes in the middle of the deflated package document: it no longer inflates to its CRC.
    const opfAt = Buffer.from(damaged).indexOf('OEBPS/content.opf') + 'OEBPS/content.opf'.length + 10
    for (let i = opfAt; i < opfAt + 40; i++) damaged[i] = damaged[i]! ^ 0x5a
    const { 'OEBPS/ch1.xhtml': _, ...chapterless } = book()
    const spineLine =
      text(chapterless['OEBPS/content.opf'])
        .split('\n')
        .findIndex((line) => line.includes('<itemref idref="c0"/>')) + 1
    const { res, errors } = await errorsOf({
      'chapterless.epub': buildEpub(chapterless),
      'truncated.epub': good.subarray(0, Math.floor(good.length / 2)),
      'damaged.epub': damaged,
      'plain.epub': zipSync({ 'readme.txt': new TextEncoder().encode('not a book') }),
    })
    expect(res.code).toBe(1)
    expect(res.stderr).not.toContain('    at ')
    expect(errors['chapterless.epub']).toBe(`cannot parse: OEBPS/content.opf:${spineLine}: the spine's OEBPS/ch1.xhtml is not in the book`)
    expect(errors['truncated.epub']).toBe('cannot parse: not a ZIP file (no end of central directory)')
    expect(errors['damaged.epub']).toMatch(/^cannot parse: damaged ZIP: OEBPS\/content.opf (?:cannot be inflated|does not match its size and CRC-32)/u)
    expect(errors['plain.epub']).toBe('cannot parse: not an EPUB: the first entry is not a mimetype of application/epub+zip')
  }, 60_000)

  test('zip bombs: a huge declared size, too much in all, a size that lies, and too many entries are refused', async () => {
    const extras: Record<string, Uint8Array> = {}
    for (let i = 0; i < 20; i++) extras[`OEBPS/extra-${i}.txt`] = new Uint8Array(10)
    let inAll = buildEpub(book(extras))
    for (let i = 0; i < 20; i++) inAll = patchCentral(inAll, `OEBPS/extra-${i}.txt`, 24, 60 * 1024 * 1024)
    // 8 MB of spaces deflate to a few KB; declared as 1 KB, inflating stops at 1 KB and the check fails.
    const lying = patchCentral(buildEpub(book({ 'OEBPS/ch1.xhtml': new Uint8Array(8 * 1024 * 1024).fill(0x20) })), 'OEBPS/ch1.xhtml', 24, 1024)
    const many: Record<string, Uint8Array> = { mimetype: new TextEncoder().encode('application/epub+zip') }
    for (let i = 0; i < 10_001; i++) many[`f${i}`] = new Uint8Array(1)
    const { res, errors } = await errorsOf({
      'huge.epub': patchCentral(buildEpub(book()), 'OEBPS/ch1.xhtml', 24, 0xfffffff0),
      'in-all.epub': inAll,
      'lying.epub': lying,
      'many.epub': zipSync(many),
    })
    expect(res.code).toBe(1)
    expect(res.stderr).not.toContain('    at ')
    expect(errors['huge.epub']).toBe('cannot parse: refused: OEBPS/ch1.xhtml declares 4294967280 bytes, more than 67108864 (a zip bomb?)')
    expect(errors['in-all.epub']).toBe('cannot parse: refused: the entries declare more than 1073741824 bytes in all (a zip bomb?)')
    expect(errors['lying.epub']).toBe('cannot parse: damaged ZIP: OEBPS/ch1.xhtml does not match its size and CRC-32')
    expect(errors['many.epub']).toBe('cannot parse: refused: 10002 entries, more than 10000')
  }, 60_000)

  test('entry names that leave the book are refused, and --fix writes nothing for such a book', async () => {
    const traversal = buildEpub(book({ '../../evil.txt': new Uint8Array(1) }))
    const absolute = buildEpub(book({ '/tmp/evil.txt': new Uint8Array(1) }))
    const backslash = buildEpub(book({ 'OEBPS\\..\\..\\evil.txt': new Uint8Array(1) }))
    for (const [name, bytes] of Object.entries({ 'traversal.epub': traversal, 'absolute.epub': absolute, 'backslash.epub': backslash })) {
      writeFileSync(join(dir, 'books', name), bytes)
    }
    const res = await audit(['books', '--dry-run', '--fix', 'fixed', '--json', 'report.json', '-q'], {}, dir)
    expect(res.code).toBe(1)
    const errors = Object.fromEntries(readJson(join(dir, 'report.json')).pages.map((page: any) => [page.page, page.error]))
    expect(errors['books/traversal.epub']).toBe('cannot parse: refused: the entry name "../../evil.txt" leaves the book')
    expect(errors['books/absolute.epub']).toBe('cannot parse: refused: the entry name "/tmp/evil.txt" leaves the book')
    expect(errors['books/backslash.epub']).toBe('cannot parse: refused: the entry name "OEBPS\\\\..\\\\..\\\\evil.txt" leaves the book')
    expect(await Bun.file(join(dir, 'evil.txt')).exists()).toBe(false)
    expect(await Bun.file(join(dir, 'fixed', 'books', 'traversal.epub')).exists()).toBe(false)
  }, 60_000)

  test('XML entities are not expanded: a billion-laughs DOCTYPE leaves the alt text as written', async () => {
    const laughs = Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i};`.repeat(10)}">`).join('\n')
    const chapter = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html [
<!ENTITY lol0 "lol">
${laughs}
]>
<html xmlns="http://www.w3.org/1999/xhtml" lang="en"><head><title>Laughs</title></head>
<body><p><img src="images/a.png" alt="&lol9;"/></p></body></html>
`
    const files = { ...book(), 'OEBPS/ch1.xhtml': new TextEncoder().encode(chapter) }
    writeFileSync(join(dir, 'books', 'laughs.epub'), buildEpub(files))
    const res = await audit(['books', '--dry-run', '--json', 'report.json', '-q'], {}, dir)
    const page = readJson(join(dir, 'report.json')).pages[0]
    expect(page.error).toBeNull()
    expect(page.images.map((image: any) => image.alt)).toEqual(['&lol9;'])
    expect(res.code).toBe(0)
  }, 60_000)
})

describe('what a book inflates', () => {
  test('entries over the same bytes are refused as unreadable, and --fix writes nothing', async () => {
    const zip = buildEpub(book())
    // The package document's local header, named again by the NCX's directory record: one range, two entries.
    const opf = localEntries(zip).find((entry) => entry.name === 'OEBPS/content.opf')!
    const overlapping = patchCentral(zip, 'OEBPS/toc.ncx', 42, opf.raw.byteOffset - zip.byteOffset)
    writeFileSync(join(dir, 'books', 'overlapping.epub'), overlapping)
    const res = await audit(['books', '--dry-run', '--fix', 'fixed', '--json', 'report.json', '-q'], {}, dir)
    expect(res.code).toBe(1)
    expect(readJson(join(dir, 'report.json')).pages.map((page: any) => [page.page, page.error])).toEqual([
      ['books/overlapping.epub', 'cannot parse: refused: the entries OEBPS/content.opf and OEBPS/toc.ncx overlap (a zip bomb?)'],
    ])
    expect(await Bun.file(join(dir, 'fixed', 'books', 'overlapping.epub')).exists()).toBe(false)
  }, 60_000)

  test('past 256 MB inflated in all, a book’s further entries are refused', async () => {
    // Five images of 60 MB of zeros (60 KB each, deflated once): within every per-entry and declared limit.
    const zeros = new Uint8Array(60 * 1024 * 1024)
    const raw = deflateSync(zeros, { level: 1 })
    const names = [0, 1, 2, 3, 4].map((index) => `images/z${index}.png`)
    const files = bookFiles({ chapters: [{ ...CHAPTER, body: names.map((name) => `<p><img src="${name}"/></p>`).join('\n') }] })
    const zip = zipOf([...bookEntries(files), ...names.map((name) => deflatedEntry(`OEBPS/${name}`, zeros, raw))])
    writeFileSync(join(dir, 'books', 'big.epub'), zip)
    await audit(['books', '--dry-run', '--json', 'report.json', '-q'], {}, dir)
    const page = readJson(join(dir, 'report.json')).pages[0]
    expect(page.error).toBeNull()
    expect(page.images.map((image: any) => image.error)).toEqual([
      null,
      null,
      null,
      null,
      'refused: reading OEBPS/images/z4.png would inflate more than 268435456 bytes of the book in all (a zip bomb?)',
    ])
  }, 60_000)

  test('an entry that a thousand images use is inflated once, and let go of when the book is done', () => {
    const count = 1000
    const body = Array.from({ length: count }, () => '<p><img src="images/big.png"/></p>').join('\n')
    const files = bookFiles({ chapters: [{ ...CHAPTER, body }], images: { 'images/big.png': new Uint8Array(1024 * 1024).fill(7) } })
    writeFileSync(join(dir, 'books', 'many.epub'), zipOf(bookEntries(files)))
    const page = loadFile({ kind: 'file', path: join(dir, 'books', 'many.epub'), root: join(dir, 'books') }, dir)
    const [document] = epub.scan(page, { token: 'alttext-test-marker', context: false })
    const inflated = new Set(
      document!.scan.images.map((image) => {
        const target = document!.resolve(image.src)
        if (!('data' in target)) throw new Error(`not read from the book: ${JSON.stringify(target)}`)
        return target.data
      }),
    )
    // Each inflation makes a new buffer: one buffer, one inflation.
    expect(document!.scan.images).toHaveLength(count)
    expect(inflated.size).toBe(1)
    document!.release?.()
    const again = document!.resolve('images/big.png')
    expect('data' in again && !inflated.has(again.data)).toBe(true)
  })

  test('an error while reading a content document names the entry', () => {
    const files = bookFiles({ chapters: [CHAPTER, { name: 'ch2.xhtml', title: 'Two', body: '<p><!--alttext-test-marker--></p>' }] })
    writeFileSync(join(dir, 'books', 'marked.epub'), buildEpub(files))
    const page = loadFile({ kind: 'file', path: join(dir, 'books', 'marked.epub'), root: join(dir, 'books') }, dir)
    expect(() => epub.scan(page, { token: 'alttext-test-marker', context: false })).toThrow('OEBPS/ch2.xhtml: the page contains the scanner marker; run again')
  })
})
