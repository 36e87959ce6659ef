// The bounded GIF decoder fuzzed: on GIFs omggif's GifWriter makes (random sizes, palettes, frames,
// transparency, offsets, interlace) the first frame's pixels are omggif's and, as sent to the model,
// what sharp reads back; on mutated GIFs it gives a frame or a GifDataError, never another exception.
// omggif decodes only the valid ones: its own LZW decoder can loop for ever on hostile data (see gif-frame.ts).
import { describe, expect, test } from 'bun:test'
import { GifReader, GifWriter } from 'omggif'
import sharp from 'sharp'
import { firstGifFrame, GifDataError, gifFrameForModel } from '../../src/intake/gif-frame.ts'
import { fuzzCases, mutate, type Random } from '../support/fuzz.ts'
import { decodeGif, interlacedRowOrder, makeStillGif } from '../support/images.ts'

type Made = { gif: Uint8Array; width: number; height: number }

const palette = (r: Random, size: number) => Array.from({ length: size }, () => r.int(0x1000000))

/** Palette indices of kinds that LZW codes differently: noise, runs, stripes, a gradient. */
function indices(r: Random, width: number, height: number, colours: number): Uint8Array {
  const out = new Uint8Array(width * height)
  const kind = r.int(4)
  for (let i = 0; i < out.length; i++) {
    const x = i % width
    const y = Math.floor(i / width)
    out[i] = kind === 0 ? r.int(colours) : kind === 1 ? (r.chance(0.02) ? r.int(colours) : 0) : kind === 2 ? (y >> 1) % colours : (x + y) % colours
  }
  if (kind === 1) for (let i = 1; i < out.length; i++) if (out[i] === 0) out[i] = out[i - 1]!
  return out
}

/** Rows in the order an interlaced frame stores them. */
function interlacedRows(pixels: Uint8Array, width: number, height: number): Uint8Array {
  const out = new Uint8Array(pixels.length)
  for (const [row, y] of interlacedRowOrder(height).entries()) out.set(pixels.subarray(y * width, (y + 1) * width), row * width)
  return out
}

function makeGif(r: Random): Made {
  const big = r.chance(0.1)
  const width = r.range(1, big ? 300 : 40)
  const height = r.range(1, big ? 200 : 40)
  const globalSize = 2 ** r.range(1, 8)
  const global = r.chance(0.7) ? palette(r, globalSize) : undefined
  // Room for three frames of 12-bit codes and their palettes.
  const buffer = new Uint8Array(4096 + 3 * (width * height * 2 + 1024))
  const writer = new GifWriter(buffer, width, height, { palette: global, ...(r.chance(0.3) ? { loop: 0 } : {}) })
  const frames = r.range(1, 3)
  const interlace = r.chance(0.3)
  for (let frame = 0; frame < frames; frame++) {
    const local = global === undefined || r.chance(0.3) ? palette(r, 2 ** r.range(1, 8)) : undefined
    const colours = (local ?? global)!.length
    const w = r.chance(0.5) ? width : r.range(1, width)
    const h = r.chance(0.5) ? height : r.range(1, height)
    const x = r.int(width - w + 1)
    const y = r.int(height - h + 1)
    let pixels = indices(r, w, h, colours)
    if (frame === 0 && interlace) pixels = interlacedRows(pixels, w, h)
    const options = { palette: local, ...(r.chance(0.4) ? { transparent: r.int(colours) } : {}), delay: r.int(3) }
    // omggif's types ask for number[]; it reads any array of indices.
    writer.addFrame(x, y, w, h, pixels as unknown as number[], options)
  }
  const gif = buffer.slice(0, writer.end())
  if (interlace) {
    // GifWriter writes no interlaced frame: the rows went in in interlace order, and the flag is set here.
    const info = new GifReader(gif).frameInfo(0)
    // The descriptor's flags byte is just before the local palette, or the data when there is none.
    const local = info.palette_offset !== null && info.palette_offset === info.data_offset - info.palette_size! * 3
    const descriptorFlags = local ? info.palette_offset! - 1 : info.data_offset - 1
    gif[descriptorFlags]! |= 0x40
  }
  return { gif, width, height }
}

