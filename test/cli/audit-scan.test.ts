// The audit's parsing pieces without a service: which elements HTMLRewriter reports, the byte offset of
// each tag, and the byte-exact attribute edits on awkward but valid (and some invalid) markup.
import { describe, expect, spyOn, test } from 'bun:test'
import { classify } from '../../src/cli/audit/classify'
import { locate } from '../../src/cli/audit/formats/types'
import { fixPath, type LoadedPage } from '../../src/cli/audit/pages'
import { scanHtml } from '../../src/cli/audit/scan'
import { applyEdits, readStartTag, setAttributeEdit } from '../../src/cli/audit/tag'

const TOKEN = 'test-marker-0123456789'
const bytesOf = (text: string) => new TextEncoder().encode(text)
const latin1 = (bytes: Uint8Array) => Buffer.from(bytes).toString('latin1')

/** Sets `value` on every image found and returns the page as text. */
function fixAll(bytes: Uint8Array, value: string): string {
  const scan = scanHtml(bytes, TOKEN)
  const edits = scan.images.map((image) => setAttributeEdit(bytes, readStartTag(bytes, image.offset)!, image.textAttribute, value, scan.utf8))
  return latin1(applyEdits(bytes, edits))
}

describe('finding images', () => {
  test('img, input type=image and role=img with a background; not in script, comments, textarea or template', () => {
    const html = [
      '<img src=a.png>',
      '<!-- <img src=comment.png> -->',
      '<script>document.write("<img src=script.png>")</script>',
      '<textarea><img src=textarea.png></textarea>',
      '<template><img src=template.png></template>',
      '<input type=IMAGE src=b.png><input type=submit src=c.png>',
      '<span role="img img" style="color:red; background:url(&quot;d.png&quot;) no-repeat"></span>',
      '<span role=img aria-label="Five stars">★★★★★</span>',
    ].join('\n')
    const scan = scanHtml(bytesOf(html), TOKEN)
    expect(scan.images.map((image) => [image.kind, image.src, image.line])).toEqual([
      ['img', 'a.png', 1],
      ['img', 'template.png', 5],
      ['input', 'b.png', 6],
      ['role-img', 'd.png', 7],
    ])
  })

  test('the address: src, data-src behind a data: placeholder, else the first srcset candidate; entities decoded', () => {
    const scan = scanHtml(
      bytesOf('<img src="a.png?x=1&amp;y=2"><img src="data:image/gif;base64,R0lGOD" data-src="real.jpg"><img srcset="small.jpg 1x, big.jpg 2x">'),
      TOKEN,
    )
    expect(scan.images.map((image) => image.src)).toEqual(['a.png?x=1&y=2', 'real.jpg', 'small.jpg'])
  })

  test('decorative by markup, aria-labelledby, aria-label standing in for alt', () => {
    const scan = scanHtml(
      bytesOf(
        '<img src=a role=presentation><img src=b role=none><img src=c aria-hidden=TRUE><img src=d aria-labelledby=cap><img src=e aria-label="A kite."><img src=f>',
      ),
      TOKEN,
    )
    const statuses = scan.images.map((image) => classify(scan, image, 'en', 125).status)
    expect(statuses).toEqual(['decorative', 'decorative', 'decorative', 'ok', 'ok', 'missing'])
    expect(scan.images[4]!.textAttribute).toBe('aria-label')
  })

  test('a human alt without a final period is good; file names, "image of" and placeholders are poor; a long one is long, not poor', () => {
    const scan = scanHtml(
      bytesOf(
        '<img src=a alt="Our team at the 2024 summit"><img src=b alt="DSC_0042.jpg"><img src=c alt="Picture of a dog."><img src=d alt="placeholder"><img src=e alt="' +
          'A very long description of a kite. '.repeat(5) +
          '">',
      ),
      TOKEN,
    )
    expect(scan.images.map((image) => classify(scan, image, 'en', 125).status)).toEqual(['ok', 'poor', 'poor', 'poor', 'long'])
  })

  test("a person's alt longer than --max-length is long (kept, a long description suggested), with any other lint issue listed", () => {
    const expert = `Bar chart of rainfall by month. ${'January had 80 mm, the wettest month; July had 12 mm, the driest. '.repeat(8)}`.trim()
    const scan = scanHtml(bytesOf(`<img src=a alt="${expert}"><img src=b alt="Image of ${expert}">`), TOKEN)
    const [first, second] = scan.images.map((image) => classify(scan, image, 'en', 125))
    expect(first).toEqual({ status: 'long', issues: [`${[...expert].length} characters, over --max-length 125: kept; a long description may suit it`] })
    expect(second!.status).toBe('long')
    expect(second!.issues[1]).toContain('redundant phrase')
    // With a larger --max-length it is simply good.
    expect(classify(scan, scan.images[0]!, 'en', 1000).status).toBe('ok')
  })

  test('alt="" is decorative unless it leaves a link or button without a name; Markdown\'s ![](x) reads the same', () => {
    const html = [
      '<img src=a alt="">',
      '<a href=/><img src=b alt=""></a>',
      '<a href=/ aria-label="Home"><img src=c alt=""></a>',
      '<a href=/ title="Home"><img src=d alt=""></a>',
      '<a href=/><img src=e alt=""> Home</a>',
      '<a href=/><img src=f alt=""><img src=g alt="Home"></a>',
      '<button><img src=h alt=""></button>',
      '<button aria-label="Search"><img src=i alt=""></button>',
      '<button><img src=j alt=""> Search</button>',
      '<input type=image src=k alt="">',
      '<img src=l aria-label="">',
    ].join('\n')
    const scan = scanHtml(bytesOf(html), TOKEN)
    const found = scan.images.map((image) => classify(scan, image, 'en', 125))
    expect(found.map((item) => item.status)).toEqual([
      'decorative',
      'empty',
      'decorative',
      'decorative',
      'decorative',
      'decorative',
      'ok',
      'empty',
      'decorative',
      'decorative',
      'empty',
      'empty',
    ])
    expect(found[1]!.issues).toEqual(['empty alt on the only content of a link: the link has no name'])
    expect(found[7]!.issues).toEqual(['empty alt on the only content of a button: the button has no name'])
  })

  test('the children of a role=img named by aria-labelledby or aria-label are presentational: not flagged', () => {
    const html = [
      '<div role="img" aria-labelledby="cap"><img src="a.png" alt=""><img src="b.png" alt=""></div>',
      '<span role=img aria-label="4 of 5 stars"><img src=star.png alt=""><img src=star.png></span>',
      '<a href=/><span role=img aria-label="Home"><img src=home.png alt=""></span></a>',
      '<div role=img><img src=c.png></div>',
      '<img src=d.png>',
    ].join('\n')
    const scan = scanHtml(bytesOf(html), TOKEN)
    expect(scan.images.map((image) => classify(scan, image, 'en', 125).status)).toEqual([
      'decorative',
      'decorative',
      'decorative',
      'decorative',
      'decorative',
      'missing',
      'missing',
    ])
  })
})

