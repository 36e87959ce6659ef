// The image intake: fetch (SSRF-safe, with every acceptance rule) and prepare (decode off
// the event loop, first frame, downscale, PNG/JPEG). Each intake owns its worker pools and
// queues; close() ends them.
import { Capacity, OwnerCaps } from './capacity.ts'
import { type Codec, openCodec } from './codec.ts'
import { fetchImageBytes, systemResolver } from './fetch.ts'
import { FetchPool } from './fetch-pool.ts'
import { GifDecoders } from './gif-decode.ts'
import { inspectImage } from './image-format.ts'
import { ImageFormatError } from './image-format-error.ts'
import { checkDecodable, type PrepareContext, prepareImage } from './prepare.ts'
import { bodyMemoryError, closedError, deadlineError, imageRefusal, ownerCapError, uploadPlaceError } from './refusals.ts'
import type { FetchedImage, ImageIntake, ImageIntakeOptions, ImageSource, IntakeOwner, IntakeUsage, ReceivedImage } from './types.ts'
import { MAX_IMAGE_BYTES } from '../shared/limits.ts'
import { trustedCaList } from './trust.ts'

export const DEFAULT_MAX_BYTES = MAX_IMAGE_BYTES
/** 50 megapixels: above any camera or screenshot an alt text is asked for; ~200 MB as RGBA. */
export const DEFAULT_MAX_PIXELS = 50_000_000
/** Longest side sent to the model; llava works at 336–672 px, so 1024 loses nothing. */
export const DEFAULT_MAX_SIDE = 1024
export const DEFAULT_CONNECT_TIMEOUT_MS = 5000
export const DEFAULT_MAX_REDIRECTS = 5
/** Room for one image at the pixel cap (8-bit channels) with everything its decode holds. */
export const DEFAULT_DECODE_BUDGET_BYTES = 512 * 1024 * 1024
/** Half the decode slots: one owner's images never hold all of them. */
export const DEFAULT_MAX_IN_FLIGHT_PER_OWNER = 2
/** GIF decoding is linear in the pixels (the decoder is bounded); this leaves a wide margin for a busy machine. */
export const DEFAULT_GIF_DECODE_MS_PER_MEGAPIXEL = 100
/** sharp decodes at once; its thread pool could not run more in parallel anyway. */
const DECODE_SLOTS = 4

export { runtimeTrustsAll, trustedCaList } from './trust.ts'

function positiveInteger(name: string, value: number | undefined, fallback: number): number {
  const chosen = value ?? fallback
  if (!Number.isInteger(chosen) || chosen < 0) throw new RangeError(`${name} must be a non-negative integer, got ${chosen}`)
  return chosen
}

