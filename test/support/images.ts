// Real image bytes made at test time, so no binary fixtures live in the repo.
// PNG/JPEG/WebP come from @napi-rs/image's encoders; it has no GIF encoder,
// so the animated GIF and the "bomb" PNG header are assembled by hand here.
import { deflateSync } from 'node:zlib'
import { Transformer } from '@napi-rs/image'
import sharp, { type SharpInput } from 'sharp'

/** The parts, one after another, in one new array. */
function concatBytes(parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0))
  let offset = 0
  for (const part of parts) {
    out.set(part, offset)
    offset += part.length
  }
  return out
}

export interface ImageSize {
  width: number
  height: number
  /** Lower-case format name as @napi-rs/image reports it: 'png', 'jpeg', 'webp', 'gif', ... */
  format: string
}

/** RGBA pixels with a gradient plus a checker, so encoders cannot collapse it to a flat colour. */
function patternRgba(width: number, height: number): Uint8Array {
  assertDimensions(width, height)
  const pixels = new Uint8Array(width * height * 4)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const offset = (y * width + x) * 4
      const checker = ((x >> 3) + (y >> 3)) % 2 === 0 ? 0 : 96
      pixels[offset] = Math.round((x / Math.max(1, width - 1)) * 255)
      pixels[offset + 1] = Math.round((y / Math.max(1, height - 1)) * 255)
      pixels[offset + 2] = (128 + checker) & 0xff
      pixels[offset + 3] = 255
    }
  }
  return pixels
}

function assertDimensions(width: number, height: number): void {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    throw new RangeError(`image dimensions must be positive integers, got ${width}x${height}`)
  }
}

function toPlainBytes(buffer: Uint8Array): Uint8Array<ArrayBuffer> {
  // Copy out of Node's Buffer so callers get a plain Uint8Array that owns its memory.
  return new Uint8Array(buffer)
}

export function makePng(width: number, height: number): Uint8Array<ArrayBuffer> {
  return toPlainBytes(Transformer.fromRgbaPixels(patternRgba(width, height), width, height).pngSync())
}

export function makeJpeg(width: number, height: number, quality = 85): Uint8Array<ArrayBuffer> {
  return toPlainBytes(Transformer.fromRgbaPixels(patternRgba(width, height), width, height).jpegSync(quality))
}

export function makeWebp(width: number, height: number, quality = 80): Uint8Array<ArrayBuffer> {
  return toPlainBytes(Transformer.fromRgbaPixels(patternRgba(width, height), width, height).webpSync(quality))
}

// ---------------------------------------------------------------------------
// Animated GIF (GIF89a), hand-encoded.

/** 16-entry global palette; frame N draws with entries 2N and 2N+1 so frames differ in colour. */
const GIF_PALETTE: ReadonlyArray<readonly [number, number, number]> = [
  [255, 0, 0],
  [255, 200, 200],
  [0, 160, 0],
  [200, 255, 200],
  [0, 0, 255],
  [200, 200, 255],
  [255, 255, 0],
  [100, 100, 0],
  [0, 255, 255],
  [0, 100, 100],
  [255, 0, 255],
  [100, 0, 100],
  [0, 0, 0],
  [255, 255, 255],
  [255, 128, 0],
  [128, 64, 0],
]
/** log2(palette size); also the LZW minimum code size. */
const GIF_COLOR_BITS = 4

class ByteWriter {
  private readonly chunks: number[] = []
  byte(value: number): void {
    this.chunks.push(value & 0xff)
  }
  u16le(value: number): void {
    this.byte(value)
    this.byte(value >> 8)
  }
  bytes(values: ArrayLike<number>): void {
    for (let i = 0; i < values.length; i++) this.byte(values[i] ?? 0)
  }
  ascii(text: string): void {
    for (let i = 0; i < text.length; i++) this.byte(text.charCodeAt(i))
  }
  toBytes(): Uint8Array<ArrayBuffer> {
    return Uint8Array.from(this.chunks)
  }
}

/**
 * "Uncompressed" GIF LZW: every code is a literal palette index, and a clear code is
 * emitted before the decoder's dictionary would grow past the current code width, so
 * the width never changes. Valid for every conforming decoder, just not small.
 */
