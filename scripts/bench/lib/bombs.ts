// Decompression "bombs" for scenario 7: small files that decode to a huge canvas. A 7000×7000 image
// (49 megapixels, under the service's pixel limit, so it is accepted and decoded) of one colour:
//  - PNG, 8-bit RGBA: 196 MB of pixels, deflated to ~190 KB;
//  - GIF, one frame, 2-colour palette: LZW of one index run, ~35 KB.
// Both are written here without decoding or encoding the canvas (a few hundred ms, little memory).
import { deflateSync } from 'node:zlib'

const PNG_SIGNATURE = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0))
  let offset = 0
  for (const part of parts) {
    out.set(part, offset)
    offset += part.length
  }
  return out
}

function pngChunk(type: string, data: Uint8Array): Uint8Array {
  const chunk = new Uint8Array(12 + data.length)
  const view = new DataView(chunk.buffer)
  view.setUint32(0, data.length)
  for (let i = 0; i < 4; i++) chunk[4 + i] = type.charCodeAt(i)
  chunk.set(data, 8)
  view.setUint32(8 + data.length, Bun.hash.crc32(chunk.subarray(4, 8 + data.length)))
  return chunk
}

/** A valid one-colour RGBA PNG of width×height (filter 0 on every row). */
export function pngBomb(width: number, height: number, rgba: [number, number, number, number] = [40, 120, 200, 255]): Uint8Array {
  const ihdr = new Uint8Array(13)
  const view = new DataView(ihdr.buffer)
  view.setUint32(0, width)
  view.setUint32(4, height)
  ihdr.set([8, 6, 0, 0, 0], 8) // 8 bits, RGBA, deflate, filter method 0, no interlace
  const row = new Uint8Array(1 + width * 4)
  for (let x = 0; x < width; x++) row.set(rgba, 1 + x * 4)
  const raw = new Uint8Array(row.length * height)
  for (let y = 0; y < height; y++) raw.set(row, y * row.length)
  const idat = new Uint8Array(deflateSync(raw, { level: 9 }))
  return concat([PNG_SIGNATURE, pngChunk('IHDR', ihdr), pngChunk('IDAT', idat), pngChunk('IEND', new Uint8Array(0))])
}

/**
 * LZW code stream (GIF flavour, LSB first) of `pixels` copies of index 0, exactly as a greedy encoder
 * (omggif's GifWriter) emits it: runs of length 1, 2, 3, ... each one dictionary entry longer, a clear
 * code when the table is full. Computed run by run, not pixel by pixel.
 */
function lzwOneIndex(pixels: number, minCodeSize: number): Uint8Array {
  const clear = 1 << minCodeSize
  const eoi = clear + 1
  const out: number[] = []
  let bits = 0
  let bitCount = 0
  let codeSize = minCodeSize + 1
  const emit = (code: number) => {
    bits |= code << bitCount
    bitCount += codeSize
    while (bitCount >= 8) {
      out.push(bits & 0xff)
      bits >>>= 8
      bitCount -= 8
    }
  }
  // The code of a run of `length` zeros: the literal 0, or the entry made for that length after a clear.
  const codeOf = (length: number) => (length === 1 ? 0 : clear + length)
  let nextCode = eoi + 1
  let longest = 1 // longest run with a code
  emit(clear)
  let run = 1
  let remaining = pixels - 1
  for (;;) {
    const extend = Math.min(longest - run, remaining)
    run += extend
    remaining -= extend
    if (remaining === 0) break
    emit(codeOf(run))
    if (nextCode === 4096) {
      emit(clear)
      nextCode = eoi + 1
      codeSize = minCodeSize + 1
      longest = 1
    } else {
      if (nextCode >= 1 << codeSize) codeSize++
      nextCode++
      longest = run + 1
    }
    run = 1
    remaining -= 1
  }
  emit(codeOf(run))
  emit(eoi)
  if (bitCount > 0) out.push(bits & 0xff)
  return Uint8Array.from(out)
}

/** A valid one-frame GIF89a of width×height, every pixel palette index 0. */
export function gifBomb(width: number, height: number): Uint8Array {
  const head = new Uint8Array(13 + 12 + 10)
  const view = new DataView(head.buffer)
  head.set([0x47, 0x49, 0x46, 0x38, 0x39, 0x61]) // GIF89a
  view.setUint16(6, width, true)
  view.setUint16(8, height, true)
  head[10] = 0x80 | 0x01 // global colour table of 4 entries (2^(1+1))
  head.set([30, 90, 160, 250, 250, 250, 0, 0, 0, 255, 255, 255], 13)
  // Image descriptor: whole canvas, no local table, not interlaced.
  const d = 25
  head[d] = 0x2c
  view.setUint16(d + 5, width, true)
  view.setUint16(d + 7, height, true)
  const minCodeSize = 2
  const lzw = lzwOneIndex(width * height, minCodeSize)
  const blocks: number[] = [minCodeSize]
  for (let offset = 0; offset < lzw.length; offset += 255) {
    const block = lzw.subarray(offset, Math.min(offset + 255, lzw.length))
    blocks.push(block.length, ...block)
  }
  blocks.push(0, 0x3b) // end of image data, trailer
  return concat([head, Uint8Array.from(blocks)])
}
