// Turns a fetched image into what a vision model accepts: the first frame, upright, no
// larger than maxSide on its longest side, as PNG (or JPEG when it came as JPEG).
// Decoding never runs on the event loop: @napi-rs/image works on its own thread pool, and a GIF
// (which it cannot decode) is decoded, downscaled and encoded whole in a Worker (gif-worker.ts).
import { Transformer } from '@napi-rs/image'
import { fitWithin } from './downscale.ts'
import { gifFirstFrameAsPng, GifDecodeError } from './gif-decode.ts'
import { inspectImage } from './image-format.ts'
import { Slots } from './slots.ts'
import { invalidImageUrl } from './refusals.ts'
import type { FetchedImage, PreparedImage } from './types.ts'

export type PrepareLimits = { maxSide: number; maxPixels: number; gifDecodeTimeoutMs: number }

const JPEG_QUALITY = 85

// Decoded frames are large (up to 200 MB at the pixel cap): a few at once keep memory bounded when
// many big images arrive together; the thread pool could not run more in parallel anyway.
const MAX_CONCURRENT_DECODES = 4
const decodeSlots = new Slots(MAX_CONCURRENT_DECODES)

export function pixelLimitMessage(width: number, height: number, maxPixels: number): string {
  return `the image is ${width}×${height} pixels, over the limit of ${maxPixels} pixels`
}

function corruptImage(detail: string): Error {
  return invalidImageUrl(`the image is truncated or corrupt (${detail})`)
}

/**
 * Rejects with ApiError('invalid_image_url') for data that cannot be decoded, and with
 * `signal.reason` when the signal aborts.
 */
export async function prepareImage(image: FetchedImage, limits: PrepareLimits, signal?: AbortSignal): Promise<PreparedImage> {
  // The header was checked by fetch() (format, size, completeness); scanning 10 MB again would only
  // hold up the event loop. The pixel cap is cheap, so it stays as a guard.
  if (image.width * image.height > limits.maxPixels) throw invalidImageUrl(pixelLimitMessage(image.width, image.height, limits.maxPixels))
  await decodeSlots.acquire(signal)
  try {
    return await decode(image, limits, signal)
  } finally {
    decodeSlots.release()
  }
}

async function decode(image: FetchedImage, limits: PrepareLimits, signal?: AbortSignal): Promise<PreparedImage> {
  signal?.throwIfAborted()
  const header = { format: image.format, width: image.width, height: image.height }

  let encoded: Uint8Array
  if (header.format === 'gif') {
    // The whole preparation runs in the GIF worker: omggif is JavaScript and must stay off this thread.
    try {
      encoded = await gifFirstFrameAsPng(image.bytes, limits.maxSide, limits.gifDecodeTimeoutMs, signal)
    } catch (error) {
      if (error instanceof GifDecodeError) throw corruptImage(error.message)
      throw error
    }
  } else {
    // EXIF orientation applied, so the model sees the picture the way a browser shows it.
    const transformer = fitWithin(new Transformer(image.bytes).rotate(), header.width, header.height, limits.maxSide)
    try {
      encoded = header.format === 'jpeg' ? await transformer.jpeg(JPEG_QUALITY, signal) : await transformer.png(undefined, signal)
    } catch (error) {
      signal?.throwIfAborted()
      throw corruptImage(`it could not be decoded: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
  signal?.throwIfAborted()
  const data = new Uint8Array(encoded.buffer, encoded.byteOffset, encoded.byteLength)
  const output = inspectImage(data)
  return { data, mime: header.format === 'jpeg' ? 'image/jpeg' : 'image/png', width: output.width, height: output.height }
}