/**
 * omggif's first frame on a transparent canvas of the screen's size. An interlaced frame of fewer than
 * 5 rows omggif draws wrongly (it does not skip an empty pass, and puts a row below the frame): there the
 * reference is the test support's own decoder.
 */
function reference(gif: Uint8Array): Uint8Array {
  const reader = new GifReader(gif)
  const canvas = new Uint8Array(reader.width * reader.height * 4)
  const info = reader.frameInfo(0)
  if (!info.interlaced || info.height >= 5) {
    reader.decodeAndBlitFrameRGBA(0, canvas)
    return canvas
  }
  const frame = decodeGif(gif).frames[0]!
  for (let y = 0; y < frame.height; y++) {
    for (let x = 0; x < frame.width; x++) {
      const from = (y * frame.width + x) * 4
      if (frame.rgba[from + 3] !== 0) canvas.set(frame.rgba.subarray(from, from + 4), ((frame.top + y) * reader.width + frame.left + x) * 4)
    }
  }
  return canvas
}

/** What the model is sent, as RGBA (a PNG read back by sharp). */
async function sentAsRgba(gif: Uint8Array, maxSide: number): Promise<Uint8Array> {
  const frame = gifFrameForModel(gif, maxSide)
  if ('png' in frame) return new Uint8Array(await sharp(frame.png).ensureAlpha().raw().toBuffer())
  if (frame.channels === 4) return frame.pixels
  const rgba = new Uint8Array(frame.width * frame.height * 4)
  for (let i = 0; i < frame.width * frame.height; i++) rgba.set([...frame.pixels.subarray(i * 3, i * 3 + 3), 255], i * 4)
  return rgba
}

describe('GIFs as omggif writes them', () => {
  test('3 × 100: the first frame is the pixels omggif draws, and what the model is sent reads back the same', async () => {
    await fuzzCases(100, async (r) => {
      const { gif, width, height } = makeGif(r)
      const expected = reference(gif)
      const canvas = firstGifFrame(gif, 4096)
      expect([canvas.width, canvas.height]).toEqual([width, height])
      expect(Buffer.from(canvas.rgba).equals(Buffer.from(expected))).toBe(true)
      // 4096: an indexed PNG (or RGB/RGBA pixels when the frame leaves the screen uncovered).
      expect(Buffer.from(await sentAsRgba(gif, 4096)).equals(Buffer.from(expected))).toBe(true)
    })
  })
})

describe('where omggif is not the reference', () => {
  test('an interlaced frame of 3 rows: ours draws what libvips draws; omggif puts its last stored row in the wrong place', async () => {
    const gif = makeStillGif(9, 3, { interlaced: true })
    const ours = firstGifFrame(gif, 4096).rgba
    const vips = new Uint8Array(await sharp(gif).ensureAlpha().raw().toBuffer())
    expect(Buffer.from(ours).equals(Buffer.from(vips))).toBe(true)
    const omggif = new Uint8Array(ours.length)
    new GifReader(gif).decodeAndBlitFrameRGBA(0, omggif)
    expect(Buffer.from(omggif).equals(Buffer.from(ours))).toBe(false)
  })
})

describe('mutated GIFs', () => {
  test('3 × 400: a frame of the screen size, or a GifDataError; never another exception', async () => {
    await fuzzCases(400, (r) => {
      const { gif } = makeGif(r)
      const mutated = r.chance(0.3) ? gif.slice(0, r.int(gif.length)) : mutate(r, gif, 3)
      for (const decode of [() => firstGifFrame(mutated, 4096), () => firstGifFrame(mutated, 16, 4096), () => gifFrameForModel(mutated, 32)]) {
        try {
          const frame = decode()
          expect(frame.width).toBeGreaterThan(0)
        } catch (error) {
          if (!(error instanceof GifDataError)) throw error
        }
      }
    })
  })
})
