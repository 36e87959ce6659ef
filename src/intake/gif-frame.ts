// The first frame of a GIF, decoded with a bounded LZW decoder and drawn for the model.
//
// omggif parses the container here (frames, palettes, transparency), but its LZW decoder is not used:
// it accepts a code beyond the dictionary and never clears its table, so a few hundred hostile bytes
// make an entry its own prefix and the decoder chase it for ever. This one refuses every code that is
// not yet defined, and the work is bounded by the bits read plus the pixels written (never more than
// the frame holds).
//
// Each dictionary entry is a place in the output already decoded (where its prefix's string was
// written, one pixel longer), so a code costs one copy, not a walk of its prefix chain: 3× faster. The
// output is kept in a window of at most WINDOW_BYTES; a larger frame has its finished rows drawn and
// the window compacted to what the dictionary still points at.
//
// A frame that needs no resize leaves as an indexed PNG of its palette (one byte a pixel to compress,
// not four); a larger one as RGB pixels (RGBA where something is transparent) for sharp to resize; one
// over twice the longest side wanted is box-averaged while drawn, so a huge GIF never becomes a
// full-size RGBA buffer.
import { GifReader } from 'omggif'
import { indexedPng } from './indexed-png.ts'

/** A GIF that cannot be decoded; the message says why, for the refusal. */
export class GifDataError extends Error {}

export type GifCanvas = {
  /** RGBA, `width`×`height`, transparent where the first frame does not draw. */
  rgba: Uint8Array<ArrayBuffer>
  width: number
  height: number
}

/** What the model is sent of a GIF: its first frame as PNG, or as pixels still to resize. */
export type GifFrame =
  | { png: Uint8Array<ArrayBuffer>; width: number; height: number }
  | { pixels: Uint8Array<ArrayBuffer>; width: number; height: number; channels: 3 | 4 }

const MAX_CODES = 4096
/** The longest string one code can stand for: a full dictionary's last entry, plus one. */
const MAX_STRING = MAX_CODES + 1
/**
 * The output window of a frame larger than it. What the dictionary can point at is at most the sum
 * of its entries' lengths (about 8.4 MB with 4096 entries) plus the row being written, so a
 * compaction always frees at least 4 MB.
 */
const WINDOW_BYTES = 12 * 1024 * 1024

/** By how much a canvas is box-reduced before the final resize, so its longest side stays under 2×maxSide. */
export function gifReduction(width: number, height: number, maxSide: number): number {
  return Math.max(1, Math.floor(Math.max(width, height) / maxSide))
}

/**
 * Bytes a GIF's preparation holds at its peak: the worker's copy of the file and of its image data,
 * the decoder's window, the canvas (or its box sums), the encoder's copy of the pixels and its
 * conversion, the resize's float rows, the output.
 */
export function gifPrepareBytes(fileBytes: number, width: number, height: number, maxSide: number): number {
  const factor = gifReduction(width, height, maxSide)
  const reducedWidth = Math.ceil(width / factor)
  const reducedHeight = Math.ceil(height / factor)
  const reduced = reducedWidth * reducedHeight
  const window = Math.min(width * height, WINDOW_BYTES)
  const canvas = factor === 1 ? reduced * 4 : reduced * 16 + reduced * 4
  const longest = Math.max(reducedWidth, reducedHeight)
  const resize = longest > maxSide ? Math.ceil((16 * reduced * maxSide) / longest) : 0
  return 2 * fileBytes + window + canvas + reduced * 8 + resize + maxSide * maxSide * 8
}

/** Receives the frame's rows in the order they are decoded; `row` holds palette indices. */
interface Canvas {
  drawRow(frameY: number, row: Uint8Array): void
}

type Frame = { x: number; y: number; width: number; height: number; transparent: number; palette: Uint8Array; interlaced: boolean; dataOffset: number }

/** The logical screen and the first frame on it. */
type FirstFrame = { width: number; height: number; frame: Frame }

/**
 * The first frame of `bytes` on its logical screen, reduced by gifReduction(…, maxSide), as RGBA.
 * `windowBytes` is the decoder's window (tests make it small to compact often). Throws GifDataError for anything undecodable: a broken container, a code beyond the dictionary,
 * data that ends before the frame is full.
 */
export function firstGifFrame(bytes: Uint8Array, maxSide: number, windowBytes = WINDOW_BYTES): GifCanvas {
  const gif = readFirstFrame(bytes)
  const factor = gifReduction(gif.width, gif.height, maxSide)
  if (factor > 1) {
    const canvas = new ReducedCanvas(gif, factor)
    decodeRows(bytes, gif.frame, canvas, windowBytes)
    return canvas.finish()
  }
  const canvas = new FullCanvas(gif, 4)
  decodeRows(bytes, gif.frame, canvas, windowBytes)
  const { pixels, width, height } = canvas.finish()
  return { rgba: pixels, width, height }
}

