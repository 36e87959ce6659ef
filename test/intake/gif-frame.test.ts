// The bounded GIF decoder as a pure function: its canvas against the test support's independent
// decoder (decodeGif) and libvips', what it hands the model, and its refusals of malformed LZW data.
import { describe, expect, test } from 'bun:test'
import sharp from 'sharp'
import { firstGifFrame, GifDataError, gifFrameForModel, gifReduction } from '../../src/intake/gif-frame.ts'
import { decodeGif, gifBomb, gifFromLzwCodes, hostileGif, makeAnimatedGif, makeStillGif, type StillGifOptions } from '../support/images.ts'

/** The first frame on its screen at full size, from decodeGif: transparent where it does not draw. */
function referenceCanvas(gif: Uint8Array): { rgba: Uint8Array; width: number; height: number } {
  const decoded = decodeGif(gif)
  const frame = decoded.frames[0]!
  const rgba = new Uint8Array(decoded.width * decoded.height * 4)
  for (let y = 0; y < frame.height; y++) {
    for (let x = 0; x < frame.width; x++) {
      const from = (y * frame.width + x) * 4
      if (frame.rgba[from + 3] === 0) continue
      rgba.set(frame.rgba.subarray(from, from + 4), ((frame.top + y) * decoded.width + frame.left + x) * 4)
    }
  }
  return { rgba, width: decoded.width, height: decoded.height }
}

/** `canvas` box-reduced by `factor`: each cell the mean colour of its opaque pixels, alpha their share. */
function reduce(canvas: { rgba: Uint8Array; width: number; height: number }, factor: number) {
  const width = Math.ceil(canvas.width / factor)
  const height = Math.ceil(canvas.height / factor)
  const rgba = new Uint8Array(width * height * 4)
  for (let cellY = 0; cellY < height; cellY++) {
    for (let cellX = 0; cellX < width; cellX++) {
      const sums = [0, 0, 0]
      let opaque = 0
      let pixels = 0
      for (let y = cellY * factor; y < Math.min(canvas.height, (cellY + 1) * factor); y++) {
        for (let x = cellX * factor; x < Math.min(canvas.width, (cellX + 1) * factor); x++) {
          pixels++
          const at = (y * canvas.width + x) * 4
          if (canvas.rgba[at + 3] === 0) continue
          opaque++
          for (let c = 0; c < 3; c++) sums[c]! += canvas.rgba[at + c]!
        }
      }
      if (opaque === 0) continue
      const at = (cellY * width + cellX) * 4
      rgba.set([...sums.map((sum) => Math.round(sum / opaque)), Math.round((255 * opaque) / pixels)], at)
    }
  }
  return { rgba, width, height }
}

describe('the first frame, as decodeGif sees it', () => {
  const cases: Array<[string, Uint8Array]> = [
    ['the first frame of an animation', makeAnimatedGif(48, 24, 3)],
    ['an interlaced frame', makeStillGif(37, 29, { interlaced: true })],
    ['an interlaced frame of 1, 2 and 5 rows', makeStillGif(9, 5, { interlaced: true })],
    ['a transparent index', makeStillGif(20, 12, { transparentIndex: 3 })],
    ['a frame smaller than its screen, offset', makeStillGif(40, 30, { frame: { left: 7, top: 5, width: 21, height: 13 }, transparentIndex: 0 })],
    ['a single-colour frame of long LZW runs (entries up to the full table)', gifBomb(300, 200)],
  ]

  test.each(cases)('%s, at full size', (_name, gif) => {
    const canvas = firstGifFrame(gif, 4096)
    const reference = referenceCanvas(gif)
    expect([canvas.width, canvas.height]).toEqual([reference.width, reference.height])
    expect(Buffer.from(canvas.rgba).equals(Buffer.from(reference.rgba))).toBe(true)
  })

  test.each([
    ['interlaced', { interlaced: true }],
    ['transparent, offset', { frame: { left: 3, top: 9, width: 50, height: 31 }, transparentIndex: 5 }],
  ] as Array<[string, StillGifOptions]>)('%s, box-reduced when the screen is over twice the longest side', (_name, options) => {
    const gif = makeStillGif(70, 50, options)
    expect(gifReduction(70, 50, 16)).toBe(4)
    const canvas = firstGifFrame(gif, 16)
    const expected = reduce(referenceCanvas(gif), 4)
    expect([canvas.width, canvas.height]).toEqual([18, 13])
    expect(Array.from(canvas.rgba)).toEqual(Array.from(expected.rgba))
  })

  test('a 7000×7000 frame becomes a canvas of 1167×1167, never a full-size one', () => {
    const canvas = firstGifFrame(gifBomb(7000, 7000), 1024)
    expect([canvas.width, canvas.height]).toEqual([1167, 1167])
    expect(canvas.rgba.length).toBe(1167 * 1167 * 4)
    expect(Array.from(canvas.rgba.subarray(-4))).toEqual([128, 128, 128, 255])
  })
})

