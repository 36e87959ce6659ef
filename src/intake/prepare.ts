// Turns a fetched image into what a vision model accepts: the first frame (or, for an animation, a
// grid of its key frames: animation.ts), upright, no larger than maxSide on its longest side, as PNG
// (or JPEG when it came as JPEG). An SVG is cleaned (svg.ts) and rasterised by librsvg at maxSide.
// Nothing of it runs on the event loop: sharp decodes and resizes on its own threads (a JPEG decoded
// at a reduced scale, a WebP at the size wanted) and encodes the JPEG; a GIF's first frame is decoded
// in a worker (gif-worker.ts) (and encoded there when it needs no resize), else resized like the
// rest; a PNG is encoded on @napi-rs/image's thread pool. (The SVG's check runs on the event loop, as
// every format's header walk: a few milliseconds for the elements it allows.)
//
// Decoded pixels are what costs memory, so every decode first takes its cost from a budget shared by
// the process, and waits in line when the budget is spent; each owner holds at most its share of the
// intake meanwhile (see OwnerCaps).
import { CompressionType, FilterType, Transformer } from '@napi-rs/image'
import type { Sharp as SharpPipeline } from 'sharp'
import { raceAbort } from '../shared/abort.ts'
import type { ApiError } from '../shared/errors.ts'
import { animationPrepareBytes, keyFrameGrid, keyFrameIndices } from './animation.ts'
import type { Capacity, OwnerCaps, Release } from './capacity.ts'
import type { Codec } from './codec.ts'
import { fitWithin, jpegShrink } from './downscale.ts'
import { GifDecodeError, type GifDecoders } from './gif-decode.ts'
import { gifPrepareBytes } from './gif-frame.ts'
import { ImageFormatError } from './image-format-error.ts'
import { capacityError, imageRefusal, ownerCapError } from './refusals.ts'
import { sanitiseSvg, svgMarkup, svgRasterSize } from './svg.ts'
import type { FetchedImage, IntakeOwner, PreparedImage } from './types.ts'

/**
 * A baseline JPEG (Huffman tables not optimised, no trellis): libjpeg-turbo's 90 keeps the model's
 * picture at least as close to a full-quality resize as the 85 of the encoder used before (SSIM in
 * docs/performance.md), for a few milliseconds.
 */
const JPEG_QUALITY = 90
/**
 * The png crate's fast deflate (fdeflate) with a filter per row: 5–15 ms for 1024×768, a third to a
 * half of the stored size for a photo. libvips' zlib took 40–110 ms for the same (docs/performance.md).
 */
const PNG_OPTIONS = { compressionType: CompressionType.Fast, filterType: FilterType.Adaptive }
/** A GIF decode's deadline: a fixed part for the worker and the encoder, and a part per pixel. */
const GIF_DECODE_BASE_MS = 1000
/** librsvg's time for one drawing: the elements svg.ts lets through render in well under a second. */
const SVG_RENDER_SECONDS = 5

export type PrepareContext = {
  maxSide: number
  maxPixels: number
  gifDecodeMsPerMegapixel: number
  /** Bytes of decoded images in flight across the intake. */
  budget: Capacity
  /** sharp decodes in flight. */
  decodeSlots: Capacity
  gifs: GifDecoders
  owners: OwnerCaps
  /** The codec, loaded when first asked for (then it throws again whatever its loading threw). */
  codec: () => Codec
}

type ImageShape = Pick<FetchedImage, 'bytes' | 'format' | 'width' | 'height' | 'frames'>

/**
 * Bytes a preparation holds at its peak, at most: the file, the decoded frame twice (the decoder's
 * buffer and a copy that a rotation or conversion makes), the resize's rows, and the output with its
 * RGBA. sharp decodes a JPEG at a reduced scale (from a copy of the file, which that leaves room for)
 * and most images a strip at a time, so it usually holds far less.
 */
function codecPrepareBytes(image: ImageShape, maxSide: number): number {
  const pixels = image.width * image.height
  // A 16-bit PNG decodes to 16-bit channels (IHDR's bit depth is byte 24).
  // A 10- or 12-bit AVIF decodes to 16-bit channels too.
  const bytesPerPixel = image.format === 'jpeg' ? 3 : (image.format === 'png' && image.bytes[24] === 16) || image.format === 'avif' ? 8 : 4
  const longest = Math.max(image.width, image.height)
  const scale = Math.min(1, maxSide / longest)
  const resize = scale < 1 ? Math.ceil(16 * pixels * scale) : 0
  const output = Math.ceil(image.width * scale) * Math.ceil(image.height * scale) * 8
  return image.bytes.length + pixels * bytesPerPixel * 2 + resize + output
}

