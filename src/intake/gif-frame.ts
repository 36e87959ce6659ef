// The first frame of a GIF, decoded with a bounded LZW decoder and reduced while it is drawn.
//
// omggif parses the container here (frames, palettes, transparency), but its LZW decoder is not used:
// it accepts a code beyond the dictionary and never clears its table, so a few hundred hostile bytes
// make an entry its own prefix and the decoder chase it for ever. This one refuses every code that is
// not yet defined, so each entry's prefix is an older entry, and the work is bounded by the bits read
// plus the pixels written (never more than the frame holds).
//
// Pixels go straight onto the canvas, box-averaged by an integer factor when the canvas is more than
// twice the longest side wanted: a huge GIF never becomes a full-size RGBA buffer.
import { GifReader } from 'omggif'

/** A GIF that cannot be decoded; the message says why, for the refusal. */
export class GifDataError extends Error {}

export type GifCanvas = {
  /** RGBA, `width`×`height`, transparent where the first frame does not draw. */
  rgba: Uint8Array<ArrayBuffer>
  width: number
  height: number
}

const MAX_CODES = 4096

/** By how much a canvas is box-reduced before the final resize, so its longest side stays under 2×maxSide. */
export function gifReduction(width: number, height: number, maxSide: number): number {
  return Math.max(1, Math.floor(Math.max(width, height) / maxSide))
}

/**
 * Bytes a GIF's preparation holds at its peak: the worker's copy of the file, the canvas (or its box
 * sums), the encoder's copy of the RGBA and its conversion, the resize's float rows, the output.
 */
export function gifPrepareBytes(fileBytes: number, width: number, height: number, maxSide: number): number {
  const factor = gifReduction(width, height, maxSide)
  const reducedWidth = Math.ceil(width / factor)
  const reducedHeight = Math.ceil(height / factor)
  const reduced = reducedWidth * reducedHeight
  const canvas = factor === 1 ? reduced * 4 : reduced * 16 + reduced * 4
  const longest = Math.max(reducedWidth, reducedHeight)
  const resize = longest > maxSide ? Math.ceil((16 * reduced * maxSide) / longest) : 0
  return fileBytes + canvas + reduced * 8 + resize + maxSide * maxSide * 8
}

/** Receives the frame's rows in the order they are decoded; `row` holds palette indices. */
interface Canvas {
  drawRow(frameY: number, row: Uint8Array): void
  finish(): GifCanvas
}

type Frame = { x: number; y: number; width: number; height: number; transparent: number; palette: Uint8Array }

/**
 * The first frame of `bytes` on its logical screen, reduced by gifReduction(…, maxSide). Throws
 * GifDataError for anything undecodable: a broken container, a code beyond the dictionary, data that
 * ends before the frame is full.
 */
export function firstGifFrame(bytes: Uint8Array, maxSide: number): GifCanvas {
  let reader: GifReader
  try {
    reader = new GifReader(bytes)
  } catch (error) {
    throw new GifDataError(error instanceof Error ? error.message : String(error))
  }
  if (reader.numFrames() < 1) throw new GifDataError('GIF has no frame')
  const info = reader.frameInfo(0)
  // Entries past the table's end (or a table missing altogether) read as black.
  const palette = new Uint8Array(256 * 3)
  const paletteStart = info.palette_offset ?? bytes.length
  palette.set(bytes.subarray(paletteStart, Math.min(bytes.length, paletteStart + Math.min(info.palette_size ?? 0, 256) * 3)))
  const frame: Frame = {
    x: info.x,
    y: info.y,
    width: info.width,
    height: info.height,
    transparent: info.transparent_index ?? -1,
    palette,
  }
  const factor = gifReduction(reader.width, reader.height, maxSide)
  const canvas = factor === 1 ? new FullCanvas(reader.width, reader.height, frame) : new ReducedCanvas(reader.width, reader.height, factor, frame)
  decodeRows(bytes, info.data_offset, frame.width, frame.height, info.interlaced, canvas)
  return canvas.finish()
}

/** Rows in decoding order → their y in the frame: 0, 8, 16 … 4, 12 … 2, 6 … 1, 3 … when interlaced. */
class RowOrder {
  private pass = 0
  y = 0
  constructor(
    private readonly height: number,
    private readonly interlaced: boolean,
  ) {}
  next(): void {
    if (!this.interlaced) {
      this.y++
      return
    }
    const steps = [8, 8, 4, 2]
    const starts = [0, 4, 2, 1]
    this.y += steps[this.pass]!
    while (this.y >= this.height && this.pass < 3) {
      this.pass++
      this.y = starts[this.pass]!
    }
  }
}