describe('byte-exact edits', () => {
  test('quoted values with > and the attribute name inside, unquoted values before />, valueless and repeated alt, odd spacing', () => {
    const html = [
      '<img title="a > b alt=x" src=a.png>',
      '<IMG SRC=b.png/>',
      '<img src="c.png" alt>',
      '<img\talt = \'old\'  alt="second" src=d.png >',
      '<img src=e.png alt=unquoted>',
    ].join('\r\n')
    expect(fixAll(bytesOf(html), 'New "kite" & <sky>.')).toBe(
      [
        '<img alt="New &quot;kite&quot; &amp; &lt;sky&gt;." title="a > b alt=x" src=a.png>',
        '<IMG alt="New &quot;kite&quot; &amp; &lt;sky&gt;." SRC=b.png/>',
        '<img src="c.png" alt="New &quot;kite&quot; &amp; &lt;sky&gt;.">',
        '<img\talt="New &quot;kite&quot; &amp; &lt;sky&gt;."  alt="second" src=d.png >',
        '<img src=e.png alt="New &quot;kite&quot; &amp; &lt;sky&gt;.">',
      ].join('\r\n'),
    )
  })

  test('multibyte text before a tag does not shift the offsets (UTF-8)', () => {
    const html = '<p>Über 🪁 café — ☕</p><img src=a.png><p>→</p><img src=b.png alt="x">'
    expect(Buffer.from(fixAll(bytesOf(html), 'Ein Drache.'), 'latin1').toString('utf8')).toBe(
      '<p>Über 🪁 café — ☕</p><img alt="Ein Drache." src=a.png><p>→</p><img src=b.png alt="Ein Drache.">',
    )
  })

  test('a page in another encoding keeps its bytes; the new text is written as character references', () => {
    const head = bytesOf('<meta charset="iso-8859-1"><p>caf')
    const bytes = new Uint8Array([...head, 0xe9, ...bytesOf('</p><img src=a.png>')])
    const out = fixAll(bytes, 'Café au lait.')
    expect(out).toBe(`<meta charset="iso-8859-1"><p>caf\xe9</p><img alt="Caf&#233; au lait." src=a.png>`)
  })

  test('an undeclared page with bytes that are not UTF-8 keeps them', () => {
    const bytes = new Uint8Array([...bytesOf('<p>caf'), 0xe9, 0xff, ...bytesOf('</p><img src=a.png><div role=img style="background:url(b.png)"></div>')])
    expect(fixAll(bytes, 'A cup.')).toBe('<p>caf\xe9\xff</p><img alt="A cup." src=a.png><div aria-label="A cup." role=img style="background:url(b.png)"></div>')
  })

  test('a page containing the marker is refused rather than mis-edited', () => {
    expect(() => scanHtml(bytesOf(`<!--${TOKEN}--><img src=a>`), TOKEN)).toThrow(/marker/)
  })
})

