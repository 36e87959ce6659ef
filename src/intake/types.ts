/** Every format the intake accepts, by its bytes. */
export const IMAGE_FORMATS = ['jpeg', 'png', 'gif', 'webp', 'avif', 'svg'] as const
export type ImageFormat = (typeof IMAGE_FORMATS)[number]

export type FetchedImage = {
  bytes: Uint8Array
  /** Lower-case hex BLAKE3 (256-bit) of `bytes`: the image's part of the cache key. */
  contentHash: string
  format: ImageFormat
  width: number
  height: number
  /** Frames in the file: more than 1 for an animated GIF or WebP; absent for 1. */
  frames?: number
  /** How the bytes came: fetched from a URL (also when absent), or uploaded in the request. Refusals say which. */
  source?: ImageSource
  /** The URL the bytes came from, after redirects; null for an upload. */
  finalUrl: string | null
}

export type ImageSource = 'url' | 'upload'

/** An uploaded image as it arrived (see UploadBuffer): its bytes and their content hash, not yet checked. */
export type ReceivedImage = { bytes: Uint8Array; contentHash: string }

export type PreparedImage = {
  data: Uint8Array
  mime: 'image/png' | 'image/jpeg'
  width: number
  height: number
  /** Present for an animation: how many of its key frames the image shows, in a grid in reading order. */
  keyFrames?: number
}

export type HostResolver = (hostname: string) => Promise<{ address: string; family: 4 | 6 }[]>

export interface ImageIntake {
  /**
   * Fetches and checks; throws ApiError('invalid_image_url', ...) for every refusal, and
   * ApiError('overloaded') when the owner's earlier images keep this one from starting before
   * `signal` (the whole request's deadline) aborts.
   */
  fetch(url: string, signal: AbortSignal, owner?: IntakeOwner): Promise<FetchedImage>
  /**
   * Decodes off the event loop, takes the first frame, downscales to maxSide, transcodes to PNG or
   * JPEG. Throws ApiError('invalid_image_url'), or 'invalid_image' for an upload, for undecodable data, ApiError('overloaded') when the
   * image is not ready before `signal` aborts (waiting for capacity, or decoding).
   */
  prepare(image: FetchedImage, signal?: AbortSignal, owner?: IntakeOwner): Promise<PreparedImage>
  /**
   * Checks an uploaded image by the rules of a fetched one (format by its bytes, complete, pixel cap,
   * decodable within the budget), within the owner's share; throws ApiError('invalid_image', ...) for
   * every refusal, ApiError('overloaded') as fetch does. Refusals of prepare() are invalid_image too.
   */
  accept(upload: ReceivedImage, signal: AbortSignal, owner?: IntakeOwner): Promise<FetchedImage>
  /**
   * One of the owner's upload places, taken before an uploaded body is read and released once the image
   * is prepared (or no longer needed): at most maxInFlightPerOwner uploads of one owner are in memory at
   * once; the others wait with their bodies unread (the socket holds them). Throws ApiError('overloaded')
   * when `signal` aborts first.
   */
  uploadPlace(signal: AbortSignal, owner: IntakeOwner): Promise<() => void>
  /**
   * Takes `bytes` of the decode budget (all of it when that is less) for a large request body about to
   * be read and parsed (a batch with images in base64), when they are free now and no image waits for
   * them; throws ApiError('overloaded') otherwise, so such bodies never wait with their memory taken.
   * The release is idempotent.
   */
  reserveBody(bytes: number): () => void
  /** Ends the intake's workers and pools and refuses whatever waits; called once at shutdown. */
  close(): Promise<void>
}

/** Who the work is for (an account id): no owner may hold more than its share of the intake's capacity. */
export type IntakeOwner = number

export type ImageIntakeOptions = {
  /** From ALTTEXT_ALLOW_PRIVATE_IMAGE_HOSTS, already normalised: lower-case host names, IPs, CIDRs. */
  allowPrivateHosts: string[]
  /** PEM of NODE_EXTRA_CA_CERTS, trusted in addition to the system roots. */
  extraCaPem?: string
  /** Default: node:dns lookup with { all: true }. */
  resolve?: HostResolver
  maxBytes?: number
  maxPixels?: number
  /** Longest side after downscaling. */
  maxSide?: number
  connectTimeoutMs?: number
  maxRedirects?: number
  /** Default 'when-alone': a download while no other runs stays in this thread; 'never' sends every one to the fetch workers. */
  hopInThread?: 'when-alone' | 'never'
  /**
   * Bytes that decoding may hold at once across the process (decoded pixels, resize buffers, the
   * file's copy); decodes beyond it wait in line. An image whose decode alone needs more is refused.
   */
  decodeBudgetBytes?: number
  /** Fetches and preparations one owner may have in flight; more wait for their turn. */
  maxInFlightPerOwner?: number
  /** A GIF decode's deadline grows by this much per megapixel (on top of a fixed second). */
  gifDecodeMsPerMegapixel?: number
  /** Hears of every change to the decode bytes in flight or to the work waiting (tests observe the limits with it). */
  observe?: (usage: IntakeUsage) => void
}

export type IntakeUsage = {
  /** Bytes of the decode budget taken by preparations under way and by large request bodies (see reserveBody). */
  decodeBytes: number
  /** Fetches and preparations waiting for their turn (owner shares, decode budget, decode slots, GIF workers). */
  waiting: number
}