/** Decoded RGBA of an image file, by libvips. */
async function rgbaOfFile(file: Uint8Array): Promise<Buffer> {
  return sharp(file).ensureAlpha().raw().toBuffer()
}

describe('what the model is sent', () => {
  test.each([
    ['the first frame of an animation', makeAnimatedGif(48, 24, 3)],
    ['an interlaced frame', makeStillGif(37, 29, { interlaced: true })],
    ['a transparent index', makeStillGif(20, 12, { transparentIndex: 3 })],
    [
      'a frame smaller than its screen, with a transparent index',
      makeStillGif(40, 30, { frame: { left: 7, top: 5, width: 21, height: 13 }, transparentIndex: 0 }),
    ],
  ])('%s within maxSide: an indexed PNG of the same pixels as the canvas', async (_name, gif) => {
    const frame = gifFrameForModel(gif, 64)
    if (!('png' in frame)) throw new Error('expected a PNG')
    expect(frame.png[25]).toBe(3) // colour type 3: a palette
    const canvas = firstGifFrame(gif, 64)
    expect([frame.width, frame.height]).toEqual([canvas.width, canvas.height])
    expect(Buffer.from(await rgbaOfFile(frame.png)).equals(Buffer.from(canvas.rgba))).toBe(true)
  })

  test('a frame smaller than its screen with no transparent index: RGBA pixels, transparent around it', () => {
    const gif = makeStillGif(40, 30, { frame: { left: 7, top: 5, width: 21, height: 13 } })
    const frame = gifFrameForModel(gif, 64)
    if (!('pixels' in frame)) throw new Error('expected pixels')
    expect(frame.channels).toBe(4)
    expect(Buffer.from(frame.pixels).equals(Buffer.from(firstGifFrame(gif, 64).rgba))).toBe(true)
  })

  test('an opaque frame over maxSide: RGB pixels to resize', () => {
    const gif = makeAnimatedGif(48, 24, 3)
    const frame = gifFrameForModel(gif, 32)
    if (!('pixels' in frame)) throw new Error('expected pixels')
    expect([frame.width, frame.height, frame.channels]).toEqual([48, 24, 3])
    const rgba = firstGifFrame(gif, 32).rgba
    const rgb = rgba.filter((_, i) => i % 4 !== 3)
    expect(Buffer.from(frame.pixels).equals(Buffer.from(rgb))).toBe(true)
  })

  test('a transparent frame over maxSide: RGBA pixels', () => {
    const frame = gifFrameForModel(makeStillGif(48, 24, { transparentIndex: 2 }), 32)
    expect('pixels' in frame && frame.channels).toBe(4)
  })
})

