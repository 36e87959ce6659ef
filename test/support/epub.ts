// A small EPUB builder for the tests (a valid EPUB 3 or EPUB 2 book from a few chapters and images),
// and Debian's EPUBCheck to validate books.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { deflateSync, zipSync } from 'fflate'

/** Debian's epubcheck package: the jar, run by the Java runtime it depends on. */
export const EPUBCHECK_JAR = '/usr/share/java/epubcheck.jar'
const JAVA = '/usr/bin/java'
export const epubcheckInstalled = () => existsSync(EPUBCHECK_JAR) && existsSync(JAVA)

/** A short-lived JVM: quick start-up matters more than peak speed for one small book. */
const JVM_FLAGS = ['-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-Xss8m']

/** EPUBCheck's verdict on a book file: ok, and its messages (errors and warnings). */
export function epubcheck(path: string): { ok: boolean; output: string } {
  const run = spawnSync(JAVA, [...JVM_FLAGS, '-jar', EPUBCHECK_JAR, '--quiet', path], { encoding: 'utf8', timeout: 120_000 })
  return { ok: run.status === 0, output: `${run.stdout}${run.stderr}`.trim() }
}

/**
 * A content document: XHTML (its body), or a whole SVG document. `lang: null` leaves the language to the
 * book's. `fallbackFor` names an image that stands in the spine in its place, with it as its fallback.
 */
export type Chapter = {
  name: string
  title: string
  body: string
  type?: 'xhtml' | 'svg'
  lang?: string | null
  properties?: string
  fallbackFor?: string
}

const encoder = new TextEncoder()

const xhtml = (chapter: Chapter, language: string, version: 2 | 3) => `<?xml version="1.0" encoding="UTF-8"?>
${version === 3 ? '<!DOCTYPE html>' : '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN" "http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">'}
<html xmlns="http://www.w3.org/1999/xhtml"${version === 3 ? ' xmlns:epub="http://www.idpf.org/2007/ops"' : ''}${chapter.lang === null ? '' : ` xml:lang="${chapter.lang ?? language}"${version === 3 ? ` lang="${chapter.lang ?? language}"` : ''}`}>
<head>
${version === 3 ? '<meta charset="utf-8"/>' : '<meta http-equiv="Content-Type" content="application/xhtml+xml; charset=utf-8"/>'}
<title>${chapter.title}</title>
</head>
<body>
${chapter.body}
</body>
</html>
`

/**
 * The files of a book, in the order they are zipped (mimetype first). `version` 3 has a navigation
 * document; both an NCX. `prefixed` writes the package in the `opf:` prefix, with no default namespace.
 */
