import { describe, expect, test } from 'bun:test'
import { crc32, inflateSync } from 'node:zlib'
import { Transformer } from '@napi-rs/image'
import {
  decodeGif,
  gifBomb,
  gifFromLzwCodes,
  hostileGif,
  imageSize,
  makeAnimatedGif,
  makeJpeg,
  makePng,
  makePngHeaderOnly,
  makeStillGif,
  makeWebp,
  pngBomb,
  readPngHeaderDimensions,
  truncate,
} from './images.ts'

const ascii = (bytes: Uint8Array, start: number, end: number): string => String.fromCharCode(...bytes.subarray(start, end))

/** Re-encoding forces a full decode, so "valid" means more than a parsable header. */
const decodedPixelCount = (bytes: Uint8Array): number => {
  const { width, height } = imageSize(new Transformer(bytes).pngSync())
  return width * height
}

describe('raster makers', () => {
  test('makePng: PNG magic, right size, fully decodable', () => {
    const png = makePng(64, 48)
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
    expect(imageSize(png)).toEqual({ width: 64, height: 48, format: 'png' })
    expect(decodedPixelCount(png)).toBe(64 * 48)
  })

  test('makeJpeg: SOI magic, right size, quality changes the bytes', () => {
    const jpeg = makeJpeg(80, 60)
    expect([...jpeg.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff])
    expect(imageSize(jpeg)).toEqual({ width: 80, height: 60, format: 'jpeg' })
    expect(decodedPixelCount(jpeg)).toBe(80 * 60)
    expect(makeJpeg(80, 60, 20).length).toBeLessThan(makeJpeg(80, 60, 95).length)
  })

  test('makeWebp: RIFF/WEBP magic, right size, fully decodable', () => {
    const webp = makeWebp(50, 30)
    expect(ascii(webp, 0, 4)).toBe('RIFF')
    expect(ascii(webp, 8, 12)).toBe('WEBP')
    expect(imageSize(webp)).toEqual({ width: 50, height: 30, format: 'webp' })
    expect(decodedPixelCount(webp)).toBe(50 * 30)
  })

  test('the pattern is not flat (encoders do real work)', () => {
    const pixels = new Transformer(makePng(32, 32)).rawPixelsSync()
    const distinct = new Set<number>()
    for (let i = 0; i < pixels.length; i += 4) distinct.add(pixels.readUInt32BE(i))
    expect(distinct.size).toBeGreaterThan(50)
  })

  test('rejects nonsense dimensions', () => {
    expect(() => makePng(0, 10)).toThrow(RangeError)
    expect(() => makeJpeg(10, 1.5)).toThrow(RangeError)
  })
})