/** The LZW stream at `offset` (minimum code size, then sub-blocks), handed to `canvas` row by row. */
function decodeRows(bytes: Uint8Array, offset: number, width: number, height: number, interlaced: boolean, canvas: Canvas): void {
  if (width === 0 || height === 0) return
  const minCodeSize = bytes[offset] ?? 0
  if (minCodeSize < 1 || minCodeSize > 8) throw new GifDataError(`GIF LZW minimum code size ${minCodeSize} is out of range`)
  const clearCode = 1 << minCodeSize
  const endCode = clearCode + 1
  const prefix = new Uint16Array(MAX_CODES)
  const suffix = new Uint8Array(MAX_CODES)
  const first = new Uint8Array(MAX_CODES)
  const length = new Uint16Array(MAX_CODES)
  for (let code = 0; code < clearCode; code++) {
    suffix[code] = code
    first[code] = code
    length[code] = 1
  }
  const stack = new Uint8Array(MAX_CODES)
  const row = new Uint8Array(width)
  const order = new RowOrder(height, interlaced)
  let rowsLeft = height
  let x = 0

  let codeSize = minCodeSize + 1
  let nextCode = endCode + 1
  let previous = -1
  let bits = 0
  let bitCount = 0
  // Sub-blocks: `p` reads within the current one, which ends at `blockEnd`.
  let p = offset + 1
  let blockEnd = p
  let dataLeft = true

  while (rowsLeft > 0) {
    while (bitCount < codeSize && dataLeft) {
      if (p === blockEnd) {
        const size = bytes[p]
        if (size === undefined || size === 0) {
          dataLeft = false
          break
        }
        blockEnd = p + 1 + size
        p++
        if (blockEnd > bytes.length) throw new GifDataError('GIF ends inside its image data')
      }
      bits |= bytes[p++]! << bitCount
      bitCount += 8
    }
    if (bitCount < codeSize) throw new GifDataError('GIF image data ends before the frame is complete')
    const code = bits & ((1 << codeSize) - 1)
    bits >>>= codeSize
    bitCount -= codeSize

    if (code === clearCode) {
      codeSize = minCodeSize + 1
      nextCode = endCode + 1
      previous = -1
      continue
    }
    if (code === endCode) throw new GifDataError('GIF image data ends before the frame is complete')
    let stringCode: number
    if (previous === -1) {
      if (code > endCode) throw new GifDataError(`GIF LZW code ${code} comes before any literal`)
      stringCode = code
    } else if (code < nextCode) {
      stringCode = code
    } else if (code === nextCode && nextCode < MAX_CODES) {
      stringCode = -1 // the entry this very code defines: previous + its own first byte
    } else {
      throw new GifDataError(`GIF LZW code ${code} is beyond its dictionary (${nextCode} entries)`)
    }
    if (previous !== -1 && nextCode < MAX_CODES) {
      prefix[nextCode] = previous
      first[nextCode] = first[previous]!
      suffix[nextCode] = stringCode === -1 ? first[previous]! : first[stringCode]!
      length[nextCode] = length[previous]! + 1
      if (stringCode === -1) stringCode = nextCode
      nextCode++
      if (nextCode === 1 << codeSize && codeSize < 12) codeSize++
    }
    previous = code

    // Each prefix is an older entry, so this walk ends within `length` steps. A string that fits in
    // the row is written there directly, back to front; one that spills over goes through `stack`.
    const size = length[stringCode]!
    let cursor = stringCode
    if (x + size < width) {
      for (let i = x + size - 1; i >= x; i--) {
        row[i] = suffix[cursor]!
        cursor = prefix[cursor]!
      }
      x += size
      continue
    }
    for (let i = size - 1; i >= 0; i--) {
      stack[i] = suffix[cursor]!
      cursor = prefix[cursor]!
    }
    for (let i = 0; i < size; i++) {
      row[x++] = stack[i]!
      if (x === width) {
        canvas.drawRow(order.y, row)
        order.next()
        x = 0
        // Data after the last pixel is ignored, as browsers do.
        if (--rowsLeft === 0) return
      }
    }
  }
}