function lzwEncodeLiterals(indices: Uint8Array, minCodeSize: number): Uint8Array {
  const clearCode = 1 << minCodeSize
  const endCode = clearCode + 1
  const codeWidth = minCodeSize + 1
  // After a clear, the first literal adds no entry and each later one adds one; entries
  // start at clearCode+2 and the width grows when the next entry reaches 1<<codeWidth.
  const literalsPerClear = clearCode - 2

  const out: number[] = []
  let bitBuffer = 0
  let bitCount = 0
  const writeCode = (code: number): void => {
    bitBuffer |= code << bitCount
    bitCount += codeWidth
    while (bitCount >= 8) {
      out.push(bitBuffer & 0xff)
      bitBuffer >>>= 8
      bitCount -= 8
    }
  }

  for (let i = 0; i < indices.length; i++) {
    if (i % literalsPerClear === 0) writeCode(clearCode)
    writeCode(indices[i] ?? 0)
  }
  writeCode(endCode)
  if (bitCount > 0) out.push(bitBuffer & 0xff)
  return Uint8Array.from(out)
}

/** An image descriptor (0x2c) for a frame at (left, top), with no local colour table. */
function writeImageDescriptor(gif: ByteWriter, frame: { left: number; top: number; width: number; height: number }, interlaced = false): void {
  gif.byte(0x2c)
  gif.u16le(frame.left)
  gif.u16le(frame.top)
  gif.u16le(frame.width)
  gif.u16le(frame.height)
  gif.byte(interlaced ? 0x40 : 0)
}

function writeSubBlocks(writer: ByteWriter, data: Uint8Array): void {
  for (let offset = 0; offset < data.length; offset += 255) {
    const block = data.subarray(offset, Math.min(offset + 255, data.length))
    writer.byte(block.length)
    writer.bytes(block)
  }
  writer.byte(0) // block terminator
}

/**
 * A valid, looping animated GIF89a: NETSCAPE2.0 loop extension, `frames` full-size
 * frames (>= 2), each striped in its own pair of palette colours, 100 ms apart.
 */
export function makeAnimatedGif(width: number, height: number, frames = 2): Uint8Array<ArrayBuffer> {
  assertDimensions(width, height)
  if (width > 0xffff || height > 0xffff) throw new RangeError('GIF dimensions are 16-bit')
  if (!Number.isInteger(frames) || frames < 2) throw new RangeError('an animated GIF needs >= 2 frames')

  const gif = new ByteWriter()
  gif.ascii('GIF89a')

  // Logical screen descriptor with a global colour table of 2^GIF_COLOR_BITS entries.
  gif.u16le(width)
  gif.u16le(height)
  const tableSizeField = GIF_COLOR_BITS - 1
  gif.byte(0x80 | (tableSizeField << 4) | tableSizeField)
  gif.byte(0) // background colour index
  gif.byte(0) // pixel aspect ratio: unspecified
  for (const [r, g, b] of GIF_PALETTE) gif.bytes([r, g, b])

  // NETSCAPE2.0 application extension: loop forever (count 0).
  gif.bytes([0x21, 0xff, 0x0b])
  gif.ascii('NETSCAPE2.0')
  gif.bytes([0x03, 0x01])
  gif.u16le(0)
  gif.byte(0)

  const pixelIndices = new Uint8Array(width * height)
  for (let frame = 0; frame < frames; frame++) {
    const colorA = (frame * 2) % GIF_PALETTE.length
    const colorB = (frame * 2 + 1) % GIF_PALETTE.length
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        // Diagonal stripes that also shift per frame.
        pixelIndices[y * width + x] = ((x + y + frame) >> 2) % 2 === 0 ? colorA : colorB
      }
    }

    // Graphic control extension: disposal "do not dispose", 10/100 s delay, no transparency.
    gif.bytes([0x21, 0xf9, 0x04, 0x04])
    gif.u16le(10)
    gif.bytes([0x00, 0x00])

    // Image descriptor covering the whole canvas, no local colour table, not interlaced.
    writeImageDescriptor(gif, { left: 0, top: 0, width, height })

    gif.byte(GIF_COLOR_BITS) // LZW minimum code size
    writeSubBlocks(gif, lzwEncodeLiterals(pixelIndices, GIF_COLOR_BITS))
  }

  gif.byte(0x3b) // trailer
  return gif.toBytes()
}

