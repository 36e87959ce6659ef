// Format sniffing, header dimensions and structural completeness, from the bytes alone
// (never from Content-Type). Runs before any decoder sees the data, so a decompression bomb
// is refused by its header and a cut-off download by its missing end marker.
import { ImageFormatError } from './image-format-error.ts'
import { sanitiseSvg } from './svg.ts'
import type { ImageFormat } from './types.ts'

/** `frames`: how many frames the file holds (GIF and WebP animations); 1 for every other image. */
export type ImageHeader = { format: ImageFormat; width: number; height: number; frames: number }
type Structure = Omit<ImageHeader, 'format'>

function startsWith(bytes: Uint8Array, prefix: ArrayLike<number>, offset = 0): boolean {
  if (bytes.length < offset + prefix.length) return false
  for (let i = 0; i < prefix.length; i++) {
    if (bytes[offset + i] !== prefix[i]) return false
  }
  return true
}

function ascii(bytes: Uint8Array, start: number, end: number): string {
  return String.fromCharCode(...bytes.subarray(start, Math.min(end, bytes.length)))
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]

export function sniffFormat(bytes: Uint8Array): ImageFormat | null {
  if (startsWith(bytes, PNG_SIGNATURE)) return 'png'
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'jpeg'
  const head = ascii(bytes, 0, 6)
  if (head === 'GIF87a' || head === 'GIF89a') return 'gif'
  if (ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 12) === 'WEBP') return 'webp'
  if (isAvif(bytes)) return 'avif'
  if (isSvg(bytes)) return 'svg'
  return null
}

/** An ISO media file (ftyp first) whose major or a compatible brand is AVIF's (still or sequence). */
function isAvif(bytes: Uint8Array): boolean {
  if (bytes.length < 16 || ascii(bytes, 4, 8) !== 'ftyp') return false
  // A cut-off file is still AVIF here, so that its walk calls it truncated.
  const size = Math.min(view(bytes).getUint32(0), bytes.length)
  const brands = [ascii(bytes, 8, 12)]
  for (let at = 16; at + 4 <= size; at += 4) brands.push(ascii(bytes, at, at + 4))
  return brands.includes('avif') || brands.includes('avis')
}

