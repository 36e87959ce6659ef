// The image intake: fetch (SSRF-safe, with every acceptance rule) and prepare (decode off
// the event loop, first frame, downscale, PNG/JPEG).
import { getCACertificates, rootCertificates } from 'node:tls'
import { fetchImageBytes, systemResolver } from './fetch.ts'
import { invalidImageUrl } from './refusals.ts'
import { ImageFormatError, inspectImage } from './image-format.ts'
import { pixelLimitMessage, prepareImage } from './prepare.ts'
import type { FetchedImage, ImageIntake, ImageIntakeOptions } from './types.ts'

export const DEFAULT_MAX_BYTES = 10 * 1024 * 1024
/** 50 megapixels: above any camera or screenshot an alt text is asked for; ~200 MB as RGBA. */
export const DEFAULT_MAX_PIXELS = 50_000_000
/** Longest side sent to the model; llava works at 336–672 px, so 1024 loses nothing. */
export const DEFAULT_MAX_SIDE = 1024
export const DEFAULT_CONNECT_TIMEOUT_MS = 5000
export const DEFAULT_MAX_REDIRECTS = 5
/** A GIF first frame takes well under a second; more means a hostile or broken LZW stream. */
export const GIF_DECODE_TIMEOUT_MS = 10_000

/** The certificates of a PEM bundle as their base64 bodies, whitespace removed, for comparison. */
function certificateBodies(pem: string): string[] {
  return [...pem.matchAll(/-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/g)].map((match) => match[1]!.replace(/\s+/g, ''))
}

/**
 * Whether the runtime's default trust store already holds every certificate of `pem`: Bun, like Node,
 * loads NODE_EXTRA_CA_CERTS at start. Then no `ca` option is needed, and none is better: a `ca` list
 * of ~120 roots is parsed into a fresh TLS context for every connection (~0.2 ms a fetch, measured).
 */
export function runtimeTrustsAll(pem: string): boolean {
  const wanted = certificateBodies(pem)
  if (wanted.length === 0) return false
  let loaded: Set<string>
  try {
    loaded = new Set(getCACertificates('extra').flatMap(certificateBodies))
  } catch {
    return false // a runtime without getCACertificates: pass the list, as before
  }
  return wanted.every((body) => loaded.has(body))
}

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
  const fetchLimits = {
    allowPrivateHosts: [...options.allowPrivateHosts],
    // Giving `ca` replaces the default trust store, so the bundled roots go in with the extra CA.
    ca: options.extraCaPem && !runtimeTrustsAll(options.extraCaPem) ? [...rootCertificates, options.extraCaPem] : undefined,
    resolve: options.resolve ?? systemResolver,
    maxBytes,
    connectTimeoutMs: positiveInteger('connectTimeoutMs', options.connectTimeoutMs, DEFAULT_CONNECT_TIMEOUT_MS),
    maxRedirects: positiveInteger('maxRedirects', options.maxRedirects, DEFAULT_MAX_REDIRECTS),
    hopInThread: options.hopInThread ?? 'when-alone',
  }
  const prepareLimits = { maxSide, maxPixels, gifDecodeTimeoutMs: GIF_DECODE_TIMEOUT_MS }

  return {
    async fetch(url: string, signal: AbortSignal): Promise<FetchedImage> {
      const { bytes, contentHash, finalUrl } = await fetchImageBytes(url, fetchLimits, signal)
      let header: ReturnType<typeof inspectImage>
      try {
        header = inspectImage(bytes)
      } catch (error) {
        if (error instanceof ImageFormatError) throw invalidImageUrl(error.message)
        throw error
      }
      if (header.width * header.height > maxPixels) throw invalidImageUrl(pixelLimitMessage(header.width, header.height, maxPixels))
      return { bytes, contentHash, format: header.format, width: header.width, height: header.height, finalUrl }
    },
    prepare(image, signal) {
      return prepareImage(image, prepareLimits, signal)
    },
    async close() {},
  }
}