export interface DecodedGifFrame {
  left: number
  top: number
  width: number
  height: number
  /** Graphic-control delay in 1/100 s, or null when the frame has no GCE. */
  delayCentiseconds: number | null
  /** Palette index per pixel, row-major, de-interlaced. */
  indices: Uint8Array
  /** The same pixels as RGBA (alpha 255, or 0 for the GCE's transparent index). */
  rgba: Uint8Array
}

export interface DecodedGif {
  width: number
  height: number
  /** NETSCAPE2.0 loop count (0 = forever), or null without that extension. */
  loopCount: number | null
  frames: DecodedGifFrame[]
}

/** General GIF LZW decoder (variable code width, dictionary growth, KwKwK case, missing end code). */
function lzwDecode(data: Uint8Array, minCodeSize: number, pixelCount: number): Uint8Array {
  if (minCodeSize < 2 || minCodeSize > 8) throw new Error(`bad LZW minimum code size ${minCodeSize}`)
  const clearCode = 1 << minCodeSize
  const endCode = clearCode + 1
  const prefix = new Int16Array(4096)
  const suffix = new Uint8Array(4096)
  const firstByte = new Uint8Array(4096)
  const stringLength = new Uint16Array(4096)
  for (let code = 0; code < clearCode; code++) {
    prefix[code] = -1
    suffix[code] = code
    firstByte[code] = code
    stringLength[code] = 1
  }

  const output = new Uint8Array(pixelCount)
  let written = 0
  let codeSize = minCodeSize + 1
  let nextCode = endCode + 1
  let previousCode = -1
  let bitBuffer = 0
  let bitCount = 0
  let dataOffset = 0
  let sawEnd = false

  const emit = (code: number): void => {
    const length = stringLength[code] ?? 0
    if (written + length > pixelCount) throw new Error('GIF frame has more pixels than its size')
    let cursor = code
    for (let i = length - 1; i >= 0; i--) {
      output[written + i] = suffix[cursor] ?? 0
      cursor = prefix[cursor] ?? -1
    }
    written += length
  }

  while (!sawEnd) {
    while (bitCount < codeSize) {
      const byte = data[dataOffset++]
      if (byte === undefined) {
        // Common encoders omit the end code once every pixel is out; decoders accept that.
        if (written === pixelCount) return output
        throw new Error(`LZW data ended after ${written} of ${pixelCount} pixels`)
      }
      bitBuffer |= byte << bitCount
      bitCount += 8
    }
    const code = bitBuffer & ((1 << codeSize) - 1)
    bitBuffer >>>= codeSize
    bitCount -= codeSize

    if (code === clearCode) {
      codeSize = minCodeSize + 1
      nextCode = endCode + 1
      previousCode = -1
      continue
    }
    if (code === endCode) {
      sawEnd = true
      continue
    }
    if (previousCode === -1) {
      if (code >= clearCode) throw new Error(`LZW code ${code} before any literal`)
      emit(code)
      previousCode = code
      continue
    }

    let newEntryLastByte: number
    if (code < nextCode) {
      newEntryLastByte = firstByte[code] ?? 0
    } else if (code === nextCode) {
      newEntryLastByte = firstByte[previousCode] ?? 0 // the KwKwK case
    } else {
      throw new Error(`LZW code ${code} beyond dictionary size ${nextCode}`)
    }
    if (nextCode < 4096) {
      prefix[nextCode] = previousCode
      suffix[nextCode] = newEntryLastByte
      firstByte[nextCode] = firstByte[previousCode] ?? 0
      stringLength[nextCode] = (stringLength[previousCode] ?? 0) + 1
      nextCode++
      if (nextCode === 1 << codeSize && codeSize < 12) codeSize++
    }
    emit(code)
    previousCode = code
  }
  if (written !== pixelCount) throw new Error(`GIF frame decoded ${written} of ${pixelCount} pixels`)
  return output
}

/** The picture row of each stored row of an interlaced frame: every 8th from 0, every 8th from 4, every 4th from 2, every 2nd from 1. */
export function interlacedRowOrder(height: number): number[] {
  const order: number[] = []
  for (const [start, step] of [
    [0, 8],
    [4, 8],
    [2, 4],
    [1, 2],
  ] as const) {
    for (let y = start; y < height; y += step) order.push(y)
  }
  return order
}

function deinterlace(rows: Uint8Array, width: number, height: number): Uint8Array {
  const out = new Uint8Array(rows.length)
  for (const [row, y] of interlacedRowOrder(height).entries()) out.set(rows.subarray(row * width, (row + 1) * width), y * width)
  return out
}