/** XML whose first element, past the declaration, comments and a DOCTYPE, is <svg> (or <prefix:svg>). */
function isSvg(bytes: Uint8Array): boolean {
  let text = new TextDecoder('utf-8', { fatal: false }).decode(bytes.subarray(0, 64 * 1024)).replace(/^\uFEFF/, '')
  for (;;) {
    const rest = text.trimStart()
    const prolog = /^(?:<\?[\s\S]*?\?>|<!--[\s\S]*?-->|<!DOCTYPE[^[>]*(?:\[[\s\S]*?\])?\s*>)/i.exec(rest)
    if (!prolog) return /^<(?:[\w.-]+:)?svg[\s/>]/.test(rest)
    text = rest.slice(prolog[0].length)
  }
}

/** A short name for what unsupported bytes look like, for the refusal message. */
export function describeUnsupported(bytes: Uint8Array): string {
  const head = ascii(bytes, 0, 16)
  if (ascii(bytes, 4, 8) === 'ftyp') {
    const brand = ascii(bytes, 8, 12)
    if (brand === 'avif' || brand === 'avis') return 'avif'
    if (/^(heic|heix|hevc|heim|heis|mif1|msf1)$/.test(brand)) return 'heic'
    return 'iso media'
  }
  if (head.startsWith('BM')) return 'bmp'
  if (head.startsWith('II*\0') || head.startsWith('MM\0*')) return 'tiff'
  if (head.startsWith('%PDF')) return 'pdf'
  if (head.startsWith('8BPS')) return 'psd'
  if (startsWith(bytes, [0x00, 0x00, 0x01, 0x00])) return 'ico'
  if (startsWith(bytes, [0xff, 0x0a]) || ascii(bytes, 4, 8) === 'JXL ') return 'jpeg xl'
  if (ascii(bytes, 0, 4) === 'RIFF') return 'riff'
  if (startsWith(bytes, [0x1f, 0x8b])) return 'gzip'
  if (head.startsWith('PK\x03\x04')) return 'zip'
  // Text: skip a BOM and leading white space, then look at the markup.
  const text = new TextDecoder('utf-8', { fatal: false })
    .decode(bytes.subarray(0, 1024))
    .replace(/^\uFEFF/, '')
    .trimStart()
    .toLowerCase()
  if (/<svg[\s>]/.test(text)) return 'svg'
  if (text.startsWith('<!doctype html') || /<(html|head|body)[\s>]/.test(text)) return 'html'
  if (text.startsWith('<?xml') || text.startsWith('<')) return 'xml'
  if (text.startsWith('{') || text.startsWith('[')) return 'json'
  if (bytes.length > 0 && isMostlyPrintable(bytes.subarray(0, 512))) return 'text'
  return 'unknown data'
}

function isMostlyPrintable(sample: Uint8Array): boolean {
  let printable = 0
  for (const byte of sample) {
    if (byte === 0x09 || byte === 0x0a || byte === 0x0d || (byte >= 0x20 && byte < 0x7f) || byte >= 0x80) printable++
  }
  return printable / sample.length > 0.95
}

const corrupt = (detail: string): ImageFormatError => new ImageFormatError('corrupt', `the image is truncated or corrupt (${detail})`)

/**
 * Format and dimensions from the header, after checking the file's structure up to its end
 * marker. Throws ImageFormatError for empty, unsupported, truncated or malformed bytes.
 */
export function inspectImage(bytes: Uint8Array): ImageHeader {
  if (bytes.length === 0) throw new ImageFormatError('empty', 'the image is empty (0 bytes)')
  const format = sniffFormat(bytes)
  if (format === null) {
    throw new ImageFormatError('unsupported', `the image is not JPEG, PNG, GIF, WebP, AVIF or SVG (found: ${describeUnsupported(bytes)})`)
  }
  const { width, height, frames } = readStructure(format, bytes)
  if (!(width > 0 && height > 0)) throw corrupt(`its header says ${width}×${height} pixels`)
  return { format, width, height, frames }
}

const still = (size: { width: number; height: number }): Structure => ({ ...size, frames: 1 })

/**
 * Dimensions and frames from the header; the walk to the end marker is the truncation check. An SVG
 * is parsed and checked whole (svg.ts): its size is what it declares, in CSS pixels.
 */
function readStructure(format: ImageFormat, bytes: Uint8Array): Structure {
  switch (format) {
    case 'png':
      return still(walkPng(bytes))
    case 'jpeg':
      return still(walkJpeg(bytes))
    case 'gif':
      return walkGif(bytes)
    case 'webp':
      return walkWebp(bytes)
    case 'avif':
      return still(walkAvif(bytes))
    case 'svg': {
      const { width, height } = sanitiseSvg(bytes)
      return still({ width, height })
    }
  }
}

function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

// PNG: signature, IHDR first, then length-prefixed chunks up to IEND.
function walkPng(bytes: Uint8Array): { width: number; height: number } {
  const data = view(bytes)
  let offset = PNG_SIGNATURE.length
  if (bytes.length < offset + 8 + 13 + 4) throw corrupt('PNG header cut short')
  if (data.getUint32(offset) !== 13 || ascii(bytes, offset + 4, offset + 8) !== 'IHDR') throw corrupt('PNG does not start with IHDR')
  const width = data.getUint32(offset + 8)
  const height = data.getUint32(offset + 12)
  let sawImageData = false
  for (;;) {
    if (offset + 8 > bytes.length) throw corrupt('PNG ends before its IEND chunk')
    const length = data.getUint32(offset)
    const type = ascii(bytes, offset + 4, offset + 8)
    const next = offset + 12 + length
    if (length > 0x7fffffff || next > bytes.length) throw corrupt('PNG ends inside a chunk')
    if (type === 'IDAT') sawImageData = true
    if (type === 'IEND') break
    offset = next
  }
  if (!sawImageData) throw corrupt('PNG has no image data')
  return { width, height }
}

// JPEG: marker segments up to the first scan; entropy-coded data (where 0xFF is followed
// by 0x00 or a restart marker) until the next marker; and so on until EOI.
function walkJpeg(bytes: Uint8Array): { width: number; height: number } {
  const data = view(bytes)
  let offset = 2
  let size: { width: number; height: number } | null = null
  for (;;) {
    // Decoders skip stray bytes between segments (libjpeg warns and goes on); so do we.
    const markerStart = bytes.indexOf(0xff, offset)
    if (markerStart === -1) throw corrupt('JPEG ends before its end-of-image marker')
    offset = markerStart
    // Any number of 0xFF fill bytes may precede a marker.
    while (bytes[offset] === 0xff) offset++
    const marker = bytes[offset]
    if (marker === undefined) throw corrupt('JPEG ends before its end-of-image marker')
    offset++
    if (marker === 0xd9) break // EOI
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) continue // no length
    if (marker === 0xd8 || marker === 0x00) throw corrupt('JPEG has a misplaced marker')
    if (offset + 2 > bytes.length) throw corrupt('JPEG ends inside a segment')
    const length = data.getUint16(offset)
    if (length < 2 || offset + length > bytes.length) throw corrupt('JPEG ends inside a segment')
    const isStartOfFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc
    if (isStartOfFrame) {
      // Decoders differ on which of several frame headers counts; the one we check must be it.
      if (size !== null) throw corrupt('JPEG has more than one frame header')
      if (length < 7) throw corrupt('JPEG frame header too short')
      size = { height: data.getUint16(offset + 3), width: data.getUint16(offset + 5) }
    }
    offset += length
    if (marker === 0xda) {
      if (size === null) throw corrupt('JPEG scan before its frame header')
      offset = skipEntropyCodedData(bytes, offset)
    }
  }
  if (size === null) throw corrupt('JPEG has no frame header')
  return size
}

