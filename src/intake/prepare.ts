// Turns a fetched image into what a vision model accepts: the first frame, upright, no larger than
// maxSide on its longest side, as PNG (or JPEG when it came as JPEG). Decoding never runs on the
// event loop: sharp works on its own threads (a JPEG decoded at a reduced scale, a WebP at the size
// wanted), and a GIF's first frame is decoded in a worker (gif-worker.ts) and then resized and encoded
// by sharp like the rest.
//
// Decoded pixels are what costs memory, so every decode first takes its cost from a budget shared by
// the process, and waits in line when the budget is spent; each owner holds at most its share of the
// intake meanwhile (see OwnerCaps).
import type { Sharp as SharpPipeline } from 'sharp'
import { raceAbort } from '../shared/abort.ts'
import type { ApiError } from '../shared/errors.ts'
import type { Capacity, OwnerCaps, Release } from './capacity.ts'
import type { Sharp } from './codec.ts'
import { fitWithin } from './downscale.ts'
import { GifDecodeError, type GifDecoders } from './gif-decode.ts'
import { gifPrepareBytes } from './gif-frame.ts'
import { capacityError, imageRefusal, ownerCapError } from './refusals.ts'
import type { FetchedImage, IntakeOwner, PreparedImage } from './types.ts'

/**
 * A baseline JPEG (Huffman tables not optimised, no trellis): libjpeg-turbo's 90 keeps the model's
 * picture at least as close to a full-quality resize as the 85 of the encoder used before (SSIM in
 * docs/performance.md), for a few milliseconds.
 */
const JPEG_QUALITY = 90
/**
 * Stored, not deflated: the pixels as they are (about 3 MB at 1024×768), in a container every model
 * server takes. Deflating them cost 40–55 ms per photo-like image on this project's 2-core machine, a
 * third of the whole preparation, for bytes that only cross to the model server once.
 */
const PNG_OPTIONS = { compressionLevel: 0, adaptiveFiltering: false } as const

/** A GIF decode's deadline: a fixed part for the worker and the encoder, and a part per pixel. */
const GIF_DECODE_BASE_MS = 1000

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
  sharp: Sharp
}

type ImageShape = Pick<FetchedImage, 'bytes' | 'format' | 'width' | 'height'>

/**
 * Bytes sharp holds at its peak for one image, at most: the decoded frame twice (the decoder's buffer
 * and a copy that a rotation or conversion makes), the resize's rows, and the small output. It decodes
 * a JPEG at a reduced scale and most images a strip at a time, so it usually holds far less.
 */
function codecPrepareBytes(image: ImageShape, maxSide: number): number {
  const pixels = image.width * image.height
  // A 16-bit PNG decodes to 16-bit channels (IHDR's bit depth is byte 24).
  const bytesPerPixel = image.format === 'jpeg' ? 3 : image.format === 'png' && image.bytes[24] === 16 ? 8 : 4
  const longest = Math.max(image.width, image.height)
  const scale = Math.min(1, maxSide / longest)
  const resize = scale < 1 ? Math.ceil(16 * pixels * scale) : 0
  const output = Math.ceil(image.width * scale) * Math.ceil(image.height * scale) * 8
  return image.bytes.length + pixels * bytesPerPixel * 2 + resize + output
}

/** What preparing `image` takes from the decode budget. */
export function prepareBytes(image: ImageShape, maxSide: number): number {
  return image.format === 'gif' ? gifPrepareBytes(image.bytes.length, image.width, image.height, maxSide) : codecPrepareBytes(image, maxSide)
}

function pixelLimitMessage(width: number, height: number, maxPixels: number): string {
  return `the image is ${width}×${height} pixels, over the limit of ${maxPixels} pixels`
}

/** Refuses an image over the pixel cap, or one whose decode alone would take more than the whole budget. */
export function checkDecodable(image: ImageShape & Pick<FetchedImage, 'source'>, maxSide: number, maxPixels: number, budgetBytes: number): void {
  if (image.width * image.height > maxPixels) throw imageRefusal(image.source, pixelLimitMessage(image.width, image.height, maxPixels))
  const cost = prepareBytes(image, maxSide)
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
    held.push(await context.budget.acquire(prepareBytes(image, context.maxSide), signal, capacityError))
    if (image.format === 'gif') {
      const timeoutMs = GIF_DECODE_BASE_MS + Math.ceil(((image.width * image.height) / 1e6) * context.gifDecodeMsPerMegapixel)
      // The decode runs in the GIF worker, which an abort terminates.
      const frame = context.gifs.firstFrame(image.bytes, context.maxSide, timeoutMs, signal)
      work = frame.then(({ rgba, width, height }) => encode(image, context.sharp(rgba, { raw: { width, height, channels: 4 } }), context.maxSide, signal))
    } else {
      held.push(await context.decodeSlots.acquire(1, signal, capacityError))
      // EXIF orientation applied, so the model sees the picture the way a browser shows it.
      const input = context.sharp(image.bytes, { limitInputPixels: context.maxPixels, failOn: 'warning', autoOrient: true })
      work = encode(image, input, context.maxSide, signal)
    }
    const prepared = await (signal === undefined ? work : raceAbort(work, signal, capacityError))
    if (signal?.aborted) throw capacityError()
    return prepared
  } catch (error) {
    if (error instanceof GifDecodeError) throw corruptImage(image, error.message)
    throw error
  } finally {
    if (work === null) releaseAll()
    else work.then(releaseAll, releaseAll)
  }
}

/** Downscales and encodes on sharp's threads; the output is JPEG for a JPEG, PNG for the rest. */
async function encode(image: FetchedImage, input: SharpPipeline, maxSide: number, signal?: AbortSignal): Promise<PreparedImage> {
  const jpeg = image.format === 'jpeg'
  const pipeline = fitWithin(input, image.format, maxSide)
  // Once sharp has started, the work runs to its end; an abort before that is answered at once (above).
  if (signal?.aborted) throw capacityError()
  try {
    const { data, info } = await (jpeg ? pipeline.jpeg({ quality: JPEG_QUALITY, optimiseCoding: false }) : pipeline.png(PNG_OPTIONS)).toBuffer({
      resolveWithObject: true,
    })
    return {
      data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
      mime: jpeg ? 'image/jpeg' : 'image/png',
      width: info.width,
      height: info.height,
    }
  } catch (error) {
    if (signal?.aborted) throw capacityError()
    throw corruptImage(image, 'it could not be decoded', error instanceof Error ? error.message : String(error))
  }
}