/**
 * Decodes every frame of a GIF87a/GIF89a. @napi-rs/image 1.15 cannot decode GIF at all
 * ("The image format Gif is not supported"), so tests verify GIF fixtures with this.
 * Throws on any structural or LZW error.
 */
export function decodeGif(bytes: Uint8Array): DecodedGif {
  const signature = String.fromCharCode(...bytes.subarray(0, 6))
  if (signature !== 'GIF89a' && signature !== 'GIF87a') throw new Error('not a GIF')
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const screenWidth = view.getUint16(6, true)
  const screenHeight = view.getUint16(8, true)
  const screenFlags = view.getUint8(10)
  let offset = 13

  const readColorTable = (flags: number): Uint8Array => {
    const size = 3 * (1 << ((flags & 0x07) + 1))
    if (offset + size > bytes.length) throw new Error('GIF truncated inside a colour table')
    const table = bytes.subarray(offset, offset + size)
    offset += size
    return table
  }
  const readSubBlocks = (): Uint8Array => {
    const parts: Uint8Array[] = []
    for (;;) {
      const size = bytes[offset]
      if (size === undefined) throw new Error('GIF truncated inside sub-blocks')
      offset += 1
      if (size === 0) break
      if (offset + size > bytes.length) throw new Error('GIF truncated inside a sub-block')
      parts.push(bytes.subarray(offset, offset + size))
      offset += size
    }
    return concatBytes(parts)
  }

  const globalColorTable = screenFlags & 0x80 ? readColorTable(screenFlags) : null
  let loopCount: number | null = null
  let pendingDelay: number | null = null
  let pendingTransparentIndex: number | null = null
  const frames: DecodedGifFrame[] = []

  for (;;) {
    const introducer = bytes[offset]
    if (introducer === undefined) throw new Error('GIF has no trailer')
    offset += 1
    if (introducer === 0x3b) break

    if (introducer === 0x21) {
      const label = bytes[offset]
      offset += 1
      const payload = readSubBlocks()
      if (label === 0xf9 && payload.length >= 4) {
        const gce = new DataView(payload.buffer, payload.byteOffset, payload.byteLength)
        pendingDelay = gce.getUint16(1, true)
        pendingTransparentIndex = (payload[0] ?? 0) & 0x01 ? (payload[3] ?? 0) : null
      } else if (label === 0xff && payload.length >= 14) {
        const application = String.fromCharCode(...payload.subarray(0, 11))
        if (application === 'NETSCAPE2.0' && payload[11] === 0x01) {
          loopCount = (payload[12] ?? 0) | ((payload[13] ?? 0) << 8)
        }
      }
      continue
    }

    if (introducer !== 0x2c) {
      throw new Error(`unexpected GIF block 0x${introducer.toString(16)} at ${offset - 1}`)
    }
    if (offset + 9 > bytes.length) throw new Error('GIF truncated inside an image descriptor')
    const left = view.getUint16(offset, true)
    const top = view.getUint16(offset + 2, true)
    const width = view.getUint16(offset + 4, true)
    const height = view.getUint16(offset + 6, true)
    const imageFlags = view.getUint8(offset + 8)
    offset += 9
    const colorTable = imageFlags & 0x80 ? readColorTable(imageFlags) : globalColorTable
    if (!colorTable) throw new Error('GIF frame has no colour table')
    const minCodeSize = bytes[offset]
    if (minCodeSize === undefined) throw new Error('GIF truncated before LZW data')
    offset += 1
    const decodedRows = lzwDecode(readSubBlocks(), minCodeSize, width * height)
    const indices = imageFlags & 0x40 ? deinterlace(decodedRows, width, height) : decodedRows

    const rgba = new Uint8Array(width * height * 4)
    for (let i = 0; i < indices.length; i++) {
      const index = indices[i] ?? 0
      rgba[i * 4] = colorTable[index * 3] ?? 0
      rgba[i * 4 + 1] = colorTable[index * 3 + 1] ?? 0
      rgba[i * 4 + 2] = colorTable[index * 3 + 2] ?? 0
      rgba[i * 4 + 3] = index === pendingTransparentIndex ? 0 : 255
    }
    frames.push({ left, top, width, height, delayCentiseconds: pendingDelay, indices, rgba })
    pendingDelay = null
    pendingTransparentIndex = null
  }

  return { width: screenWidth, height: screenHeight, loopCount, frames }
}