function skipEntropyCodedData(bytes: Uint8Array, start: number): number {
  let offset = start
  for (;;) {
    const found = bytes.indexOf(0xff, offset)
    if (found === -1 || found + 1 >= bytes.length) throw corrupt('JPEG ends inside its image data')
    const next = bytes[found + 1]!
    if (next === 0x00 || (next >= 0xd0 && next <= 0xd7) || next === 0xff) {
      offset = found + 1
      continue
    }
    return found
  }
}

// GIF: header, logical screen, optional global colour table, then extension and image
// blocks (each a run of length-prefixed sub-blocks) until the 0x3B trailer.
function walkGif(bytes: Uint8Array): Structure {
  const data = view(bytes)
  if (bytes.length < 13) throw corrupt('GIF header cut short')
  const width = data.getUint16(6, true)
  const height = data.getUint16(8, true)
  const screenFlags = bytes[10]!
  let offset = 13
  if (screenFlags & 0x80) offset += 3 * (1 << ((screenFlags & 0x07) + 1))
  let frames = 0
  const skipSubBlocks = (): void => {
    for (;;) {
      const size = bytes[offset]
      if (size === undefined) throw corrupt('GIF ends inside a data block')
      offset += 1 + size
      if (size === 0) return
    }
  }
  for (;;) {
    const introducer = bytes[offset]
    if (introducer === undefined) throw corrupt('GIF ends before its trailer')
    offset++
    if (introducer === 0x3b) break
    if (introducer === 0x21) {
      offset++ // extension label
      skipSubBlocks()
    } else if (introducer === 0x2c) {
      if (offset + 9 > bytes.length) throw corrupt('GIF ends inside an image descriptor')
      // Our decoder draws the first frame onto a canvas of the logical screen's size; libvips, which
      // decodes the frames of an animation, clips the later ones to it.
      if (frames === 0) {
        const right = data.getUint16(offset, true) + data.getUint16(offset + 4, true)
        const bottom = data.getUint16(offset + 2, true) + data.getUint16(offset + 6, true)
        if (right > width || bottom > height) throw corrupt('GIF frame lies outside its logical screen')
      }
      const imageFlags = bytes[offset + 8]!
      offset += 9
      if (imageFlags & 0x80) offset += 3 * (1 << ((imageFlags & 0x07) + 1))
      offset++ // LZW minimum code size
      skipSubBlocks()
      frames++
    } else {
      throw corrupt(`GIF has an unknown block 0x${introducer.toString(16)}`)
    }
  }
  if (frames === 0) throw corrupt('GIF has no image')
  return { width, height, frames }
}

// WebP: RIFF container whose declared size must fit the bytes; chunks inside it; the
// canvas size from VP8X, or the bitstream header of a simple VP8 / VP8L file. Every
// bitstream (and animation frame) must fit the canvas, so the canvas bounds what a decoder
// allocates and the pixel cap on it holds.
function walkWebp(bytes: Uint8Array): Structure {
  const data = view(bytes)
  if (bytes.length < 20) throw corrupt('WebP header cut short')
  const riffEnd = 8 + data.getUint32(4, true)
  if (riffEnd > bytes.length) throw corrupt(`WebP declares ${riffEnd} bytes but has ${bytes.length}`)
  let canvas: { width: number; height: number } | null = null
  let sawImage = false
  let animationFrames = 0
  const fitsCanvas = (size: { width: number; height: number }, what: string): void => {
    if (canvas === null) canvas = size
    else if (size.width > canvas.width || size.height > canvas.height) throw corrupt(`WebP ${what} is larger than its canvas`)
  }
  for (const chunk of riffChunks(bytes, data, 12, riffEnd)) {
    if (chunk.type === 'VP8X') {
      if (canvas !== null) throw corrupt('WebP VP8X chunk is not first')
      if (chunk.length < 10) throw corrupt('WebP VP8X chunk too short')
      canvas = { width: u24(bytes, chunk.body + 4) + 1, height: u24(bytes, chunk.body + 7) + 1 }
    } else if (chunk.type === 'VP8 ' || chunk.type === 'VP8L') {
      fitsCanvas(webpBitstreamSize(chunk.type, bytes, data, chunk.body, chunk.length), 'image')
      sawImage = true
    } else if (chunk.type === 'ANMF') {
      if (canvas === null) throw corrupt('WebP animation frame before its VP8X chunk')
      if (chunk.length < 16) throw corrupt('WebP animation frame too short')
      fitsCanvas({ width: u24(bytes, chunk.body + 6) + 1, height: u24(bytes, chunk.body + 9) + 1 }, 'animation frame')
      for (const inner of riffChunks(bytes, data, chunk.body + 16, chunk.body + chunk.length)) {
        if (inner.type === 'VP8 ' || inner.type === 'VP8L') fitsCanvas(webpBitstreamSize(inner.type, bytes, data, inner.body, inner.length), 'animation frame')
      }
      sawImage = true
      animationFrames++
    } else if (canvas === null) {
      throw corrupt(`WebP starts with an unexpected ${JSON.stringify(chunk.type)} chunk`)
    }
  }
  if (canvas === null || !sawImage) throw corrupt('WebP has no image data')
  const { width, height }: { width: number; height: number } = canvas
  return { width, height, frames: Math.max(1, animationFrames) }
}