/**
 * An SVG's: its parsed tree (librsvg's nodes take some tens of bytes per byte of markup) and the
 * raster at maxSide with its conversions and the encoder's copy. Its declared size costs nothing.
 */
function svgPrepareBytes(image: ImageShape, maxSide: number): number {
  return image.bytes.length * 32 + maxSide * maxSide * 4 * 4
}

/** Whether `image` is prepared as a grid of key frames: an animation whose frames fit the budget one at a time (else its first frame alone). */
function drawsKeyFrames(image: ImageShape, maxSide: number, budgetBytes: number): boolean {
  if ((image.frames ?? 1) < 2 || (image.format !== 'gif' && image.format !== 'webp')) return false
  if (keyFrameIndices(image.frames!, image.width, image.height).length < 2) return false
  return animationPrepareBytes(image.bytes.length, image.width, image.height, maxSide) <= budgetBytes
}

/** What preparing `image` takes from the decode budget (the one that holds it: a grid of key frames costs more than a first frame). */
export function prepareBytes(image: ImageShape, maxSide: number, budgetBytes = Number.POSITIVE_INFINITY): number {
  if (image.format === 'svg') return svgPrepareBytes(image, maxSide)
  if (drawsKeyFrames(image, maxSide, budgetBytes)) return animationPrepareBytes(image.bytes.length, image.width, image.height, maxSide)
  return image.format === 'gif' ? gifPrepareBytes(image.bytes.length, image.width, image.height, maxSide) : codecPrepareBytes(image, maxSide)
}

function pixelLimitMessage(width: number, height: number, maxPixels: number): string {
  return `the image is ${width}×${height} pixels, over the limit of ${maxPixels} pixels`
}

/** Refuses an image over the pixel cap, or one whose decode alone would take more than the whole budget. */
export function checkDecodable(image: ImageShape & Pick<FetchedImage, 'source'>, maxSide: number, maxPixels: number, budgetBytes: number): void {
  if (image.width * image.height > maxPixels) throw imageRefusal(image.source, pixelLimitMessage(image.width, image.height, maxPixels))
  const cost = prepareBytes(image, maxSide, budgetBytes)
  if (cost > budgetBytes) {
    throw imageRefusal(
      image.source,
      `the image is ${image.width}×${image.height} pixels, too many to decode within this service's memory limit`,
      `decoding needs ${cost} bytes; the budget is ${budgetBytes}`,
    )
  }
}

function corruptImage(image: FetchedImage, reason: string, detail?: string): ApiError {
  return imageRefusal(image.source, `the image is truncated or corrupt (${reason})`, detail)
}

/**
 * Rejects with ApiError: invalid_image_url (invalid_image for an upload) for data that cannot be decoded, overloaded when the signal
 * aborts before the image is ready (while waiting for capacity, or while decoding).
 */
export async function prepareImage(image: FetchedImage, context: PrepareContext, signal?: AbortSignal, owner?: IntakeOwner): Promise<PreparedImage> {
  // The header was checked by fetch() (format, size, completeness); scanning 10 MB again would only
  // hold up the event loop. The limits are cheap, so they stay as a guard.
  checkDecodable(image, context.maxSide, context.maxPixels, context.budget.total)
  if (signal?.aborted) throw capacityError()
  const held: Release[] = []
  const releaseAll = (): void => {
    for (const release of held.splice(0).reverse()) release()
  }
  // What is held is given back when the decode's work has really stopped, which for sharp may be
  // after the caller was answered: its memory is in use until then.
  let work: Promise<PreparedImage> | null = null
  try {
    held.push(await context.owners.acquire(owner, signal, () => ownerCapError(context.owners.perOwner)))
    held.push(await context.budget.acquire(prepareBytes(image, context.maxSide, context.budget.total), signal, capacityError))
    const codec = context.codec()
    const maxSide = context.maxSide
    if (drawsKeyFrames(image, maxSide, context.budget.total)) {
      held.push(await context.decodeSlots.acquire(1, signal, capacityError))
      work = keyFrames(image, context, codec)
    } else if (image.format === 'svg') {
      held.push(await context.decodeSlots.acquire(1, signal, capacityError))
      // Checked when it arrived; cleaned again here rather than kept, as the other formats keep only their bytes.
      const svg = sanitiseSvg(image.bytes)
      const raster = svgRasterSize(svg, maxSide)
      const markup = Buffer.from(svgMarkup(svg, raster.width, raster.height))
      // unlimited: false (the default) keeps libxml2's limits on the parse; the markup has no DOCTYPE anyway.
      const input = codec.sharp(markup, { limitInputPixels: context.maxPixels, failOn: 'error', unlimited: false }).timeout({ seconds: SVG_RENDER_SECONDS })
      work = encode(image, input, maxSide, signal)
    } else if (image.format === 'gif') {
      const timeoutMs = GIF_DECODE_BASE_MS + Math.ceil(((image.width * image.height) / 1e6) * context.gifDecodeMsPerMegapixel)
      // The decode runs in the GIF worker, which an abort terminates.
      work = context.gifs.firstFrame(image.bytes, maxSide, timeoutMs, signal).then((decoded) => {
        if ('png' in decoded) return { data: decoded.png, mime: 'image/png', width: decoded.width, height: decoded.height }
        const { pixels, width, height, channels } = decoded
        return encode(image, codec.sharp(pixels, { raw: { width, height, channels } }), maxSide, signal)
      })
    } else {
      held.push(await context.decodeSlots.acquire(1, signal, capacityError))
      // EXIF orientation applied, so the model sees the picture the way a browser shows it.
      const options = { limitInputPixels: context.maxPixels, failOn: 'warning', autoOrient: true } as const
      const shrink = image.format === 'jpeg' ? jpegShrink(image.width, image.height, maxSide) : 1
      const file = shrink > 1 ? codec.memoryFile(image.bytes) : null
      const input = file ? codec.sharp(`${file.path}[shrink=${shrink}]`, options) : codec.sharp(image.bytes, options)
      work = encode(image, input, maxSide, signal)
      if (file) work.then(file.close, file.close)
    }
    const prepared = await (signal === undefined ? work : raceAbort(work, signal, capacityError))
    if (signal?.aborted) throw capacityError()
    return prepared
  } catch (error) {
    if (error instanceof GifDecodeError) throw corruptImage(image, error.message)
    if (error instanceof ImageFormatError) throw imageRefusal(image.source, error.message)
    throw error
  } finally {
    if (work === null) releaseAll()
    else work.then(releaseAll, releaseAll)
  }
}