/**
 * The first frame of `bytes` as the model is sent it: an indexed PNG when the screen is within
 * maxSide, else pixels to resize (RGB when nothing is transparent). Throws GifDataError as firstGifFrame.
 */
export function gifFrameForModel(bytes: Uint8Array, maxSide: number): GifFrame {
  const gif = readFirstFrame(bytes)
  const { frame } = gif
  const covers = frame.x === 0 && frame.y === 0 && frame.width === gif.width && frame.height === gif.height
  // Where the frame does not draw is transparent, which a palette can only say with an index of its own.
  if (Math.max(gif.width, gif.height) <= maxSide && (covers || frame.transparent >= 0)) {
    const canvas = new IndexedCanvas(gif)
    decodeRows(bytes, frame, canvas, WINDOW_BYTES)
    return { png: canvas.finish(), width: gif.width, height: gif.height }
  }
  if (gifReduction(gif.width, gif.height, maxSide) > 1) {
    const { rgba, width, height } = firstGifFrame(bytes, maxSide)
    return { pixels: rgba, width, height, channels: 4 }
  }
  // libvips resizes RGB 2–3× faster than RGBA, whose alpha it premultiplies first.
  const canvas = new FullCanvas(gif, covers && frame.transparent < 0 ? 3 : 4)
  decodeRows(bytes, frame, canvas, WINDOW_BYTES)
  return canvas.finish()
}

function readFirstFrame(bytes: Uint8Array): FirstFrame {
  let reader: GifReader
  try {
    reader = new GifReader(bytes)
  } catch (error) {
    throw new GifDataError(error instanceof Error ? error.message : String(error))
  }
  if (reader.numFrames() < 1) throw new GifDataError('GIF has no frame')
  const info = reader.frameInfo(0)
  if (info.x + info.width > reader.width || info.y + info.height > reader.height) throw new GifDataError('GIF frame lies outside its logical screen')
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
    interlaced: info.interlaced,
    dataOffset: info.data_offset,
  }
  return { width: reader.width, height: reader.height, frame }
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

/** The image data's sub-blocks end to end, followed by three zero bytes (so a code is read in one step). */
function gatherSubBlocks(bytes: Uint8Array, offset: number): { data: Uint8Array; truncated: boolean } {
  const data = new Uint8Array(Math.max(0, bytes.length - offset) + 3)
  let length = 0
  let p = offset
  while (p < bytes.length) {
    const size = bytes[p]!
    if (size === 0) break
    const end = p + 1 + size
    data.set(bytes.subarray(p + 1, Math.min(end, bytes.length)), length)
    if (end > bytes.length) return { data: data.subarray(0, length + bytes.length - p - 1 + 3), truncated: true }
    length += size
    p = end
  }
  return { data: data.subarray(0, length + 3), truncated: false }
}