describe('makeAnimatedGif', () => {
  test('GIF89a with NETSCAPE2.0 looping and frames of different colours', () => {
    const gif = makeAnimatedGif(40, 24, 3)
    expect(ascii(gif, 0, 6)).toBe('GIF89a')
    expect(gif[gif.length - 1]).toBe(0x3b) // trailer
    expect(Buffer.from(gif).includes('NETSCAPE2.0')).toBe(true)
    expect(imageSize(gif)).toEqual({ width: 40, height: 24, format: 'gif' })

    const decoded = decodeGif(gif)
    expect(decoded).toMatchObject({ width: 40, height: 24, loopCount: 0 })
    expect(decoded.frames).toHaveLength(3)
    for (const frame of decoded.frames) {
      expect(frame).toMatchObject({ left: 0, top: 0, width: 40, height: 24, delayCentiseconds: 10 })
      expect(frame.rgba.length).toBe(40 * 24 * 4)
    }
    const firstPixel = (index: number): number[] => [...(decoded.frames[index]?.rgba.subarray(0, 4) ?? [])]
    expect(firstPixel(0)).toEqual([255, 0, 0, 255])
    expect(firstPixel(1)).toEqual([0, 160, 0, 255])
    expect(firstPixel(2)).toEqual([0, 0, 255, 255])
  })

  test('defaults to 2 frames and stays valid when LZW data spans many sub-blocks', () => {
    const gif = makeAnimatedGif(300, 200)
    expect(gif.length).toBeGreaterThan(255 * 10)
    const decoded = decodeGif(gif)
    expect(decoded.frames).toHaveLength(2)
    // Every pixel of both frames came through the LZW stream intact.
    for (const frame of decoded.frames) {
      expect(frame.indices.length).toBe(300 * 200)
      const colours = new Set(frame.indices)
      expect(colours.size).toBe(2)
    }
    // A decoded frame re-encodes through @napi-rs/image (it cannot read GIF itself).
    const frame = decoded.frames[0]
    if (!frame) throw new Error('no frame')
    const png = Transformer.fromRgbaPixels(frame.rgba, frame.width, frame.height).pngSync()
    expect(imageSize(png)).toEqual({ width: 300, height: 200, format: 'png' })
  })

  test('refuses a single-frame "animation"', () => {
    expect(() => makeAnimatedGif(10, 10, 1)).toThrow(RangeError)
  })

  test('decodeGif reads a GIF from a third-party encoder (well-known 1x1 transparent GIF)', () => {
    const pixel = new Uint8Array(Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64'))
    const decoded = decodeGif(pixel)
    expect(decoded).toMatchObject({ width: 1, height: 1, loopCount: null })
    expect(decoded.frames).toHaveLength(1)
    expect([...(decoded.frames[0]?.rgba ?? [])]).toEqual([0, 0, 0, 0])
  })

  test('decodeGif rejects a truncated GIF', () => {
    expect(() => decodeGif(truncate(makeAnimatedGif(20, 20), 0.6))).toThrow()
  })
})

describe('makePngHeaderOnly', () => {
  test('tiny file whose IHDR claims 40000x40000, with valid CRCs and zlib data', () => {
    const bomb = makePngHeaderOnly(40000, 40000)
    expect(bomb.length).toBeLessThan(512)
    expect(readPngHeaderDimensions(bomb)).toEqual({ width: 40000, height: 40000 })

    const view = new DataView(bomb.buffer, bomb.byteOffset, bomb.byteLength)
    const chunkTypes: string[] = []
    let offset = 8
    while (offset < bomb.length) {
      const length = view.getUint32(offset)
      const type = ascii(bomb, offset + 4, offset + 8)
      chunkTypes.push(type)
      const typeAndData = bomb.subarray(offset + 4, offset + 8 + length)
      expect(view.getUint32(offset + 8 + length)).toBe(crc32(typeAndData)) // independent CRC
      if (type === 'IDAT') expect(inflateSync(bomb.subarray(offset + 8, offset + 8 + length)).length).toBeGreaterThan(0)
      offset += 12 + length
    }
    expect(chunkTypes).toEqual(['IHDR', 'IDAT', 'IEND'])
    expect(offset).toBe(bomb.length)
  })

  test('a real decoder refuses it rather than allocating 4.8 GB', () => {
    expect(() => new Transformer(makePngHeaderOnly()).rawPixelsSync()).toThrow()
  })
})

describe('truncate and imageSize', () => {
  test('truncate keeps a prefix of the requested fraction and copies', () => {
    const png = makePng(20, 20)
    const half = truncate(png, 0.5)
    expect(half.length).toBe(Math.floor(png.length / 2))
    expect([...half]).toEqual([...png.subarray(0, half.length)])
    half[0] = 0
    expect(png[0]).toBe(0x89)
    expect(truncate(png, 0).length).toBe(0)
    expect(truncate(png, 1)).toEqual(png)
    expect(() => truncate(png, 1.5)).toThrow(RangeError)
  })

  test('a truncated image no longer decodes', () => {
    expect(() => decodedPixelCount(truncate(makePng(64, 64), 0.5))).toThrow()
    expect(() => decodedPixelCount(truncate(makeJpeg(64, 64), 0.3))).toThrow()
  })

  test('imageSize throws on bytes that are not an image', () => {
    expect(() => imageSize(new TextEncoder().encode('definitely not an image'))).toThrow()
  })
})

describe('hostile and bomb images', () => {
  test('hostileGif: a small, well-formed GIF whose LZW data uses a code beyond the dictionary', () => {
    const gif = hostileGif()
    expect(gif.length).toBeLessThan(512)
    expect(imageSize(gif)).toEqual({ width: 64, height: 64, format: 'gif' })
    expect(gif[gif.length - 1]).toBe(0x3b)
    expect(() => decodeGif(gif)).toThrow(/LZW code 7 beyond dictionary size 6/)
  })

  test('gifBomb: one colour, every pixel there, decodable by an independent decoder', () => {
    for (const [width, height] of [
      [1, 1],
      [2, 3],
      [300, 200],
      [1000, 1000],
    ] as const) {
      const frame = decodeGif(gifBomb(width, height)).frames[0]!
      expect([frame.width, frame.height]).toEqual([width, height])
      expect(frame.indices.every((index) => index === 0)).toBe(true)
    }
    const big = gifBomb(7000, 7000)
    expect(big.length).toBeLessThan(25_000)
    expect(imageSize(big)).toEqual({ width: 7000, height: 7000, format: 'gif' })
  })

  test('pngBomb: valid zlib of all the zero pixels, decodable, about 190 KB at 7000×7000', () => {
    const small = pngBomb(100, 50)
    const view = new DataView(small.buffer)
    const idatLength = view.getUint32(33)
    const inflated = inflateSync(small.subarray(41, 41 + idatLength))
    expect(inflated.length).toBe(50 * (1 + 100 * 4))
    expect(inflated.every((byte) => byte === 0)).toBe(true)
    expect(new Transformer(small).rawPixelsSync().length).toBe(100 * 50 * 4)
    const big = pngBomb(7000, 7000)
    expect(big.length).toBeLessThan(200_000)
    expect(imageSize(big)).toEqual({ width: 7000, height: 7000, format: 'png' })
  })

  test('makeStillGif: interlaced rows, transparency and a frame rectangle, as decodeGif reads them', () => {
    const plain = decodeGif(makeStillGif(30, 17)).frames[0]!
    const interlaced = decodeGif(makeStillGif(30, 17, { interlaced: true })).frames[0]!
    expect(interlaced.indices).toEqual(plain.indices)
    const framed = decodeGif(makeStillGif(40, 30, { frame: { left: 3, top: 4, width: 10, height: 9 }, transparentIndex: 2 })).frames[0]!
    expect(framed).toMatchObject({ left: 3, top: 4, width: 10, height: 9 })
    const transparentAt = framed.indices.indexOf(2)
    expect(framed.rgba[transparentAt * 4 + 3]).toBe(0)
  })

  test('gifFromLzwCodes: the codes as given', () => {
    const gif = gifFromLzwCodes(2, 1, [
      [4, 3],
      [1, 3],
      [2, 3],
      [5, 3],
    ])
    expect(Array.from(decodeGif(gif).frames[0]!.indices)).toEqual([1, 2])
  })
})