describe('line and column', () => {
  test('a one-line page with many images: each byte decoded once, columns in UTF-16 units as the line reads', () => {
    // Two-, three- and four-byte characters (one, one and two UTF-16 units) between the images.
    const piece = 'é☕𝔘 <img src=a.png>'
    const text = `first line\n${piece.repeat(2000)}\n<img src=b.png>`
    const bytes = bytesOf(text)
    const offsets = scanHtml(bytes, TOKEN, { context: false }).images.map((image) => image.offset)
    // Counts the bytes every TextDecoder decodes while the positions are computed.
    let decoded = 0
    const decode = TextDecoder.prototype.decode
    const spy = spyOn(TextDecoder.prototype, 'decode').mockImplementation(function (this: TextDecoder, input?: Parameters<TextDecoder['decode']>[0]) {
      decoded += input?.byteLength ?? 0
      return decode.call(this, input)
    })
    let locations: ReturnType<typeof locate>
    try {
      locations = locate(bytes, offsets, 'page.html')
    } finally {
      spy.mockRestore()
    }
    expect(locations).toHaveLength(2001)
    // What a column means: the UTF-16 length of the line before the tag, plus one.
    const lines = text.split('\n')
    for (const [index, at] of locations.entries()) {
      const line = index < 2000 ? 2 : 3
      const column = index < 2000 ? piece.length * index + piece.indexOf('<') + 1 : 1
      expect(at).toEqual({ file: 'page.html', line, column })
      expect(lines[line - 1]!.indexOf('<img', column - 1)).toBe(column - 1)
    }
    expect(decoded).toBeLessThanOrEqual(bytes.length)
  })
})

describe('--fix paths', () => {
  const page = (url: string): LoadedPage => ({ source: { kind: 'url', url, depth: 0 }, name: url, base: new URL(url), bytes: null, error: null })

  test('page URLs map into OUTDIR/HOST/...; "/" and extensionless paths become .html files', () => {
    expect(fixPath(page('http://127.0.0.1:8080/'), '/out')).toBe('/out/127.0.0.1_8080/index.html')
    expect(fixPath(page('https://example.org/news/kites'), '/out')).toBe('/out/example.org/news/kites.html')
    expect(fixPath(page('https://example.org/a.php?id=3'), '/out')).toBe('/out/example.org/a.php')
  })

  test('no URL escapes OUTDIR', () => {
    for (const url of ['https://example.org/../../etc/passwd', 'https://example.org/%2e%2e/%2e%2e/x', 'https://example.org/a/..%2f..%2fx']) {
      const target = fixPath(page(url), '/out')
      expect(target === null || target.startsWith('/out/example.org/')).toBe(true)
    }
  })
})