/** The LZW stream of `frame` (minimum code size, then sub-blocks), handed to `canvas` row by row. */
function decodeRows(bytes: Uint8Array, frame: Frame, canvas: Canvas, windowBytes: number): void {
  const { width, height } = frame
  if (width === 0 || height === 0) return
  const minCodeSize = bytes[frame.dataOffset] ?? 0
  if (minCodeSize < 1 || minCodeSize > 8) throw new GifDataError(`GIF LZW minimum code size ${minCodeSize} is out of range`)
  const { data, truncated } = gatherSubBlocks(bytes, frame.dataOffset + 1)
  const totalBits = (data.length - 3) * 8
  const pixels = width * height
  const output = new Uint8Array(Math.min(pixels, windowBytes))
  const windowed = output.length < pixels
  const rows = new RowOrder(height, frame.interlaced)
  const clearCode = 1 << minCodeSize
  const endCode = clearCode + 1
  // Where each entry's string stands in `output`, and its length.
  const start = new Int32Array(MAX_CODES)
  const length = new Uint16Array(MAX_CODES)

  let codeSize = minCodeSize + 1
  let mask = (1 << codeSize) - 1
  let nextCode = endCode + 1
  // The string the previous code wrote (-1 after a clear): the next entry is it plus one pixel.
  let previousStart = -1
  let previousLength = 0
  let bitPos = 0
  let pos = 0
  // Where the first row not yet drawn starts in `output`; the pixels still to write, counted from the window's start.
  let rowStart = 0
  let left = pixels
  // Past this point in the window the longest string may not fit: compact first (never, unwindowed).
  const compactAt = windowed ? output.length - MAX_STRING : output.length

  while (pos < left) {
    if (pos > compactAt) {
      rowStart = drawRows(canvas, rows, output, rowStart, pos, width)
      const moved = compact(output, start, length, endCode + 1, nextCode, Math.min(rowStart, previousStart === -1 ? rowStart : previousStart), pos)
      left -= pos - moved.pos
      rowStart -= moved.shift
      if (previousStart !== -1) previousStart -= moved.shift
      pos = moved.pos
      // Cannot happen with WINDOW_BYTES (see there); refused rather than written past the window.
      if (pos > compactAt) throw new GifDataError("GIF frame's dictionary does not fit the decoder's window")
    }
    if (bitPos + codeSize > totalBits) {
      throw new GifDataError(truncated ? 'GIF ends inside its image data' : 'GIF image data ends before the frame is complete')
    }
    const byte = bitPos >>> 3
    const code = ((data[byte]! | (data[byte + 1]! << 8) | (data[byte + 2]! << 16)) >>> (bitPos & 7)) & mask
    bitPos += codeSize

    if (code < clearCode) {
      // A literal: the hot path, most codes of a photo-like GIF.
      if (previousStart !== -1 && nextCode < MAX_CODES) {
        start[nextCode] = previousStart
        length[nextCode] = previousLength + 1
        if (++nextCode > mask && codeSize < 12) mask = (1 << ++codeSize) - 1
      }
      previousStart = pos
      previousLength = 1
      output[pos++] = code
      continue
    }
    let from: number
    let size: number
    if (code === clearCode) {
      codeSize = minCodeSize + 1
      mask = (1 << codeSize) - 1
      nextCode = endCode + 1
      previousStart = -1
      continue
    } else if (code === endCode) {
      throw new GifDataError('GIF image data ends before the frame is complete')
    } else if (previousStart === -1) {
      throw new GifDataError(`GIF LZW code ${code} comes before any literal`)
    } else if (code < nextCode) {
      from = start[code]!
      size = length[code]!
    } else if (code === nextCode && nextCode < MAX_CODES) {
      // The entry this very code defines: the previous string plus its own first pixel.
      from = previousStart
      size = previousLength + 1
    } else {
      throw new GifDataError(`GIF LZW code ${code} is beyond its dictionary (${nextCode} entries)`)
    }
    // The new entry's last pixel is the first one this code writes, at `pos`, just after the previous string.
    if (nextCode < MAX_CODES) {
      start[nextCode] = previousStart
      length[nextCode] = previousLength + 1
      if (++nextCode > mask && codeSize < 12) mask = (1 << ++codeSize) - 1
    }
    previousStart = pos
    previousLength = size
    // Data after the last pixel is ignored, as browsers do. A long string is copied at memory speed;
    // a short one, or one that overlaps its own copy (the entry this code defines), a pixel at a time.
    const count = Math.min(size, left - pos)
    if (count > 16 && from + count <= pos) {
      output.copyWithin(pos, from, from + count)
      pos += count
      continue
    }
    const end = pos + count
    while (pos < end) output[pos++] = output[from++]!
  }
  drawRows(canvas, rows, output, rowStart, pos, width)
}

/** Draws the whole rows of `output` from `rowStart` to `pos`; returns where the rows not drawn start. */
function drawRows(canvas: Canvas, rows: RowOrder, output: Uint8Array, rowStart: number, pos: number, width: number): number {
  // A function of its own, not a closure: one over the decoder's counters would slow every access to them.
  let at = rowStart
  for (; pos - at >= width; at += width) {
    canvas.drawRow(rows.y, output.subarray(at, at + width))
    rows.next()
  }
  return at
}

/**
 * Moves what the dictionary's entries (codes `firstEntry`…`nextCode`−1) and the tail from `tailStart`
 * to `pos` point at to the front of `output`, in order, and updates the entries. The tail (the rows
 * not yet drawn and the previous string, which end at `pos`) moves last, so writing goes on after it.
 */
function compact(
  output: Uint8Array,
  start: Int32Array,
  length: Uint16Array,
  firstEntry: number,
  nextCode: number,
  tailStart: number,
  pos: number,
): { pos: number; shift: number } {
  // Entries are made in the order of their start; an entry starting in the tail lies within it.
  const spans: number[] = []
  const push = (from: number, to: number): void => {
    const last = spans.length - 1
    if (last > 0 && from <= spans[last]!) spans[last] = Math.max(spans[last]!, to)
    else spans.push(from, to)
  }
  for (let code = firstEntry; code < nextCode && start[code]! < tailStart; code++) push(start[code]!, start[code]! + length[code]!)
  push(tailStart, pos)
  const shifts: number[] = []
  let to = 0
  for (let i = 0; i < spans.length; i += 2) {
    output.copyWithin(to, spans[i]!, spans[i + 1]!)
    shifts.push(spans[i]! - to)
    to += spans[i + 1]! - spans[i]!
  }
  let span = 0
  for (let code = firstEntry; code < nextCode; code++) {
    while (start[code]! >= spans[span * 2 + 1]!) span++
    start[code] = start[code]! - shifts[span]!
  }
  return { pos: to, shift: shifts[shifts.length - 1]! }
}