/** The canvas at full size (at most 2×maxSide a side), one 32-bit RGBA word per pixel. */
class FullCanvas implements Canvas {
  private readonly pixels: Uint32Array<ArrayBuffer>
  private readonly colours = new Uint32Array(256)
  constructor(
    private readonly width: number,
    private readonly height: number,
    private readonly frame: Frame,
  ) {
    this.pixels = new Uint32Array(width * height)
    // RGBA bytes in memory order are one little-endian word: R | G << 8 | B << 16 | A << 24.
    const view = new DataView(this.colours.buffer)
    for (let i = 0; i < 256; i++) {
      view.setUint32(i * 4, ((frame.palette[i * 3]! << 24) | (frame.palette[i * 3 + 1]! << 16) | (frame.palette[i * 3 + 2]! << 8) | 0xff) >>> 0, false)
    }
  }
  drawRow(frameY: number, row: Uint8Array): void {
    const y = this.frame.y + frameY
    if (y >= this.height) return
    const start = y * this.width + this.frame.x
    const visible = Math.min(row.length, this.width - this.frame.x)
    const transparent = this.frame.transparent
    for (let x = 0; x < visible; x++) {
      const index = row[x]!
      if (index !== transparent) this.pixels[start + x] = this.colours[index]!
    }
  }
  finish(): GifCanvas {
    return { rgba: new Uint8Array(this.pixels.buffer), width: this.width, height: this.height }
  }
}

/** The canvas reduced by `factor`: per cell, the sums of its opaque pixels' colours and their count. */
class ReducedCanvas implements Canvas {
  private readonly width: number
  private readonly height: number
  private readonly sums: Uint32Array | Float64Array
  constructor(
    private readonly canvasWidth: number,
    private readonly canvasHeight: number,
    private readonly factor: number,
    private readonly frame: Frame,
  ) {
    this.width = Math.ceil(canvasWidth / factor)
    this.height = Math.ceil(canvasHeight / factor)
    // 32-bit sums hold 255 × factor² as long as factor stays below 4104.
    this.sums = factor < 4096 ? new Uint32Array(this.width * this.height * 4) : new Float64Array(this.width * this.height * 4)
  }
  drawRow(frameY: number, row: Uint8Array): void {
    const y = this.frame.y + frameY
    if (y >= this.canvasHeight) return
    const { palette, transparent } = this.frame
    const factor = this.factor
    const sums = this.sums
    const visible = Math.min(row.length, this.canvasWidth - this.frame.x)
    let cell = (Math.floor(y / factor) * this.width + Math.floor(this.frame.x / factor)) * 4
    // The row's pixels in runs that fall into one cell each: summed here, added to the cell once.
    let x = 0
    let cellEnd = Math.min(visible, factor - (this.frame.x % factor))
    while (x < visible) {
      let red = 0
      let green = 0
      let blue = 0
      let opaque = 0
      for (; x < cellEnd; x++) {
        const index = row[x]!
        if (index === transparent) continue
        const colour = index * 3
        red += palette[colour]!
        green += palette[colour + 1]!
        blue += palette[colour + 2]!
        opaque++
      }
      sums[cell] = sums[cell]! + red
      sums[cell + 1] = sums[cell + 1]! + green
      sums[cell + 2] = sums[cell + 2]! + blue
      sums[cell + 3] = sums[cell + 3]! + opaque
      cell += 4
      cellEnd = Math.min(visible, cellEnd + factor)
    }
  }
  finish(): GifCanvas {
    const rgba = new Uint8Array(this.width * this.height * 4)
    const { factor, sums } = this
    for (let cellY = 0; cellY < this.height; cellY++) {
      const cellHeight = Math.min(factor, this.canvasHeight - cellY * factor)
      for (let cellX = 0; cellX < this.width; cellX++) {
        const at = (cellY * this.width + cellX) * 4
        const opaque = sums[at + 3]!
        if (opaque === 0) continue
        const cellPixels = Math.min(factor, this.canvasWidth - cellX * factor) * cellHeight
        rgba[at] = Math.round(sums[at]! / opaque)
        rgba[at + 1] = Math.round(sums[at + 1]! / opaque)
        rgba[at + 2] = Math.round(sums[at + 2]! / opaque)
        rgba[at + 3] = Math.round((255 * opaque) / cellPixels)
      }
    }
    return { rgba, width: this.width, height: this.height }
  }
}