export function createImageIntake(options: ImageIntakeOptions): ImageIntake {
  const maxBytes = positiveInteger('maxBytes', options.maxBytes, DEFAULT_MAX_BYTES)
  const maxPixels = positiveInteger('maxPixels', options.maxPixels, DEFAULT_MAX_PIXELS)
  const maxSide = positiveInteger('maxSide', options.maxSide, DEFAULT_MAX_SIDE)
  if (maxSide < 1) throw new RangeError('maxSide must be at least 1')
  const perOwner = positiveInteger('maxInFlightPerOwner', options.maxInFlightPerOwner, DEFAULT_MAX_IN_FLIGHT_PER_OWNER)
  if (perOwner < 1) throw new RangeError('maxInFlightPerOwner must be at least 1')
  const fetchLimits = {
    allowPrivateHosts: [...options.allowPrivateHosts],
    resolve: options.resolve ?? systemResolver,
    maxRedirects: positiveInteger('maxRedirects', options.maxRedirects, DEFAULT_MAX_REDIRECTS),
  }
  const pool = new FetchPool({
    ca: trustedCaList(options.extraCaPem),
    maxBytes,
    connectTimeoutMs: positiveInteger('connectTimeoutMs', options.connectTimeoutMs, DEFAULT_CONNECT_TIMEOUT_MS),
    placement: options.hopInThread ?? 'when-alone',
  })
  const hop = pool.hop.bind(pool)
  const observe = options.observe
  const changed = observe && (() => observe(usage()))
  const owners = new OwnerCaps(perOwner, changed)
  // Apart from `owners`: an upload holds its place while it also takes a share of `owners` to be checked and prepared.
  const uploads = new OwnerCaps(perOwner, changed)
  // Loaded with the first image, not at start: libvips and sharp are ~20 MB of memory that a service
  // (or a command) that prepares no image does not need.
  let codec: Codec | Error | undefined
  const codecOnce = (): Codec => {
    if (codec === undefined) {
      try {
        codec = openCodec()
      } catch (error) {
        codec = error instanceof Error ? error : new Error(String(error))
      }
    }
    if (codec instanceof Error) throw codec
    return codec
  }
  const context: PrepareContext = {
    maxSide,
    maxPixels,
    gifDecodeMsPerMegapixel: positiveInteger('gifDecodeMsPerMegapixel', options.gifDecodeMsPerMegapixel, DEFAULT_GIF_DECODE_MS_PER_MEGAPIXEL),
    budget: new Capacity(positiveInteger('decodeBudgetBytes', options.decodeBudgetBytes, DEFAULT_DECODE_BUDGET_BYTES), changed),
    decodeSlots: new Capacity(DECODE_SLOTS, changed),
    gifs: new GifDecoders(changed),
    owners,
    codec: codecOnce,
  }
  function usage(): IntakeUsage {
    return {
      decodeBytes: context.budget.inUse,
      waiting: owners.waiting + uploads.waiting + context.budget.waiting + context.decodeSlots.waiting + context.gifs.waiting,
    }
  }
  let closed = false

  /** The acceptance rules every image meets, fetched or uploaded: format by its bytes, complete, decodable. */
  function check(received: ReceivedImage, source: ImageSource, finalUrl: string | null): FetchedImage {
    let header: ReturnType<typeof inspectImage>
    try {
      header = inspectImage(received.bytes)
    } catch (error) {
      if (error instanceof ImageFormatError) throw imageRefusal(source, error.message)
      throw error
    }
    const image: FetchedImage = { ...received, format: header.format, width: header.width, height: header.height, source, finalUrl }
    if (header.frames > 1) image.frames = header.frames
    checkDecodable(image, maxSide, maxPixels, context.budget.total)
    return image
  }

  return {
    async fetch(url: string, signal: AbortSignal, owner?: IntakeOwner): Promise<FetchedImage> {
      if (closed) throw closedError()
      if (signal.aborted) throw deadlineError()
      const release = await owners.acquire(owner, signal, () => ownerCapError(perOwner))
      try {
        const { bytes, contentHash, finalUrl } = await fetchImageBytes(url, fetchLimits, hop, signal)
        return check({ bytes, contentHash }, 'url', finalUrl)
      } finally {
        release()
      }
    },
    async accept(upload, signal, owner) {
      if (closed) throw closedError()
      const release = await owners.acquire(owner, signal, () => ownerCapError(perOwner))
      try {
        return check(upload, 'upload', null)
      } finally {
        release()
      }
    },
    uploadPlace(signal, owner) {
      if (closed) return Promise.reject(closedError())
      return uploads.acquire(owner, signal, () => uploadPlaceError(perOwner))
    },
    reserveBody(bytes) {
      if (closed) throw closedError()
      const release = context.budget.tryAcquire(Math.min(bytes, context.budget.total))
      if (release === null) throw bodyMemoryError()
      return release
    },
    prepare(image, signal, owner) {
      if (closed) return Promise.reject(closedError())
      return prepareImage(image, context, signal, owner)
    },
    async close() {
      if (closed) return
      closed = true
      const error = closedError()
      owners.close(error)
      uploads.close(error)
      context.budget.close(error)
      context.decodeSlots.close(error)
      context.gifs.close()
      await pool.close()
      if (codec !== undefined && !(codec instanceof Error)) codec.close()
    },
  }
}