describe("a frame larger than the decoder's window, decoded through compactions", () => {
  // The service's window is 12 MiB; 1 MiB makes these frames compact it a few times.
  const WINDOW = 1024 * 1024

  test('long LZW strings from a real encoder: the same pixels as libvips decodes', async () => {
    const [width, height] = [2000, 1800]
    const rgb = new Uint8Array(width * height * 3)
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const at = (y * width + x) * 3
        rgb[at] = (((x >> 3) ^ (y >> 4)) & 7) * 32
        rgb[at + 1] = (((x + y) >> 5) & 3) * 80
        rgb[at + 2] = ((y >> 7) & 1) * 255
      }
    }
    const gif = new Uint8Array(
      await sharp(rgb, { raw: { width, height, channels: 3 } })
        .gif({ effort: 1, dither: 0 })
        .toBuffer(),
    )
    const canvas = firstGifFrame(gif, 4096, WINDOW)
    expect(Buffer.from(canvas.rgba).equals(await rgbaOfFile(gif))).toBe(true)
  })

  test('interlaced: rows drawn in their passes across compactions', () => {
    const gif = makeStillGif(1500, 1000, { interlaced: true })
    expect(Buffer.from(firstGifFrame(gif, 4096, WINDOW).rgba).equals(Buffer.from(referenceCanvas(gif).rgba))).toBe(true)
  })

  test('a dictionary that lives through every compaction (no clear code after it fills)', () => {
    // 4 colours (clear 4, end 5): literals fill the table with entries 6…4095 of two pixels each, then
    // codes pick those entries in a scattered order until the frame is full.
    const codes: Array<[number, number]> = [[4, 3]]
    const widthFor = (decoderNext: number) => Math.min(12, Math.max(3, 32 - Math.clz32(decoderNext)))
    for (let i = 0; i < 4092; i++) codes.push([(i * 7 + (i >> 3)) & 3, widthFor(6 + Math.max(0, i - 1))])
    const [width, height] = [1000, 600]
    for (let pixels = 4092; pixels < width * height; pixels += 2) codes.push([6 + ((Math.imul(pixels, 2654435761) >>> 0) % 4090), 12])
    const gif = gifFromLzwCodes(width, height, codes)
    expect(Buffer.from(firstGifFrame(gif, 4096, 64 * 1024).rgba).equals(Buffer.from(referenceCanvas(gif).rgba))).toBe(true)
  })

  test('a 7000×7000 bomb through the real window: every pixel its one colour', () => {
    const canvas = firstGifFrame(gifBomb(7000, 7000), 1024)
    const first = canvas.rgba.subarray(0, 4)
    expect(canvas.rgba.every((value, i) => value === first[i % 4])).toBe(true)
  })
})

describe('malformed LZW data is refused, never looped on', () => {
  const refuse = (gif: Uint8Array, reason: RegExp) => expect(() => firstGifFrame(gif, 1024)).toThrow(reason)

  test('the hostile GIF: a code beyond the dictionary', () => {
    expect(() => firstGifFrame(hostileGif(), 1024)).toThrow(GifDataError)
    refuse(hostileGif(), /code 7 is beyond its dictionary \(6 entries\)/)
  })

  test('a first code that is not a literal', () => {
    refuse(
      gifFromLzwCodes(4, 4, [
        [4, 3],
        [6, 3],
      ]),
      /code 6 comes before any literal/,
    )
  })

  test('an end code before the frame is complete', () => {
    refuse(
      gifFromLzwCodes(4, 4, [
        [4, 3],
        [0, 3],
        [5, 3],
      ]),
      /ends before the frame is complete/,
    )
  })

  test('data that runs out before the frame is complete', () => {
    refuse(
      gifFromLzwCodes(4, 4, [
        [4, 3],
        [1, 3],
      ]),
      /ends before the frame is complete/,
    )
  })

  test('a minimum code size out of range', () => {
    const gif = makeAnimatedGif(16, 16)
    const damaged = gif.slice()
    damaged[damaged.indexOf(0x2c, 13 + 48 + 19) + 10] = 11
    refuse(damaged, /minimum code size 11/)
  })

  test('codes after the last pixel are ignored, as browsers do', () => {
    const gif = gifFromLzwCodes(2, 1, [
      [4, 3],
      [1, 3],
      [2, 3],
      [7, 3], // would be beyond the dictionary, but the frame is full already
    ])
    expect(Array.from(firstGifFrame(gif, 1024).rgba)).toEqual([255, 255, 255, 255, 0, 0, 0, 255])
  })

  test('a frame that lies outside its logical screen', () => {
    const gif = makeStillGif(40, 30, { frame: { left: 7, top: 5, width: 21, height: 13 } })
    const damaged = gif.slice()
    damaged[6] = 20 // the screen's width, now narrower than the frame's right edge (28)
    refuse(damaged, /outside its logical screen/)
  })

  test('a broken container', () => {
    expect(() => firstGifFrame(makeAnimatedGif(16, 16).slice(0, 40), 1024)).toThrow(GifDataError)
  })
})
