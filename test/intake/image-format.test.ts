// Sniffing, header dimensions and structural completeness, as pure functions over bytes.
import { describe, expect, test } from 'bun:test'
import { describeUnsupported, inspectImage, sniffFormat } from '../../src/intake/image-format.ts'
import { ImageFormatError } from '../../src/intake/image-format-error.ts'
import { imageSize, makeAnimatedGif, makeJpeg, makePng, makePngHeaderOnly, makeWebp, truncate } from '../support/images.ts'
import { makeAnimatedWebp } from './fixtures.ts'

const text = (value: string): Uint8Array => new TextEncoder().encode(value)

function inspectFailure(bytes: Uint8Array): ImageFormatError {
  try {
    inspectImage(bytes)
  } catch (error) {
    expect(error).toBeInstanceOf(ImageFormatError)
    return error as ImageFormatError
  }
  throw new Error('inspectImage accepted the bytes')
}

const samples = {
  png: makePng(123, 45),
  jpeg: makeJpeg(321, 54),
  webp: makeWebp(77, 99),
  gif: makeAnimatedGif(40, 30, 3),
}

describe('inspectImage on whole images', () => {
  test.each(Object.entries(samples))('%s: format and dimensions agree with the test fixture reader', (format, bytes) => {
    const header = inspectImage(bytes)
    const expected = imageSize(bytes)
    expect(header).toEqual({ format: format as 'png', width: expected.width, height: expected.height, frames: format === 'gif' ? 3 : 1 })
  })

  test('an animated WebP reports its canvas', () => {
    expect(
      inspectImage(
        makeAnimatedWebp(20, 10, [
          [255, 0, 0],
          [0, 0, 255],
        ]),
      ),
    ).toEqual({ format: 'webp', width: 20, height: 10, frames: 2 })
  })

  test('the 40000×40000 header-only PNG is read from its header (no decoding)', () => {
    expect(inspectImage(makePngHeaderOnly(40000, 40000))).toEqual({ format: 'png', width: 40000, height: 40000, frames: 1 })
  })

  test('a JPEG with bytes after its end-of-image marker is still complete', () => {
    const withTrailer = new Uint8Array([...samples.jpeg, 0, 1, 2, 3])
    expect(inspectImage(withTrailer).format).toBe('jpeg')
  })
})

describe('truncated images are refused as corrupt', () => {
  for (const [format, bytes] of Object.entries(samples)) {
    test.each([0.1, 0.5, 0.9, 0.99])(`${format} cut to %p of its length`, (fraction) => {
      const failure = inspectFailure(truncate(bytes, fraction))
      expect(failure.reason).toBe('corrupt')
      expect(failure.message).toMatch(/^the image is truncated or corrupt/)
    })
    test(`${format} missing only its last byte`, () => {
      expect(inspectFailure(bytes.slice(0, bytes.length - 1)).reason).toBe('corrupt')
    })
  }

  test('a PNG without IDAT', () => {
    const png = samples.png
    // Signature + IHDR (8 + 25 bytes), then straight to IEND.
    const iend = png.slice(png.length - 12)
    expect(inspectFailure(new Uint8Array([...png.slice(0, 33), ...iend])).message).toMatch(/no image data/)
  })

  test('a GIF whose first frame lies outside its logical screen', () => {
    const gif = samples.gif.slice()
    gif[6] = 10 // logical screen width 10, frames are 40 wide
    gif[7] = 0
    expect(inspectFailure(gif).message).toMatch(/outside its logical screen/)
  })

  test('a WebP whose RIFF size claims more than there is', () => {
    const webp = samples.webp.slice()
    new DataView(webp.buffer).setUint32(4, webp.length + 100, true)
    expect(inspectFailure(webp).message).toMatch(/WebP declares/)
  })

  test('a WebP whose bitstream is larger than its declared canvas', () => {
    // VP8X says 10×10; the VP8 bitstream inside is 64×64. A decoder would allocate for the latter.
    const still = makeWebp(64, 64)
    const vp8Chunk = still.slice(12)
    const vp8x = new Uint8Array([...text('VP8X'), 10, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 9, 0, 0])
    const riffSize = 4 + vp8x.length + vp8Chunk.length
    const file = new Uint8Array([...text('RIFF'), riffSize & 0xff, (riffSize >> 8) & 0xff, (riffSize >> 16) & 0xff, 0, ...text('WEBP'), ...vp8x, ...vp8Chunk])
    expect(inspectFailure(file).message).toMatch(/larger than its canvas/)
  })

  test('a JPEG with two frame headers', () => {
    const jpeg = samples.jpeg
    let sof = 2
    while (!(jpeg[sof] === 0xff && jpeg[sof + 1] === 0xc0)) sof += 2 + ((jpeg[sof + 2]! << 8) | jpeg[sof + 3]!)
    const segmentLength = 2 + ((jpeg[sof + 2]! << 8) | jpeg[sof + 3]!)
    const segment = jpeg.slice(sof, sof + segmentLength)
    const doubled = new Uint8Array([...jpeg.slice(0, sof + segmentLength), ...segment, ...jpeg.slice(sof + segmentLength)])
    expect(inspectFailure(doubled).message).toMatch(/more than one frame header/)
  })

  test('zero dimensions', () => {
    const png = samples.png.slice()
    new DataView(png.buffer).setUint32(16, 0) // IHDR width
    expect(inspectFailure(png).message).toMatch(/0×45 pixels/)
  })
})