export function bookFiles(options: {
  title?: string
  language?: string
  version?: 2 | 3
  chapters: Chapter[]
  images?: Record<string, Uint8Array>
  metadata?: string
  prefixed?: boolean
}): Record<string, Uint8Array> {
  const language = options.language ?? 'en'
  const version = options.version ?? 3
  const title = options.title ?? 'A Kite Book'
  const mediaType = (name: string) =>
    name.endsWith('.png') ? 'image/png' : name.endsWith('.svg') ? 'image/svg+xml' : name.endsWith('.xhtml') ? 'application/xhtml+xml' : 'image/jpeg'
  const images = options.images ?? {}
  const manifest = [
    version === 3 ? '<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>' : '',
    '<item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>',
    ...options.chapters.map(
      (chapter, index) =>
        `<item id="c${index}" href="${chapter.name}" media-type="${chapter.type === 'svg' ? 'image/svg+xml' : 'application/xhtml+xml'}"${chapter.properties ? ` properties="${chapter.properties}"` : ''}/>`,
    ),
    ...Object.keys(images).map((name, index) => {
      const page = options.chapters.findIndex((chapter) => chapter.fallbackFor === name)
      return `<item id="i${index}" href="${name}" media-type="${mediaType(name)}"${page >= 0 ? ` fallback="c${page}"` : ''}/>`
    }),
  ].filter(Boolean)
  const spineItem = (chapter: Chapter, index: number) =>
    chapter.fallbackFor === undefined ? `c${index}` : `i${Object.keys(images).indexOf(chapter.fallbackFor)}`
  const opf = `<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="${version}.0" unique-identifier="uid">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/"${version === 2 ? ' xmlns:opf="http://www.idpf.org/2007/opf"' : ''}>
    <dc:identifier id="uid">urn:uuid:5f1f3c1e-6a57-4c3a-9a43-1f2a3b4c5d6e</dc:identifier>
    <dc:title>${title}</dc:title>
    <dc:language>${language}</dc:language>
    ${version === 3 ? '<meta property="dcterms:modified">2026-01-01T00:00:00Z</meta>' : ''}
    ${options.metadata ?? ''}
  </metadata>
  <manifest>
    ${manifest.join('\n    ')}
  </manifest>
  <spine toc="ncx">
    ${options.chapters.map((chapter, index) => `<itemref idref="${spineItem(chapter, index)}"/>`).join('\n    ')}
  </spine>
</package>
`
  const packageDocument = options.prefixed
    ? opf
        .replace('xmlns="http://www.idpf.org/2007/opf"', 'xmlns:opf="http://www.idpf.org/2007/opf"')
        .replace(' xmlns:opf="http://www.idpf.org/2007/opf">', '>')
        .replaceAll(/<(\/?)(package|metadata|meta|manifest|itemref|item|spine)(?=[\s/>])/gu, '<$1opf:$2')
    : opf
  const nav = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" xml:lang="${language}" lang="${language}">
<head><meta charset="utf-8"/><title>Contents</title></head>
<body>
<nav epub:type="toc" id="toc"><h1>Contents</h1><ol>
${options.chapters.map((chapter) => `<li><a href="${chapter.fallbackFor ?? chapter.name}">${chapter.title}</a></li>`).join('\n')}
</ol></nav>
</body>
</html>
`
  const ncx = `<?xml version="1.0" encoding="UTF-8"?>
<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1">
<head><meta name="dtb:uid" content="urn:uuid:5f1f3c1e-6a57-4c3a-9a43-1f2a3b4c5d6e"/><meta name="dtb:depth" content="1"/><meta name="dtb:totalPageCount" content="0"/><meta name="dtb:maxPageNumber" content="0"/></head>
<docTitle><text>${title}</text></docTitle>
<navMap>
${options.chapters.map((chapter, index) => `<navPoint id="n${index}" playOrder="${index + 1}"><navLabel><text>${chapter.title}</text></navLabel><content src="${chapter.fallbackFor ?? chapter.name}"/></navPoint>`).join('\n')}
</navMap>
</ncx>
`
  const container = `<?xml version="1.0" encoding="UTF-8"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
  <rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles>
</container>
`
  const files: Record<string, Uint8Array> = {
    mimetype: encoder.encode('application/epub+zip'),
    'META-INF/container.xml': encoder.encode(container),
    'OEBPS/content.opf': encoder.encode(packageDocument),
  }
  if (version === 3) files['OEBPS/nav.xhtml'] = encoder.encode(nav)
  files['OEBPS/toc.ncx'] = encoder.encode(ncx)
  for (const chapter of options.chapters)
    files[`OEBPS/${chapter.name}`] = encoder.encode(chapter.type === 'svg' ? chapter.body : xhtml(chapter, language, version))
  for (const [name, bytes] of Object.entries(images)) files[`OEBPS/${name}`] = bytes
  return files
}

/** The book as a ZIP: mimetype first and stored, images stored, the rest deflated. */
export function buildEpub(files: Record<string, Uint8Array>): Uint8Array {
  const entries: Record<string, [Uint8Array, { level: 0 | 6; mtime: Date }]> = {}
  const mtime = new Date('2026-01-01T00:00:00Z')
  for (const [name, bytes] of Object.entries(files)) {
    entries[name] = [bytes, { level: name === 'mimetype' || /\.(?:png|jpe?g)$/u.test(name) ? 0 : 6, mtime }]
  }
  return zipSync(entries)
}

/** The local entries of a ZIP written with sizes in its local headers: name → header and data, as bytes. */
export function localEntries(zip: Uint8Array): { name: string; method: number; extra: number; raw: Uint8Array }[] {
  const view = new DataView(zip.buffer, zip.byteOffset, zip.byteLength)
  const out: { name: string; method: number; extra: number; raw: Uint8Array }[] = []
  let at = 0
  while (view.getUint32(at, true) === 0x04034b50) {
    const nameLength = view.getUint16(at + 26, true)
    const extra = view.getUint16(at + 28, true)
    const end = at + 30 + nameLength + extra + view.getUint32(at + 18, true)
    out.push({
      name: new TextDecoder().decode(zip.subarray(at + 30, at + 30 + nameLength)),
      method: view.getUint16(at + 8, true),
      extra,
      raw: zip.subarray(at, end),
    })
    at = end
  }
  return out
}

/** An entry as it goes into a ZIP: its bytes as stored (deflated when method is 8), and its content's size and CRC-32. */
export type RawEntry = { name: string; method: 0 | 8; raw: Uint8Array; size: number; crc: number }

/** A deflated entry of `data` (deflated once: big entries of the same content can share `raw`). */
export const deflatedEntry = (name: string, data: Uint8Array, raw: Uint8Array = deflateSync(data)): RawEntry => ({
  name,
  method: 8,
  raw,
  size: data.length,
  crc: Bun.hash.crc32(data),
})

/** A ZIP of entries given as stored bytes: for books too big to deflate in a test (gigabytes of zeros deflate once). */
export function zipOf(entries: RawEntry[]): Uint8Array {
  const parts: Uint8Array[] = []
  const central: Uint8Array[] = []
  let offset = 0
  for (const entry of entries) {
    const name = encoder.encode(entry.name)
    const header = (size: number, signature: number) => {
      const bytes = new Uint8Array(size + name.length)
      const view = new DataView(bytes.buffer)
      view.setUint32(0, signature, true)
      return { bytes, view }
    }
    const local = header(30, 0x04034b50)
    local.view.setUint16(4, 20, true)
    local.view.setUint16(8, entry.method, true)
    local.view.setUint16(12, 0x21, true) // 1980-01-01
    local.view.setUint32(14, entry.crc, true)
    local.view.setUint32(18, entry.raw.length, true)
    local.view.setUint32(22, entry.size, true)
    local.view.setUint16(26, name.length, true)
    local.bytes.set(name, 30)
    const record = header(46, 0x02014b50)
    record.view.setUint16(4, 20, true)
    record.view.setUint16(6, 20, true)
    record.view.setUint16(10, entry.method, true)
    record.view.setUint16(14, 0x21, true)
    record.view.setUint32(16, entry.crc, true)
    record.view.setUint32(20, entry.raw.length, true)
    record.view.setUint32(24, entry.size, true)
    record.view.setUint16(28, name.length, true)
    record.view.setUint32(42, offset, true)
    record.bytes.set(name, 46)
    parts.push(local.bytes, entry.raw)
    central.push(record.bytes)
    offset += local.bytes.length + entry.raw.length
  }
  const directorySize = central.reduce((sum, record) => sum + record.length, 0)
  const end = new Uint8Array(22)
  const view = new DataView(end.buffer)
  view.setUint32(0, 0x06054b50, true)
  view.setUint16(8, entries.length, true)
  view.setUint16(10, entries.length, true)
  view.setUint32(12, directorySize, true)
  view.setUint32(16, offset, true)
  return Buffer.concat([...parts, ...central, end])
}

/** A book's files as ZIP entries: mimetype stored, the rest deflated. */
export const bookEntries = (files: Record<string, Uint8Array>): RawEntry[] =>
  Object.entries(files).map(([name, data]) =>
    name === 'mimetype' ? { name, method: 0, raw: data, size: data.length, crc: Bun.hash.crc32(data) } : deflatedEntry(name, data),
  )