/** The palette's colours; the transparent index (if any) as transparent black. */
function colourWords(frame: Frame): Uint32Array {
  const colours = new Uint32Array(256)
  // RGBA bytes in memory order are one little-endian word: R | G << 8 | B << 16 | A << 24.
  const view = new DataView(colours.buffer)
  for (let i = 0; i < 256; i++) {
    view.setUint32(i * 4, ((frame.palette[i * 3]! << 24) | (frame.palette[i * 3 + 1]! << 16) | (frame.palette[i * 3 + 2]! << 8) | 0xff) >>> 0, false)
  }
  if (frame.transparent >= 0) colours[frame.transparent] = 0
  return colours
}

/** The screen at full size as palette indices, for an indexed PNG; outside the frame, the transparent index. */
class IndexedCanvas implements Canvas {
  private readonly width: number
  private readonly height: number
  private readonly frame: Frame
  /** PNG scanlines: a filter byte (0, none) and the row's indices. */
  private readonly scanlines: Uint8Array
  constructor({ width, height, frame }: FirstFrame) {
    this.width = width
    this.height = height
    this.frame = frame
    this.scanlines = new Uint8Array((width + 1) * height)
    if (frame.transparent >= 0) {
      for (let y = 0; y < height; y++) this.scanlines.fill(frame.transparent, y * (width + 1) + 1, (y + 1) * (width + 1))
    }
  }
  drawRow(frameY: number, row: Uint8Array): void {
    this.scanlines.set(row, (this.frame.y + frameY) * (this.width + 1) + 1 + this.frame.x)
  }
  finish(): Uint8Array<ArrayBuffer> {
    const { palette, transparent } = this.frame
    const colours = palette.slice()
    // Transparent black, as on the RGBA canvases.
    if (transparent >= 0) colours.fill(0, transparent * 3, transparent * 3 + 3)
    return indexedPng(this.width, this.height, this.scanlines, colours, transparent)
  }
}

/** The canvas at full size (at most 2×maxSide a side): RGBA, or RGB for a frame that covers it opaquely. */
class FullCanvas implements Canvas {
  private readonly width: number
  private readonly height: number
  private readonly frame: Frame
  private readonly pixels: Uint8Array<ArrayBuffer>
  private readonly words: Uint32Array | null
  private readonly colours: Uint32Array
  constructor(
    { width, height, frame }: FirstFrame,
    private readonly channels: 3 | 4,
  ) {
    this.width = width
    this.height = height
    this.frame = frame
    this.pixels = new Uint8Array(width * height * channels)
    this.words = channels === 4 ? new Uint32Array(this.pixels.buffer) : null
    this.colours = colourWords(frame)
  }
  drawRow(frameY: number, row: Uint8Array): void {
    const start = (this.frame.y + frameY) * this.width + this.frame.x
    const transparent = this.frame.transparent
    if (this.words) {
      const { words, colours } = this
      for (let x = 0; x < row.length; x++) {
        const index = row[x]!
        if (index !== transparent) words[start + x] = colours[index]!
      }
      return
    }
    // RGB: no pixel is transparent (see gifFrameForModel).
    const { pixels, frame } = this
    for (let x = 0, at = start * 3; x < row.length; x++, at += 3) {
      const colour = row[x]! * 3
      pixels[at] = frame.palette[colour]!
      pixels[at + 1] = frame.palette[colour + 1]!
      pixels[at + 2] = frame.palette[colour + 2]!
    }
  }
  finish(): { pixels: Uint8Array<ArrayBuffer>; width: number; height: number; channels: 3 | 4 } {
    return { pixels: this.pixels, width: this.width, height: this.height, channels: this.channels }
  }
}

/** The canvas reduced by `factor`: per cell, the sums of its opaque pixels' colours and their count. */
class ReducedCanvas implements Canvas {
  private readonly canvasWidth: number
  private readonly canvasHeight: number
  private readonly frame: Frame
  private readonly width: number
  private readonly height: number
  private readonly sums: Uint32Array | Float64Array
  constructor(
    { width, height, frame }: FirstFrame,
    private readonly factor: number,
  ) {
    this.canvasWidth = width
    this.canvasHeight = height
    this.frame = frame
    this.width = Math.ceil(width / factor)
    this.height = Math.ceil(height / factor)
    // 32-bit sums hold 255 × factor² as long as factor stays below 4104.
    this.sums = factor < 4096 ? new Uint32Array(this.width * this.height * 4) : new Float64Array(this.width * this.height * 4)
  }
  drawRow(frameY: number, row: Uint8Array): void {
    const y = this.frame.y + frameY
    const { palette, transparent } = this.frame
    const factor = this.factor
    const sums = this.sums
    const visible = row.length
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