describe('anything but JPEG, PNG, GIF, WebP, AVIF and SVG is refused by its bytes', () => {
  const cases: Array<[string, Uint8Array]> = [
    ['html', text('<!DOCTYPE html><html><body>not an image</body></html>')],
    ['html', text('\uFEFF  <html lang="en"><head></head></html>')],
    ['xml', text('<?xml version="1.0"?><rss></rss>')],
    ['json', text('{"error":"not found"}')],
    ['text', text('Not Found')],
    ['bmp', new Uint8Array([0x42, 0x4d, 0x3a, 0, 0, 0, 0, 0, 0, 0, 0x36, 0, 0, 0])],
    ['tiff', new Uint8Array([0x49, 0x49, 0x2a, 0, 8, 0, 0, 0])],
    ['tiff', new Uint8Array([0x4d, 0x4d, 0, 0x2a, 0, 0, 0, 8])],
    ['heic', new Uint8Array([0, 0, 0, 0x18, ...text('ftypheic'), 0, 0, 0, 0])],
    ['pdf', text('%PDF-1.7\n')],
    ['ico', new Uint8Array([0, 0, 1, 0, 1, 0, 16, 16])],
    ['riff', new Uint8Array([...text('RIFF'), 4, 0, 0, 0, ...text('WAVE')])],
    ['unknown data', new Uint8Array([0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0xfe, 0x10])],
  ]

  test.each(cases)('%s', (kind, bytes) => {
    expect(sniffFormat(bytes)).toBeNull()
    expect(describeUnsupported(bytes)).toBe(kind)
    const failure = inspectFailure(bytes)
    expect(failure.reason).toBe('unsupported')
    expect(failure.message).toBe(`the image is not JPEG, PNG, GIF, WebP, AVIF or SVG (found: ${kind})`)
  })

  test('empty bytes', () => {
    expect(inspectFailure(new Uint8Array(0)).message).toBe('the image is empty (0 bytes)')
  })

  test('magic numbers only count at the start', () => {
    expect(sniffFormat(new Uint8Array([0, ...samples.png]))).toBeNull()
  })
})

describe('AVIF and SVG are recognised by their bytes', () => {
  const avifHeader = (brand: string, compatible: string[] = []): Uint8Array =>
    new Uint8Array([0, 0, 0, 16 + 4 * compatible.length, ...text(`ftyp${brand}`), 0, 0, 0, 0, ...compatible.flatMap((name) => [...text(name)])])

  test.each([
    ['major brand avif', avifHeader('avif')],
    ['major brand avis (a sequence)', avifHeader('avis')],
    ['avif among the compatible brands', avifHeader('mif1', ['miaf', 'avif'])],
  ])('AVIF: %s', (_, bytes) => {
    expect(sniffFormat(bytes)).toBe('avif')
  })

  test('HEIC is not AVIF', () => {
    expect(sniffFormat(avifHeader('heic', ['mif1']))).toBeNull()
  })

  test.each([
    ['a bare root', '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>'],
    [
      'after a BOM, an XML declaration, a comment and a DOCTYPE',
      '\uFEFF<?xml version="1.0"?>\n<!-- logo -->\n<!DOCTYPE svg [<!ENTITY a "b">]>\n<svg viewBox="0 0 1 1"/>',
    ],
    ['with a prefix', '<svg:svg xmlns:svg="http://www.w3.org/2000/svg"/>'],
  ])('SVG: %s', (_, markup) => {
    expect(sniffFormat(text(markup))).toBe('svg')
  })

  test('HTML with an inline SVG is not SVG', () => {
    expect(sniffFormat(text('<html><body><svg></svg></body></html>'))).toBeNull()
  })

  test('an AVIF cut off inside a box is truncated, not unsupported', () => {
    const failure = inspectFailure(new Uint8Array([0, 0, 0, 0x1c, ...text('ftypavif'), 0, 0, 0, 0]))
    expect(failure.reason).toBe('corrupt')
    expect(failure.message).toMatch(/^the image is truncated or corrupt \(AVIF ends inside its "ftyp" box\)$/)
  })

  test('an AVIF without a meta box is corrupt', () => {
    expect(inspectFailure(avifHeader('avif')).message).toMatch(/AVIF has no meta box/)
  })
})