// ---------------------------------------------------------------------------
// Decompression-bomb PNG header.

const CRC32_TABLE = (() => {
  const table = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    table[n] = c >>> 0
  }
  return table
})()

function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff
  for (const byte of bytes) crc = (CRC32_TABLE[(crc ^ byte) & 0xff] ?? 0) ^ (crc >>> 8)
  return (crc ^ 0xffffffff) >>> 0
}

function pngChunk(type: string, data: Uint8Array): Uint8Array {
  const chunk = new Uint8Array(12 + data.length)
  const view = new DataView(chunk.buffer)
  view.setUint32(0, data.length)
  for (let i = 0; i < 4; i++) chunk[4 + i] = type.charCodeAt(i)
  chunk.set(data, 8)
  // The CRC covers the type and the data, not the length.
  view.setUint32(8 + data.length, crc32(chunk.subarray(4, 8 + data.length)))
  return chunk
}

const PNG_SIGNATURE = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)

/**
 * A tiny PNG (well under 200 bytes) whose IHDR claims `width`x`height` 8-bit RGB, with
 * correct CRCs and a valid zlib IDAT holding only the first scanline's worth of zeros
 * (compressed). A service must refuse it from the header alone; a full decode would
 * try to allocate width*height*3 bytes and then fail on the short pixel data.
 */
export function makePngHeaderOnly(width = 40000, height = 40000): Uint8Array<ArrayBuffer> {
  assertDimensions(width, height)
  if (width > 0x7fffffff || height > 0x7fffffff) throw new RangeError('PNG dimensions are 31-bit')

  const ihdr = new Uint8Array(13)
  const ihdrView = new DataView(ihdr.buffer)
  ihdrView.setUint32(0, width)
  ihdrView.setUint32(4, height)
  ihdr[8] = 8 // bit depth
  ihdr[9] = 2 // colour type: truecolour RGB
  ihdr[10] = 0 // compression: deflate
  ihdr[11] = 0 // filter method
  ihdr[12] = 0 // interlace: none

  // One filter byte + one zero scanline (capped) — zeros deflate to a few bytes.
  const scanlineBytes = 1 + Math.min(width * 3, 1 << 16)
  // PNG wants a zlib-wrapped stream (node:zlib's deflate), not raw deflate (Bun.deflateSync).
  const idat = new Uint8Array(deflateSync(new Uint8Array(scanlineBytes), { level: 9 }))

  const chunks = [PNG_SIGNATURE, pngChunk('IHDR', ihdr), pngChunk('IDAT', idat), pngChunk('IEND', new Uint8Array(0))]
  return concatBytes(chunks)
}