/** The key frames of an animation in one grid (animation.ts), as PNG. */
async function keyFrames(image: FetchedImage, context: PrepareContext, codec: Codec): Promise<PreparedImage> {
  const indices = keyFrameIndices(image.frames!, image.width, image.height)
  // Reaching the last key frame decodes every frame before it: the deadline of a GIF of that many pixels, for each load.
  const decodedPixels = (indices[indices.length - 1]! + 1) * image.width * image.height
  // libvips takes at most an hour.
  const timeoutSeconds = Math.min(3600, Math.ceil((GIF_DECODE_BASE_MS + (decodedPixels / 1e6) * context.gifDecodeMsPerMegapixel) / 1000))
  try {
    const grid = await keyFrameGrid(
      { sharp: codec.sharp, bytes: image.bytes, maxPixels: context.maxPixels, timeoutSeconds },
      indices,
      image.width,
      image.height,
      context.maxSide,
    )
    const png = await Transformer.fromRgbaPixels(grid.rgba, grid.width, grid.height).png(PNG_OPTIONS)
    return {
      data: new Uint8Array(png.buffer, png.byteOffset, png.byteLength),
      mime: 'image/png',
      width: grid.width,
      height: grid.height,
      keyFrames: indices.length,
    }
  } catch (error) {
    throw corruptImage(image, 'its frames could not be decoded', error instanceof Error ? error.message : String(error))
  }
}

/** Downscales and encodes off the event loop; the output is JPEG for a JPEG, PNG for the rest. */
async function encode(image: FetchedImage, input: SharpPipeline, maxSide: number, signal?: AbortSignal): Promise<PreparedImage> {
  const pipeline = fitWithin(input, maxSide)
  // Once sharp has started, the work runs to its end; an abort before that is answered at once (above).
  if (signal?.aborted) throw capacityError()
  try {
    if (image.format === 'jpeg') {
      const { data, info } = await pipeline.jpeg({ quality: JPEG_QUALITY, optimiseCoding: false }).toBuffer({ resolveWithObject: true })
      return { data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength), mime: 'image/jpeg', width: info.width, height: info.height }
    }
    // 8-bit RGBA whatever the source (grey, 16-bit, no alpha): what the PNG encoder takes.
    const { data, info } = await pipeline.toColourspace('srgb').ensureAlpha().raw({ depth: 'uchar' }).toBuffer({ resolveWithObject: true })
    const png = await Transformer.fromRgbaPixels(data, info.width, info.height).png(PNG_OPTIONS)
    return { data: new Uint8Array(png.buffer, png.byteOffset, png.byteLength), mime: 'image/png', width: info.width, height: info.height }
  } catch (error) {
    if (signal?.aborted) throw capacityError()
    throw corruptImage(image, 'it could not be decoded', error instanceof Error ? error.message : String(error))
  }
}