// AVIF (ISO base media, HEIF): top-level boxes that fill the file exactly (ftyp, meta, mdat …); the
// size from the image spatial extents ('ispe') among the item properties (meta → iprp → ipco). Of
// several (alpha plane, thumbnail, grid tiles) the largest counts, so the pixel cap bounds them all.
// libheif refuses an image whose coded size differs from its ispe (tested).
function walkAvif(bytes: Uint8Array): { width: number; height: number } {
  const data = view(bytes)
  let size: { width: number; height: number } | null = null
  let sawMeta = false
  const visit = (start: number, end: number, path: string): void => {
    for (const box of isoBoxes(bytes, data, start, end)) {
      if (path === '' && box.type === 'meta') {
        sawMeta = true
        visit(box.body + 4, box.end, 'meta') // a full box: version and flags first
      } else if ((path === 'meta' && box.type === 'iprp') || (path === 'meta/iprp' && box.type === 'ipco')) {
        visit(box.body, box.end, `${path}/${box.type}`)
      } else if (path === 'meta/iprp/ipco' && box.type === 'ispe') {
        if (box.end - box.body < 12) throw corrupt('AVIF image size box too short')
        const extent = { width: data.getUint32(box.body + 4), height: data.getUint32(box.body + 8) }
        if (size === null || extent.width * extent.height > size.width * size.height) size = extent
      }
    }
  }
  visit(0, bytes.length, '')
  if (!sawMeta) throw corrupt('AVIF has no meta box')
  if (size === null) throw corrupt('AVIF states no image size')
  return size
}

function* isoBoxes(bytes: Uint8Array, data: DataView, start: number, end: number): Generator<{ type: string; body: number; end: number }> {
  let offset = start
  while (offset < end) {
    if (offset + 8 > end) throw corrupt('AVIF ends inside a box header')
    let length = data.getUint32(offset)
    let body = offset + 8
    if (length === 1) {
      if (offset + 16 > end) throw corrupt('AVIF ends inside a box header')
      length = Number(data.getBigUint64(offset + 8))
      body = offset + 16
    } else if (length === 0) {
      length = end - offset // to the end of its container
    }
    const boxEnd = offset + length
    if (boxEnd < body || boxEnd > end) throw corrupt(`AVIF ends inside its ${JSON.stringify(ascii(bytes, offset + 4, offset + 8))} box`)
    yield { type: ascii(bytes, offset + 4, offset + 8), body, end: boxEnd }
    offset = boxEnd
  }
}

function u24(bytes: Uint8Array, at: number): number {
  return bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16)
}

function* riffChunks(bytes: Uint8Array, data: DataView, start: number, end: number): Generator<{ type: string; body: number; length: number }> {
  let offset = start
  while (offset < end) {
    if (offset + 8 > end) throw corrupt('WebP ends inside a chunk header')
    const length = data.getUint32(offset + 4, true)
    const body = offset + 8
    if (body + length > end) throw corrupt('WebP ends inside a chunk')
    yield { type: ascii(bytes, offset, offset + 4), body, length }
    offset = body + length + (length & 1)
  }
}

function webpBitstreamSize(type: 'VP8 ' | 'VP8L', bytes: Uint8Array, data: DataView, body: number, length: number): { width: number; height: number } {
  if (type === 'VP8L') {
    if (length < 5 || bytes[body] !== 0x2f) throw corrupt('WebP lossless header malformed')
    const bits = data.getUint32(body + 1, true)
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 }
  }
  if (length < 10 || !startsWith(bytes, [0x9d, 0x01, 0x2a], body + 3)) throw corrupt('WebP lossy header malformed')
  return { width: data.getUint16(body + 6, true) & 0x3fff, height: data.getUint16(body + 8, true) & 0x3fff }
}