/** The width/height an IHDR claims, read directly (no decoder involved). */
export function readPngHeaderDimensions(bytes: Uint8Array): { width: number; height: number } {
  for (let i = 0; i < PNG_SIGNATURE.length; i++) {
    if (bytes[i] !== PNG_SIGNATURE[i]) throw new Error('not a PNG')
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  return { width: view.getUint32(16), height: view.getUint32(20) }
}

// ---------------------------------------------------------------------------

/** A copy of the first `keepFraction` (0..1) of the bytes, e.g. to simulate a cut-off upload. */
export function truncate(bytes: Uint8Array, keepFraction: number): Uint8Array<ArrayBuffer> {
  if (!(keepFraction >= 0 && keepFraction <= 1)) {
    throw new RangeError(`keepFraction must be within [0, 1], got ${keepFraction}`)
  }
  return bytes.slice(0, Math.floor(bytes.length * keepFraction))
}

function isGif(bytes: Uint8Array): boolean {
  return bytes.length >= 10 && bytes[0] === 0x47 && bytes[1] === 0x49 && bytes[2] === 0x46 && bytes[3] === 0x38
}

/**
 * Dimensions and format as @napi-rs/image's metadata reports them (header parse, no full
 * decode). That library has no GIF support, so GIFs are answered from the logical screen
 * descriptor instead, with format 'gif'. Throws on bytes it cannot identify.
 */
export function imageSize(bytes: Uint8Array): ImageSize {
  if (isGif(bytes)) {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    return { width: view.getUint16(6, true), height: view.getUint16(8, true), format: 'gif' }
  }
  const { width, height, format } = new Transformer(bytes).metadataSync()
  return { width, height, format }
}

// ---------------------------------------------------------------------------
// Hostile and bomb images: small files that cost a decoder far more than their size.

/** Packs GIF LZW codes (each with its bit width) LSB-first, the way GIF stores them. */
function packLzwCodes(codes: ReadonlyArray<readonly [code: number, width: number]>): Uint8Array {
  const out: number[] = []
  let bitBuffer = 0
  let bitCount = 0
  for (const [code, width] of codes) {
    bitBuffer |= code << bitCount
    bitCount += width
    while (bitCount >= 8) {
      out.push(bitBuffer & 0xff)
      bitBuffer >>>= 8
      bitCount -= 8
    }
  }
  if (bitCount > 0) out.push(bitBuffer & 0xff)
  return Uint8Array.from(out)
}

/**
 * A still GIF89a of `width`×`height` whose image data is exactly `codes` (LZW minimum code size 2, a
 * 4-colour palette): for decoder tests that need a particular, possibly malformed, code sequence.
 */
export function gifFromLzwCodes(width: number, height: number, codes: ReadonlyArray<readonly [code: number, width: number]>): Uint8Array<ArrayBuffer> {
  return stillGif(width, height, packLzwCodes(codes))
}

export interface StillGifOptions {
  /** Rows stored in the four interlace passes. */
  interlaced?: boolean
  /** Palette index drawn as transparent (graphic control extension). */
  transparentIndex?: number
  /** The frame's rectangle on the screen; default the whole screen. */
  frame?: { left: number; top: number; width: number; height: number }
}

/**
 * A still GIF89a on a `width`×`height` screen: one frame in the 16 colours of the animated GIF's
 * palette, in a pattern of diagonal bands, with the options' interlacing, transparency and rectangle.
 */
export function makeStillGif(width: number, height: number, options: StillGifOptions = {}): Uint8Array<ArrayBuffer> {
  assertDimensions(width, height)
  const frame = options.frame ?? { left: 0, top: 0, width, height }
  const rows: number[] = []
  if (options.interlaced) {
    for (const [start, step] of [
      [0, 8],
      [4, 8],
      [2, 4],
      [1, 2],
    ] as const) {
      for (let y = start; y < frame.height; y += step) rows.push(y)
    }
  } else {
    for (let y = 0; y < frame.height; y++) rows.push(y)
  }
  const indices = new Uint8Array(frame.width * frame.height)
  rows.forEach((y, stored) => {
    for (let x = 0; x < frame.width; x++) indices[stored * frame.width + x] = ((x + 2 * y) >> 1) % GIF_PALETTE.length
  })
  const gif = new ByteWriter()
  gif.ascii('GIF89a')
  gif.u16le(width)
  gif.u16le(height)
  gif.byte(0x80 | ((GIF_COLOR_BITS - 1) << 4) | (GIF_COLOR_BITS - 1))
  gif.byte(0)
  gif.byte(0)
  for (const [r, g, b] of GIF_PALETTE) gif.bytes([r, g, b])
  if (options.transparentIndex !== undefined) gif.bytes([0x21, 0xf9, 0x04, 0x01, 0, 0, options.transparentIndex, 0])
  writeImageDescriptor(gif, frame, options.interlaced)
  gif.byte(GIF_COLOR_BITS)
  writeSubBlocks(gif, lzwEncodeLiterals(indices, GIF_COLOR_BITS))
  gif.byte(0x3b)
  return gif.toBytes()
}

/** A still GIF89a: screen and frame `width`×`height`, a 4-colour global palette, LZW minimum code size 2. */
function stillGif(width: number, height: number, lzw: Uint8Array): Uint8Array<ArrayBuffer> {
  const gif = new ByteWriter()
  gif.ascii('GIF89a')
  gif.u16le(width)
  gif.u16le(height)
  gif.byte(0x80 | (1 << 4) | 1) // global colour table of 4 entries
  gif.byte(0)
  gif.byte(0)
  gif.bytes([128, 128, 128, 255, 255, 255, 0, 0, 0, 255, 0, 0])
  writeImageDescriptor(gif, { left: 0, top: 0, width, height })
  gif.byte(2) // LZW minimum code size: clear = 4, end = 5, first free entry 6
  writeSubBlocks(gif, lzw)
  gif.byte(0x3b)
  return gif.toBytes()
}

/**
 * A well-formed 64×64 GIF (header, palette, sub-blocks and trailer all in order) whose LZW codes
 * are malformed: after clear and literal 0, code 7 comes while the next free entry is 6. omggif
 * does not check that, and it never clears its table, so entry 7 ends up pointing at itself
 * (prefix 7); the next code 7 sends its prefix chase round that loop for ever.
 */
export function hostileGif(): Uint8Array<ArrayBuffer> {
  const codes: Array<[number, number]> = [
    [4, 3], // clear
    [0, 3], // literal 0
    [7, 3], // beyond the dictionary (next free is 6): omggif adds entry 6 and remembers 7 as the previous code
    [6, 3], // adds entry 7 with prefix 7: a cycle
    [7, 4], // chases 7 → 7 → 7 …
    [5, 4], // end (never reached by omggif)
  ]
  return stillGif(64, 64, packLzwCodes(codes))
}

/**
 * A valid single-colour GIF of `width`×`height` in as few bytes as LZW allows (about 20 KB for
 * 7000×7000): each code adds an entry one pixel longer than the last, and once the table is full
 * (no clear code) the longest entry repeats. A decoder that makes a full-size RGBA canvas of it
 * allocates width×height×4 bytes.
 */
export function gifBomb(width: number, height: number): Uint8Array<ArrayBuffer> {
  assertDimensions(width, height)
  if (width > 0xffff || height > 0xffff) throw new RangeError('GIF dimensions are 16-bit')
  const minCodeSize = 2
  const firstFree = (1 << minCodeSize) + 2
  // The decoder adds its entries one code later than the encoder, and reads each code with the width
  // its own next free entry calls for.
  const widthFor = (decoderNext: number): number => Math.min(12, Math.max(minCodeSize + 1, 32 - Math.clz32(decoderNext)))
  const codes: Array<[number, number]> = [[1 << minCodeSize, minCodeSize + 1]]
  let remaining = width * height
  let encoderNext = firstFree
  /** The code of the run of `length` zeros: literal 0, or the entry added for that length. */
  const codeFor = (length: number): number => (length === 1 ? 0 : firstFree + length - 2)
  let length = 1
  while (remaining > 0) {
    const run = Math.min(length, remaining)
    codes.push([codeFor(run), widthFor(Math.max(firstFree, encoderNext - 1))])
    remaining -= run
    if (encoderNext < 4096) {
      encoderNext++
      length++
    }
  }
  codes.push([(1 << minCodeSize) + 1, widthFor(Math.max(firstFree, encoderNext - 1))])
  return stillGif(width, height, packLzwCodes(codes))
}

/** Deflate's bit order: values LSB-first, Huffman codes MSB-first. */
class DeflateBits {
  private readonly out: number[] = []
  private buffer = 0
  private count = 0
  bits(value: number, count: number): void {
    for (let i = 0; i < count; i++) this.bit((value >> i) & 1)
  }
  code(code: number, length: number): void {
    for (let i = length - 1; i >= 0; i--) this.bit((code >> i) & 1)
  }
  private bit(bit: number): void {
    this.buffer |= bit << this.count
    if (++this.count === 8) {
      this.out.push(this.buffer)
      this.buffer = 0
      this.count = 0
    }
  }
  toBytes(): Uint8Array {
    if (this.count > 0) this.out.push(this.buffer)
    return Uint8Array.from(this.out)
  }
}

/**
 * zlib data of `length` zero bytes at deflate's best ratio (about 1:1030): one dynamic-Huffman block
 * whose only symbols are literal 0, end of block, and length 258 at distance 1 (one bit each).
 */
function zlibZeros(length: number): Uint8Array {
  const w = new DeflateBits()
  w.bits(1, 1) // final block
  w.bits(2, 2) // dynamic Huffman
  w.bits(286 - 257, 5) // HLIT: symbols up to 285
  w.bits(0, 5) // HDIST: one distance code
  w.bits(18 - 4, 4) // HCLEN: 18 code-length code lengths follow
  // Code-length alphabet in its transmission order; we use 18 (1 bit), 1 and 2 (2 bits each).
  const order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1]
  const clLength: Record<number, number> = { 18: 1, 1: 2, 2: 2 }
  for (const symbol of order) w.bits(clLength[symbol] ?? 0, 3)
  // Canonical codes: 18 → 0, 1 → 10, 2 → 11.
  const cl = { 1: [0b10, 2], 2: [0b11, 2], 18: [0b0, 1] } as const
  const zeros = (count: number): void => {
    w.code(...cl[18])
    w.bits(count - 11, 7)
  }
  w.code(...cl[2]) // literal 0: 2 bits
  zeros(138)
  zeros(117) // literals 1..255 unused
  w.code(...cl[2]) // 256 (end of block): 2 bits
  zeros(28) // lengths 257..284 unused
  w.code(...cl[1]) // 285 (length 258): 1 bit
  w.code(...cl[1]) // distance code 0 (distance 1): 1 bit
  // Canonical literal/length codes: 285 → 0, literal 0 → 10, end → 11; distance 0 → 0.
  w.code(0b10, 2)
  const repeats = Math.floor((length - 1) / 258)
  for (let i = 0; i < repeats; i++) {
    w.code(0, 1)
    w.code(0, 1)
  }
  for (let i = 1 + repeats * 258; i < length; i++) w.code(0b10, 2)
  w.code(0b11, 2)
  const deflated = w.toBytes()
  const zlib = new Uint8Array(2 + deflated.length + 4)
  zlib.set([0x78, 0x01]) // deflate, 32 KB window, no dictionary; (0x7801 % 31 === 0)
  zlib.set(deflated, 2)
  // Adler-32 of zeros: a stays 1, b adds 1 per byte.
  new DataView(zlib.buffer).setUint32(2 + deflated.length, (((length % 65521) << 16) | 1) >>> 0)
  return zlib
}

/**
 * A valid, fully transparent RGBA PNG of `width`×`height` (about 190 KB for 7000×7000) that decodes to
 * width×height×4 bytes: unlike makePngHeaderOnly, its pixel data is all there.
 */
export function pngBomb(width: number, height: number): Uint8Array<ArrayBuffer> {
  assertDimensions(width, height)
  const ihdr = new Uint8Array(13)
  const ihdrView = new DataView(ihdr.buffer)
  ihdrView.setUint32(0, width)
  ihdrView.setUint32(4, height)
  ihdr[8] = 8 // bit depth
  ihdr[9] = 6 // colour type: RGBA
  const idat = zlibZeros(height * (1 + width * 4)) // a filter byte (0) and the zero pixels of each row
  const chunks = [PNG_SIGNATURE, pngChunk('IHDR', ihdr), pngChunk('IDAT', idat), pngChunk('IEND', new Uint8Array(0))]
  return concatBytes(chunks)
}

// ---------------------------------------------------------------------------
// AVIF and animations of solid frames, made by sharp (libheif with aom, libvips' cgif and libwebp).

type Rgb = readonly [number, number, number]

/** An animated GIF or WebP whose frames are each one solid colour (one colour: a still image). */
export async function makeSolidAnimation(format: 'gif' | 'webp', width: number, height: number, colours: ReadonlyArray<Rgb>): Promise<Uint8Array<ArrayBuffer>> {
  const frames = colours.map(([r, g, b]) => ({ create: { width, height, channels: 3 as const, background: { r, g, b } } }))
  // sharp joins created images as it joins files, though its types list only files and buffers.
  const input = frames.length === 1 ? sharp(frames[0]!) : sharp(frames as unknown as SharpInput[], { join: { animated: true } })
  return toPlainBytes(await (format === 'gif' ? input.gif() : input.webp({ lossless: true })).toBuffer())
}

export async function makeAvif(width: number, height: number, colour: Rgb = [255, 0, 0]): Promise<Uint8Array<ArrayBuffer>> {
  const [r, g, b] = colour
  return toPlainBytes(
    await sharp({ create: { width, height, channels: 3, background: { r, g, b } } })
      .avif({ effort: 0 })
      .toBuffer(),
  )
}

/** The AVIF with its image size box ('ispe') saying another size: a file that lies about its size. */
export function withAvifSize(avif: Uint8Array, width: number, height: number): Uint8Array<ArrayBuffer> {
  const lie = new Uint8Array(avif)
  const at = Buffer.from(lie).indexOf('ispe') + 8 // past the type, and the full box's version and flags
  new DataView(lie.buffer).setUint32(at, width)
  new DataView(lie.buffer).setUint32(at + 4, height)
  return lie
}
